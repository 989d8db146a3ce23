"""Requests/s and CPU per request of `dialeval run` in one process, with `--processes 2`, and of a bare SDK loop.

Against the OpenAI-compatible stub answering after 20 ms (a fast self-hosted judge: vLLM or
SGLang with a small model), at 64 and 256 requests in flight, interleaved round by round
(the order rotates), medians of ``--rounds``:

- one: ``dialeval run answers ... --concurrency C``
- two: the same with ``--processes 2``
- bare: ``openai.AsyncOpenAI(http_client=DefaultAioHttpClient())`` sending the same request
  ``--items`` times, C at once, in a process of its own: the floor any client on the SDK has
- before: ``one`` with another checkout's ``src`` (``--before SRC``, e.g. ``git worktree add
  /tmp/base <commit>``), interleaved with the rest, so a change is measured under the same load

For dialeval, requests/s is ``--items`` over the time from the first request the server
received to the last answer it made (start-up and report left out), and CPU per request is
marginal: the CPU of a run of ``--items`` minus a run of a tenth of them, over the
difference, so start-up (imports, ~2-4 s) and the report cancel out; it is the whole
process tree's (workers included). ``--only guard`` is the 1 s-latency guard instead: 1,000 items at a
1 s model, 64 in flight, whole runs, as a ratio to the floor (1,000 / 64 x 1 s = 15.6 s).
``--only cpu`` measures CPU per request inside one process instead, with no start-up in either
run: ``dialeval.evaluate`` of 200 items (a warm-up), of 200 again and of ``--items`` + 200, the
CPU of the last minus the second over ``--items``, for this checkout and ``--before``
alternated, with the share of it the garbage collector took (``gc.callbacks``). It varies
less from run to run than the command line's marginal CPU, whose start-up swings by half a second.
The load average is printed with each figure: on a shared machine read it first.

Usage: python benchmarks/client_throughput.py [--items 800] [--rounds 3] [--only rate,guard,cpu] [--cpus 0,1]
       [--modes one,two,bare] [--before SRC]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner_overhead import StubProcess, cli, load, write_items  # noqa: E402

# this checkout's dialeval first, then wherever its libraries are (a --target install, say)
SRC = os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
BARE = """
import asyncio, sys, time
import openai
URL, N, C = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
MESSAGES = [{"role": "system", "content": "You grade answers from 1 to 5. " * 20},
            {"role": "user", "content": "Question: 2+2? Reference: 4. Answer: 4. " * 10}]
async def main():
    client = openai.AsyncOpenAI(base_url=URL, api_key="x", http_client=openai.DefaultAioHttpClient())
    slots = asyncio.Semaphore(C)
    async def one():
        async with slots:
            await client.chat.completions.create(model="stub", messages=MESSAGES, max_tokens=512, temperature=0.0)
    await one()  # connect
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(N)))
    print(time.perf_counter() - wall, time.process_time() - cpu)
    await client.close()
asyncio.run(main())
"""

WARM = """
import gc, sys, time, warnings
warnings.simplefilter("ignore")
import dialeval
url, small, large, out = sys.argv[1:5]
config = dict(model={"spec": "openai-compatible:stub", "base_url": url, "max_concurrency": 64}, concurrency=64, cache_path=None)
dialeval.evaluate("answers", small, config, output_dir=out + "/warm")
collecting, started = [0.0], [0.0]
def timed(phase, info):
    if phase == "start":
        started[0] = time.process_time()
    else:
        collecting[0] += time.process_time() - started[0]
c0 = time.process_time()
dialeval.evaluate("answers", small, config, output_dir=out + "/small")
c1, g1 = time.process_time(), collecting[0]
gc.callbacks.append(timed)
dialeval.evaluate("answers", large, config, output_dir=out + "/large")
c2 = time.process_time()
extra = sum(1 for _ in open(large)) - sum(1 for _ in open(small))
print(((c2 - c1) - (c1 - c0)) / extra * 1000, collecting[0] / (extra + 200) * 1000)
"""


class PinnedStub(StubProcess):
    """The stub server kept off the client's cores (``--cpus``): its threads inherit the set."""

    def __init__(self, latency: float, cpus: set[int] | None):
        super().__init__(latency)
        self.cpus = cpus

    def __enter__(self) -> PinnedStub:
        if not self.cpus:
            super().__enter__()
            return self
        mine = os.sched_getaffinity(0)
        os.sched_setaffinity(0, self.cpus)  # the child starts on the server's cores
        try:
            super().__enter__()
        finally:
            os.sched_setaffinity(0, mine)
        return self


def dialeval_run(tmp: Path, stub: StubProcess, items: int, flight: int, processes: int, name: str,
                 src: str = SRC) -> tuple[float, float]:
    """(wall, CPU) of one whole `dialeval run` of the checkout whose ``src`` comes first on the path."""
    config = tmp / f"model-{flight}.yaml"  # the model's own limit (64 by default) raised to the run's
    config.write_text(f"model: {{spec: 'openai-compatible:stub', base_url: '{stub.base_url}', max_concurrency: {flight}}}\n")
    args = ["run", "answers", "--data", str(write_items(tmp, items)), "--config", str(config), "--concurrency", str(flight),
            "--no-cache", "--no-progress", "--output-dir", str(tmp / name)]
    try:
        return cli(src, args + (["--processes", str(processes)] if processes > 1 else []))
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"dialeval run failed: {err.stderr.decode()[-3000:]}") from None


