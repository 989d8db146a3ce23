"""Imports that fail well: each record checked alone; --skip-bad keeps the good ones and
lists the others; without it the first bad record stops the import with exit 2 and one
line, and nothing is written; hostile files (deep nesting, huge numbers, binary, null,
wrong types) never show a traceback; a file of another format says which."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.conversation.data import load_conversations

RUN = {"name": "ChatOpenAI", "run_type": "llm", "start_time": "2026-11-27T09:00:00"}


def run(ident: str, thread: str, messages: list, reply: str) -> dict:
    return {**RUN, "id": ident, "trace_id": ident, "extra": {"metadata": {"thread_id": thread}}, "inputs": {"messages": messages},
            "outputs": {"choices": [{"message": {"role": "assistant", "content": reply}}]}}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def mixed(tmp_path):
    good = run("4f1f2a9e-6d8b-4c55-9d1e-0a4c1c2b7e01", "good", [{"role": "user", "content": "Hi"}], "Hello!")
    bad = run("4f1f2a9e-6d8b-4c55-9d1e-0a4c1c2b7e02", "bad", [{"role": "robot", "content": "Hi"}], "Hello!")
    return write(tmp_path / "runs.jsonl", [good, bad])


def test_the_first_bad_record_stops_and_nothing_is_written(mixed, tmp_path, capsys):
    out = tmp_path / "chats.jsonl"
    assert main(["import", "langsmith", str(mixed), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{mixed}, record 2, field 'inputs.messages': expected an OpenAI message" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [mixed]  # no half-written or temporary file left
    out.write_text("kept\n")
    assert main(["import", "langsmith", str(mixed), "-o", str(out)]) == 2
    assert out.read_text() == "kept\n"  # an earlier file is not touched


def test_skip_bad_keeps_the_good_and_lists_the_bad(mixed, tmp_path, capsys):
    out = tmp_path / "chats.jsonl"
    assert main(["import", "langsmith", str(mixed), "-o", str(out), "--skip-bad"]) == 0
    captured = capsys.readouterr()
    assert "1 conversations, 2 turns, 0 tool calls; 1 bad records skipped" in captured.out
    assert f"dialeval: skipped: {mixed}, record 2, field 'inputs.messages'" in captured.err
    assert [c.id for c in load_conversations(out)] == ["good"]


def test_a_conversation_the_dialogue_loader_refuses_is_skipped_alone(tmp_path, capsys):
    rows = [{"id": "ok", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]},
            {"id": "orphan", "messages": [{"role": "user", "content": "Hi"}, {"role": "tool", "content": "42"}]}]
    path, out = write(tmp_path / "rows.jsonl", rows), tmp_path / "chats.jsonl"
    assert main(["import", "hf", str(path), "-o", str(out)]) == 2
    assert "record 2 (conversation 'orphan' imported as hf), field 'messages.1': a tool result must follow" in capsys.readouterr().err
    assert main(["import", "hf", str(path), "-o", str(out), "--skip-bad"]) == 0
    assert [c.id for c in load_conversations(out)] == ["ok"]


HOSTILE = {
    "null": b"null",
    "nesting": b"[" * 10000 + b"]" * 10000,
    "nesting-lines": (b"[" * 10000 + b"]" * 10000 + b"\n") * 2,
    "number": b'{"resourceSpans": [], "id": ' + b"9" * 5000 + b"}",
    "binary": bytes(range(256)) * 4,
    "wrong-types": json.dumps({"resourceSpans": 5, "id": 3, "observations": "x", "conversations": 7}).encode(),
    "list-of-numbers": b"[1, 2, 3]",
    "empty": b"",
}


@pytest.mark.parametrize("fmt", ["otel", "langsmith", "langfuse", "hf"])
@pytest.mark.parametrize("name", [*HOSTILE, "folder"])
def test_hostile_files_give_one_line_and_exit_2(tmp_path, capsys, fmt, name):
    path = tmp_path / f"{name}.json"
    if name == "folder":
        (path / "data").mkdir(parents=True)
    else:
        path.write_bytes(HOSTILE[name])
    out = tmp_path / "chats.jsonl"
    assert main(["import", fmt, str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dialeval: error: {path}") and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_file_of_another_format_says_which(tmp_path, capsys):
    from importlib import resources

    otel = resources.files("dialeval").joinpath("fixtures/agent_demo_otel.jsonl")
    assert main(["import", "langsmith", str(otel), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "this file looks like otel, not langsmith: try `dialeval import otel" in capsys.readouterr().err


def test_a_file_too_large_to_read_at_once_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("dialeval.data.importers.MAX_BYTES", 2**30)
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as f:  # sparse: no disk is used
        f.truncate(2**30 + 1)
    assert main(["import", "otel", str(path), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "1.0 GiB, more than the 1 GiB an import reads into memory; split the export" in capsys.readouterr().err
