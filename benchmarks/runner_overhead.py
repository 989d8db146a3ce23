"""Runner speed against the local OpenAI-compatible stub server; prints figures.

1. framework overhead per model call with an instant model,
2. wall time with 200 ms model latency vs the lower bound max(ceil(requests/L), chain) x 200 ms,
3. an identical re-run (same run id: nothing to do; new run id: all from the cache),
4. start-up time of `dialeval --help` and `dialeval list`.

Usage: python benchmarks/runner_overhead.py [--items 200] [--latency 0.2] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.runner import run
from dialeval.testing.openai_server import OpenAIStub

GRADE = '{"rationale": "fine", "score": 4}'


def write_items(folder: Path, n: int) -> Path:
    path = folder / "items.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "reference": f"ref {i}", "answer": f"ans {i}"}) + "\n")
    return path


def timed_run(data: Path, out: Path, settings: ModelSettings, concurrency: int, run_id: str, cache: Path | None) -> float:
    config = RunConfig(
        model=settings, output_dir=str(out), concurrency=concurrency, run_id=run_id, cache_path=str(cache) if cache else None
    )
    start = time.perf_counter()
    run("answers", data, config, progress=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dialeval-bench-"))
    data = write_items(tmp, args.items)

    # 1. overhead with an instant model (one call per item, sequential: no overlap hides cost)
    with OpenAIStub(respond=lambda body: GRADE) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url)
        timed_run(data, tmp / "warm", settings, 1, "warmup", None)  # imports, connection pool
        # raw HTTP cost of one request with the same client, for reference
        from dialeval.models import get_client
        from langchain_core.messages import HumanMessage
        import asyncio

        client = get_client(settings)

        async def raw(n: int) -> float:
            t = time.perf_counter()
            for i in range(n):
                await client.model.ainvoke([HumanMessage(f"q{i}")])
            return time.perf_counter() - t

        raw_wall = asyncio.run(raw(args.items))
        wall = timed_run(data, tmp / "instant", settings, 1, "instant", None)
    per_call = wall / args.items
    print(f"[1] instant model, {args.items} items sequential: {wall:.2f} s, {1000 * per_call:.2f} ms per call "
          f"(bare LangChain+HTTP call {1000 * raw_wall / args.items:.2f} ms) -> dialeval overhead "
          f"{1000 * (wall - raw_wall) / args.items:.2f} ms per call")

    # 2. latency-bound runs
    with OpenAIStub(respond=lambda body: GRADE, latency=args.latency) as server:
        settings = ModelSettings(spec="openai-compatible:stub-latency", base_url=server.base_url)
        cache = tmp / "cache.sqlite"
        wall = timed_run(data, tmp / "latency", settings, args.concurrency, "latency", cache)
        requests = len(server.requests)
        bound = max(math.ceil(requests / args.concurrency), 1) * args.latency
        print(f"[2] {args.latency * 1000:.0f} ms latency, L={args.concurrency}, {requests} requests: {wall:.2f} s "
              f"vs lower bound {bound:.2f} s -> {wall / bound:.3f}x (target <= 1.15x)")

        before = len(server.requests)
        same = timed_run(data, tmp / "latency", settings, args.concurrency, "latency", cache)
        cached = timed_run(data, tmp / "latency", settings, args.concurrency, "latency-rerun", cache)
        sent = len(server.requests) - before
        print(f"[3] identical re-run: same run id {same:.3f} s ({100 * same / wall:.1f}% of first), "
              f"new run id from cache {cached:.3f} s ({100 * cached / wall:.1f}%), requests sent: {sent}")

    for cmd in (["--help"], ["list"]):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dialeval.cli", *cmd], check=True, capture_output=True)
        print(f"[4] dialeval {' '.join(cmd)}: {time.perf_counter() - start:.2f} s (target <= 1.5 s)")


if __name__ == "__main__":
    main()
