"""Importers: each bundled example (the agent demo written in that format's published
schema) reads back into the same conversations; bad records are named; scores go back
keyed by the source system's ids."""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.data import exporters
from dialeval.data.importers import import_records
from dialeval.data.io import DataError
from dialeval.conversation.data import Conversation, load_conversations
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import fake_embed, write_jsonl
from tests.helpers import http_config

FIXTURES = Path(str(resources.files("dialeval").joinpath("fixtures")))
HF_COLUMNS = {"id": "conv_id", "conversations": "dialog", "system": "system_prompt"}
EXAMPLES = [
    ("otel", "agent_demo_otel.jsonl", {}),
    ("langsmith", "agent_demo_langsmith.jsonl", {}),
    ("langfuse", "agent_demo_langfuse.json", {}),
    ("hf", "agent_demo_hf.jsonl", {"columns": HF_COLUMNS}),
]


def shape(conv: Conversation) -> tuple:
    """What a conversation says: system prompt, turns, each tool call with its result."""
    return conv.system, [(t.role, t.text, [(c.name, c.arguments, c.result) for c in t.tool_calls]) for t in conv.turns]


@pytest.mark.parametrize("fmt, name, options", EXAMPLES)
def test_each_bundled_example_reads_into_the_demo_conversations(fmt, name, options):
    expected = {c.id: shape(c) for c in load_conversations(FIXTURES / "agent_demo.jsonl")}
    imported = load_conversations(FIXTURES / name, fmt, options.get("columns"))

    assert {c.id: shape(c) for c in imported} == expected
    trip = next(c for c in imported if c.id == "trip")
    source = trip.metadata["source"]
    assert source["format"] == fmt
    if fmt != "hf":  # traces: each assistant turn is keyed by the call that produced its reply
        assert sorted(source["turn_ids"]) == ["2", "4"] and len(set(source["turn_ids"].values())) == 2


def test_turn_ids_are_the_calls_that_produced_the_replies():
    records = {r["id"]: r for r in import_records("langsmith", FIXTURES / "agent_demo_langsmith.jsonl")}
    runs = [json.loads(line) for line in (FIXTURES / "agent_demo_langsmith.jsonl").read_text().splitlines()]
    final = [r for r in runs if r["run_type"] == "llm" and r["extra"]["metadata"].get("thread_id") == "trip"
             and not r["outputs"]["generations"][0][0]["message"]["kwargs"].get("tool_calls")]
    # trip's turns 2 and 4 end with the runs whose answer has no tool call (the reply the user saw)
    assert list(records["trip"]["metadata"]["source"]["turn_ids"].values()) == [r["id"] for r in final]


def _otel_line(messages: object) -> dict:
    attribute = {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(messages)}}
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chat", "attributes": [attribute]}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


