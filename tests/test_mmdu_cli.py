"""MMDU from the command line: the dry-run estimate, per-turn scores for compare, two judges side by side."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dialeval.benchmarks import get_benchmark
from dialeval.cli import main
from dialeval.config import RunConfig
from dialeval.protocols.mmdu.metrics import DIMENSIONS
from dialeval.evaluation import run
from tests.helpers import scripted

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
DEMO = FIXTURES / "mmdu_demo.json"
PREDICTIONS = FIXTURES / "mmdu_demo_predictions.json"


def test_dry_run_prints_the_score_table_and_the_token_and_cost_estimate(tmp_path, capsys):
    code = main(["run", "mmdu", "--data", str(DEMO), "--model", "dry-run:gpt-4o-mini", "--output-dir", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "| system | C | R | VP | LC | AA | IRU | Overall |" in out
    assert "2 dialogues, 11 turns: 11 answered, 11 judged" in out
    calls, requests, _, tokens_in, _, tokens_out, cost, _ = re.search(
        r"\| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \|", out.split("## Cost")[1]
    ).groups()
    assert (int(calls), int(requests)) == (22, 0)  # 11 answers + 11 judgements, nothing sent
    assert int(tokens_in) > 0 and int(tokens_out) > 0 and float(cost) > 0  # priced as gpt-4o-mini


def _scores_by_turn(messages, base: int) -> str:
    text = "".join(m.content if isinstance(m.content, str) else "".join(p.get("text", "") for p in m.content) for m in messages)
    length = len(text.rsplit("<assistant_answer>", 1)[1].split("</assistant_answer>")[0])
    return json.dumps({"explanation": "by length", "scores": {d: min(10, base + length // 20) for d in DIMENSIONS}})


def test_two_judges_on_the_same_answers_are_compared_turn_by_turn(tmp_path, capsys):
    runs = []
    for name, base in (("strict", 1), ("lenient", 3)):
        settings, _ = scripted(respond=lambda m, base=base: _scores_by_turn(m, base))
        config = RunConfig(model=settings, cache_path=None, output_dir=str(tmp_path), run_id=f"judge-{name}",
                           options={"predictions": str(PREDICTIONS)})
        runs.append(run("mmdu", DEMO, config, progress=False))

    scores = get_benchmark("mmdu").item_scores(runs[0].records)
    assert set(scores) == set(DIMENSIONS)
    assert set(scores["Overall Score"]) == {f"shapes-1/{n}" for n in range(1, 7)} | {f"sales-2/{n}" for n in range(1, 6)}

    code = main(["metrics", "mmdu", "--predictions", str(runs[0].run_dir), str(runs[1].run_dir)])
    out = capsys.readouterr().out
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("| openai:scripted-") and "judge-strict" in line.split("|")[1]
               and "judge-lenient" in line.split("|")[2])
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "11" and cells[3] == "1.000"  # same ranking of the 11 turns, shifted by 2 points
    assert cells[7] == "-20.0" and cells[8] == "0"
