"""The `vdact` benchmark from the command line: dry-run estimates and model-free metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.cli import main

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo"
PREDICTIONS = DEMO / "predictions" / "demo-bot.json"


def test_dry_run_prints_the_score_and_the_whole_file_estimate(tmp_path, capsys):
    code = main(["run", "vdact", "--data", str(PREDICTIONS), "--limit", "1", "--model", "dry-run:gpt-4o-mini",
                 "--output-dir", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "## Results" in out
    bot = json.loads(next(tmp_path.glob("*/metrics.json")).read_text())["systems"]["demo-bot"]
    rating = bot["dimensions"]["rating"]
    assert (bot["dialogues"], rating["turns"], rating["judged"], rating["n"], rating["valid_n"]) == (1, 10, 10, 10, 10)
    assert (rating["no_answer"], rating["unparsed"], rating["truncated"], rating["error"]) == (0, 0, 0, 0)
    assert (rating["mean"], rating["mean_scaled"], rating["valid_mean"]) == (2.0, 0.5, 2.0)
    usage = bot["usage"]
    assert usage["file_dialogues"] == 3
    assert usage["file_estimate"]["input_tokens"] == pytest.approx(usage["per_dialogue"]["input_tokens"] * 3)
    assert usage["file_estimate"]["cost_usd"] > 0  # priced as gpt-4o-mini


def test_metrics_only_prints_one_row_per_system(tmp_path, monkeypatch):
    monkeypatch.delenv("DIALEVAL_SPICE_JAR", raising=False)
    other = tmp_path / "copy-bot.json"
    other.write_text(PREDICTIONS.read_text())
    table = get_benchmark("vdact").metrics_only([PREDICTIONS, other], {})
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| system | turns | BLEU | ROUGE-L | METEOR | SPICE | BERTScore | BARTScore |")
    assert [r.split("|")[1].strip() for r in rows[1:]] == ["demo-bot", "copy-bot"]
    assert "BERTScore unavailable: no local model given" in table
    assert "SPICE unavailable: no SPICE jar given" in table
    assert "BARTScore unavailable: no local BART model given" in table


def test_metrics_only_correlates_classic_metrics_with_humans():
    table = get_benchmark("vdact").metrics_only([PREDICTIONS], {"human_scores": str(DEMO / "human_scores.jsonl")})
    row = next(line for line in table.splitlines() if line.startswith("| demo-bot | 12 | 1 |"))
    assert re.search(r"\| -?0\.\d{4} \| -?0\.\d{4} \|", row)


def test_classic_metrics_of_two_released_systems(shared_data):
    # two of the ten systems (scoring all ten takes ~30 s): one the paper reports, and the
    # one with repeated turn ids
    files = sorted((shared_data / "vdact" / "predictions").glob("*.json"))
    assert len(files) == 10
    picked = [f for f in files if f.stem in ("test-videollama2-8f", "test-videollava-7b-8f")]
    table = get_benchmark("vdact").metrics_only(picked, {})
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| test-")}
    assert len(rows) == 2
    cells = [c.strip() for c in rows["test-videollama2-8f"].strip("|").split("|")]
    bleu, rouge = float(cells[2]), float(cells[3])
    # the paper's Table 5 gives BLEU 6.96 and ROUGE 28.86 for frozen VideoLLaMA2 (8 frames)
    assert abs(bleu - 6.96) < 1.0 and abs(rouge - 28.86) < 1.0
    assert "test-videollava-7b-8f: 19 repeated turn id(s)" in table


def test_dry_run_of_a_released_file_estimates_all_450_dialogues(shared_data, tmp_path, capsys):
    data = shared_data / "vdact" / "predictions" / "test-videollama2-8f.json"
    code = main(["run", "vdact", "--data", str(data), "--limit", "3", "--model", "dry-run",
                 "--output-dir", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "| test-videollama2-8f | 3 | 30 | 30 | 0 | 0 | 0 | 0 | 30 | 2.00 | 50.00 | n/a | 30 | 2.00 | 50.00 |" in out  # identical placeholders: no interval
    row = next(line for line in out.splitlines() if line.startswith("| test-videollama2-8f | 3 | 10.0 |"))
    assert "| 450 | 4500 |" in row
