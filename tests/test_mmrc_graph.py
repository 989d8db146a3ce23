"""The MMRC graph end to end with scripted models: replay, NOTE-TAKING, answers, judges."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from dialeval.config import ModelSettings, RunConfig
from dialeval.protocols.mmrc.data import load_conversations
from dialeval.memory import MemorySettings, open_note_store
from dialeval.evaluation import run
from dialeval.testing.scripted import prompt_text
from dialeval.models.client import register_client
from tests.helpers import scripted

FIXTURES = Path(__file__).parent / "fixtures" / "mmrc_conversations.json"
NOTES_MARK = "Here are notes kept while we talked"
PAPER_JUDGE = "You rate answers given by a multimodal assistant"
RUBRIC_JUDGE = "You grade one answer"
GUIDED = "You are a friendly multimodal assistant"
# the running conversation's six questions, by a phrase of each
ANSWERS = {
    "training routine": "Three times a week and swimming.",
    "careful with": "The hill at kilometre 7.",
    "current goal": None,  # depends on the notes, see answer_question
    "race course": "The second image.",
    "weeks before": "Eight weeks.",
    "brand": "They are Brand X shoes.",
}


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
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def take_note(text: str) -> str:
    """A note-keeper that tracks the running goal and the knee."""
    note = json.loads(_between(text, "<note>", "</note>"))
    message = _between(text, "<user_message>", "</user_message>")
    if "under 60 minutes" in message:
        note.setdefault("facts", {})["race_goal"] = "under 60 minutes"
    if "without walking" in message:
        note.setdefault("facts", {})["race_goal"] = "finish without walking"
    if "knee" in message:
        note.setdefault("user_info", {})["health"] = "sore knee"
    return json.dumps(note)


def answer_question(last: str) -> str | None:
    """The model under test's answer when ``last`` asks an evaluation question, else None."""
    for phrase, answer in ANSWERS.items():
        if phrase in last:
            if answer is None:
                return "Finish without walking." if "finish without walking" in last else "Under 60 minutes."
            return answer
    return None


def text_of(message: BaseMessage) -> str:
    """A message's text, image blocks left out."""
    content = message.content
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def world(judge_reply: str = '{"score": 4}', answer=answer_question):
    def respond(messages: list[BaseMessage]) -> str:
        text = "\n".join(text_of(m) for m in messages)
        last = text_of(messages[-1])
        if "note-keeper" in text:
            return take_note(text)
        if PAPER_JUDGE in text:
            return judge_reply
        if RUBRIC_JUDGE in text:
            return '{"rationale": "close to the ground truth", "score": 3}'
        if "You check list answers" in text:
            return '{"items": [{"item": "three times a week", "match": 1}, {"item": "swimming", "match": null}]}'
        if "You classify answers" in text:
            return '{"rationale": "it names a brand", "refused": false}'
        reply = answer(last)
        if reply is not None:
            return reply
        turn = len([m for m in messages if m.type == "human"])
        return f"live reply {turn}"

    return respond


@pytest.fixture
def running_data(tmp_path) -> Path:
    """The 10k conversation alone (8 turns, 3 images, one turn without a recorded reply)."""
    [conv] = [d for d in json.loads(FIXTURES.read_text()) if d["id"] == "ten-k-training"]
    shutil.copytree(FIXTURES.parent / "mmrc_images", tmp_path / "mmrc_images")  # images lie beside their data file
    path = tmp_path / "running.json"
    path.write_text(json.dumps([conv]))
    return path


def _run(tmp_path, data, respond, figures=False, **options):
    """An MMRC run on the scripted model; its figures (nine PNGs, about 0.8 s of CPU) only where asked."""
    settings, model = scripted(respond=respond)
    register_client(settings.model_copy(update={"max_tokens": 256}), model)  # the responder's paper cap
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, options=options,
                       figures=figures)
    return run("mmrc", data, config, progress=False), model


def _question_prompts(model) -> list[list[BaseMessage]]:
    """The prompts that asked the model under test an evaluation question."""
    return [p for p in model.prompts if answer_question(text_of(p[-1])) is not None and len(p) > 2]


def _record(result) -> dict:
    [record] = result.records
    return record


def _rows(record: dict, condition: str) -> dict[str, dict]:
    return {q["ability"]: q for q in record["questions"] if q["condition"] == condition}


# ------------------------------------------------------------------ the paper's defaults


