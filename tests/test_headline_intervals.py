"""Every headline figure of the five protocols' tables has its 95% interval beside it, drawn
by the one resampler (metrics/intervals.py) over the protocol's units."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.metrics.intervals import mean_with_interval, statistic_with_interval

GOLDEN = Path(__file__).parent / "golden"
SCORES = [0.2, 0.5, 0.9, 0.4, 0.7, 1.0]


def _is_interval_of(ci, values, scale=1.0) -> bool:
    expected = mean_with_interval(values)[1]
    return ci is not None and ci == pytest.approx([scale * expected[0], scale * expected[1]])


def test_kgds_table_1_cells_carry_the_interval_over_samples():
    from dialeval.protocols.kgds.metrics import macro

    cell = macro(SCORES)
    assert _is_interval_of(cell["ci"], SCORES) and cell["ci"][0] < cell["mean"] < cell["ci"][1]
    metrics = json.loads((GOLDEN / "kgds.metrics.json").read_text())
    for key in ("recall", "precision", "f1", "cao_recall", "op_gm"):
        metrics["patterns"]["ebs"]["rounds"]["0"][key]["ci"] = [0.4, 0.6]
    first = next(line for line in get_benchmark("kgds").tables(metrics).splitlines() if line.startswith("| EBS-AOS | 0 |"))
    assert first.count("[40.00, 60.00]") == 5  # R, P, F1, CAO R, OP GM


def _question(ability: str, score: float | None, **extra) -> dict:
    return {"ability": ability, "score": score, "answer_status": "ok", "notes_mode": None, "ep": None, "imp": None,
            "refusal": None, **extra}


def test_mmrc_abilities_objective_precisions_and_overall_carry_intervals():
    from dialeval.protocols.mmrc.metrics import summarize

    questions = [_question(a, s) for a in ("IE", "CR") for s in (1, 3, 4, 5)]
    questions += [_question("IM", 2, imp={"hits": h, "misses": 1}) for h in (0, 1, 3)]
    questions += [_question("AR", 0, refusal={"expected": True, "refused": r, "status": "ok", "method": "judge"}) for r in (1, 0, 1)]
    s = summarize(questions)
    assert _is_interval_of(s["abilities"]["IE"]["ci"], [1, 3, 4, 5])
    assert _is_interval_of(s["IMP"]["ci"], [0.0, 0.5, 0.75]) and _is_interval_of(s["RP"]["ci"], [1.0, 0.0, 1.0])
    low, high = s["overall_ci"]
    assert low < s["overall"] < high
    table = get_benchmark("mmrc").tables({"conditions": {"off": s}})
    assert f"| IE (0-5) | 3.25 | [{s['abilities']['IE']['ci'][0]:.2f}, {s['abilities']['IE']['ci'][1]:.2f}] |" in table


def test_vdact_headline_and_question_types_carry_intervals_over_turns():
    from dialeval.protocols.vdact.metrics import score_summary

    turns = [(s, "ok") for s in (1, 2, 3, 3, 2, 3)] + [(None, "unparsed")]
    summary = score_summary(turns, 1, 3, unreadable_as=1)
    headline = [1, 2, 3, 3, 2, 3, 1]  # the unreadable reply counts as 1 in the headline
    assert _is_interval_of(summary["ci"], headline)
    assert summary["ci_scaled"] == pytest.approx([(summary["ci"][0] - 1) / 2, (summary["ci"][1] - 1) / 2])


def test_mmdu_scores_carry_intervals_over_dialogues():
    from dialeval.protocols.mmdu.metrics import dimension_summary

    def dialogue(*scores):
        return {"turns": [{"judge_status": "ok", "scores": {"Overall Score": s}} for s in scores]}

    records = [dialogue(2, 4), dialogue(6), dialogue(8, 8, 5), dialogue(3)]
    summary = dimension_summary(records, "Overall Score")
    assert _is_interval_of(summary["ci"], [3.0, 6.0, 7.0, 3.0], scale=10)


def test_mdseval_keeps_its_intervals_beside_every_figure():
    table = get_benchmark("mdseval").tables(json.loads((GOLDEN / "mdseval.metrics.json").read_text()))
    assert "| MLLM-as-a-judge | 83.3 [50.0, 100.0] |" in table


def test_the_resampler_gives_no_interval_on_one_unit_and_a_statistics_interval_holds_its_value():
    assert statistic_with_interval(1, lambda units: 1.0) == (1.0, None)
    values = [1.0, 2.0, 4.0, 8.0]
    value, ci = statistic_with_interval(len(values), lambda units: sum(values[i] for i in units) / len(units))
    assert value == 3.75 and ci == pytest.approx(list(mean_with_interval(values)[1]))  # the same draws as the mean's
