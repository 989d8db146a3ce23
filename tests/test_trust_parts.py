"""The trust card's parts on small fixed inputs: statistics against scipy and krippendorff,
probes, the recommendation, the perturbations, candidates, and card.md's layout (golden)."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from scipy import stats as scipy_stats

from dialeval.errors import ConfigError
from dialeval.trust import perturb, probes
from dialeval.trust.candidates import candidates_of, family_of
from dialeval.trust.recommend import recommend
from dialeval.trust.render import render
from tests.test_golden_tables import check_golden


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_card_the_report_and_compare_read_one_alpha_at_one_level(seed, tmp_path):
    """The same labelled pairs (a whole-number judge against averaged labels) give the same
    alpha, ordinal as every column says, on the card, in the run report and in compare."""
    from dialeval.metrics.agreement import agreement as compared
    from dialeval.protocols.dialogue.human import agreement as reported, load_labels
    from dialeval.conversation.rubric import parse_rubric
    from dialeval.trust.agreement import judge_figures
    from tests.dialogue_helpers import write_jsonl

    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, 40).astype(float)
    pairs = [[int(q), int(np.clip(q + rng.integers(-1, 2), 1, 5))] for q in rng.integers(1, 6, 40)]
    y = np.array([np.mean(p) for p in pairs])  # means of two labels: halves
    expected = krippendorff.alpha(reliability_data=np.stack([x, y]), level_of_measurement="ordinal")
    labels = {f"u{i}": {"a": float(p[0]), "b": float(p[1])} for i, p in enumerate(pairs)}
    card = judge_figures({f"u{i}": v for i, v in enumerate(x)}, labels, resamples=50)
    rubric = parse_rubric({"criteria": [{"name": "q", "description": "quality", "scale": [1, 5]}]}, "r.yaml")
    rows = write_jsonl(tmp_path / "h.jsonl", [{"id": f"u{i}", "turn": 2, "criterion": "q", "score": p} for i, p in enumerate(pairs)])
    report = reported({"q": {f"u{i}/2": v for i, v in enumerate(x)}}, load_labels(rows, rubric))["q"]
    compare = compared(list(x), list(y))
    assert card["krippendorff_alpha"]["value"] == pytest.approx(expected)
    assert report["krippendorff_alpha"]["value"] == pytest.approx(expected) and report["alpha_level"] == "ordinal"
    assert compare["krippendorff_alpha"] == pytest.approx(expected) and compare["alpha_level"] == "ordinal"
    assert card["spearman"]["value"] == pytest.approx(scipy_stats.spearmanr(x, y).statistic)


def test_a_probe_fails_only_when_its_whole_interval_is_past_the_limit():
    assert probes.result("position", {"value": 0.3, "ci_low": 0.15, "ci_high": 0.45}, 20)["fails"] is True
    assert probes.result("position", {"value": 0.3, "ci_low": 0.05, "ci_high": 0.45}, 20)["fails"] is False
    assert probes.result("needle", {"value": 0.5, "ci_low": 0.2, "ci_high": 0.7}, 10)["fails"] is True
    assert probes.not_measured("needle", "too short")["fails"] is None


def test_self_preference_compares_the_judges_excess_on_its_own_family_with_the_others():
    judge = {"q": {f"u{i}": 4.0 + (i < 4) for i in range(8)}}
    human = {"q": {f"u{i}": 4.0 for i in range(8)}}
    families = {f"u{i}": "openai" if i < 4 else "anthropic" for i in range(8)}
    found = probes.self_preference(judge, human, families, "openai", {"q": (1.0, 5.0)}, resamples=200)
    assert found["value"] == pytest.approx(0.25) and found["fails"] is True and found["own_family"] == 4
    assert probes.self_preference(judge, human, families, "google", {"q": (1.0, 5.0)})["fails"] is None


def test_a_judge_that_changes_its_mind_fails_consistency():
    rng = np.random.default_rng(0)
    base = {"q": {f"u{i}": float(rng.integers(1, 6)) for i in range(40)}}
    steady = probes.consistency(base, [base], resamples=200)
    moody = probes.consistency(base, [{"q": {u: float(rng.integers(1, 6)) for u in base["q"]}}], resamples=200)
    assert steady["value"] == 0.0 and steady["fails"] is False and steady["repeat_alpha"] == pytest.approx(1.0)
    assert moody["value"] > 0.5 and moody["fails"] is True and moody["repeat_alpha"] < 0.5
    assert probes.consistency(base, [])["fails"] is None  # one reading: nothing to compare


def test_the_ceiling_puts_each_annotator_against_the_others():
    from dialeval.trust.agreement import ceiling

    labels = {f"u{i}": {"a": float(1 + i % 5), "b": float(1 + (i + (i % 3 == 0)) % 5), "c": float(1 + i % 5)} for i in range(15)}
    out, held = ceiling(labels, resamples=200, judge={u: s["a"] for u, s in labels.items()})
    data = np.array([[labels[u][k] for u in labels] for k in "abc"])
    assert out["alpha_among_annotators"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    others = {k: [np.mean([labels[u][j] for j in "abc" if j != k]) for u in labels] for k in "abc"}
    expected = np.mean([scipy_stats.spearmanr(data[i], others[k]).statistic for i, k in enumerate("abc")])
    assert out["spearman"]["value"] == pytest.approx(expected) and out["annotators"] == 3
    # the judge (here annotator a's labels again) in each annotator's place, against the same means
    as_judge = np.mean([scipy_stats.spearmanr(data[0], others[k]).statistic for k in "abc"])
    assert held["spearman"]["value"] == pytest.approx(as_judge) and held["units"] == 15
    assert ceiling({"u1": {"a": 3.0}, "u2": {"a": 4.0}})[0]["units"] == 0  # one label per unit: no ceiling


def test_the_recommendation_prefers_the_cheapest_close_candidate_that_fails_no_probe():
    rows = [
        {"label": "big", "alpha": 0.80, "cost_per_1000_units": 9.0, "failed_probes": []},
        {"label": "small", "alpha": 0.77, "cost_per_1000_units": 0.5, "failed_probes": []},
        {"label": "tiny", "alpha": 0.79, "cost_per_1000_units": 0.1, "failed_probes": ["position"]},
        {"label": "poor", "alpha": 0.40, "cost_per_1000_units": 0.01, "failed_probes": []},
        {"label": "free", "alpha": 0.80, "cost_per_1000_units": None, "failed_probes": []},
    ]
    out = recommend(rows, tolerance=0.05)
    assert out["label"] == "small" and out["close"] == ["tiny", "small", "big", "free"]
    assert "tiny (position)" in out["sentence"] and "not a guarantee" in out["sentence"]
    assert recommend(rows, tolerance=0.01)["label"] == "big"  # small is now too far below the best
    assert recommend([{**r, "failed_probes": ["needle"]} for r in rows[:2]], 0.05)["label"] == "small"
    assert recommend([{"label": "x", "alpha": None, "cost_per_1000_units": 1.0, "failed_probes": []}])["label"] is None


def test_perturbations_keep_units_and_change_only_what_the_probe_tests():
    record = {"id": "c1", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
                                       {"role": "user", "content": "Plan?"}, {"role": "assistant", "content": "Go."}]}
    [padded] = perturb.padded([record])
    assert [m["content"].split(" ", 1)[0] for m in padded["messages"]] == ["Hi", "Hello.", "Plan?", "Go."]
    assert all(len(p["content"]) > len(m["content"]) + 40 for p, m in zip(padded["messages"][1::2], record["messages"][1::2]))
    assert record["messages"][1]["content"] == "Hello."  # the input is left as it was
    planted, needles = perturb.planted([record], min_replies=2)
    fact, contradiction = perturb.NEEDLES[0]
    assert needles == {"c1": 4}
    assert planted[0]["messages"][0]["content"].startswith(fact) and planted[0]["messages"][3]["content"].endswith(contradiction)
    assert perturb.planted([record], min_replies=3) == ([], {})


def test_candidates_from_specs_and_families():
    judges = candidates_of(["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"], base_url=None)
    assert [j.family for j in judges] == ["openai", "anthropic"] and judges[0].slug == "openai-gpt-4o-mini"
    assert family_of("meta-llama/Llama-3.1-8B-Instruct") == "meta" and family_of("my-judge") == "my"
    with pytest.raises(ConfigError, match="two candidates"):
        candidates_of(["openai:gpt-4o", "openai:gpt-4o"])
    with pytest.raises(ConfigError, match="at least one"):
        candidates_of([])


def _figure(value: float | None, width: float = 0.1) -> dict:
    return {"value": value, "ci_low": None if value is None else value - width, "ci_high": None if value is None else value + width}


def fixed_card() -> dict:
    """A small card with fixed figures: two candidates, one criterion, every probe."""
    def candidate(label: str, alpha: float, cost: float | None, flip: float) -> dict:
        found = {"position": probes.result("position", _figure(flip, 0.05), 12),
                 "verbosity": probes.result("verbosity", _figure(0.0, 0.02), 12),
                 "self_preference": probes.not_measured("self_preference", "no reply model recorded"),
                 "needle": probes.result("needle", _figure(0.9), 4),
                 "consistency": probes.result("consistency", _figure(0.05, 0.04), 12)}
        figures = {"n": 12, "labelled": 12, **{k: _figure(alpha) for k in ("spearman", "kendall_tau_b", "krippendorff_alpha")},
                   "exact_agreement": _figure(0.6), "adjacent_agreement": _figure(0.95, 0.04)}
        ceiling = {"units": 12, "annotators": 3, "alpha_among_annotators": 0.74, **{k: _figure(0.8) for k in ("spearman", "kendall_tau_b", "krippendorff_alpha")},
                   "exact_agreement": _figure(0.7), "adjacent_agreement": _figure(0.97, 0.02)}
        held = {"units": 12, **{k: _figure(alpha - 0.04) for k in ("spearman", "kendall_tau_b", "krippendorff_alpha")}}
        return {"label": label, "spec": {"label": label}, "alpha": alpha,
                "agreement": {"turn/helpfulness": {**figures, "ceiling": ceiling, "leave_one_out": held}},
                "probes": found, "failed_probes": probes.failed(found), "cost_per_1000_units": cost, "seconds_per_1000_units": 120.0,
                "unreadable": 1, "failed_items": 0, "runs": {"base": f"trust/x/runs/{label}-base"}}
    rows = [candidate("openai:gpt-4o", 0.78, 2.5, 0.02), candidate("openai:gpt-4o-mini", 0.75, 0.15, 0.3)]
    return {"id": "trust-0123456789", "rubric": "rubric.yaml", "tolerance": 0.05, "complete": True,
            "units": {"conversations": 4, "labelled": 12, "labels": 36, "annotators": 3}, "estimate": {"cost_usd": 0.0123},
            "probes_run": list(probes.LIMITS), "limits": probes.LIMITS, "candidates": rows, "recommended": recommend(rows, 0.05)}


def test_the_card_keeps_its_layout():
    card = fixed_card()
    assert card["recommended"]["label"] == "openai:gpt-4o"  # the cheaper one flips with the order
    text = render(json.loads(json.dumps(card)))
    assert text.splitlines()[2].startswith("Use **openai:gpt-4o**")
    check_golden("trust_card", text)


def test_a_criterion_name_used_at_two_levels_maps_back_to_the_rubric():
    """The dialogue benchmark names the conversation-level one ``overall (conversation)``."""
    from types import SimpleNamespace

    from dialeval.trust.dialogue import _dimensions

    rubric = SimpleNamespace(criteria=[SimpleNamespace(name="overall", level="conversation"), SimpleNamespace(name="overall", level="turn")])
    known = _dimensions(rubric)
    assert (known["overall"].level, known["overall (conversation)"].level) == ("turn", "conversation")


def test_the_card_lists_the_skipped_labels_and_counts_the_rest():
    card = fixed_card() | {"label_warnings": [f"labels.jsonl, record {i}: no assistant turn 'c0/1' in the data file; label skipped"
                                              for i in range(1, 13)], "label_warning_count": 12}
    lines = render(card).splitlines()
    assert any("The labels file gave 12 warnings: those labels were skipped" in line for line in lines)
    assert [line for line in lines if line.startswith("- labels.jsonl, record ")][-1].startswith("- labels.jsonl, record 10:")
    assert "- ... and 2 more" in lines


def test_a_pick_at_chance_level_is_not_recommended():
    card = fixed_card()
    for row, alpha in zip(card["candidates"], (-0.0003, -0.02)):
        row["alpha"], row["cost_per_1000_units"] = alpha, None
        row["agreement"]["turn/helpfulness"]["krippendorff_alpha"] = _figure(alpha)
    card["recommended"] = recommend(card["candidates"], 0.05)
    text = render(json.loads(json.dumps(card)))
    first = text.splitlines()[2]
    assert card["recommended"]["label"] is None and card["recommended"]["closest"] == "openai:gpt-4o"
    assert first.startswith("No candidate is shown to agree with the humans") and "Use **" not in first
    assert "-0.000" not in text and "0.000" in first


def test_without_prices_the_pick_is_not_called_the_cheapest():
    rows = fixed_card()["candidates"]
    for row in rows:
        row["cost_per_1000_units"] = None
    sentence = recommend(rows, 0.05)["sentence"]
    assert sentence.startswith("Use **") and "cheapest" not in sentence