def test_the_model_under_test_gets_no_system_prompt_unless_guided(tmp_path, running_data):
    _, model = _run(tmp_path / "plain", running_data, world(), note_taking="off")
    responder = [p for p in model.prompts if "note-keeper" not in prompt_text(p) and PAPER_JUDGE not in prompt_text(p)]
    responder = [p for p in responder if "You check" not in prompt_text(p) and "You classify" not in prompt_text(p)]
    assert len(responder) == 8 + 6 and not any(m.type == "system" for p in responder for m in p)

    _, model = _run(tmp_path / "guided", running_data, world(), note_taking="off", system_prompt="guided")
    prompts = _question_prompts(model)
    assert prompts and all(p[0].type == "system" and GUIDED in p[0].content for p in prompts)


def test_replies_in_the_replay_are_the_models_own_by_default(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world(), note_taking="off")
    assert _record(result)["live_replies"] == 8
    final = prompt_text(_question_prompts(model)[0])
    assert "Congratulations! Eight weeks" not in final and "live reply 1" in final and "live reply 8" in final


def test_recorded_replies_are_an_option_and_gaps_are_filled_live(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world(), replies="recorded")
    assert _record(result)["live_replies"] == 1  # turn 5 has no recorded reply
    final = prompt_text(_question_prompts(model)[0])
    assert "Congratulations! Eight weeks" in final and "live reply 5" in final


def test_questions_are_asked_one_after_another_by_default(tmp_path, running_data):
    _, model = _run(tmp_path, running_data, world(), note_taking="off")
    prompts = _question_prompts(model)
    last = prompts[-1]  # the AR question, asked after the five others and their answers
    assert last[-1].content == "What brand are the user's new running shoes?"
    earlier = [m.content for m in last[-11:-1]]
    assert earlier[0] == "List the things the user mentioned about their training routine."
    assert earlier[1] == "Three times a week and swimming." and earlier[-1] == "Eight weeks."
    assert [m.type for m in last[-11:-1]] == ["human", "ai"] * 5


def test_questions_can_be_answered_independently(tmp_path, running_data):
    _, model = _run(tmp_path, running_data, world(), note_taking="off", questions="independent")
    prompts = _question_prompts(model)
    assert len(prompts) == 6 and len({len(p) for p in prompts}) == 1  # the same history each time
    assert all("Three times a week" not in prompt_text(p) for p in prompts)


def test_the_judge_sees_the_prediction_and_the_label_only(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world(), note_taking="off")
    judged = [p for p in model.prompts if PAPER_JUDGE in prompt_text(p)]
    assert len(judged) == 6
    [ar] = [p for p in judged if "Brand X" in prompt_text(p)]
    user = ar[-1].content
    assert "<answer>\nThey are Brand X shoes.\n</answer>" in user
    assert "<reference>\nThe brand was never mentioned.\n</reference>" in user
    assert "What brand" not in prompt_text(ar) and "answer refusal" in user  # no question, its ability named
    assert _rows(_record(result), "off")["AR"]["score"] == 4


def test_the_rubric_judge_is_a_registered_alternative(tmp_path, running_data):
    settings, model = scripted(respond=world())
    register_client(settings.model_copy(update={"max_tokens": 256}), model)
    config = RunConfig(
        model=settings, output_dir=str(tmp_path), cache_path=None, agents={"judge": "mmrc.rubric_judge"},
        options={"note_taking": "off"},
    )  # fmt: skip
    result = run("mmrc", running_data, config, progress=False)
    judged = [p for p in model.prompts if RUBRIC_JUDGE in prompt_text(p)]
    assert len(judged) == 6 and all("<question>" in p[-1].content for p in judged)
    assert result.metrics["conditions"]["off"]["abilities"]["IE"]["mean"] == 3.0


def test_the_responder_is_capped_at_256_tokens_by_default():
    from dialeval.protocols.mmrc.common import responder_context
    from dialeval.config import EvalContext

    def cap(**options) -> int:
        context = EvalContext(default_model=ModelSettings(spec="dry-run", max_tokens=1000), options=options)
        return responder_context(context).client.settings.max_tokens

    assert cap() == 256
    assert cap(responder_max_tokens=None) == 1000 and cap(responder_max_tokens=64) == 64


def test_a_cut_off_answer_is_judged_as_it_stands_and_counted(tmp_path, running_data):
    def cut(last: str):
        answer = answer_question(last)
        return None if answer is None else (answer[:12], "length") if "weeks before" in last else answer

    result, model = _run(tmp_path, running_data, world(answer=cut), note_taking="off")
    mr = _rows(_record(result), "off")["MR"]
    assert (mr["answer"], mr["answer_status"], mr["score"]) == ("Eight weeks.", "truncated", 4)
    assert sum("weeks before" in text_of(p[-1]) for p in _question_prompts(model)) == 1  # not retried
    assert result.metrics["conditions"]["off"]["abilities"]["MR"] == {
        "mean": 4.0, "ci": None, "n": 1, "cut_off": 1, "empty": 0, "judge_failed": 0, "errored": 0,
    }  # fmt: skip
    assert json.loads((result.run_dir / "metrics.json").read_text())["conditions"]["off"]["abilities"]["MR"]["cut_off"] == 1


