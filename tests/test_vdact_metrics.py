"""VDAct score summaries: question-type keyword rules, majority votes, 0-1 scaling."""

from __future__ import annotations

import pytest

from dialeval.metrics.vdact import majority_vote, question_types, score_summary, type_breakdown


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


def test_score_summary_scales_and_counts_unparsed():
    s = score_summary([1, 3, None, 2], 1, 3)
    assert (s["turns"], s["scored"], s["unparsed"]) == (4, 3, 1)
    assert s["mean"] == 2.0 and s["mean_scaled"] == 0.5
    assert score_summary([5, 0], 0, 5)["mean_scaled"] == 0.5
    assert score_summary([None], 1, 3)["mean"] is None


def test_type_breakdown_splits_each_type_from_the_other_turns():
    out = type_breakdown([(["QNT"], 3), ([], 1), (["QNT", "EXP"], None)], 1, 3)
    assert out["QNT"]["type"]["scored"] == 1 and out["QNT"]["type"]["unparsed"] == 1
    assert out["QNT"]["type"]["mean_scaled"] == 1.0
    assert out["QNT"]["others"]["mean_scaled"] == 0.0
    assert out["T-SEQ"]["type"]["mean"] is None
