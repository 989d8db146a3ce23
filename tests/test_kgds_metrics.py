"""KGDS metrics: the paper's formulas, their edge cases, and the gold-as-system checks."""

from __future__ import annotations

import math

import pytest

from dialeval.protocols.kgds.data import load_kgds
from dialeval.protocols.kgds.metrics import (
    aggregate_scores,
    bsp_scores,
    cao_recall,
    error_proportions,
    error_table,
    f1_score,
    kbsaf_scores,
    overall_gm,
    sample_scores,
    score_summary,
    win_rate,
)


def test_bsp_scores_follow_appendix_c():
    # Figure 1 of the paper: 7 supporting paragraphs, 5 retrieved of which 4 supporting
    supporting = {8, 9, 13, 14, 15, 16, 17}
    prf = bsp_scores([9, 10, 13, 14, 17], supporting, nonsupporting={1, 2, 10, 11})
    assert prf.recall == pytest.approx(4 / 7)
    assert prf.precision == pytest.approx(4 / 5)
    assert prf.f1 == pytest.approx(2 * (4 / 5) * (4 / 7) / (4 / 5 + 4 / 7))


def test_bsp_ignores_indices_outside_the_sample():
    prf = bsp_scores([1, 99], supporting={1}, nonsupporting={2})
    assert (prf.recall, prf.precision, prf.f1) == (1.0, 1.0, 1.0)


def test_empty_ebs_scores_zero_not_undefined():
    prf = bsp_scores([], supporting={1, 2}, nonsupporting={3})
    assert (prf.recall, prf.precision, prf.f1) == (0.0, 0.0, 0.0)


def test_no_gold_supporting_paragraph_is_undefined():
    assert bsp_scores([1], supporting=set(), nonsupporting={1}) is None


def test_kbsaf_precision_counts_knowable_nonsupporting_facts():
    prf = kbsaf_scores([True, True, False, False], [True, False, False])
    assert prf.recall == pytest.approx(0.5)
    assert prf.precision == pytest.approx(2 / 3)


def test_kbsaf_with_no_knowable_fact_is_zero():
    prf = kbsaf_scores([False, False], [False])
    assert (prf.recall, prf.precision, prf.f1) == (0.0, 0.0, 0.0)


def test_kbsaf_without_key_facts_is_undefined():
    assert kbsaf_scores([], [True]) is None


def test_f1_of_zeros_is_zero():
    assert f1_score(0.0, 0.0) == 0.0


def test_cao_recall_and_geometric_mean():
    assert cao_recall([True, False, True, True]) == 0.75
    assert cao_recall([]) is None
    assert overall_gm(0.64, 0.25) == pytest.approx(0.4)
    assert overall_gm(None, 0.5) is None
    assert overall_gm(0.0, 0.5) == 0.0


def test_error_proportions():
    props = error_proportions(["IRU", "IRU", "IRIC", "OM"])
    assert props == {"OM": 0.25, "IRIC": 0.25, "IRU": 0.5, "OSD": 0.0, "OFI": 0.0}
    assert error_proportions([]) is None


def test_judge_failures_leave_the_part_out_and_say_which_kind():
    out = score_summary(
        "abs",
        background=None,
        supporting={1},
        nonsupporting=set(),
        fact_verdicts=[("key", True, "ok"), ("key", None, "truncated")],
        opinion_verdicts=[(True, "ok"), (None, "unparsed")],
        error_checks=[(None, "unparsed"), ("IRU", "ok")],
    )
    assert out["background"] is None and out["cao_recall"] is None and out["op_gm"] is None
    assert out["outcome"] == {"background": "judge_truncated", "cao_recall": "judge_unparsed", "op_gm": "judge_truncated"}
    assert out["errors"] == {"types": ["IRU"], "unparsed": 1, "truncated": 0, "error": 0}


