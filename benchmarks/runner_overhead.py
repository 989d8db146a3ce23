"""Runner speed against the OpenAI-compatible stub server; prints figures.

1. framework overhead per request with an instant model: a bare ``openai.AsyncOpenAI``
   loop sending the very request bodies dialeval sent, interleaved with dialeval's whole
   ``run("answers", ...)`` (one call per item, sequential, so no overlap hides a cost);
   wall and CPU time of this process, median and minimum over repetitions. A 1-item run
   shows the per-run fixed cost apart from the per-request cost.
2. concurrent throughput: 40 items at concurrency 40 and 8, instant model and 200 ms
   latency; efficiency = floor / actual (floor: the bare loop at the same concurrency for
   the instant model, ceil(40/L) x latency with latency); each dialeval run gets a new
   client, so its request limit starts as in a new process, and the stub counts the most
   requests it held at once (the first burst's width) and the requests' span (first
   request in to last answer out, at the server); each row's second line splits the run's
   wall time into before the first request, the span and after the last answer,
3. wall time with latency vs the lower bound max(ceil(requests/L), chain) x latency,
4. an identical re-run (same run id: nothing to do; new run id: all from the cache),
5. start-up time of `dialeval --help` and `dialeval list`,
6. CPU per request with 64 requests in flight (1,000 items, instant model) beside the
   bare loop at 64: the connection pool's per-request work shows here.

``--graph-share`` adds to [1] the same run with ``graph.ainvoke`` replaced by a direct
call of the judge node (what LangGraph's own per-item work costs in situ; a measurement
only, the runner always runs the graph).

The stub server runs in a child process, so this process's CPU time is the client's
own work (SDK and framework), which stays readable on a busy machine where wall times
are not.

Usage: python benchmarks/runner_overhead.py [--items 200] [--repeats 5] [--latency 0.2]
       [--concurrency 8] [--skip 3,4,5,6] [--graph-share]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

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


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall, CPU of this process) seconds of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def dialeval_run(
    data: Path, out: Path, base_url: str, concurrency: int, run_id: str, cache: Path | None, model: str = "stub"
) -> None:
    """A whole ``run("answers", ...)`` as a user starts it (preflight, cache, run folder, report);
    a new ``model`` name gets a new client, whose request limit starts as a new process's would.
    This process's CPU time is the whole run's."""
    from dialeval.config import ModelSettings, RunConfig
    from dialeval.evaluation import run

    config = RunConfig(
        model=ModelSettings(spec=f"openai-compatible:{model}", base_url=base_url),
        output_dir=str(out),
        concurrency=concurrency,
        run_id=run_id,
        cache_path=str(cache) if cache else None,
    )
    run("answers", data, config, progress=False)


def bare_loop(base_url: str, bodies: list[dict[str, Any]], concurrency: int = 1, aiohttp: bool = False) -> float:
    """Seconds for ``bodies`` sent with a bare ``AsyncOpenAI`` (client built outside the timing);
    ``aiohttp``: over the SDK's documented aiohttp client (``DefaultAioHttpClient``), the
    transport dialeval uses, instead of its default httpx one."""
    import openai

    async def go() -> float:
        extra = {"http_client": openai.DefaultAioHttpClient()} if aiohttp else {}
        client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", **extra)
        slots = asyncio.Semaphore(concurrency)

        async def one(body: dict[str, Any]) -> None:
            async with slots:
                await client.chat.completions.create(**body)

        start = time.perf_counter()
        if concurrency == 1:
            for body in bodies:
                await one(body)
        else:
            await asyncio.gather(*(one(b) for b in bodies))
        elapsed = time.perf_counter() - start
        await client.close()
        return elapsed

    return asyncio.run(go())


def ms(values: list[float], n: int) -> str:
    return f"median {1000 * statistics.median(values) / n:6.2f} min {1000 * min(values) / n:6.2f}"


class _NodeOnly:
    """The ``answers`` graph's judge node called directly, its update merged into the input."""

    def __init__(self) -> None:
        import dialeval.protocols.answers.graph  # noqa: F401  (registers the judge agent)
        from dialeval.agents.base import agent_node

        self.node = agent_node("judge", "answer_judge")

    async def ainvoke(self, state: dict[str, Any], context: Any = None, config: Any = None) -> dict[str, Any]:
        from langgraph.runtime import Runtime

        return {**state, **await self.node(state, Runtime(context=context))}


