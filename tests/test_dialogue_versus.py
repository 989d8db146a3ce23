"""Two systems on the same conversations (option versus), over HTTP: both orders, flips, win rate."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from dialeval.data.io import DataError
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import write_jsonl
from tests.helpers import http_config

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")
SYSTEM_B = [
    {"id": "trip", "messages": [
        {"role": "system", "content": "You are a travel helper. Keep answers short."},
        {"role": "user", "content": "I am vegetarian and I land in Lisbon on Friday."},
        {"role": "assistant", "content": "Welcome! Try the famous grilled chicken."},
        {"role": "user", "content": "Where should I eat on Saturday?"},
        {"role": "assistant", "content": "Try the vegetarian lunch at the old market hall."}]},
    {"id": "lamp", "conversations": [
        {"from": "human", "value": "My desk lamp flickers. What should I check?"},
        {"from": "gpt", "value": "Buy a new lamp."}]},
]


def candidate(text: str, n: int) -> str:
    return re.findall(rf"<candidate_{n}>\n(.*?)\n</candidate_{n}>", text, re.S)[-1]


def referee(body: dict) -> str:
    """Turn 4 of trip: always the first shown (a positional bias, so the verdict flips);
    elsewhere the candidate that mentions the right thing."""
    text = prompt_of(body)
    if "<candidate_1>" not in text:
        return '{"rationale": "fine", "verdict": "yes"}' if 'one of: "yes"' in text else '{"rationale": "fine", "verdict": 4}'
    if "reply at turn 4;" in text and ("sardines" in text or "market hall" in text):  # trip's turn 4
        return '{"rationale": "the first", "winner": "1"}'
    good = ("bulb", "vegetable stew", "vegetarian lunch")
    first = any(word in candidate(text, 1).split("[turn 4]")[-1] for word in good)
    return '{"rationale": "it fits", "winner": "%s"}' % ("1" if first else "2")


def test_two_systems_in_both_orders(tmp_path):
    versus = write_jsonl(tmp_path / "system_b.jsonl", SYSTEM_B)
    with OpenAIStub(respond=referee) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"versus": str(versus), "criteria": ["relevance", "goal_completion"]})
        result = run("dialogue", str(FIXTURE), config, progress=False)
        asked = [prompt_of(b) for b in server.requests if "<candidate_1>" in prompt_of(b)]
    # a turn-level pair shows each system's own conversation up to the judged reply (issue 49: as MT-Bench's judge)
    trip4 = next(t for t in asked if "reply at turn 4;" in t and "Lisbon" in t)
    sides = {candidate(trip4, 1), candidate(trip4, 2)}
    assert any("[turn 2] Assistant: Welcome! Try the famous grilled chicken." in side for side in sides)
    assert all(side.startswith("[turn 1] User: I am vegetarian") and side.count("[turn") == 4 for side in sides)

    trip = next(r for r in result.records if r["id"] == "trip")
    flipped = next(u for u in trip["pairwise_units"] if u.get("turn") == 4)
    assert flipped["orders"] == ["a", "b"] and flipped["winner"] == "tie" and flipped["position_inconsistent"]
    assert flipped["order_inconsistent"]
    turn = result.metrics["pairwise"]["turn/relevance"]
    assert (turn["n"], turn["a_wins"], turn["b_wins"], turn["ties"], turn["position_inconsistent"]) == (3, 2, 0, 1, 1)
    assert turn["win_rate_a"] == pytest.approx(2.5 / 3) and turn["first_position_rate"] == pytest.approx(4 / 6)
    assert turn["ci_low"] <= turn["win_rate_a"] <= turn["ci_high"]
    whole = result.metrics["pairwise"]["conversation/goal_completion"]
    assert (whole["a_wins"], whole["b_wins"]) == (1, 1)  # trip's whole conversation goes to B, lamp's to A
    assert "win rate A [95% CI]" in (result.run_dir / "report.md").read_text(encoding="utf-8")


def test_a_versus_file_must_hold_the_same_conversations(tmp_path):
    from dialeval.protocols.dialogue.loading import load

    other = [dict(SYSTEM_B[0]), SYSTEM_B[1]]
    other[0]["messages"] = [*SYSTEM_B[0]["messages"][:3], {"role": "user", "content": "Something else?"}, SYSTEM_B[0]["messages"][4]]
    versus = write_jsonl(tmp_path / "b.jsonl", other)
    with pytest.raises(DataError, match=r"b.jsonl, record 1 \(line 1\), field 'turn 3'.*user turn 3 differs"):
        load(FIXTURE, {"versus": str(versus)})
    with pytest.raises(DataError, match="conversation 'lamp' of the data file is missing"):
        load(FIXTURE, {"versus": str(write_jsonl(tmp_path / "c.jsonl", SYSTEM_B[:1]))})
