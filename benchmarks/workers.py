"""``--workers N`` against the stub server: wall time beside a bare SDK loop and the floor.

1. ``answers``: N items (default 10,000), one call each, at a fixed latency (200 ms)
   and concurrency 64; floor = ceil(N / 64) x latency. dialeval runs with 1 worker, 2
   workers and the default (as many as help); the bare ``AsyncOpenAI`` loop sends the
   same request bodies (one event loop, one process) at the same concurrency.
2. VDAct's released file (``$DIALEVAL_SHARED/data/vdact``), session judge: bound =
   max(ceil(calls / 64), longest dialogue in calls) x latency; skipped with a message
   when the data is absent.

Each dialeval run is a fresh Python process timing ``run()`` (imports excluded: see
``fixed_cost.py`` for start-up); efficiency = floor / wall. The stub runs in a child
process of its own. The machine's load (1-minute average) is printed beside every
figure: on a shared machine it moves them more than anything measured here.

Usage: PYTHONPATH=$PWD/src:$PWD/benchmarks python benchmarks/workers.py [--items 10000] [--latency 0.2]
       [--concurrency 64] [--workers 1,2,default] [--skip answers|vdact]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from runner_overhead import StubProcess, bare_loop, write_items  # beside this file

SHARED = Path(os.environ.get("DIALEVAL_SHARED", Path(__file__).resolve().parents[2] / "shared"))
VDACT = SHARED / "data" / "vdact" / "predictions" / "test-videollama2-8f.json"

# the stub in a child process: answers the answers judge's schema, or a VDAct rating;
# on stdin "bodies" prints the request bodies received so far, "clear" forgets them
SERVER = """
import json, sys
from dialeval.testing.openai_server import OpenAIStub, prompt_of
def respond(body):
    if "rating" in prompt_of(body):
        return "Seems right. So rating=2"
    return '{"rationale": "fine", "score": 4}'
with OpenAIStub(respond=respond, latency=float(sys.argv[1])) as server:
    print(server.base_url, flush=True)
    for line in sys.stdin:
        if line.strip() == "bodies":
            print(json.dumps(server.requests), flush=True)
        elif line.strip() == "clear":
            server.requests.clear(); server.statuses.clear()
            print("ok", flush=True)
"""

# one dialeval run in a fresh process: prints its figures as one JSON line
DRIVER = """
import json, resource, sys, time
from dialeval.config import ModelSettings, RunConfig
from dialeval.run.folder import read_results
from dialeval.run.runner import run
a = json.loads(sys.argv[1])
config = RunConfig(model=ModelSettings(spec="openai-compatible:stub", base_url=a["base_url"]), output_dir=a["out"],
                   concurrency=a["concurrency"], workers=a["workers"], cache_path=None, options=a["options"])
wall, cpu = time.perf_counter(), time.process_time()
result = run(a["benchmark"], a["data"], config, progress=False)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
rows = read_results(result.run_dir)
print(json.dumps({"wall": wall, "cpu": cpu, "workers_cpu": workers.ru_utime + workers.ru_stime,
                  "calls": result.metrics["run"]["usage"]["calls"], "complete": result.complete,
                  "chain": max(len(r["usage"]) for r in rows)}))
"""


class Stub(StubProcess):
    """``with Stub(latency) as stub``: the stub server in a child process, answering both benchmarks."""

    def __enter__(self) -> Stub:
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(self.latency)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        return self

    def cpu(self) -> float:
        """CPU seconds the stub has used so far: it is one Python process, and can be what limits a run."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> float:
    return os.getloadavg()[0]


