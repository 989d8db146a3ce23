"""The MMRC graph end to end with scripted models: replay, NOTE-TAKING, answers, judges."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from dialeval.config import ModelSettings, RunConfig
from dialeval.data.mmrc import load_conversations
from dialeval.memory import MemorySettings, open_note_store
from dialeval.runner import run
from dialeval.testing.scripted import prompt_text
from tests.helpers import scripted

FIXTURES = Path(__file__).parent / "fixtures" / "mmrc_conversations.json"
QUESTION_MARK = "A question about our conversation so far"
NOTES_MARK = "Notes taken during this conversation"


def fake_embed(texts, batch_size=64):
    """Hashed bag of words instead of MiniLM, so graph tests stay fast."""
    out = []
    for text in texts:
        v = [0.0] * 32
        for word in text.lower().split():
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % 32] += 1.0
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        out.append([x / norm for x in v])
    return out


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.embeddings.embed", fake_embed)


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def take_note(text: str) -> str:
    """A note-keeper that tracks the running goal and the knee."""
    note = json.loads(_between(text, "The note so far:", "The user's new message"))
    message = _between(text, "):", "Update the note")
    if "under 60 minutes" in message:
        note.setdefault("facts", {})["race_goal"] = "under 60 minutes"
    if "without walking" in message:
        note.setdefault("facts", {})["race_goal"] = "finish without walking"
    if "knee" in message:
        note.setdefault("user_info", {})["health"] = "sore knee"
    return json.dumps(note)


def answer_question(last: str) -> str:
    if "current goal" in last:
        return "Finish without walking." if "finish without walking" in last else "Under 60 minutes."
    if "training routine" in last:
        return "Three times a week and swimming."
    if "brand" in last:
        return "They are Brand X shoes."
    if "race course" in last:
        return "The second image."
    return "I think it went well."


def text_of(message: BaseMessage) -> str:
    """A message's text, image blocks left out."""
    content = message.content
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def world(judge_reply: str = '{"rationale": "close to the ground truth", "score": 4}'):
    def respond(messages: list[BaseMessage]) -> str:
        text = "\n".join(text_of(m) for m in messages)
        last = text_of(messages[-1])
        if "note-keeper" in text:
            return take_note(text)
        if "You grade one answer" in text:
            return judge_reply
        if "You check list answers" in text:
            return '{"items": [{"item": "three times a week", "match": 1}, {"item": "swimming", "match": null}]}'
        if "You classify answers" in text:
            return '{"rationale": "it names a brand", "refused": false}'
        if QUESTION_MARK in last:
            return answer_question(last)
        turn = len([m for m in messages if m.type == "human"])
        return f"live reply {turn}"

    return respond


@pytest.fixture
def running_data(tmp_path) -> Path:
    """The 10k conversation alone (8 turns, 3 images, one turn without a recorded reply)."""
    [conv] = [d for d in json.loads(FIXTURES.read_text()) if d["id"] == "ten-k-training"]
    for turn in conv["turns"]:
        for image in turn.get("images", []):
            if not image["source"].startswith("http"):
                image["source"] = str((FIXTURES.parent / image["source"]).resolve())
    path = tmp_path / "running.json"
    path.write_text(json.dumps([conv]))
    return path


def _run(tmp_path, data, respond, **options):
    settings, model = scripted(respond=respond)
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, options=options)
    return run("mmrc", data, config, progress=False), model


def _question_prompts(model) -> list[list[BaseMessage]]:
    def last_text(prompt):
        content = prompt[-1].content
        return content if isinstance(content, str) else json.dumps(content)

    return [p for p in model.prompts if QUESTION_MARK in last_text(p)]


def test_notes_reach_the_responder_only_with_note_taking_on(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world())

    prompts = _question_prompts(model)
    with_notes = [p for p in prompts if NOTES_MARK in prompt_text(p)]
    assert len(prompts) == 12 and len(with_notes) == 6
    assert all("finish without walking" in prompt_text(p) for p in with_notes)
    [record] = result.records
    iu = {q["condition"]: q for q in record["questions"] if q["ability"] == "IU"}
    assert iu["off"]["answer"] == "Under 60 minutes." and iu["on"]["answer"] == "Finish without walking."
    assert iu["off"]["notes_mode"] is None and iu["on"]["notes_mode"] == "full"
    assert (result.run_dir / "radar.png").stat().st_size > 1000
    assert "| + NOTE-TAKING |" in result.report_path.read_text()


def test_without_note_taking_no_notes_are_taken_or_shown(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world(), note_taking="off")

    assert not any("note-keeper" in prompt_text(p) for p in model.prompts)
    assert not any(NOTES_MARK in prompt_text(p) for p in model.prompts)
    assert list(result.metrics["conditions"]) == ["off"] and "deltas" not in result.metrics


def test_a_changed_goal_is_one_note_entry_with_its_latest_turn(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world())

    store = open_note_store(MemorySettings(), str(result.run_dir))
    entries = {e.key: e for e in store.entries("ten-k-training")}
    assert set(entries) == {"facts/race_goal", "user_info/health"}
    assert (entries["facts/race_goal"].value, entries["facts/race_goal"].turn) == ("finish without walking", 7)
    [record] = result.records
    assert [u["status"] for u in record["note_updates"]] == ["ok"] * 8
    assert record["note"]["facts"]["race_goal"] == "finish without walking"
    assert [u["change"]["changed"] for u in record["note_updates"] if u["turn"] == 7] == [["facts/race_goal"]]