def bare_loop(stub: StubProcess, items: int, flight: int) -> tuple[float, float]:
    """(wall, CPU) of ``items`` requests through the bare SDK loop, measured inside it."""
    done = subprocess.run([sys.executable, "-c", BARE, stub.base_url, str(items), str(flight)],
                          check=True, capture_output=True, text=True)
    wall, cpu = done.stdout.split()
    return float(wall), float(cpu)


def rate(args: argparse.Namespace, tmp: Path) -> None:
    figures: dict[tuple[str, int], list[tuple[float, float]]] = {}
    modes = args.modes.split(",") + (["before"] if args.before else [])
    small = max(1, args.items // 10)
    with PinnedStub(0.02, args.server_cpus) as stub:
        for n in range(args.rounds):
            for flight in (64, 256):
                for mode in modes[n % len(modes):] + modes[:n % len(modes)]:
                    if mode == "bare":
                        wall, cpu = bare_loop(stub, args.items, flight)
                        per_s, ms = args.items / wall, cpu / args.items * 1000
                    else:
                        processes = 2 if mode == "two" else 1
                        src = SRC if mode != "before" else os.pathsep.join([args.before, *SRC.split(os.pathsep)[1:]])
                        _, c1 = dialeval_run(tmp, stub, small, flight, processes, f"{mode}-{flight}-{n}-small", src)
                        stub.window()
                        _, c2 = dialeval_run(tmp, stub, args.items, flight, processes, f"{mode}-{flight}-{n}-large", src)
                        first, last = stub.window() or (0.0, 1.0)
                        per_s, ms = args.items / (last - first), (c2 - c1) / (args.items - small) * 1000
                    figures.setdefault((mode, flight), []).append((per_s, ms))
                    print(f"  round {n + 1} {mode:6} {flight:3} in flight: {per_s:6.0f} requests/s, {ms:5.2f} ms CPU "
                          f"per request  ({load()})", flush=True)
    print("\n| client | in flight | requests/s | CPU ms per request |\n|---|---|---|---|")
    names = {"one": "dialeval, one process", "two": "dialeval, --processes 2", "bare": "bare SDK loop (aiohttp)",
             "before": f"dialeval, one process, {args.before}"}
    for (mode, flight), values in sorted(figures.items(), key=lambda kv: (kv[0][1], modes.index(kv[0][0]))):
        per_s = statistics.median(v[0] for v in values)
        ms = statistics.median(v[1] for v in values)
        spread = f"{min(v[0] for v in values):.0f}-{max(v[0] for v in values):.0f}"
        print(f"| {names[mode]} | {flight} | {per_s:.0f} ({spread}) | {ms:.2f} |")


def guard(args: argparse.Namespace, tmp: Path) -> None:
    floor = 1000 / 64
    with PinnedStub(1.0, args.server_cpus) as stub:
        for processes in (1, 2):
            wall, _ = dialeval_run(tmp, stub, 1000, 64, processes, f"guard-{processes}")
            print(f"  1,000 items at 1 s, --processes {processes}: {wall:.2f} s = {wall / floor:.2f}x the floor ({load()})",
                  flush=True)
        start = time.perf_counter()
        bare_loop(stub, 1000, 64)
        wall = time.perf_counter() - start
        print(f"  1,000 requests at 1 s, bare SDK loop (its start-up included): {wall:.2f} s = {wall / floor:.2f}x ({load()})")


def cpu(args: argparse.Namespace, tmp: Path) -> None:
    """Marginal CPU per request in one warm process, this checkout and ``--before`` alternated."""
    checkouts = {"after": SRC, **({"before": os.pathsep.join([args.before, *SRC.split(os.pathsep)[1:]])} if args.before else {})}
    found: dict[str, list[tuple[float, float]]] = {who: [] for who in checkouts}
    with PinnedStub(0.02, args.server_cpus) as stub:
        small, large = write_items(tmp, 200), write_items(tmp, args.items + 200)
        for n in range(args.rounds):
            for who, src in (list(checkouts.items()) if n % 2 == 0 else list(reversed(checkouts.items()))):
                env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
                done = subprocess.run([sys.executable, "-c", WARM, stub.base_url, str(small), str(large), str(tmp / f"cpu-{who}-{n}")],
                                      check=True, capture_output=True, text=True, env=env)
                ms, collector = (float(v) for v in done.stdout.split()[-2:])
                found[who].append((ms, collector))
                print(f"  round {n + 1} {who:6}: {ms:.2f} ms CPU per request, of which collector {collector:.3f} ms ({load()})",
                      flush=True)
    for who, values in found.items():
        ms = [v[0] for v in values]
        print(f"{who}: median {statistics.median(ms):.2f} ms CPU per request ({min(ms):.2f}-{max(ms):.2f}), "
              f"collector {statistics.median(v[1] for v in values):.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=800)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="rate,guard")
    ap.add_argument("--cpus", help="cores for the clients, e.g. 0,1 (the stub server gets the others)")
    ap.add_argument("--modes", default="one,two,bare", help="clients measured (rate): one, two, bare")
    ap.add_argument("--before", help="src folder of another checkout, measured as `one` is (rate, cpu)")
    args = ap.parse_args()
    args.server_cpus = None
    if args.cpus:
        client = {int(c) for c in args.cpus.split(",")}
        args.server_cpus = os.sched_getaffinity(0) - client
        os.sched_setaffinity(0, client)  # every client process started from here inherits it
    print(f"{os.cpu_count()} CPUs, clients on {sorted(os.sched_getaffinity(0))}; {load()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        if "rate" in args.only:
            rate(args, Path(folder))
        if "guard" in args.only:
            guard(args, Path(folder))
        if "cpu" in args.only:
            cpu(args, Path(folder))


if __name__ == "__main__":
    main()
