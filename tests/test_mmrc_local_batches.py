"""The offline MMRC demo config on a local model: each turn and each question is one batch.

The protocol's calls wait for one another, so what a local model can batch is what one
graph step asks at once: the reply and the note of a turn, the two conditions' answers
to a question. They must reach the model together even though the roles have different
answer caps and the note-taker reads the note store first. A tiny random model built by
the test stands in for SmolLM2 (tests/tiny_models.py; nothing is downloaded).
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.models import local_engine, local_models
from dialeval.config import load_config
from dialeval.evaluation import run
from tests.tiny_models import build_causal_lm

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"


def test_each_turn_and_each_question_of_the_demo_is_one_batch(tmp_path, monkeypatch):
    # the batcher waits 20 ms for company; on a busy machine the note-taker's store read can
    # take longer than that, so the test gives it a second (ten steps: about 10 s more)
    monkeypatch.setattr(local_engine, "BATCH_WAIT_SECONDS", 1.0)
    folder = build_causal_lm(tmp_path / "tiny")
    config = load_config(
        str(FIXTURES / "mmrc_smollm2.yaml"),
        model={"spec": f"hf:{folder}"},
        output_dir=str(tmp_path / "runs"),
    ).model_copy(update={"cache_path": None})
    engine = local_models.load_engine(str(folder))
    engine.batch_sizes.clear()

    result = run("mmrc", str(FIXTURES / "mmrc_demo.json"), config, progress=False)

    [conv] = json.loads((FIXTURES / "mmrc_demo.json").read_text())
    steps = len(conv["turns"]) + len(conv["questions"])
    sizes = list(engine.batch_sizes)
    assert sizes[:steps] == [2] * steps  # reply + note, then answer off + answer on
    judged = sum(q["score_source"] == "judge" for q in result.records[0]["questions"])
    usage = [u for line in (result.run_dir / "results.jsonl").read_text().splitlines() for u in json.loads(line)["usage"]]
    shared = sum(u.get("deduplicated", 0) for u in usage if u["agent"].startswith("mmrc.judge"))
    # all the judges in one final batch; a prompt the two conditions share (same answer) is sent once
    assert sizes[steps:] == ([judged - shared] if judged else [])
