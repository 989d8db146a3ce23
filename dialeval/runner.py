"""Run a benchmark's graph over its items into ``runs/<run-id>/``, resumably.

Items run concurrently (bounded); each finished item is appended as one JSON line to
``results.jsonl`` with a single write, so a crash never leaves a torn line that counts.
Re-running the same command reuses the same run id: finished items are skipped, failed
or unfinished ones start again, and the response cache makes repeated calls free.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, get_benchmark
from dialeval.config import ConfigError, RunConfig
from dialeval.usage import Ledger, current_ledger, summarize_calls

RESULTS = "results.jsonl"


@dataclass
class RunResult:
    """Where a run lives and what it measured."""

    run_dir: Path
    metrics: dict[str, Any]
    records: list[dict[str, Any]]

    @property
    def report_path(self) -> Path:
        return self.run_dir / "report.md"


def _fingerprint(benchmark: str, data: str, config: RunConfig) -> str:
    """Run id from what determines results: benchmark, data, models, agents, options."""
    relevant = config.model_dump(exclude={"run_id", "limit", "concurrency", "output_dir", "data", "benchmark"})
    blob = json.dumps({"benchmark": benchmark, "data": str(Path(data).resolve()), "config": relevant}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def resolved_config(benchmark: str, data: str, config: RunConfig) -> dict[str, Any]:
    """The config as run: every default filled in. It holds env-var names, never keys."""
    out = config.model_dump(mode="json")
    out.update(benchmark=benchmark, data=str(Path(data).resolve()))
    out["context"] = config.context().model_dump(mode="json")
    return out


def read_results(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The latest line per item id; a torn last line (crash mid-write) is ignored."""
    path = Path(run_dir) / RESULTS
    latest: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return latest
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        latest[row["id"]] = row
    return latest


def _repair_tail(path: Path) -> None:
    """Drop an unterminated last line so new lines never glue onto a torn one."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        data = path.read_bytes()
        fh.truncate(data.rfind(b"\n") + 1)


class ResultsWriter:
    """Appends one JSON line per item with a single ``os.write``.

    One write call per line means a killed process leaves at most one torn last line,
    which :func:`read_results` ignores and :func:`_repair_tail` removes.
    """

    def __init__(self, path: Path):
        _repair_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        data = (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        os.write(self._fd, data)

    def close(self) -> None:
        os.close(self._fd)


async def _evaluate_item(
    bench: Benchmark, graph: Any, item: Any, config: RunConfig, context: Any, options: dict[str, Any]
) -> dict[str, Any]:
    ledger = Ledger()
    token = current_ledger.set(ledger)
    started = time.perf_counter()
    try:
        state = await graph.ainvoke(
            bench.to_input(item, options), context=context, config={"recursion_limit": 10_000}
        )
        record = bench.to_record(item, state)
        row = {"id": item.id, "status": "ok", "result": record}
    except Exception as err:  # recorded, counted in the report; the run goes on
        row = {
            "id": item.id,
            "status": "failed",
            "error": f"{type(err).__name__}: {err}",
            "traceback": traceback.format_exc(limit=6),
        }
    finally:
        current_ledger.reset(token)
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["usage"] = [c.__dict__ for c in ledger.calls]
    return row


async def run_async(
    benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True
) -> RunResult:
    """Evaluate ``data`` with ``benchmark`` as configured; resume if the run exists."""
    from dialeval.models import current_limits, request_slots
    from dialeval.report import finish_run

    config = config or RunConfig()
    data = str(data)
    bench = get_benchmark(benchmark)
    items = bench.load(Path(data), config.options)
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{data}: item ids are not unique")
    if config.limit:
        items = items[: config.limit]

    run_id = config.run_id or f"{benchmark}-{_fingerprint(benchmark, data, config)}"
    run_dir = Path(config.output_dir) / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    resolved = resolved_config(benchmark, data, config)
    config_path = run_dir / "config.json"
    if config_path.exists():
        before = json.loads(config_path.read_text())
        keep = ("limit", "concurrency", "run_id", "output_dir")
        if {k: v for k, v in before.items() if k not in keep} != {k: v for k, v in resolved.items() if k not in keep}:
            raise ConfigError(
                f"run {run_id} exists with a different configuration ({config_path}); "
                "use another --run-id so results of two setups never mix"
            )
    config_path.write_text(json.dumps(resolved, indent=2))

    done = read_results(run_dir)
    todo = [item for item in items if done.get(item.id, {}).get("status") != "ok"]
    context = config.context().model_copy(update={"run_dir": str(run_dir)})
    graph = bench.graph() if todo else None

    concurrency = config.effective_concurrency()
    slots = asyncio.Semaphore(concurrency)
    token = request_slots.set(asyncio.Semaphore(concurrency))
    writer = ResultsWriter(run_dir / RESULTS)
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"{benchmark} {run_id}", unit="item")
    failed = 0
    tokens = 0
    usd = 0.0

    async def one(item: Any) -> None:
        nonlocal failed, tokens, usd
        async with slots:
            row = await _evaluate_item(bench, graph, item, config, context, config.options)
        writer.append(row)
        done[item.id] = row
        item_totals = summarize_calls(row["usage"])
        tokens += int(item_totals["input_tokens"] + item_totals["output_tokens"])
        usd += item_totals["cost_usd"]
        if row["status"] != "ok":
            failed += 1
        if bar is not None:
            limits = current_limits()
            bar.set_postfix(
                failed=failed, tokens=tokens, usd=f"{usd:.4f}", **({"limit": max(limits.values())} if limits else {})
            )
            bar.update(1)

    try:
        await asyncio.gather(*(one(item) for item in todo))
    finally:
        writer.close()
        request_slots.reset(token)
        if bar is not None:
            bar.close()

    rows = [done[item.id] for item in items if item.id in done]
    metrics = finish_run(run_dir, bench, rows, resolved)
    records = [r["result"] for r in rows if r["status"] == "ok"]
    return RunResult(run_dir=run_dir, metrics=metrics, records=records)


def run(benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True) -> RunResult:
    """Synchronous wrapper of :func:`run_async`."""
    return asyncio.run(run_async(benchmark, data, config, progress=progress))
