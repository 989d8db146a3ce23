"""The offline simulation example: the bundled toy bot driven by SmolLM2 (slow: the real model)."""

from __future__ import annotations

from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from tests.test_offline_examples import slow_on_smollm2

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "simulation_demo.yaml"


@slow_on_smollm2
def test_the_toy_bot_is_simulated_audited_and_judged_offline(tmp_path):
    config = RunConfig(model=ModelSettings(spec="smollm2"), output_dir=str(tmp_path), cache_path=None,
                       options={"bot": "dialeval.testing.toy_bot:reply"})
    result = run("simulation", str(DEMO), config, progress=False)

    [record] = result.records
    assert result.failed == 0
    # the scripted opening, the toy bot asking for the order number, then SmolLM2's turn (or its unreadable answer)
    assert record["turns"][0]["scripted"] and "order number" in record["turns"][1]["messages"][0]["content"]
    assert record["turns"][2]["role"] == "user" and record["turns"][2]["call"]["model"] == "smollm2"
    assert record["outcome"] in ("success", "failure", "simulator_failure", "judge_failure")
    assert record["stop_reason"] in ("max_turns", "checks_passed", "user_stop", "audit_failure", "simulator_unparsed")
    assert (tmp_path / result.run_dir.name / "report.md").is_file()