def test_an_empty_answer_scores_zero_without_a_judge(tmp_path, running_data):
    def silent(last: str):
        answer = answer_question(last)
        return "  " if answer is not None and "race course" in last else answer

    result, model = _run(tmp_path, running_data, world(answer=silent), note_taking="off")
    im = _rows(_record(result), "off")["IM"]
    assert (im["answer_status"], im["score"], im["score_source"], im["judge_status"]) == ("unparsed", 0, "empty answer", None)
    assert not any(PAPER_JUDGE in prompt_text(p) and "race" in prompt_text(p).lower() for p in model.prompts)
    off = result.metrics["conditions"]["off"]
    assert off["abilities"]["IM"]["empty"] == 1 and off["IMP"]["value"] == 0.0


def test_unreadable_judge_verdicts_are_left_out_and_counted(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world(judge_reply="Pretty good answer overall."))
    off = result.metrics["conditions"]["off"]
    assert all(off["abilities"][a]["mean"] is None and off["abilities"][a]["judge_failed"] == 1 for a in off["abilities"])
    report = result.report_path.read_text()
    assert "Pretty good answer overall." in report and "unparsed" in report


def test_the_whole_note_is_given_by_default(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world())
    with_notes = [p for p in _question_prompts(model) if NOTES_MARK in prompt_text(p)]
    assert len(with_notes) == 6
    assert all("finish without walking" in prompt_text(p) and "sore knee" in prompt_text(p) for p in with_notes)
    on = _rows(_record(result), "on")
    assert all((q["notes_mode"], q["notes_entries"], q["notes_total"]) == ("full", 2, 2) for q in on.values())


def test_a_note_too_long_for_the_context_window_is_cut_to_the_closest_entries(tmp_path, running_data):
    # 500 tokens: the replayed conversation (about 220 text tokens) and the answer's 256
    # leave no room for any of the note's entries
    result, model = _run(tmp_path, running_data, world(), context_window=500, questions="independent")
    on = _rows(_record(result), "on")
    assert {(q["notes_mode"], q["notes_entries"], q["notes_total"]) for q in on.values()} == {("top_k", 0, 2)}
    assert result.metrics["conditions"]["on"]["notes_cut"] == 6
    assert "notes cut to fit the context window: 6" in result.report_path.read_text()


def test_the_cut_note_keeps_the_closest_entries_that_fit():
    from dialeval.protocols.mmrc.responder import fit_note
    from dialeval.memory.notes import NoteEntry

    closest = [NoteEntry(path=(f"k{i}",), value="x" * 10, turn=1) for i in range(4)]  # nearest first

    def size(entries):
        return 20 + 10 * len(entries)

    assert [e.key for e in fit_note(closest, size, budget=45)] == ["k0", "k1"]
    assert fit_note(closest, size, budget=100) == closest and fit_note(closest, size, budget=10) == []


def test_a_note_too_long_for_the_context_window_can_fail_the_item(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world(), context_window=500, note_overflow="fail")
    assert result.metrics["run"]["failed"] == 1
    [row] = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "failed" and "NoteTooLong" in row["error"] and "context_window=500" in row["error"]


def test_item_scores_are_per_conversation_ability_and_condition(tmp_path, running_data):
    from dialeval.benchmarks import get_benchmark

    result, _ = _run(tmp_path, running_data, world())
    scores = get_benchmark("mmrc").item_scores(result.records)
    assert set(scores) == {f"{m}, notes {c}" for m in ("score (0-5)", "EP", "IMP", "RP") for c in ("off", "on")}
    rp = result.metrics["conditions"]["off"]["RP"]  # a unit's RP: 1 refused, 0 answered, where a refusal was right
    assert list(scores["RP, notes off"].values()) == [rp["refused"] / rp["n"]] and rp["n"] == 1
    assert scores["score (0-5), notes on"] == {f"ten-k-training/{a}": 4.0 for a in ("AR", "CR", "IE", "IM", "IU", "MR")}
    assert scores["EP, notes off"] == {"ten-k-training/IE": 0.5} and scores["IMP, notes on"] == {"ten-k-training/IM": 0.5}


# ------------------------------------------------------------------ NOTE-TAKING and the rest