def test_objective_metrics_come_from_the_helpers(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world())

    on = result.metrics["conditions"]["on"]
    assert on["EP"]["value"] == 0.5  # two items named, one is a reference item
    assert on["IMP"]["value"] == 0.5  # image 2 of the right images 2 and 3
    assert on["RP"]["value"] == 0.0  # a brand was invented instead of refusing
    assert on["abilities"]["IE"]["mean"] == 4.0
    assert result.metrics["deltas"]["overall"] == 0.0


def test_images_go_as_blocks_to_api_backends_and_as_text_lines_otherwise(tmp_path, running_data):
    _, model = _run(tmp_path / "blocks", running_data, world())
    blocks = [
        part
        for p in _question_prompts(model)[:1]
        for m in p
        if isinstance(m.content, list)
        for part in m.content
        if part.get("type") == "image_url"
    ]
    urls = [b["image_url"]["url"] for b in blocks]
    assert len(urls) == 3 and urls[0].startswith("data:image/png;base64,") and urls[2] == "https://example.org/mmrc/elevation.png"

    _, model = _run(tmp_path / "text", running_data, world(), images="text")
    prompt = _question_prompts(model)[0]
    assert all(isinstance(m.content, str) for m in prompt)
    assert "[image 1: a pair of blue running shoes (shoes.png)]" in prompt_text(prompt)
    assert "[image 3: an elevation profile with one climb (https://example.org/mmrc/elevation.png)]" in prompt_text(prompt)


def test_text_only_backends_get_image_lines():
    from dialeval.agents.mmrc_common import accepts_images
    from dialeval.agents.base import AgentContext
    from dialeval.config import EvalContext

    def backend_of(spec: str) -> bool:
        ctx = AgentContext.for_role(EvalContext(default_model=ModelSettings(spec=spec)), "responder", "mmrc/responder")
        return accepts_images(ctx, "auto")

    assert [backend_of(s) for s in ("smollm2", "dry-run", "hf:some/model", "openai:gpt-4o", "anthropic:claude-haiku-4-5")] == [
        False, False, False, True, True,
    ]  # fmt: skip


def test_recorded_replies_are_replayed_and_gaps_filled_live(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world())
    [record] = result.records
    assert record["live_replies"] == 1  # turn 5 has no recorded reply
    final = prompt_text(_question_prompts(model)[0])
    assert "Congratulations! Eight weeks" in final and "live reply 5" in final


def test_live_replies_replace_the_recorded_ones(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world(), replies="live", note_taking="off")
    [record] = result.records
    assert record["live_replies"] == 8
    final = prompt_text(_question_prompts(model)[0])
    assert "Congratulations! Eight weeks" not in final and "live reply 1" in final and "live reply 8" in final


def test_long_notes_are_cut_to_the_entries_closest_to_the_question(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world(), full_note_max_entries=1, note_top_k=1)
    [record] = result.records
    on = [q for q in record["questions"] if q["condition"] == "on"]
    assert all(q["notes_mode"] == "top_k" and q["notes_entries"] == 1 for q in on)


def test_unparsed_judge_verdicts_are_counted_not_scored(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world(judge_reply="Pretty good answer overall."))
    off = result.metrics["conditions"]["off"]
    assert all(off["abilities"][a] == {"mean": None, "n": 0, "unscored": 1} for a in off["abilities"])
    report = result.report_path.read_text()
    assert "Pretty good answer overall." in report and "unparsed" in report


def test_dry_run_estimates_every_conversation(tmp_path):
    config = RunConfig(model=ModelSettings(spec="dry-run:gpt-4o-mini"), output_dir=str(tmp_path), cache_path=None)
    result = run("mmrc", FIXTURES, config, progress=False)
    assert result.metrics["run"]["finished"] == 4 and result.metrics["run"]["dry_run"]
    n_turns = sum(len(c.turns) for c in load_conversations(FIXTURES))
    assert result.metrics["note_taking"]["updates"] == n_turns


def test_a_bad_option_stops_the_run_before_any_item(tmp_path, running_data):
    from dialeval.config import ConfigError

    config = RunConfig(model=ModelSettings(spec="dry-run"), output_dir=str(tmp_path), options={"note_taking": "sometimes"})
    with pytest.raises(ConfigError, match="mmrc option 'note_taking'"):
        run("mmrc", running_data, config, progress=False)


def test_the_cli_runs_the_demo_fixture(tmp_path, capsys):
    from dialeval.cli import main

    demo = Path(__file__).resolve().parents[1] / "dialeval" / "fixtures" / "mmrc_demo.json"
    code = main(["run", "mmrc", "--data", str(demo), "--model", "dry-run", "--output-dir", str(tmp_path), "--no-progress"])
    assert code == 0
    [run_dir] = tmp_path.iterdir()
    assert (run_dir / "notes").is_dir() and (run_dir / "radar.png").exists()


def test_rules_only_helpers_need_no_model(tmp_path, running_data):
    settings, model = scripted(respond=world())
    config = RunConfig(
        model=settings,
        output_dir=str(tmp_path),
        cache_path=None,
        agents={"item_extractor": "mmrc.item_rules", "refusal_detector": "mmrc.refusal_rules"},
        options={"note_taking": "on"},
    )
    result = run("mmrc", running_data, config, progress=False)

    helpers = [p for p in model.prompts if "You check list answers" in prompt_text(p) or "You classify answers" in prompt_text(p)]
    assert helpers == []
    on = result.metrics["conditions"]["on"]
    # "Three times a week and swimming." splits into two items; the rule wants every content
    # word of a reference item ("3 times a week" has "3", not "three"), so neither matches
    assert on["EP"] == {"value": 0.0, "n": 1, "empty": 0, "skipped": 0}
    assert on["RP"]["value"] == 0.0  # "They are Brand X shoes." is no refusal
