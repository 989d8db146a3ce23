"""The session judge over HTTP against the local OpenAI-compatible test server."""

from __future__ import annotations

import json
import re
import threading

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub


def _graded(body: dict) -> tuple[str, int]:
    """(first question of the dialogue, turn graded) of a request."""
    user = body["messages"][-1]["content"]
    first = re.search(r"Question: (q\d+-1)\b", user).group(1)
    return first, int(re.search(r"Turn to grade \(turn (\d+)\)", user).group(1))


def _predictions(tmp_path, dialogues: dict[str, int]):
    records = []
    for n, (dial, turns) in enumerate(dialogues.items()):
        for t in range(1, turns + 1):
            records.append({"id": f"{dial}{t:02d}", "dial_id": dial, "turn_num": t, "question": f"q{n}-{t}",
                            "ref_answer": f"reference {t}", "gen_answer": f"answer {t}"})
    path = tmp_path / "http-bot.json"
    path.write_text(json.dumps(records))
    return path


def _config(server, tmp_path, concurrency: int) -> RunConfig:
    model = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
    return RunConfig(model=model, cache_path=None, output_dir=str(tmp_path / "runs"), concurrency=concurrency,
                     options={"judge": "session", "summary": "none"})


def test_a_ten_turn_dialogue_makes_ten_requests_in_turn_order(tmp_path):
    data = _predictions(tmp_path, {"1111101": 10})
    with OpenAIStub(respond=lambda body: f"Seems right. So rating={1 + _graded(body)[1] % 3}") as server:
        result = run("vdact", data, _config(server, tmp_path, 4), progress=False)
    assert len(server.requests) == 10
    assert [_graded(b)[1] for b in server.requests] == list(range(1, 11))
    last = server.requests[-1]["messages"][-1]["content"]
    assert "So rating=" in last.split("Turn to grade")[0]  # earlier verdicts travel in the prompt
    assert [t["scores"]["rating"] for t in result.records[0]["turns"]] == [1 + t % 3 for t in range(1, 11)]


def test_dialogues_run_in_parallel_while_turns_stay_sequential(tmp_path):
    data = _predictions(tmp_path, {"1111101": 4, "2222201": 4})
    other_started = threading.Event()
    waited = {}

    def respond(body):
        first, turn = _graded(body)
        if first == "q1-1" and turn == 1:
            other_started.set()
        if first == "q0-1" and turn == 1:
            # the first dialogue's first answer waits until the second dialogue has asked:
            # only possible when both dialogues are in flight at once
            waited["ok"] = other_started.wait(timeout=120)  # returns as soon as it is set
        return "Fine. So rating=3"

    with OpenAIStub(respond=respond) as server:
        result = run("vdact", data, _config(server, tmp_path, 2), progress=False)
    assert waited["ok"] is True
    order = [_graded(b) for b in server.requests]
    for first in ("q0-1", "q1-1"):
        assert [t for f, t in order if f == first] == [1, 2, 3, 4]
    assert result.metrics["systems"]["http-bot"]["dimensions"]["rating"]["judged"] == 8
