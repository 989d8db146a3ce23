"""Batch rounds and batch cost of each protocol, from dry runs (no model is called).

    python benchmarks/batch_rounds.py [--shared] [--model gpt-4o-mini] [--limit N]

For every bundled fixture (``--shared`` adds the real KGDS, VDAct and MDSEval files) it
runs the protocol twice with ``dry-run:openai:<model>``: once live, once with
``batch: true``, and prints the calls, the rounds a batch run needs (one round = one
batch per model that every waiting item joins), and the estimated cost of both. A
round can take up to 24 hours, so the rounds column is the worst-case wall time in days.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
CASES: list[tuple[str, str, dict[str, object]]] = [
    ("answers", str(FIXTURES / "answers_demo.jsonl"), {}),
    ("kgds", str(FIXTURES / "kgds_demo.json"), {}),
    ("vdact", str(FIXTURES / "vdact_demo" / "predictions" / "demo-bot.json"), {}),
    ("mdseval", str(FIXTURES / "mdseval_demo.json"), {}),
    ("mmdu", str(FIXTURES / "mmdu_demo.json"), {"predictions": str(FIXTURES / "mmdu_demo_predictions.json")}),
    ("mmrc", str(FIXTURES / "mmrc_demo.json"), {}),
    ("dialogue", str(FIXTURES / "dialogue_demo.jsonl"), {}),
]
SHARED = Path(os.environ.get("DIALEVAL_SHARED", "../shared")) / "data"
SHARED_CASES: list[tuple[str, str, dict[str, object]]] = [
    ("kgds", str(SHARED / "kgds" / "KGDS.json"), {}),
    ("vdact", str(SHARED / "vdact" / "predictions" / "test-videollava-7b-8f.json"), {}),
    ("mdseval", str(SHARED / "mdseval" / "MDSEval_annotations.json"), {}),
]


def measure(benchmark: str, data: str, options: dict[str, object], model: str, batch: bool, limit: int | None) -> dict:
    with tempfile.TemporaryDirectory() as out:
        settings = ModelSettings(spec=f"dry-run:openai:{model}", batch=batch)
        config = RunConfig(model=settings, cache_path=None, output_dir=out, options=options, limit=limit)
        started = time.perf_counter()
        result = run(benchmark, data, config, progress=False)
        usage = result.metrics["run"]["usage"]
        batches = result.metrics["run"].get("batches") or {}
        return {
            "items": result.metrics["run"]["items"],
            "calls": usage["calls"],
            "cost": usage["cost_usd"],
            "rounds": batches.get("rounds"),
            "seconds": round(time.perf_counter() - started, 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", action="store_true", help="also the real data files in ../shared/data")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--limit", type=int, default=None, help="items of the shared files (default: all)")
    parser.add_argument("--only", nargs="*", help="benchmarks to measure (default: all)")
    args = parser.parse_args()
    cases = [(b, d, o, None) for b, d, o in CASES]
    if args.shared:
        cases += [(b, d, o, args.limit) for b, d, o in SHARED_CASES if Path(d).exists()]
    print("| benchmark | data | items | calls | batch rounds | live cost (USD) | batch cost (USD) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for benchmark, data, options, limit in cases:
        if args.only and benchmark not in args.only:
            continue
        live = measure(benchmark, data, options, args.model, False, limit)
        batched = measure(benchmark, data, options, args.model, True, limit)
        print(
            f"| {benchmark} | {Path(data).name} | {batched['items']} | {batched['calls']} | {batched['rounds']} | "
            f"{live['cost']:.4f} | {batched['cost']:.4f} |",
            flush=True,
        )
        print(json.dumps({"benchmark": benchmark, "live": live, "batch": batched}), flush=True)


if __name__ == "__main__":
    main()
