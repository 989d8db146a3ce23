"""A run's fixed cost: start-up, set-up before the first request, finish after the last.

Against the local OpenAI-compatible stub (``dialeval/testing/openai_server.py``), for the
``answers`` benchmark with N items (default 40), prints median and minimum over ``--reps``:

(a) ``python -m dialeval.cli run answers ...`` in a fresh process: time from just before
    the process starts to the first chat request reaching the server, and to its exit
    (``python -c pass`` alone is printed beside it as the floor). The run takes the head
    start (``models/head_start.py``): its first requests leave while the OpenAI SDK imports;
(b) the fixed cost of ``run()`` in a warm process with an instant model: before the first
    request (config, fingerprint, data hash, folder, lock, preflight, data, graph) and after
    the last answer (metrics, report, usage files, flush), with the time spent in each
    runner/report step found by wrapping those functions;
(c) N items at concurrency N with a ``--latency`` model (default 0.2 s): wall time against
    the latency floor;
(d) ``python -X importtime`` of the same command: the costliest imports, and which heavy
    libraries it loaded.

``--code DIR`` (repeatable) measures other checkouts too, interleaved rep by rep (A, B,
A, B...) so a busy shared machine slows them alike. Each measurement runs in a child
process with ``PYTHONPATH=DIR``.

Usage: python benchmarks/fixed_cost.py [--items 40] [--reps 5] [--latency 0.2] [--code DIR ...]
"""

from __future__ import annotations

import time

T0 = time.perf_counter()  # --cli-child: when the interpreter reached this script

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

GRADE = '{"rationale": "fine", "score": 4}'
HEAVY = ("matplotlib", "chromadb", "transformers", "torch", "nltk", "scipy", "sklearn", "pandas", "numpy")
REPO = Path(__file__).resolve().parents[1]


def write_items(folder: Path, n: int) -> Path:
    from runner_overhead import write_items as same_items  # the overhead benchmark's items (this folder)

    return same_items(folder, n)


class Clock:
    """Arrival times of the stub's chat requests (perf_counter of this process), and the
    CPU time the main thread (the one running the run) had used by then."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.cpu: list[float] = []
        self._main = time.pthread_getcpuclockid(threading.main_thread().ident)
        self.child: int | None = None  # a client process: its CPU seconds at the first request
        self.child_cpu: float | None = None
        self.gets: list[float] = []  # arrival times of GET requests (the preflight's /models)

    def watch_gets(self, server: Any) -> None:
        """Stamp the stub's GET requests too (it keeps their paths in a list)."""
        clock = self

        class Stamped(list):  # type: ignore[type-arg]
            def append(self, path: Any) -> None:
                clock.gets.append(time.perf_counter())
                super().append(path)

        server.gets = Stamped()

    def main_cpu(self) -> float:
        return time.clock_gettime(self._main)

    def __call__(self, body: dict[str, Any]) -> str:
        self.times.append(time.perf_counter())
        self.cpu.append(self.main_cpu())
        if self.child is not None and self.child_cpu is None:
            self.child_cpu = process_cpu(self.child)
        return GRADE


