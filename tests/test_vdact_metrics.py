"""VDAct score summaries: question-type keyword rules, majority votes, 0-1 scaling."""

from __future__ import annotations

import pytest

from dialeval.protocols.vdact.metrics import headline_scores, majority_vote, question_types, score_summary, type_breakdown


@pytest.mark.parametrize(
    "question, reference, expected",
    [
        ("What does he do after that?", "He sits.", ["T-SEQ"]),
        ("What is the first thing he cleans?", "The TV.", ["T-SEQ"]),
        ("How long does he spend cleaning?", "About 15 seconds.", ["T-FRQ"]),
        ("How often does he open the fridge?", "Twice.", ["T-FRQ"]),
        ("How does he clean the TV?", "With a towel.", ["EXP"]),
        ("Why does he go to the bathroom?", "To get a towel.", ["EXP"]),
        ("How many plates does he carry?", "Two.", ["QNT"]),
        ("Did he turn on the light?", "Yes, he did.", ["Binary-Q", "Binary-A", "Binary-QA"]),
        ("Is he happy?", "He seems so.", ["Binary-Q"]),
        ("Holding the chicken?", "No, a pan.", ["Binary-A"]),
        ("Does he sit down before eating?", "No.", ["T-SEQ", "Binary-Q", "Binary-A", "Binary-QA"]),
        ("What is on the table?", "A plate.", []),
        ("What happens afterwards?", "Nothing.", []),  # whole words only
    ],
)
def test_question_types_follow_the_keyword_rules(question, reference, expected):
    assert question_types(question, reference) == expected


@pytest.mark.parametrize(
    "scores, expected", [([3, 3, 2], 3), ([1, 1, 1], 1), ([1, 2, 3], None), ([2], 2), ([2, 3], None), ([], None), (None, None)]
)
def test_majority_vote_excludes_full_disagreement(scores, expected):
    assert majority_vote(scores) == expected


def test_score_summary_counts_each_failure_kind_apart():
    s = score_summary([(1, "ok"), (3, "ok"), (None, "unparsed"), (2, "ok"), (None, "truncated"), (None, "error"), (1, "no_answer")], 1, 3)
    assert (s["turns"], s["judged"], s["no_answer"]) == (7, 3, 1)
    assert (s["unparsed"], s["truncated"], s["error"]) == (1, 1, 1)  # an errored call is not an unparsed one
    assert s["n"] == s["valid_n"] == 4  # without a rule the judge's failures are left out
    assert s["mean"] == s["valid_mean"] == pytest.approx(7 / 4)
    assert s["mean_scaled"] == pytest.approx(3 / 8)
    assert score_summary([(5, "ok"), (0, "ok")], 0, 5)["mean_scaled"] == 0.5
    assert score_summary([(None, "unparsed")], 1, 3)["mean"] is None


def test_a_released_rule_scores_unreadable_replies_in_the_headline_only():
    # VDEval's released scoring rates a reply without a readable rating 1
    s = score_summary([(3, "ok"), (3, "ok"), (None, "unparsed"), (None, "truncated"), (None, "error")], 1, 3, unreadable_as=1)
    assert (s["n"], s["mean"]) == (4, 2.0)  # 3, 3, 1, 1: an error is no reply and stays out
    assert (s["valid_n"], s["valid_mean"], s["valid_mean_scaled"]) == (2, 3.0, 1.0)
    assert headline_scores([(3, "ok"), (None, "unparsed"), (None, "error")], 1) == [3, 1.0, None]
    assert headline_scores([(None, "unparsed")], None) == [None]


def test_type_breakdown_splits_each_type_from_the_other_turns():
    out = type_breakdown([(["QNT"], 3, "ok"), ([], 1, "ok"), (["QNT", "EXP"], None, "unparsed")], 1, 3)
    assert out["QNT"]["type"]["judged"] == 1 and out["QNT"]["type"]["unparsed"] == 1
    assert out["QNT"]["type"]["mean_scaled"] == 1.0
    assert out["QNT"]["others"]["mean_scaled"] == 0.0
    assert out["T-SEQ"]["type"]["mean"] is None
    assert type_breakdown([(["QNT"], None, "unparsed")], 1, 3, unreadable_as=1)["QNT"]["type"]["mean"] == 1.0


def _record(statuses: list[tuple[int | None, str]], agent: str = "vdact.session_judge") -> dict:
    turns = [
        {"id": f"t{i}", "turn_num": i, "scores": None if s is None else {"rating": s}, "status": st, "types": [],
         "human": None, "reference": "r", "candidate": "c"}
        for i, (s, st) in enumerate(statuses, start=1)
    ]
    return {"id": "bot/0000101", "system": "bot", "dial_id": "0000101", "agent": agent, "example": "built-in",
            "turns": turns, "usage": {}, "source_dialogues": 1, "source_turns": len(turns)}


def test_tables_list_transport_errors_apart_from_unparsed_replies():
    from dialeval.benchmarks import get_benchmark

    bench = get_benchmark("vdact")
    metrics = bench.aggregate([_record([(3, "ok"), (None, "error"), (None, "unparsed"), (1, "no_answer")])], {})
    rating = metrics["systems"]["bot"]["dimensions"]["rating"]
    assert (rating["error"], rating["unparsed"], rating["no_answer"]) == (1, 1, 1)
    assert (rating["n"], rating["mean"]) == (3, pytest.approx(5 / 3))  # 3, 1 (unreadable, released rule), 1 (no answer)
    assert (rating["valid_n"], rating["valid_mean"]) == (2, 2.0)
    assert (rating["turns"], rating["judged"], rating["truncated"]) == (4, 1, 0)
    assert (rating["mean_scaled"], rating["valid_mean_scaled"]) == (pytest.approx(1 / 3), 0.5)


def test_records_of_two_judges_are_not_mixed():
    from dialeval.benchmarks import get_benchmark
    from dialeval.config import ConfigError

    with pytest.raises(ConfigError, match="mix judges"):
        get_benchmark("vdact").aggregate([_record([(3, "ok")]), _record([(3, "ok")], agent="vdact.lave_judge")], {})
