"""MMDU aggregation and meta-evaluation, on small hand-made records."""

from __future__ import annotations

import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from dialeval.protocols.mmdu.metrics import DIMENSIONS, agreement_table, benchmark_scores, correlations, human_agreement, judge_agreement


def _turn(turn: int, overall: int | None, creativity: int | None = 5, status: str = "ok", human: float | None = None) -> dict:
    scores = {d: 5 for d in DIMENSIONS} | {"Overall Score": overall, "Creativity": creativity}
    if status != "ok":
        scores = {d: None for d in DIMENSIONS}
    return {"turn": turn, "answered": True, "judge_status": status, "scores": scores, "human": human}


def _records(a: list[int | None], b: list[int | None]) -> list[dict]:
    return [
        {"id": "a", "turns": [_turn(i + 1, s) for i, s in enumerate(a)]},
        {"id": "b", "turns": [_turn(i + 1, s) for i, s in enumerate(b)]},
    ]


def test_turns_then_dialogues_times_ten_as_in_section_2_3():
    records = _records([6, 8], [4])
    by_dialogue = benchmark_scores(records)["dimensions"]["Overall Score"]
    pooled = benchmark_scores(records, "turn")["dimensions"]["Overall Score"]
    assert by_dialogue["score"] == pytest.approx(10 * ((6 + 8) / 2 + 4) / 2)
    assert pooled["score"] == pytest.approx(10 * (6 + 8 + 4) / 3)
    assert (by_dialogue["turns"], by_dialogue["dialogues"]) == (3, 2)


def test_unparsed_dimensions_and_failed_judges_stay_out_of_the_means():
    records = _records([6, None], [4])
    records[1]["turns"].append(_turn(2, None, status="unparsed"))
    summary = benchmark_scores(records)
    overall = summary["dimensions"]["Overall Score"]
    assert overall["score"] == pytest.approx(10 * (6 + 4) / 2)
    assert (overall["turns"], overall["unparsed"]) == (2, 1)
    assert summary["dimensions"]["Creativity"]["turns"] == 3  # the other dimensions of that turn still count
    assert summary["judge_failed"] == 1 and summary["judged"] == 3


def test_a_dialogue_without_any_score_is_not_a_zero():
    records = _records([None], [7])
    assert benchmark_scores(records)["dimensions"]["Overall Score"]["score"] == pytest.approx(70.0)


def test_correlations_match_scipy_and_say_when_undefined():
    judge = [3, 5, 6, 8, None, 9]
    human = [2, 5, 7, 8, 4, 7]
    got = correlations(judge, human)
    x, y = [3, 5, 6, 8, 9], [2, 5, 7, 8, 7]
    assert got["n"] == 5
    assert got["pearson"] == pytest.approx(pearsonr(x, y).statistic)
    assert got["spearman"] == pytest.approx(spearmanr(x, y).statistic)
    assert got["kendall_tau_b"] == pytest.approx(kendalltau(x, y, variant="b").statistic)
    assert correlations([5, 5, 5], [1, 2, 3])["reason"] == "one side is constant"
    assert correlations([5], [1])["pearson"] is None


def test_judge_against_experts_per_turn_and_per_dialogue():
    records = [
        {"id": "a", "turns": [_turn(1, 6, human=5), _turn(2, 8, human=9), _turn(3, None, human=3)]},
        {"id": "b", "turns": [_turn(1, 3, human=2), _turn(2, 4, human=4)]},
        {"id": "c", "turns": [_turn(1, 9, human=8)]},
    ]
    result = human_agreement(records)
    assert result["rated_turns"] == 6 and result["judge_missing"] == 1
    assert result["turns"]["pearson"] == pytest.approx(pearsonr([6, 8, 3, 4, 9], [5, 9, 2, 4, 8]).statistic)
    assert result["dialogues"]["pearson"] == pytest.approx(pearsonr([7, 3.5, 9], [7, 3, 8]).statistic)
    assert human_agreement(_records([5], [6])) is None


def test_judge_against_judge_on_the_turns_both_scored():
    strict = _records([4, 6, 5], [3])
    lenient = _records([6, 8, None], [5])
    result = judge_agreement({"judge-a": strict, "judge-b": lenient})
    [pair] = result["pairs"]
    assert pair["n"] == 3
    assert pair["pearson"] == pytest.approx(pearsonr([4, 6, 3], [6, 8, 5]).statistic)
    assert pair["mean_abs_diff"] == pytest.approx(2.0)
    assert pair["mean_diff_x10"] == pytest.approx(-20.0)
    assert result["judges"]["judge-b"]["dimensions"]["Overall Score"]["score"] == pytest.approx(10 * (7 + 5) / 2)
    assert pair["pearson"] == pytest.approx(1.0)
    assert "Agreement on Overall scores" in agreement_table(result)
    with pytest.raises(ValueError):
        judge_agreement({"only": strict})
    # a turn whose answer differs between the runs is not a judge disagreement: left out, counted
    lenient[0]["turns"][0]["answer"] = "another answer"
    [pair] = judge_agreement({"judge-a": strict, "judge-b": lenient})["pairs"]
    assert (pair["n"], pair["different_answers"]) == (2, 1)
