"""A run keeps a few more items open than its request limit, so dialogues of several calls
leave no request slot idle while others wait to start; requests in flight never exceed the limit."""

from __future__ import annotations

import json
import re

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub


def _dialogues(tmp_path, count: int, turns: int):
    records = [
        {"id": f"{d:05d}{t:02d}", "dial_id": f"{d:05d}", "turn_num": t, "question": f"d{d} q{t}",
         "ref_answer": f"reference {t}", "gen_answer": f"answer {t}"}
        for d in range(1, count + 1) for t in range(1, turns + 1)
    ]
    path = tmp_path / "bot.json"
    path.write_text(json.dumps(records))
    return path


def _graded(body) -> tuple[int, int]:
    """(dialogue, turn) a request grades."""
    user = body["messages"][-1]["content"]
    dialogue = int(re.search(r"Question: d(\d+) q", user).group(1))
    return dialogue, int(re.search(r"Turn to grade \(turn (\d+)\)", user).group(1))


def test_a_ninth_dialogue_starts_before_the_first_eight_finish_at_concurrency_8(tmp_path):
    data = _dialogues(tmp_path, count=9, turns=3)
    with OpenAIStub(respond=lambda body: "Fine. So rating=3", latency=0.2) as server:
        model = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=model, cache_path=None, output_dir=str(tmp_path / "runs"), concurrency=8,
                           options={"judge": "session", "summary": "none"})
        result = run("vdact", data, config, progress=False)
    assert result.complete and len(server.requests) == 27
    order = [_graded(body) for body in server.requests]
    first_of_ninth = order.index((9, 1))
    last_turns = [i for i, (_, turn) in enumerate(order) if turn == 3]
    assert first_of_ninth < min(last_turns)  # with 8 places it waited for a whole dialogue to end
    assert server.peak_in_flight <= 8
