"""Print the figures of the `vdact` benchmark on the released data (../shared/data/vdact).

- time and table of the classic metrics over the ten prediction files;
- calls and tokens per dialogue of the session judge, and the dry-run cost estimate of
  judging one whole prediction file with gpt-4o-mini (no model is called).

    .venv/bin/python benchmarks/vdact_costs.py [--file test-videollama2-8f.json]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dialeval.benchmarks import get_benchmark
from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "vdact"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", default="test-videollama2-8f.json")
    parser.add_argument("--judge", default="session")
    args = parser.parse_args()
    files = sorted((SHARED / "predictions").glob("*.json"))
    started = time.perf_counter()
    table = get_benchmark("vdact").metrics_only(files, {})
    print(f"## Classic metrics, {len(files)} systems ({time.perf_counter() - started:.1f} s)\n\n{table}\n")
    with tempfile.TemporaryDirectory() as out:
        config = RunConfig(model=ModelSettings(spec="dry-run:gpt-4o-mini"), output_dir=out, cache_path=None,
                           options={"judge": args.judge})
        started = time.perf_counter()
        result = run("vdact", SHARED / "predictions" / args.file, config, progress=False)
        seconds = time.perf_counter() - started
    usage = result.metrics["run"]["usage"]
    system = next(iter(result.metrics["systems"].values()))
    per = system["usage"]["per_dialogue"]
    print(f"## Dry run, judge={args.judge}, {args.file} ({seconds:.1f} s)\n")
    print(f"dialogues: {system['dialogues']}, turns: {system['turns']}")
    print(f"per dialogue: {per['calls']:.2f} calls, {per['input_tokens']:.0f} input and {per['output_tokens']:.0f} output tokens")
    print(f"whole file: {usage['calls']} calls, {usage['input_tokens']} input and {usage['output_tokens']} output tokens, "
          f"{usage['cost_usd']:.4f} USD as gpt-4o-mini")


if __name__ == "__main__":
    main()
