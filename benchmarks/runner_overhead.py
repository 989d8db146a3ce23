"""Wall time, CPU per request and start-up of `dialeval run`, as a user runs it; prints figures.

Each figure runs the command line (``python -m dialeval run answers ...``) in a process of
its own against the OpenAI-compatible stub server (itself in another process, answering
after a fixed latency), so the wall time is what a user waits, start-up and report
included, and the CPU time is the dialeval process's alone. With ``--before SRC`` every
figure is measured for that checkout too (e.g. ``git worktree add /tmp/base <commit>``
and ``--before /tmp/base/src``), interleaved run by run, so a change of load hits both.
The load average is printed with each figure: on a shared machine read it first.

1. wide: 1,000 items, a 1 s model, 64 in flight (floor: 1,000 / 64 x 1 s = 15.6 s)
2. real: 500 items, a 2 s model (a real provider's latency), 64 in flight
3. cpu: marginal CPU per request against an instant model, 64 in flight: the CPU of a
   2,000-item run minus a 200-item run's, over 1,800 (start-up and report cancel out; a
   process's start-up varies by half a second here, so the difference is taken over many)
4. startup: `dialeval --help` and `dialeval list`

Usage: python benchmarks/runner_overhead.py [--before SRC] [--rounds 2] [--only wide,real,cpu,startup]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GRADE = '{"rationale": "fine", "score": 4}'

# the child process: an OpenAIStub that answers GRADE; on stdin "bodies" it prints the
# request bodies received so far (one JSON line), "count" their number; EOF stops it
SERVER = """
import json, sys, time
from dialeval.testing.openai_server import OpenAIStub
answered = []  # when each answer was made (after the latency)
def respond(body):
    answered.append(time.perf_counter())
    return %r
with OpenAIStub(respond=respond, latency=float(sys.argv[1])) as server:
    print(server.base_url, flush=True)
    for line in sys.stdin:
        if line.strip() == "bodies":
            print(json.dumps(server.requests), flush=True)
        elif line.strip() == "count":
            print(len(server.requests), flush=True)
        elif line.strip() == "peak":  # the most requests held at once since the last "peak"
            print(server.peak_in_flight, flush=True)
            server.peak_in_flight = 0
        elif line.strip() == "window":  # [first request in, last answer made] since the last "window" (perf_counter)
            print(json.dumps([min(answered) - server.latency, max(answered)] if answered else None), flush=True)
            answered.clear()
""" % GRADE


class StubProcess:
    """The stub server in a child process (``with StubProcess(latency) as stub``)."""

    def __init__(self, latency: float = 0.0):
        self.latency = latency

    def __enter__(self) -> StubProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(self.latency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.base_url = self.proc.stdout.readline().strip()
        return self

    def _ask(self, what: str) -> str:
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def bodies(self) -> list[dict[str, Any]]:
        return json.loads(self._ask("bodies"))

    def count(self) -> int:
        return int(self._ask("count"))

    def peak(self) -> int:
        """The most requests in flight at once since the last call."""
        return int(self._ask("peak"))

    def window(self) -> tuple[float, float] | None:
        """``time.perf_counter()`` when the first request since the last call came in and when
        the last answer was made. Linux's ``perf_counter`` is the system-wide monotonic clock,
        so these compare with this process's own stamps."""
        found = json.loads(self._ask("window"))
        return (found[0], found[1]) if found else None

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def write_items(folder: Path, n: int) -> Path:
    path = folder / f"items-{n}.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "reference": f"ref {i}", "answer": f"ans {i}"}) + "\n")
    return path


def cli(src: str, args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``python -m dialeval <args>`` with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached as an installed package has it, for both checkouts
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dialeval", *args], check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def answers_run(src: str, tmp: Path, stub: StubProcess, items: int, name: str) -> tuple[float, float]:
    data = write_items(tmp, items)
    return cli(src, ["run", "answers", "--data", str(data), "--model", "openai-compatible:stub", "--base-url", stub.base_url,
                     "--concurrency", "64", "--no-cache", "--no-progress", "--output-dir", str(tmp / name)])


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="src folder of the checkout to compare with")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="wide,real,cpu,startup")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    checkouts = {"after": here, **({"before": args.before} if args.before else {})}
    only = args.only.split(",")
    results: dict[str, dict[str, list[Any]]] = {}

    def note(figure: str, who: str, value: Any) -> None:
        results.setdefault(figure, {}).setdefault(who, []).append(value)
        print(f"  {figure:8} {who:6} {value}  ({load()})", flush=True)

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for n in range(args.rounds):
            order = list(checkouts.items()) if n % 2 == 0 else list(reversed(checkouts.items()))
            for who, src in order:
                if "wide" in only:
                    with StubProcess(latency=1.0) as stub:
                        wall, _ = answers_run(src, tmp, stub, 1000, f"wide-{who}-{n}")
                    note("wide", who, f"{wall:.2f} s = {wall / (1000 / 64):.2f}x the floor")
                if "real" in only:
                    with StubProcess(latency=2.0) as stub:
                        wall, _ = answers_run(src, tmp, stub, 500, f"real-{who}-{n}")
                    note("real", who, f"{wall:.2f} s")
                if "cpu" in only:
                    with StubProcess(latency=0.0) as stub:
                        _, small = answers_run(src, tmp, stub, 200, f"cpu200-{who}-{n}")
                        _, large = answers_run(src, tmp, stub, 2000, f"cpu2000-{who}-{n}")
                    note("cpu", who, f"{(large - small) / 1800 * 1000:.2f} ms per request")
                if "startup" in only:
                    for command in (["--help"], ["list"]):
                        wall, _ = cli(src, command)
                        note("startup", who, f"dialeval {command[0]}: {wall:.2f} s")
    print(json.dumps(results, indent=1))
    for figure, by_who in results.items():  # medians: this machine's figures vary from run to run
        for who, values in by_who.items():
            numbers = [float(str(v).split()[0]) for v in values if str(v)[0].isdigit()]
            if numbers:
                print(f"median {figure:6} {who:6} {statistics.median(numbers):.2f} (of {len(numbers)})")


if __name__ == "__main__":
    main()