@pytest.mark.figures  # the radar
def test_notes_reach_the_responder_only_with_note_taking_on(tmp_path, running_data):
    result, model = _run(tmp_path, running_data, world(), figures=True)

    prompts = _question_prompts(model)
    with_notes = [p for p in prompts if NOTES_MARK in prompt_text(p)]
    assert len(prompts) == 12 and len(with_notes) == 6
    iu = _rows(_record(result), "off")["IU"], _rows(_record(result), "on")["IU"]
    assert iu[0]["answer"] == "Under 60 minutes." and iu[1]["answer"] == "Finish without walking."
    assert iu[0]["notes_mode"] is None
    assert (result.run_dir / "plots" / "radar.png").stat().st_size > 1000 and "](plots/radar.png)" in result.report_path.read_text()
    assert "**+ NOTE-TAKING** (notes on)" in result.report_path.read_text()


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
    record = _record(result)
    assert [u["status"] for u in record["note_updates"]] == ["ok"] * 8
    assert record["note"]["facts"]["race_goal"] == "finish without walking"
    assert [u["change"]["changed"] for u in record["note_updates"] if u["turn"] == 7] == [["facts/race_goal"]]


def test_objective_metrics_come_from_the_helpers(tmp_path, running_data):
    result, _ = _run(tmp_path, running_data, world())

    on = result.metrics["conditions"]["on"]
    assert on["EP"]["value"] == 0.5  # two items named, one is a reference item
    assert on["IMP"]["value"] == 0.5  # image 2 of the right images 2 and 3
    assert on["RP"]["value"] == 0.0  # a brand was invented instead of refusing
    assert (on["RP"]["n"], on["RP"]["refused"]) == (1, 0)
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
    from dialeval.agents.base import AgentContext
    from dialeval.protocols.mmrc.common import accepts_images
    from dialeval.config import EvalContext

    def backend_of(spec: str) -> bool:
        ctx = AgentContext.for_role(EvalContext(default_model=ModelSettings(spec=spec)), "responder", "mmrc/responder")
        return accepts_images(ctx, "auto")

    assert [backend_of(s) for s in ("smollm2", "dry-run", "hf:some/model", "openai:gpt-4o", "anthropic:claude-haiku-4-5")] == [
        False, False, False, True, True,
    ]  # fmt: skip


def test_the_graph_takes_a_conversation_record_as_input():
    """What LangGraph Studio sends: one record of the data file, as it stands."""
    import asyncio

    from dialeval.config import EvalContext
    from dialeval.protocols.mmrc.graph import build_graph

    [record] = [d for d in json.loads(FIXTURES.read_text()) if d["id"] == "lisbon-trip"]
    record = {**record, "turns": [{k: v for k, v in t.items() if k != "images"} for t in record["turns"]]}
    for q in record["questions"]:
        q.pop("images", None)
    record["questions"] = [q for q in record["questions"] if q["ability"] != "IM"]
    context = EvalContext(default_model=ModelSettings(spec="dry-run"), cache_path=None, options={"note_taking": "off"})
    state = asyncio.run(build_graph().ainvoke(record, context=context))  # 10 turns: past the default step limit
    assert len(state["replies"]) == len(record["turns"]) and len(state["answers"]) == 5
    assert {g["source"] for g in state["grades"]} == {"judge"}


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

    demo = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mmrc_demo.json"
    code = main(["run", "mmrc", "--data", str(demo), "--model", "dry-run", "--output-dir", str(tmp_path), "--no-progress"])
    assert code == 0
    [run_dir] = tmp_path.iterdir()
    assert (run_dir / "notes").is_dir()
    assert not (run_dir / "plots").exists()  # a dry run's scores are placeholders: no figure draws them, the radar neither


def test_a_hedged_guess_is_not_a_refusal(tmp_path, running_data):
    def hedge(last: str):
        answer = answer_question(last)
        return "It was not mentioned, but probably Brand X." if answer and "brand" in last else answer

    settings, model = scripted(respond=world(answer=hedge))
    register_client(settings.model_copy(update={"max_tokens": 256}), model)
    config = RunConfig(
        model=settings, output_dir=str(tmp_path), cache_path=None,
        agents={"refusal_detector": "mmrc.refusal_rules"}, options={"note_taking": "off"},
    )  # fmt: skip
    result = run("mmrc", running_data, config, progress=False)
    ar = _rows(_record(result), "off")["AR"]
    assert ar["refusal"]["refused"] is False and result.metrics["conditions"]["off"]["RP"]["value"] == 0.0


def test_rules_only_helpers_need_no_model(tmp_path, running_data):
    settings, model = scripted(respond=world())
    register_client(settings.model_copy(update={"max_tokens": 256}), model)
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
    assert (on["EP"]["value"], on["EP"]["n"], on["EP"]["named_none"]) == (0.0, 1, 0)
    assert on["RP"]["value"] == 0.0  # "They are Brand X shoes." is no refusal
