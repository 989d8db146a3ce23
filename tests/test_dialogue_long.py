"""A 220-turn conversation: the user's allergy in turn 1, a peanut cake suggested at turn 200.

Scripted models record what the judge receives. With ``context=notes`` every prompt stays
under a 2,000-token budget and the judge of turn 200 still sees the allergy (from the
note); with ``window`` it does not; with ``full`` the prompt outgrows the budget and the
late turns are recorded ``over_budget`` instead of being sent.
"""

from __future__ import annotations

import json
import re

import pytest

from dialeval.config import RunConfig
from dialeval.protocols.dialogue.context import prompt_tokens
from dialeval.evaluation import run
from dialeval.testing.scripted import prompt_text
from tests.dialogue_helpers import between, fake_embed, long_conversation, scripted_reviewer, write_jsonl
from tests.helpers import scripted

BUDGET = 2000
RUBRIC = """
criteria:
  - name: consistency
    level: turn
    description: Does the reply agree with everything the user said earlier?
    scale: [1, 5]
"""


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


def judge_run(tmp_path, mode: str):
    """Run the long conversation in ``mode``; the results and every prompt the judge received."""
    data = write_jsonl(tmp_path / "long.jsonl", [long_conversation()])
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    settings, model = scripted(respond=scripted_reviewer)
    config = RunConfig(
        model=settings, output_dir=str(tmp_path / mode), cache_path=None, parse_retries=0,
        options={"rubric": str(rubric), "context": mode, "context_budget": BUDGET, "window_turns": 6},
    )
    result = run("dialogue", data, config, progress=False)
    judged = [p for p in model.prompts if "note-keeper" not in prompt_text(p)]
    notes = [p for p in model.prompts if "note-keeper" in prompt_text(p)]
    return result, judged, notes


def unit_at(result, turn: int) -> dict:
    return next(u for u in result.records[0]["turn_units"] if u["turn"] == turn)


def test_notes_keep_the_early_fact_under_the_budget(tmp_path):
    result, judged, notes = judge_run(tmp_path, "notes")

    assert len(result.records[0]["turns"]) == 220 and len(judged) == 110
    assert max(prompt_tokens(p) for p in judged + notes) <= BUDGET  # every prompt the run sent
    late = unit_at(result, 200)
    assert late["context"]["notes_shown"] == ["user_facts/allergy"]
    assert "allergic to peanuts" in prompt_text(judged[99])  # the prompt for turn 200
    assert late["verdict"] == 1 and late["context"]["prompt_tokens"] <= BUDGET
    assert result.metrics["prompts"]["judge_max"] <= BUDGET


def test_a_window_loses_the_early_fact(tmp_path):
    result, judged, _ = judge_run(tmp_path, "window")

    assert max(prompt_tokens(p) for p in judged) <= BUDGET
    assert "allergic to peanuts" not in prompt_text(judged[99])
    assert unit_at(result, 200)["verdict"] == 5  # the contradiction goes unnoticed


def test_full_grows_past_the_budget_and_is_not_sent(tmp_path):
    result, judged, _ = judge_run(tmp_path, "full")

    sizes = [u["context"]["prompt_tokens"] for u in result.records[0]["turn_units"]]
    assert sizes == sorted(sizes) and sizes[-1] > BUDGET  # the whole conversation keeps growing
    over = [u for u in result.records[0]["turn_units"] if u["status"] == "over_budget"]
    assert over and all(u["score"] is None for u in over)
    assert unit_at(result, 200)["status"] == "over_budget"
    assert len(judged) == 110 - len(over) and max(prompt_tokens(p) for p in judged) <= BUDGET
    assert result.metrics["turn_criteria"]["consistency"]["failures"] == {"over_budget": len(over)}


def hoarding_note_taker(messages) -> str:
    """Keeps every exchange as a new entry, so the note outgrows the budget."""
    text = prompt_text(messages)
    if "note-keeper" not in text:
        return scripted_reviewer(messages)
    note = json.loads(between(text, "<note>", "</note>"))
    exchange = between(text, "<exchange>", "</exchange>")
    number = re.findall(r"\[turn (\d+)\] Assistant", exchange)[-1]
    note[f"turn_{number}"] = exchange.splitlines()[-1][:120]
    if "allergic to peanuts" in exchange:
        note["allergy"] = "allergic to peanuts"
    return json.dumps(note)


def test_a_note_longer_than_the_budget_is_shown_in_part(tmp_path):
    data = write_jsonl(tmp_path / "long.jsonl", [long_conversation()])
    settings, model = scripted(respond=hoarding_note_taker)
    config = RunConfig(
        model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0,
        options={"criteria": ["consistency"], "context": "notes", "context_budget": BUDGET},
    )
    result = run("dialogue", data, config, progress=False)

    updates = result.records[0]["note_updates"]
    assert all(u["status"] == "ok" and u["prompt_tokens"] <= BUDGET for u in updates)
    last = updates[-1]
    assert last["entries"] == 110 and last["entries_shown"] < last["entries"]  # shown in part, all kept
    assert max(prompt_tokens(p) for p in model.prompts) <= BUDGET