def dialeval(stub: Stub, benchmark: str, data: Path, out: Path, concurrency: int, workers: int | None,
             options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run in a fresh process; its figures."""
    args = {"base_url": stub.base_url, "out": str(out), "concurrency": concurrency, "workers": workers,
            "options": options or {}, "benchmark": benchmark, "data": str(data)}
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(args)], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def line(label: str, wall: float, floor: float, extra: str = "") -> None:
    print(f"  {label:<22} {wall:7.2f} s  {wall / floor:5.2f}x floor  efficiency {floor / wall:4.2f}  "
          f"load {load():4.1f}{extra}", flush=True)


def worker_counts(spec: str) -> list[int | None]:
    return [None if w == "default" else int(w) for w in spec.split(",")]


def default_workers(benchmark: str, data: Path, concurrency: int, options: dict[str, Any] | None = None) -> int:
    """What ``workers`` unset chooses for this data on this machine (an API model)."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.config import ModelSettings, RunConfig
    from dialeval.run.workers import choose_workers

    bench = get_benchmark(benchmark)
    config = RunConfig(model=ModelSettings(spec="openai-compatible:stub", base_url="http://127.0.0.1:9/v1"),
                       concurrency=concurrency, options=options or {})
    return choose_workers(config, bench, config.context(), len(bench.load(data, config.options)))


def answers(tmp: Path, args: argparse.Namespace) -> None:
    n, latency, concurrency = args.items, args.latency, args.concurrency
    floor = math.ceil(n / concurrency) * latency
    data = write_items(tmp, n)
    default = default_workers("answers", data, concurrency)
    print(f"[1] answers: {n} items at {latency * 1000:.0f} ms, concurrency {concurrency}, floor {floor:.2f} s; "
          f"{os.cpu_count()} cores; default workers here: {default}", flush=True)
    with Stub(latency) as stub:
        dialeval(stub, "answers", write_items(tmp, concurrency), tmp / "warm", concurrency, 1)  # bodies to replay
        sample = stub.bodies()
        stub._ask("clear")
        cpu, served = time.process_time(), stub.cpu()
        wall = bare_loop(stub.base_url, [sample[i % len(sample)] for i in range(n)], concurrency)
        cpu = time.process_time() - cpu
        line("bare SDK loop", wall, floor, f"  CPU {1000 * cpu / n:.2f} ms/request; stub {1000 * (stub.cpu() - served) / n:.2f}")
        for workers in worker_counts(args.workers):
            served = stub.cpu()
            got = dialeval(stub, "answers", data, tmp / f"w{workers}", concurrency, workers)
            served = stub.cpu() - served
            assert got["complete"] and got["calls"] == n, got
            cpu_ms = 1000 * (got["cpu"] + got["workers_cpu"]) / n
            line(f"dialeval workers={workers or f'default ({default})'}", got["wall"], floor,
                 f"  CPU {cpu_ms:.2f} ms/request (parent {1000 * got['cpu'] / n:.2f}); stub {1000 * served / n:.2f}")


def vdact(tmp: Path, args: argparse.Namespace) -> None:
    if not VDACT.exists():
        print(f"[2] VDAct: skipped, {VDACT} is absent (set DIALEVAL_SHARED)")
        return
    latency, concurrency = args.latency, args.concurrency
    options = {"judge": "session"}
    print(f"[2] VDAct {VDACT.name}, session judge, {latency * 1000:.0f} ms, concurrency {concurrency}; "
          f"default workers here: {default_workers('vdact', VDACT, concurrency, options)}", flush=True)
    with Stub(latency) as stub:
        for workers in worker_counts(args.workers):
            served = stub.cpu()
            got = dialeval(stub, "vdact", VDACT, tmp / f"v{workers}", concurrency, workers, options)
            served = stub.cpu() - served
            assert got["complete"], got
            bound = max(math.ceil(got["calls"] / concurrency), got["chain"]) * latency
            per_call = 1000 * (got["cpu"] + got["workers_cpu"]) / got["calls"]
            line(f"dialeval workers={workers or 'default'}", got["wall"], bound,
                 f"  ({got['calls']} calls, longest dialogue {got['chain']}, bound {bound:.2f} s; "
                 f"CPU {per_call:.2f} ms/call (parent {1000 * got['cpu'] / got['calls']:.2f}), "
                 f"stub {1000 * served / got['calls']:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", default="1,2,default", help="worker counts to run, e.g. 1,2,default")
    parser.add_argument("--skip", default="", help="answers and/or vdact, comma-separated")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        if "answers" not in skip:
            answers(Path(tmp), args)
        if "vdact" not in skip:
            vdact(Path(tmp), args)


if __name__ == "__main__":
    main()