@pytest.mark.parametrize("fmt, name, content, words", [
    ("otel", "t.jsonl", "{not json\n", "record 1: not valid JSON"),
    ("otel", "t.jsonl", json.dumps(_otel_line([{"role": "assistant", "content": "hi"}])) + "\n",
     "field 'span b7ad6b7169203331: gen_ai.output.messages.0': a message is {role, parts: [...]}"),
    ("otel", "t.jsonl", json.dumps(_otel_line([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c"}]}])) + "\n",
     "field 'span b7ad6b7169203331: gen_ai.output.messages.0.parts.0.name': a tool_call part needs a name"),
    ("langsmith", "r.jsonl", json.dumps({"id": "not-a-uuid", "name": "x", "run_type": "llm", "start_time": "2026-01-01T00:00:00",
                                         "inputs": {}}) + "\n", "record 1, field 'id': Input should be a valid UUID"),
    ("langfuse", "t.json", json.dumps([{"id": "t1", "timestamp": "2026-01-01T00:00:00Z",
                                        "observations": [{"id": "o1", "type": "GENERATION", "output": {}}]}]),
     "record 1, field 'observations.0.startTime': Field required"),
    ("hf", "rows.jsonl", json.dumps({"conv_id": 1, "chat": []}) + "\n", "record 1, field 'messages': no column 'messages'"),
])
def test_bad_records_are_named(tmp_path, fmt, name, content, words):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as err:
        import_records(fmt, path)
    assert str(err.value).startswith(f"{path}, ") and words in str(err.value)


def test_parquet_needs_pyarrow_or_reads(tmp_path):
    rows = [json.loads(line) for line in (FIXTURES / "agent_demo_hf.jsonl").read_text().splitlines()]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        (tmp_path / "d.parquet").write_bytes(b"PAR1")
        with pytest.raises(DataError, match="needs the `pyarrow` package"):
            import_records("hf", tmp_path / "d.parquet", {"columns": HF_COLUMNS})
        return
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    assert [r["id"] for r in import_records("hf", tmp_path / "d.parquet", {"columns": HF_COLUMNS})] == ["trip", "refund"]
    import pyarrow.ipc as ipc  # an .arrow stream, as Dataset.save_to_disk writes its shards

    table = pa.Table.from_pylist(rows)
    with ipc.new_stream(str(tmp_path / "d.arrow"), table.schema) as writer:
        writer.write_table(table)
    from_arrow = import_records("hf", tmp_path / "d.arrow", {"columns": HF_COLUMNS})
    assert from_arrow == import_records("hf", tmp_path / "d.parquet", {"columns": HF_COLUMNS})


def test_import_command_writes_dialogue_data(tmp_path, capsys):
    out = tmp_path / "chats.jsonl"
    assert main(["import", "hf", str(FIXTURES / "agent_demo_hf.jsonl"), "-o", str(out), "--columns", json.dumps(HF_COLUMNS)]) == 0
    assert "2 conversations, 6 turns, 5 tool calls" in capsys.readouterr().out
    assert [c.id for c in load_conversations(out)] == ["trip", "refund"]


RUBRIC = """criteria:
  - name: calls_made
    level: conversation
    match: {mode: superset}
  - name: tool_use
    kind: trajectory
    description: Was each call needed?
    scale: [yes, no]
"""


@pytest.fixture
def imported_run(tmp_path, monkeypatch):
    """A dialogue run straight on the LangSmith export (format=langsmith); references from a rubric-free demo."""
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    rubric = tmp_path / "r.yaml"
    rubric.write_text(RUBRIC)

    def answer(body: dict) -> str:
        return '{"rationale": "needed", "verdict": "yes"}'

    def go(fmt: str, name: str, run_id: str):
        with OpenAIStub(respond=answer) as server:
            config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                                 options={"rubric": str(rubric), "format": fmt}, run_id=run_id)
            return run("dialogue", str(FIXTURES / name), config, progress=False)

    return go


def test_scores_go_back_to_langsmith_runs(imported_run, tmp_path, capsys):
    result = imported_run("langsmith", "agent_demo_langsmith.jsonl", "ls")
    trip = next(r for r in result.records if r["id"] == "trip")
    turn_runs = trip["metadata"]["source"]["turn_ids"]

    feedback, skipped = exporters.langsmith_feedback(result.records, "ls")
    on_turns = {(f["run_id"], f["key"]): f for f in feedback if f["feedback_source"]["metadata"]["turn"] is not None}
    yes = on_turns[(turn_runs["2"], "tool_use")]
    assert yes["value"] == "yes" and "score" not in yes  # a label goes as its word, never as its rank
    assert skipped == 2  # calls_made has no reference calls in a trace: not applicable, never a default score
    assert len(feedback) == 3  # tool_use on trip/2, trip/4, refund/2

    out = tmp_path / "feedback.jsonl"
    assert main(["export", str(result.run_dir), "--to", "langsmith", "-o", str(out)]) == 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(written, key=lambda f: f["id"]) == sorted(feedback, key=lambda f: f["id"])
    assert "3 feedback records; 2 units left out" in capsys.readouterr().out


def test_scores_go_back_to_langfuse_observations_and_csv(imported_run, tmp_path, capsys):
    result = imported_run("langfuse", "agent_demo_langfuse.json", "lf")
    traces = json.loads((FIXTURES / "agent_demo_langfuse.json").read_text())["data"]
    trace_of = {o["id"]: t["id"] for t in traces for o in t["observations"]}

    scores, _ = exporters.langfuse_scores(result.records, "lf")
    assert len(scores) == 3 and all(s["dataType"] == "CATEGORICAL" and s["value"] == "yes" for s in scores)
    assert all(trace_of[s["observationId"]] == s["traceId"] for s in scores)

    out = tmp_path / "units.csv"
    assert main(["export", str(result.run_dir), "--to", "csv", "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert {(r["conversation"], r["turn"], r["criterion"], r["status"]) for r in rows} == {
        ("trip", "2", "tool_use", "ok"), ("trip", "4", "tool_use", "ok"), ("refund", "2", "tool_use", "ok"),
        ("trip", "", "calls_made", "not_applicable"), ("refund", "", "calls_made", "not_applicable")}
    assert all(r["source_turn_id"] in trace_of for r in rows if r["turn"])
    # Langfuse ids are no LangSmith run ids: refused, not sent to the wrong system
    assert main(["export", str(result.run_dir), "--to", "langsmith", "-o", str(tmp_path / "f.jsonl")]) == 2
    assert "were read from langfuse, so they have no langsmith ids" in capsys.readouterr().err


def test_format_option_names_the_imported_conversation(tmp_path):
    bad = write_jsonl(tmp_path / "rows.jsonl", [{"conv_id": "a", "dialog": [{"from": "human", "value": "hi"}]}])
    with pytest.raises(DataError, match=r"record 1 \(conversation 'a' imported as hf\), field 'conversations': the conversation has no assistant"):
        load_conversations(bad, "hf", {"id": "conv_id", "conversations": "dialog"})


def test_otel_lines_in_a_json_file(tmp_path):
    """The collector's file exporter writes one object a line, often into a file named .json."""
    lines = (FIXTURES / "agent_demo_otel.jsonl").read_text(encoding="utf-8")
    (tmp_path / "spans.json").write_text(lines, encoding="utf-8")
    (tmp_path / "array.json").write_text("[" + ",".join(lines.splitlines()) + "]", encoding="utf-8")
    expected = import_records("otel", FIXTURES / "agent_demo_otel.jsonl")
    assert import_records("otel", tmp_path / "spans.json") == expected == import_records("otel", tmp_path / "array.json")


def test_langfuse_v2_observation_rows(tmp_path):
    """The v2 observations API returns flat rows (the SDK's ``ObservationV2``): read like a trace's observations."""
    traces = json.loads((FIXTURES / "agent_demo_langfuse.json").read_text())["data"]
    rows = [{**o, "traceId": t["id"], "sessionId": t.get("sessionId")} for t in traces for o in t["observations"]]
    (tmp_path / "page.json").write_text(json.dumps({"data": rows, "meta": {"cursor": None}}))
    expected = {c.id: shape(c) for c in load_conversations(FIXTURES / "agent_demo_langfuse.json", "langfuse")}
    assert {c.id: shape(c) for c in load_conversations(tmp_path / "page.json", "langfuse")} == expected
