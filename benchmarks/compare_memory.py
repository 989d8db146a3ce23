"""Peak memory of `dialeval compare` as the number of compared units grows; prints MB.

Two fake `answers` runs of N items each (one judge score 1-5 per item, one call with a
short raw answer per record) are compared with plots on, under tracemalloc; the peak of
Python allocations (numpy and scipy arrays included) is printed per N. The peak should
stay flat: every statistic resamples in batches whose size shrinks as N grows.

Usage: python benchmarks/compare_memory.py [--units 1000,3000] [--no-plots]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import tracemalloc
from pathlib import Path


def fake_run(root: Path, name: str, n: int, seed: int) -> Path:
    """A run folder of the `answers` benchmark with ``n`` scored items."""
    rng = random.Random(seed)
    run_dir = root / name
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers"}))
    with (run_dir / "results.jsonl").open("w") as out:
        for i in range(n):
            score = rng.randint(1, 5)
            call = {"agent": "answer_judge", "status": "ok", "raw": f"So rating={score}. " * 10, "model": "m"}
            record = {"id": f"item-{i}", "system": "s", "score": score, "calls": [call]}
            out.write(json.dumps({"id": record["id"], "status": "ok", "result": record}) + "\n")
    return run_dir


def peak_mb(n: int, plots: bool) -> float:
    from dialeval.report.compare import compare_runs

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        a, b = fake_run(root, "a", n, 1), fake_run(root, "b", n, 2)
        tracemalloc.start()
        compare_runs([a, b], root / "cmp", plots=plots)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", default="1000,3000", help="comma-separated numbers of units")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args()
    peak_mb(50, not args.no_plots)  # imports and matplotlib's caches, outside the figures
    for n in (int(u) for u in args.units.split(",")):
        print(f"{n:>6} units: peak {peak_mb(n, not args.no_plots):8.1f} MB", flush=True)


if __name__ == "__main__":
    main()