def without_graph(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` run with the ``answers`` benchmark's graph swapped for :class:`_NodeOnly`."""
    from dialeval.benchmarks import get_benchmark

    def wrapped() -> Any:
        bench = get_benchmark("answers")
        original = bench.graph
        object.__setattr__(bench, "graph", _NodeOnly)  # a frozen dataclass; restored below
        try:
            return fn()
        finally:
            object.__setattr__(bench, "graph", original)

    return wrapped


def overhead(tmp: Path, items: int, repeats: int, graph_share: bool = False) -> None:
    data, one = write_items(tmp, items), write_items(tmp, 1)
    with StubProcess() as stub:
        dialeval_run(data, tmp / "warm", stub.base_url, 1, "warm", tmp / "warm.sqlite")  # imports, first connections
        bodies = stub.bodies()[-items:]  # the requests dialeval sent, to send bare
        bare_loop(stub.base_url, bodies[:20])
        rows: dict[str, list[tuple[float, float]]] = {"bare": [], "bare_aiohttp": [], "dialeval": [], "one": [], "nograph": []}
        for r in range(repeats):  # interleaved: bare, bare over aiohttp, dialeval, 1-item run, bare, ...
            cpu = time.process_time()
            wall = bare_loop(stub.base_url, bodies)
            rows["bare"].append((wall, time.process_time() - cpu))
            cpu = time.process_time()
            wall = bare_loop(stub.base_url, bodies, aiohttp=True)
            rows["bare_aiohttp"].append((wall, time.process_time() - cpu))
            rows["dialeval"].append(timed(lambda: dialeval_run(data, tmp / "runs", stub.base_url, 1, f"r{r}", tmp / f"c{r}.sqlite")))
            rows["one"].append(timed(lambda: dialeval_run(one, tmp / "runs", stub.base_url, 1, f"one{r}", tmp / f"o{r}.sqlite")))
            if graph_share:
                rows["nograph"].append(timed(without_graph(
                    lambda: dialeval_run(data, tmp / "runs", stub.base_url, 1, f"ng{r}", tmp / f"n{r}.sqlite"))))
    bare_w, bare_c = [w for w, _ in rows["bare"]], [c for _, c in rows["bare"]]
    dial_w, dial_c = [w for w, _ in rows["dialeval"]], [c for _, c in rows["dialeval"]]
    one_w, one_c = [w for w, _ in rows["one"]], [c for _, c in rows["one"]]
    print(f"[1] instant model, {items} items sequential, {repeats} interleaved repetitions (ms per request)")
    aio_w, aio_c = [w for w, _ in rows["bare_aiohttp"]], [c for _, c in rows["bare_aiohttp"]]
    print(f"    bare AsyncOpenAI loop      wall {ms(bare_w, items)}   cpu {ms(bare_c, items)}")
    print(f"    the same over aiohttp      wall {ms(aio_w, items)}   cpu {ms(aio_c, items)}")
    print(f"    dialeval run('answers')    wall {ms(dial_w, items)}   cpu {ms(dial_c, items)}")
    diff_w = [d - b for d, b in zip(dial_w, bare_w)]
    diff_c = [d - b for d, b in zip(dial_c, bare_c)]
    print(f"    overhead (dialeval - bare) wall {ms(diff_w, items)}   cpu {ms(diff_c, items)}   (target <= 1.5 ms cpu)")
    print(f"    overhead over the aiohttp bare loop   cpu {ms([d - b for d, b in zip(dial_c, aio_c)], items)}")
    # a 1-item run is the fixed cost plus one request; the rest is per request
    per_w = [(d - o) / (items - 1) * items for d, o in zip(dial_w, one_w)]
    per_c = [(d - o) / (items - 1) * items for d, o in zip(dial_c, one_c)]
    print(f"    1-item run (fixed cost + 1 request): wall median {1000 * statistics.median(one_w):.0f} ms, "
          f"cpu median {1000 * statistics.median(one_c):.0f} ms")
    print(f"    per request without the fixed cost: wall {ms(per_w, items)}   cpu {ms(per_c, items)}")
    if graph_share:
        ng_c = [c for _, c in rows["nograph"]]
        print(f"    same run, node called without LangGraph: cpu {ms(ng_c, items)}; "
              f"overhead without the graph cpu {ms([n - b for n, b in zip(ng_c, bare_c)], items)}")


@dataclass
class Burst:
    """One run of [2], split at the server's first request and last answer: what the run
    did before its first request arrived, the requests' span, and what it did after the
    last answer was made (the answers read, the rows recorded, ``finish_run``)."""

    wall: float
    before: float
    span: float
    after: float
    peak: int
    cpu: float  # this process's CPU for the whole run (the stub runs in its own)


def timed_burst(stub: StubProcess, fn: Callable[[], Any]) -> Burst:
    stub.peak(), stub.window()  # forget what came before
    cpu = time.process_time()
    start = time.perf_counter()
    fn()
    end = time.perf_counter()
    cpu = time.process_time() - cpu
    first, last = stub.window() or (start, start)
    return Burst(end - start, first - start, last - first, end - last, stub.peak(), cpu)


def throughput(tmp: Path, latency: float, repeats: int) -> None:
    n = 40
    data = write_items(tmp, n)
    for lat in (0.0, latency):
        with StubProcess(lat) as stub:
            dialeval_run(data, tmp / "warm-t", stub.base_url, 8, f"warm{lat}", None)
            bodies = stub.bodies()[-n:]
            for limit in (40, 8):
                bare: list[float] = []
                runs: list[Burst] = []
                for r in range(repeats):
                    bare.append(bare_loop(stub.base_url, bodies, limit))
                    name = f"t{lat}-{limit}-{r}"  # a fresh client per run: its first burst, as in a new process
                    runs.append(timed_burst(stub, lambda: dialeval_run(data, tmp / "runs-t", stub.base_url, limit, name, None, name)))
                dial = [b.wall for b in runs]
                peaks = [b.peak for b in runs]
                floor = statistics.median(bare) if lat == 0 else math.ceil(n / limit) * lat
                name = "instant model" if lat == 0 else f"{1000 * lat:.0f} ms latency"
                efficiency, bare_efficiency = floor / statistics.median(dial), floor / statistics.median(bare)
                print(f"[2] {name:15s} {n} items at concurrency {limit:2d}: bare median {statistics.median(bare):.3f} s, "
                      f"dialeval median {statistics.median(dial):.3f} s (min {min(dial):.3f}); floor {floor:.3f} s -> "
                      f"efficiency {efficiency:.2f} (best {floor / min(dial):.2f}; bare loop {bare_efficiency:.2f}, "
                      f"ratio {efficiency / bare_efficiency:.2f}); dialeval's peak in flight {min(peaks)}-{max(peaks)}, "
                      f"requests' span median {statistics.median(b.span for b in runs):.3f} s")
                print(f"    where the run's time went (median ms): before the first request "
                      f"{1000 * statistics.median(b.before for b in runs):.0f}, requests' span "
                      f"{1000 * statistics.median(b.span for b in runs):.0f}, after the last answer "
                      f"{1000 * statistics.median(b.after for b in runs):.0f}; the run's CPU "
                      f"{1000 * statistics.median(b.cpu for b in runs):.0f}; load average {load()}")


def latency_bound(tmp: Path, items: int, latency: float, concurrency: int) -> None:
    data = write_items(tmp, items)
    with StubProcess(latency) as stub:
        cache = tmp / "cache.sqlite"
        wall = timed(lambda: dialeval_run(data, tmp / "latency", stub.base_url, concurrency, "latency", cache))[0]
        requests = stub.count()
        bound = max(math.ceil(requests / concurrency), 1) * latency
        print(f"[3] {latency * 1000:.0f} ms latency, L={concurrency}, {requests} requests: {wall:.2f} s "
              f"vs lower bound {bound:.2f} s -> {wall / bound:.3f}x (target <= 1.15x)")
        before = stub.count()
        same = timed(lambda: dialeval_run(data, tmp / "latency", stub.base_url, concurrency, "latency", cache))[0]
        cached = timed(lambda: dialeval_run(data, tmp / "latency", stub.base_url, concurrency, "latency-rerun", cache))[0]
        sent = stub.count() - before
        print(f"[4] identical re-run: same run id {same:.3f} s ({100 * same / wall:.1f}% of first), "
              f"new run id from cache {cached:.3f} s ({100 * cached / wall:.1f}%), requests sent: {sent}")


def wide(tmp: Path, items: int, concurrency: int, repeats: int) -> None:
    """CPU per request with many requests in flight (instant model): the pool's per-request work shows here."""
    data = write_items(tmp, items)
    with StubProcess() as stub:
        dialeval_run(data, tmp / "wide-warm", stub.base_url, concurrency, "wide-warm", None)
        bodies = stub.bodies()[-items:]
        bare, aio, dial = [], [], []
        for r in range(repeats):
            cpu = time.process_time()
            bare_loop(stub.base_url, bodies, concurrency)
            bare.append(time.process_time() - cpu)
            cpu = time.process_time()
            bare_loop(stub.base_url, bodies, concurrency, aiohttp=True)
            aio.append(time.process_time() - cpu)
            dial.append(timed(lambda: dialeval_run(data, tmp / "wide", stub.base_url, concurrency, f"w{r}", tmp / f"w{r}.sqlite"))[1])
    print(f"[6] instant model, {items} items at concurrency {concurrency}, {repeats} interleaved repetitions (CPU ms per request)")
    print(f"    bare AsyncOpenAI loop {ms(bare, items)}   dialeval run('answers') {ms(dial, items)}   "
          f"overhead {ms([d - b for d, b in zip(dial, bare)], items)}")
    print(f"    bare loop over aiohttp {ms(aio, items)}   overhead over it {ms([d - b for d, b in zip(dial, aio)], items)}")


def startup() -> None:
    for cmd in (["--help"], ["list"]):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dialeval.cli", *cmd], check=True, capture_output=True)
        print(f"[5] dialeval {' '.join(cmd)}: {time.perf_counter() - start:.2f} s (target <= 1.5 s)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--skip", default="", help="sections to leave out, e.g. 3,4,5")
    ap.add_argument("--graph-share", action="store_true", help="[1] also without LangGraph (node called directly)")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="dialeval-bench-"))
    import dialeval

    print(f"dialeval from {Path(dialeval.__file__).parent}; load average {load()}")
    if "1" not in skip:
        overhead(tmp, args.items, args.repeats, args.graph_share)
    if "2" not in skip:
        throughput(tmp, args.latency, args.repeats)
    if "3" not in skip:
        latency_bound(tmp, args.items, args.latency, args.concurrency)
    if "5" not in skip:
        startup()
    if "6" not in skip:
        wide(tmp, 1000, 64, args.repeats)
    print(f"load average at the end {load()}")


def load() -> str:
    """The 1, 5 and 15 minute load averages: what the figures above shared the machine with."""
    import os

    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