def ebs_row(pattern: str, f1_hit: bool, opinions: list[bool], *, failed: bool = False) -> dict:
    """One EBS sample: gold paragraph 1 retrieved or not, one verdict per opinion."""
    return score_summary(
        pattern,
        system_failed=failed,
        background=[] if failed or not f1_hit else [1],
        supporting={1},
        nonsupporting={2},
        fact_verdicts=None,
        opinion_verdicts=[(False if failed else v, "ok") for v in opinions],
        error_checks=[] if failed else [("IRU", "ok")] * opinions.count(False),
    )


def test_nine_perfect_samples_and_one_failed_summary_give_f1_point_nine():
    """The issue's example: a failed summary stays in the mean as a zero (not 1.0)."""
    rows = [{"ebs": {"0": ebs_row("ebs", True, [True, True])}} for _ in range(9)]
    rows.append({"ebs": {"0": ebs_row("ebs", False, [True, True], failed=True)}})
    table = aggregate_scores(rows)["ebs"]["rounds"]["0"]
    for key in ("recall", "precision", "f1", "cao_recall", "op_gm"):
        assert table[key]["mean"] == pytest.approx(0.9), key
        assert (table[key]["n"], table[key]["system_failed"], table[key]["judge_unparsed"]) == (10, 1, 0)
    # a failed summary has no opinion to classify: it adds nothing to the error shares, and is counted
    assert table["errors"]["system_failed"] == 1 and table["errors"]["classified"] == 0


def test_judge_failure_is_left_out_not_zero():
    rows = [{"ebs": {"0": ebs_row("ebs", True, [True, True])}} for _ in range(9)]
    broken = score_summary(
        "ebs", background=[1], supporting={1}, nonsupporting={2}, fact_verdicts=None,
        opinion_verdicts=[(True, "ok"), (None, "unparsed")], error_checks=[],
    )
    rows.append({"ebs": {"0": broken}})
    table = aggregate_scores(rows)["ebs"]["rounds"]["0"]
    assert table["f1"]["mean"] == 1.0 and table["f1"]["n"] == 10  # BSP needs no judge
    assert table["cao_recall"] == {**table["cao_recall"], "mean": 1.0, "n": 9, "judge_unparsed": 1, "system_failed": 0}
    assert table["op_gm"]["n"] == 9 and table["op_gm"]["judge_unparsed"] == 1


def test_a_sample_missing_a_round_counts_as_a_failed_summary():
    rows = [{"ebs": {"0": ebs_row("ebs", True, [True]), "1": ebs_row("ebs", True, [True])}}, {"ebs": {"0": ebs_row("ebs", True, [True])}}]
    table = aggregate_scores(rows)["ebs"]["rounds"]["1"]
    assert table["f1"]["mean"] == 0.5 and table["f1"]["system_failed"] == 1


def test_error_shares_macro_and_pooled_differ_when_samples_differ_in_size():
    many = {"types": ["IRU"] * 3 + ["OM"], "unparsed": 0, "truncated": 0, "error": 0}
    one = {"types": ["OM"], "unparsed": 0, "truncated": 0, "error": 0}
    rows = [
        {"errors": e, "error_proportions": error_proportions(e["types"]), "system_failed": False} for e in (many, one)
    ]
    table = error_table(rows)
    assert table["macro"]["IRU"] == pytest.approx((0.75 + 0.0) / 2)
    assert table["macro"]["OM"] == pytest.approx((0.25 + 1.0) / 2)
    assert table["pooled"]["IRU"] == pytest.approx(3 / 5)
    assert table["pooled"]["OM"] == pytest.approx(2 / 5)
    assert (table["samples"], table["classified"]) == (2, 5)


def test_macro_average_and_change_after_reflection():
    def one(f1: float, cao: float) -> dict:
        known = int(cao * 4)
        return ebs_row("ebs", bool(f1), [True] * known + [False] * (4 - known))

    per_sample = [
        {"ebs": {"0": one(1.0, 0.5), "1": one(1.0, 0.75)}},
        {"ebs": {"0": one(0.0, 0.25), "1": one(1.0, 0.25)}},
    ]
    table = aggregate_scores(per_sample)["ebs"]
    assert table["rounds"]["0"]["f1"]["mean"] == 0.5 and table["rounds"]["0"]["f1"]["n"] == 2
    assert table["rounds"]["0"]["cao_recall"]["mean"] == pytest.approx(0.375)
    assert table["change"]["f1"] == pytest.approx(0.5)
    assert table["change"]["cao_recall"] == pytest.approx(0.125)
    assert table["rounds"]["1"]["errors"]["macro"]["IRU"] == 1.0
    assert table["rounds"]["1"]["errors"]["pooled"]["IRU"] == 1.0


