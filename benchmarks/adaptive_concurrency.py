"""Fixed against adaptive concurrency on a rate-limited server: 429s, wall time, failed items.

The OpenAI-compatible stub answers instantly after ``--latency`` seconds and returns HTTP 429
to every request beyond ``max_in_flight`` at once (the provider's limit, unknown to the
client). For each server limit, the same `answers` run (``--items`` items, one request each)
goes out with a fixed low limit (the old default, 8), a fixed high limit (64) and the
adaptive limit (starts at the maximum, halves on a 429, grows by one after a window of successes,
bounded by 64). The SDK retries 429s, so every item should finish; what changes is how many
429s the provider sees and how long the run takes.

    python benchmarks/adaptive_concurrency.py [--items 200] [--latency 0.1] [--server-limits 4 16 48]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from runner_overhead import write_items  # the same items as the overhead benchmark (this folder)

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub

GRADE = '{"rationale": "agrees", "score": 4}'


def one_run(data: Path, out: Path, server_limit: int, latency: float, limit: int, adaptive: bool) -> dict[str, float]:
    """Runs every item once against a fresh server; returns 429s, wall time and failed items."""
    with OpenAIStub(respond=lambda body: GRADE, latency=latency, max_in_flight=server_limit) as server:
        settings = ModelSettings(
            spec="openai-compatible:rate-limited",
            base_url=server.base_url,
            max_concurrency=limit,
            adaptive_concurrency=adaptive,
            max_retries=50,
        )
        config = RunConfig(model=settings, output_dir=str(out), cache_path=None, concurrency=limit, fresh=True)
        start = time.perf_counter()
        result = run("answers", data, config, progress=False)
        wall = time.perf_counter() - start
        return {
            "429": server.statuses.count(429),
            "ok": server.statuses.count(200),
            "wall": wall,
            "failed": result.metrics["run"]["failed"],
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds per answered request")
    ap.add_argument("--server-limits", type=int, nargs="+", default=[4, 16, 48])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dialeval-adaptive-"))
    data = write_items(tmp, args.items)
    modes = [("fixed 8", 8, False), ("fixed 64", 64, False), ("adaptive <=64", 64, True)]
    print(f"{args.items} items, {args.latency:.2f} s per answer; floor = items / server limit x latency")
    print(f"{'server limit':>12} | {'client':<14} | {'429s':>5} | {'wall s':>7} | {'floor s':>7} | failed")
    for server_limit in args.server_limits:
        floor = -(-args.items // server_limit) * args.latency
        for label, limit, adaptive in modes:
            figures = one_run(data, tmp / "runs", server_limit, args.latency, limit, adaptive)
            print(
                f"{server_limit:>12} | {label:<14} | {figures['429']:>5} | {figures['wall']:>7.2f} | {floor:>7.2f} | "
                f"{figures['failed']}"
            )


if __name__ == "__main__":
    main()
