"""Pure aggregation: per criterion with failures by kind, per unit for compare, pairwise and human agreement."""

from __future__ import annotations

import pytest

from dialeval.data.io import DataError
from dialeval.conversation.data import load_conversations
from dialeval.protocols.dialogue.human import agreement, load_labels
from dialeval.protocols.dialogue.metrics import aggregate, item_scores, tables
from dialeval.protocols.dialogue.pairwise import combine
from dialeval.conversation.rubric import load_rubric
from tests.dialogue_helpers import write_jsonl


def turn_unit(turn, score, status="ok", criterion="relevance"):
    return {"turn": turn, "criterion": criterion, "status": status, "verdict": score, "score": score,
            "context": {"prompt_tokens": 100 + turn}}


RECORDS = [
    {"id": "c1", "turn_units": [turn_unit(2, 5), turn_unit(4, None, "unparsed"), turn_unit(6, None, "over_budget")],
     "conversation_units": [{"criterion": "goal_completion", "level": "conversation", "status": "ok", "verdict": "yes", "score": 3.0}]},
    {"id": "c2", "turn_units": [turn_unit(2, 3), turn_unit(4, 4)], "conversation_units": []},
]


def test_means_count_read_verdicts_and_failures_apart():
    metrics = aggregate(RECORDS, {"mode": "notes", "budget": 3000, "window_turns": 6})
    row = metrics["turn_criteria"]["relevance"]
    assert (row["n"], row["units"], row["mean"]) == (3, 5, 4.0)
    assert row["failures"] == {"unparsed": 1, "over_budget": 1}
    assert metrics["per_conversation"]["c1"]["conversation"] == {"goal_completion": "yes"}
    assert metrics["prompts"]["judge_max"] == 106 and metrics["prompts"]["over_budget"] == 1
    assert "Context mode: **notes**" in tables(metrics) and "| turn | relevance | 3 | 4.00 |" in tables(metrics)


def test_item_scores_name_turns_and_conversations():
    assert item_scores(RECORDS) == {
        "relevance": {"c1/2": 5, "c2/2": 3, "c2/4": 4},
        "goal_completion": {"c1": 3.0},
    }


@pytest.mark.parametrize(
    "orders, verdict",
    [(("a", "a"), ("a", False)), (("a", "b"), ("tie", True)), (("tie", "b"), ("tie", False)), ((None, "a"), (None, False))],
)
def test_a_verdict_that_flips_with_the_order_is_a_tie(orders, verdict):
    assert combine(*orders) == verdict


def test_agreement_with_human_labels(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]} for i in range(6)
    ])
    judge = {"relevance": {f"c{i}/2": float(s) for i, s in enumerate([1, 2, 3, 4, 5, 5])}}
    human = [{"id": f"c{i}", "turn": 2, "criterion": "relevance", "score": s} for i, s in enumerate([1, 2, 3, 5, 4, 5])]
    labels = load_labels(write_jsonl(tmp_path / "h.jsonl", human), load_rubric("dialogue"), load_conversations(data))

    row = agreement(judge, labels)["relevance"]
    assert row["n"] == 6 and 0.8 < row["spearman"]["value"] <= 1.0
    assert row["kendall_tau_b"]["ci_low"] <= row["kendall_tau_b"]["value"] <= row["kendall_tau_b"]["ci_high"]
    assert row["krippendorff_alpha"]["value"] > 0.7


@pytest.mark.parametrize(
    "label, field",
    [
        ({"id": "c0", "turn": 2, "criterion": "relevance", "score": 9}, "field 'score'"),
        ({"id": "c0", "criterion": "relevance", "score": 3}, "field 'turn'"),
        ({"id": "c0", "turn": 2, "criterion": "relevance", "score": "great"}, "field 'score'"),
    ],
)
def test_bad_human_labels_are_named(tmp_path, label, field):
    data = write_jsonl(tmp_path / "d.jsonl", [{"id": "c0", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}])
    with pytest.raises(DataError, match=rf"h.jsonl, record 1 \(line 1\), {field}"):
        load_labels(write_jsonl(tmp_path / "h.jsonl", [label]), load_rubric("dialogue"), load_conversations(data))