def process_cpu(pid: int) -> float:
    """User + system CPU seconds a running process has used (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _env(code: Path) -> dict[str, str]:
    """The child's import path: the checkout's ``src/`` first (a venv's editable install
    may point at another checkout), then the checkout itself."""
    paths = [str(code / "src")] if (code / "src" / "dialeval").is_dir() else []
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(code)])}


# ---------------------------------------------------------------- (a) and (d): a fresh CLI process


def cli_args(data: Path, base_url: str, items: int) -> list[str]:
    return [
        "run", "answers", "--data", str(data), "--model", "openai-compatible:stub", "--base-url", base_url,
        "--concurrency", str(items), "--output-dir", "runs", "--no-progress",
    ]  # fmt: skip


def cli_command(data: Path, base_url: str, items: int, importtime: bool = False) -> list[str]:
    return [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "dialeval.cli", *cli_args(data, base_url, items)]


def timed_process(
    command: list[str], code: Path, cwd: str, clock: Clock | None = None
) -> tuple[float, float, float, subprocess.CompletedProcess[str]]:
    """Start (perf_counter), end, and CPU seconds of one child process (``clock`` learns its pid)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with subprocess.Popen(command, cwd=cwd, env=_env(code), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as popen:
        if clock is not None:
            clock.child, clock.child_cpu = popen.pid, None
        stdout, stderr = popen.communicate()
    end = time.perf_counter()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.CompletedProcess(command, popen.returncode, stdout, stderr)
    return start, end, after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime, proc


def cold_cli(code: Path, data: Path, items: int, phases: bool = False) -> dict[str, Any]:
    """One fresh process (new working folder: new run folder and response cache). With
    ``phases``, the CLI runs under ``--cli-child``, which stamps the run's steps on the
    same monotonic clock as this process."""
    from dialeval.testing.openai_server import OpenAIStub

    clock = Clock()
    with OpenAIStub(respond=clock) as server, tempfile.TemporaryDirectory(prefix="dialeval-fc-") as cwd:
        clock.watch_gets(server)
        events_path = Path(cwd) / "events.json"
        command = (
            [sys.executable, __file__, "--cli-child", str(events_path), *cli_args(data, server.base_url, items)]
            if phases
            else cli_command(data, server.base_url, items)
        )
        start, end, cpu, proc = timed_process(command, code, cwd, clock)
        events = json.loads(events_path.read_text()) if phases and events_path.exists() else {}
    if proc.returncode != 0 or len(clock.times) != items:
        raise SystemExit(f"CLI run failed ({proc.returncode}, {len(clock.times)} requests):\n{proc.stderr[-2000:]}")
    out: dict[str, Any] = {
        "first_request": clock.times[0] - start, "exit": end - start, "cpu": cpu, "cpu_first": clock.child_cpu,
        "preflight": clock.gets[0] - start if clock.gets else None,
    }  # fmt: skip
    if phases:
        out["phase"] = {
            "process start -> interpreter up": events["interpreter up"] - start,
            "interpreter up -> run() starts (CLI, config, runner imports)": events["run_async"] - events["interpreter up"],
            "run() starts -> the first item starts (set-up: data, the declared node or the graph, folder, preflight)":
                events["first item"] - events["run_async"],
            "first item starts -> first request (per-request path; a head start's HTTP client, or the SDK's)":
                clock.times[0] - events["first item"],
            "last answer -> finish_run starts": events["finish_run:start"] - clock.times[-1],
            "finish_run": events["finish_run:end"] - events["finish_run:start"],
            "finish_run ends -> process exit": end - events["finish_run:end"],
        }  # fmt: skip
    return out


def cli_child(events_path: str, argv: list[str]) -> None:
    """``dialeval run`` with its steps stamped (see :func:`cold_cli`)."""
    events: dict[str, float] = {"interpreter up": T0}
    mark_events(events)  # imports the runner and report modules, which the CLI imports anyway
    from dialeval.cli import main

    sys.argv = ["dialeval", *argv]
    code = main()  # as the program runs it (no argv: it ends the process)
    Path(events_path).write_text(json.dumps(events))
    sys.exit(code)


def floor_process(code: Path, statement: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``python -c statement``."""
    start, end, cpu, proc = timed_process([sys.executable, "-c", statement], code, ".")
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return end - start, cpu


# what any LangGraph + ChatOpenAI run must import (gc.freeze: exit without the final sweep)
LIBRARIES = "import langchain_openai, langgraph.graph, gc; gc.freeze()"


def importtime(code: Path, data: Path, items: int, top: int = 12) -> list[str]:
    from dialeval.testing.openai_server import OpenAIStub

    with OpenAIStub(respond=lambda body: GRADE) as server, tempfile.TemporaryDirectory(prefix="dialeval-fc-") as cwd:
        proc = subprocess.run(cli_command(data, server.base_url, items, importtime=True), cwd=cwd, env=_env(code), capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:"):].split("|")
        rows.append((int(cumulative_us), int(self_us), name[1:].rstrip()))  # nested names are indented
    total = sum(c for c, _, name in rows if not name.startswith(" "))  # top-level imports
    out = [f"    all imports: {total / 1000:.0f} ms cumulative over {len(rows)} modules"]
    loaded = sorted({name.strip().split(".")[0] for _, _, name in rows} & set(HEAVY))
    out.append(f"    heavy libraries imported: {', '.join(loaded) or 'none'}")
    out.append("    top-level imports by cumulative time:")
    for cumulative, _, name in sorted((r for r in rows if not r[2].startswith(" ")), reverse=True)[:top]:
        out.append(f"      {cumulative / 1000:7.1f} ms  {name.strip()}")
    out.append("    packages by self time (summed):")
    by_package: dict[str, int] = {}
    for _, self_us, name in rows:
        package = name.strip().split(".")[0]
        by_package[package] = by_package.get(package, 0) + self_us
    for package, self_us in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]:
        out.append(f"      {self_us / 1000:7.1f} ms  {package}")
    return out


# ---------------------------------------------------------------- (b) and (c): a warm process (worker)

# steps of a run, wrapped by name when the checkout has them (names differ across versions)
STEPS = {
    "dialeval.run.runner": (
        "_load_items", "check_setup", "data_digest", "_fingerprint", "resolved_config", "_prepare_folder",
        "read_results", "start_preflight", "await_preflight", "warm_clients", "RunLock.__enter__", "RunLock.__exit__", "ResultsWriter.__init__",
        "ResultsWriter.close",
    ),
    "dialeval.report.writer": ("finish_run", "render_report", "agent_reliability", "score_reliability", "write_run_files"),
    "dialeval.config": ("RunConfig.context",),
    "dialeval.models.client": ("build_chat_model", "preflight"),  # once per run and model, inside the first item
}


def mark_events(events: dict[str, float]) -> None:
    """Record when ``run_async`` and the first item start, and when ``finish_run`` starts and ends."""
    import functools

    import dialeval.report.writer
    import dialeval.run.runner

    def first_call(label: str, fn: Any) -> Any:
        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            events.setdefault(label, time.perf_counter())
            return await fn(*args, **kwargs)

        return wrapper

    def bracket(label: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            events[label + ":start"] = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                events[label + ":end"] = time.perf_counter()

        return wrapper

    dialeval.run.runner._evaluate_item = first_call("first item", dialeval.run.runner._evaluate_item)
    dialeval.run.runner.run_async = first_call("run_async", dialeval.run.runner.run_async)
    dialeval.report.writer.finish_run = bracket("finish_run", dialeval.report.writer.finish_run)


def wrap_steps(spent: dict[str, float]) -> None:
    import asyncio
    import functools
    import importlib

    def timed(label: str, fn: Any) -> Any:
        if asyncio.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def wrapper_async(*args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    spent[label] = spent.get(label, 0.0) + time.perf_counter() - t

            return wrapper_async

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t

        return wrapper

    for module_name, names in STEPS.items():
        module = importlib.import_module(module_name)
        for name in names:
            owner: Any = module
            *path, attr = name.split(".")
            for part in path:
                owner = getattr(owner, part, None)
            if owner is None or not hasattr(owner, attr):
                continue
            setattr(owner, attr, timed(name, getattr(owner, attr)))
    # the protocol's graph builder (a frozen dataclass field)
    from dialeval.benchmarks import get_benchmark

    bench = get_benchmark("answers")
    object.__setattr__(bench, "graph", timed("bench.graph", bench.graph))


def worker(items: int, latency: float, reps: int) -> dict[str, Any]:
    """``reps`` instant-model runs and ``reps`` latency runs in this (warm) process."""
    from dialeval.config import ModelSettings, RunConfig
    from dialeval.run.runner import run
    from dialeval.testing.openai_server import OpenAIStub

    tmp = Path(tempfile.mkdtemp(prefix="dialeval-fc-"))
    data = write_items(tmp, items)
    spent: dict[str, float] = {}
    events: dict[str, float] = {}
    out: dict[str, Any] = {"wall": [], "steps": []}

    def one(server: OpenAIStub, clock: Clock, name: str) -> dict[str, float]:
        """Wall and main-thread CPU time before the first request and after the last answer."""
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url)
        config = RunConfig(
            model=settings, output_dir=str(tmp / "runs"), concurrency=items, run_id=name, cache_path=str(tmp / f"{name}.sqlite")
        )
        clock.times.clear()
        clock.cpu.clear()
        cpu0, start = clock.main_cpu(), time.perf_counter()
        result = run("answers", data, config, progress=False)
        end, cpu1 = time.perf_counter(), clock.main_cpu()
        assert result.complete and len(clock.times) == items, result.summary
        before, after = clock.times[0] - start, end - clock.times[-1]
        before_cpu, after_cpu = clock.cpu[0] - cpu0, cpu1 - clock.cpu[-1]
        out = {"before": before, "after": after, "fixed": before + after, "wall0": end - start,
               "before_cpu": before_cpu, "after_cpu": after_cpu, "fixed_cpu": before_cpu + after_cpu}
        if events:
            out["phase"] = {
                "set-up: run() starts -> the first item starts": events["first item"] - start,
                "items start -> the first request arrives (per-request path)": clock.times[0] - events["first item"],
                "last answer -> finish_run starts (last item's tail)": events["finish_run:start"] - clock.times[-1],
                "finish_run: metrics, report, usage files": events["finish_run:end"] - events["finish_run:start"],
                "finish_run ends -> run() returns (lock, event loop)": end - events["finish_run:end"],
            }
            events.clear()
        return out

    clock = Clock()
    with OpenAIStub(respond=clock) as server:
        one(server, clock, "warmup")  # imports, first client
        mark_events(events)
        wrap_steps(spent)
        for rep in range(reps):
            spent.clear()
            for key, value in one(server, clock, f"instant{rep}").items():
                out.setdefault(key, []).append(value)
            out["steps"].append(dict(spent))
    events.clear()
    slow = Clock()
    with OpenAIStub(respond=slow, latency=latency) as server:
        one(server, slow, "slow-warmup")
        for rep in range(reps):
            out["wall"].append(one(server, slow, f"slow{rep}")["wall0"])
    return out


# ---------------------------------------------------------------- driver


def ms(values: list[float]) -> str:
    return f"median {1000 * statistics.median(values):7.1f} ms, min {1000 * min(values):7.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--code", action="append", type=Path, help="checkout(s) to measure (default: this one)")
    ap.add_argument("--skip", default="", help="sections to skip, e.g. 'ad'")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    if len(sys.argv) > 2 and sys.argv[1] == "--cli-child":
        cli_child(sys.argv[2], sys.argv[3:])
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.items, args.latency, args.reps)))
        return
    codes = [c.resolve() for c in (args.code or [REPO])]
    tmp = Path(tempfile.mkdtemp(prefix="dialeval-fc-"))
    data = write_items(tmp, args.items)
    print(f"answers, {args.items} items, {args.reps} reps, load average {os.getloadavg()[0]:.2f}; code: "
          + ", ".join(str(c) for c in codes))

    if "a" not in args.skip:
        runs: dict[Path, dict[str, list[Any]]] = {c: {"pass": [], "libs": [], "cli": [], "child": []} for c in codes}
        for _ in range(args.reps):
            for code in codes:  # interleaved
                runs[code]["pass"].append(floor_process(code, "pass"))
                runs[code]["libs"].append(floor_process(code, LIBRARIES))
                runs[code]["cli"].append(cold_cli(code, data, args.items))
                runs[code]["child"].append(cold_cli(code, data, args.items, phases=True))
        print(f"\n(a) `python -m dialeval.cli run answers` (instant model, concurrency {args.items}), fresh process")
        for code in codes:
            r = runs[code]
            print(f"  {code}")
            print(f"    python -c pass            wall {ms([w for w, _ in r['pass']])}; CPU {ms([c for _, c in r['pass']])}")
            print(f"    python -c '{LIBRARIES}'")
            print(f"                              wall {ms([w for w, _ in r['libs']])}; CPU {ms([c for _, c in r['libs']])}")
            print(f"    CLI: to the preflight GET wall {ms([x['preflight'] for x in r['cli']])}")
            print(f"    CLI: to the first request wall {ms([x['first_request'] for x in r['cli']])}; "
                  f"CPU {ms([x['cpu_first'] for x in r['cli']])}")
            print(f"    CLI: to the process exit  wall {ms([x['exit'] for x in r['cli']])}; CPU {ms([x['cpu'] for x in r['cli']])}")
            print("    phases of the same command run with stamps (median ms):")
            for name in r["child"][0]["phase"]:
                print(f"      {1000 * statistics.median(x['phase'][name] for x in r['child']):8.1f}  {name}")

    if "b" not in args.skip or "c" not in args.skip:
        results: dict[Path, list[dict[str, Any]]] = {c: [] for c in codes}
        for _ in range(args.reps):
            for code in codes:  # interleaved, one rep per child process
                proc = subprocess.run(
                    [sys.executable, __file__, "--worker", "--items", str(args.items), "--latency", str(args.latency), "--reps", "1"],
                    env=_env(code), capture_output=True, text=True,
                )
                if proc.returncode != 0:
                    raise SystemExit(f"worker failed for {code}:\n{proc.stderr[-3000:]}")
                results[code].append(json.loads(proc.stdout.strip().splitlines()[-1]))

        def joined(code: Path, key: str) -> list[Any]:
            return [v for r in results[code] for v in r[key]]

        if "b" not in args.skip:
            print(f"\n(b) fixed cost of run() in a warm process, instant model, {args.items} items at concurrency {args.items}")
            for code in codes:
                print(f"  {code}")
                for key, text in (("before", "before the first request"), ("after", "after the last answer"), ("fixed", "fixed cost (sum)")):
                    print(f"    {text:<25} wall {ms(joined(code, key))}; main-thread CPU {ms(joined(code, key + '_cpu'))}")
                print(f"    whole run                 {ms(joined(code, 'wall0'))}")
                phases = joined(code, "phase")
                print("    phases (median ms):")
                for name in phases[0]:
                    print(f"      {1000 * statistics.median(p[name] for p in phases):7.2f}  {name}")
                steps = joined(code, "steps")
                names = sorted({n for s in steps for n in s}, key=lambda n: -statistics.median(s.get(n, 0.0) for s in steps))
                print("    steps (median ms; nested steps overlap):")
                for name in names:
                    print(f"      {1000 * statistics.median(s.get(name, 0.0) for s in steps):7.2f}  {name}")

        if "c" not in args.skip:
            print(f"\n(c) {args.items} items at concurrency {args.items}, {1000 * args.latency:.0f} ms model, warm process "
                  f"(floor {args.latency:.2f} s)")
            for code in codes:
                walls = joined(code, "wall")
                print(f"  {code}: {ms(walls)} -> {statistics.median(walls) / args.latency:.2f}x the floor "
                      f"(efficiency {args.latency / statistics.median(walls):.2f})")

    if "d" not in args.skip:
        print("\n(d) python -X importtime of `dialeval run answers`")
        for code in codes:
            print(f"  {code}")
            print("\n".join(importtime(code, data, args.items)))


if __name__ == "__main__":
    main()