def test_win_rate_skips_unreadable_judgements():
    assert win_rate(["gold", "gold", "system", None], ["ok", "ok", "ok", "truncated"]) == {
        "gold_win_rate": pytest.approx(2 / 3),
        "judged": 3,
        "gold_wins": 2,
        "unreadable": 1,
        "judge_unparsed": 0,
        "judge_truncated": 1,
        "judge_error": 0,
    }


def test_gold_bsp_as_system_ebs_scores_one_on_every_real_sample(shared_data):
    samples = load_kgds(shared_data / "kgds" / "KGDS.json")
    assert len(samples) == 100
    for sample in samples:
        gold = [p.paragraph_index for p in sample.BSP]
        prf = bsp_scores(gold, sample.supporting, sample.nonsupporting)
        assert (prf.recall, prf.precision, prf.f1) == (1.0, 1.0, 1.0), sample.id


def test_kbsaf_on_real_facts_with_ideal_and_permissive_verifiers(shared_data):
    for sample in load_kgds(shared_data / "kgds" / "KGDS.json"):
        facts = sample.scored_facts()
        key = sum(f.kind == "key" for f in facts)
        checks = [{"pattern": "abs", "round": 0, "kinds": [f.kind for f in facts], "call": {"status": "ok"}}]
        summaries = [{"pattern": "abs", "round": 0, "status": "given", "background": "text", "opinion": None}]

        def kbsaf(verdict) -> dict:
            checks[0]["knowable"] = [verdict(f) for f in facts]
            scores = sample_scores(
                supporting=sample.supporting,
                nonsupporting=sample.nonsupporting,
                n_opinions=len(sample.CAO),
                key_facts=key,
                summaries=summaries,
                fact_checks=checks,
                opinion_checks=[],
                error_checks=[],
            )
            return scores["abs"]["0"]["background"]

        ideal = kbsaf(lambda f: f.kind == "key")
        assert ideal["recall"] == 1.0 and ideal["precision"] == 1.0
        permissive = kbsaf(lambda f: True)
        assert permissive["precision"] == pytest.approx(key / len(facts))
        assert math.isclose(permissive["recall"], 1.0)


def test_model_free_bsp_scoring_of_a_predictions_file(tmp_path):
    from pathlib import Path

    from dialeval.protocols.kgds.report_tables import metrics_only

    fixture = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"sample": 0, "pattern": "ebs", "background": [1, 3]}\n{"sample": 0, "pattern": "ebs", "background": [1, 2], "round": 1}\n')
    table = metrics_only([preds], {"data": str(fixture)})
    assert f"| {preds} | 0 | 50.00 | 50.00 | 50.00 | 1 | 0 |" in table
    assert f"| {preds} | 1 | 100.00 | 100.00 | 100.00 | 1 | 0 |" in table


def test_retrieval_ratio_macro_and_pooled():
    small = score_summary("ebs", background=[1], supporting={1}, nonsupporting={2}, fact_verdicts=None, opinion_verdicts=None, error_checks=[])
    large = score_summary(
        "ebs", background=[1, 2, 99], supporting={1}, nonsupporting={2, 3, 4, 5, 6}, fact_verdicts=None, opinion_verdicts=None, error_checks=[]
    )
    ratio = aggregate_scores([{"ebs": {"0": small}}, {"ebs": {"0": large}}])["ebs"]["rounds"]["0"]["retrieval_ratio"]
    assert ratio["macro"] == pytest.approx((1 / 2 + 2 / 6) / 2)  # paragraph 99 is not in the sample
    assert ratio["pooled"] == pytest.approx(3 / 8)
