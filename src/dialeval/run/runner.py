"""Run a benchmark's graph over its items into ``runs/<run-id>/``, resumably.

Items run concurrently (bounded); each finished item is appended to the run folder's
``results.jsonl`` (:mod:`dialeval.run.folder`). Re-running the same command reuses the
same run id (:mod:`dialeval.run.identity`): finished items are skipped, failed or
unfinished ones start again, and the response cache makes repeated calls free. An item
is ``failed`` when any agent call of it ended ``error``. Setup is checked before the
first call (:mod:`dialeval.run.preflight`). A tripped circuit breaker cancels every
waiting call at once; Ctrl-C stops at once too, keeping the folder and what finished.
"""

from __future__ import annotations

import asyncio
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dialeval.benchmarks import Benchmark, get_benchmark
from dialeval.config import RunConfig
from dialeval.errors import ConfigError, DataError, RunLocked  # noqa: F401  (RunLocked: its old import location)
from dialeval.models.client import close_clients
from dialeval.models.progress import call_bar, known_total
from dialeval.models.usage import CallRecord, Ledger, current_ledger
from dialeval.run.folder import (  # noqa: F401  (failure_summary: its old import location)
    CONFIG,
    RESULTS,
    RunLock,
    check_folder,
    check_run_id,
    drop_outdated_report,
    failure_summary,
    results_by_id,
    set_aside_earlier_results,
)
from dialeval.run import provenance
from dialeval.run.identity import check_same_setup, data_digest, identity, referenced_files, resolved_config, run_id
from dialeval.run.items import ItemJob, ItemRunner, TrippingBreaker, current_item
from dialeval.run.preflight import (
    check_requirements,
    await_preflight,
    check_setup,
    check_stores,
    load_user_code,
    start_preflight,
    used_models,
    warm_clients,
)
from dialeval.run.tally import RunTally


@dataclass(repr=False)
class RunResult:
    """Where a run lives, what it measured, and what it could not measure.

    ``metrics`` come from the finished items only; ``failed`` items (an agent call
    ended ``error``) are left out of them and retried by the next run, and
    ``not_evaluated`` items were never started because the run was stopped.
    """

    run_dir: Path
    metrics: dict[str, Any]
    records: list[dict[str, Any]]
    failed: int = 0
    not_evaluated: int = 0
    stopped: str | None = None
    summary: str = ""
    evaluated_now: int = 0  # items sent to the graph by this call (0: a finished run re-run)

    @property
    def report_path(self) -> Path:
        return self.run_dir / "report.md"

    @property
    def complete(self) -> bool:
        """Every item was measured: no failed item, none left out."""
        return self.failed == 0 and self.not_evaluated == 0

    @property
    def system_failures(self) -> str | None:
        """Set when most outputs of the system under test were cut off or unreadable."""
        return ((self.metrics.get("run") or {}).get("system_outputs") or {}).get("warning")

    def __repr__(self) -> str:
        """One line: where, how many items and how they ended (never the records: they can be megabytes)."""
        state = "complete" if self.complete else f"failed={self.failed} not_evaluated={self.not_evaluated}"
        return f"RunResult(run_dir={str(self.run_dir)!r}, items={len(self.records) + self.failed}, {state})"

    def to_pandas(self) -> Any:
        """One row per scored unit and dimension, read back from the run folder
        (:meth:`dialeval.report.results.RunData.to_pandas`)."""
        from dialeval.report.results import read_run

        return read_run(self.run_dir).to_pandas()


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; the message is the one line that says how to resume it."""


_current_item = current_item  # their old names
_TrippingBreaker = TrippingBreaker


def _causes(calls: list[CallRecord]) -> list[dict[str, Any]]:
    """What made an item fail: one entry per errored call (type, URL, model, message)."""
    return [
        {
            "error": (c.error or "error").split(":", 1)[0],
            "endpoint": c.endpoint,
            "model": c.model,
            "agent": c.agent,
            "message": c.error,
        }
        for c in calls
        if c.status == "error"
    ]


async def _evaluate_item(bench: Benchmark, graph: Any, item: Any, context: Any, options: dict[str, Any], on_call: Any) -> dict[str, Any]:
    """One item through the graph. ``failed`` when the graph raised or any agent call
    ended ``error``; the partial record is kept then, for the report, but never scored."""
    from dialeval.secrets import scrub

    ledger = Ledger(on_add=on_call)
    token = current_ledger.set(ledger)
    started = time.perf_counter()
    row: dict[str, Any]
    try:
        state = await graph.ainvoke(bench.to_input(item, options), context=context, config={"recursion_limit": 10_000})
        record = bench.to_record(item, state)
        causes = _causes(ledger.calls)
        if causes:
            first = causes[0]
            row = {
                "id": item.id,
                "status": "failed",
                "error": f"{len(causes)} model call(s) failed; first: {first['message']} ({first['model']})",
                "causes": causes,
                "result": record,
            }
        else:
            row = {"id": item.id, "status": "ok", "result": record}
    except Exception as err:  # recorded, counted in the report; the run goes on
        causes = _causes(ledger.calls)
        row = {
            "id": item.id,
            "status": "failed",
            "error": scrub(f"{type(err).__name__}: {err}"),
            "causes": causes or [{"error": type(err).__name__, "endpoint": None, "model": None, "agent": None,
                                  "message": scrub(f"{type(err).__name__}: {err}")}],
            "traceback": scrub(traceback.format_exc(limit=6)),
        }
    finally:
        current_ledger.reset(token)
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["usage"] = [c.__dict__ for c in ledger.calls]
    return row


def _load_items(bench: Benchmark, data: str, config: RunConfig) -> list[Any]:
    """Every item of the data (``limit`` is applied by the caller: it never changes the run id)."""
    try:
        items = bench.load(Path(data), config.options)
    except UnicodeDecodeError as err:
        raise DataError(data, f"not UTF-8 text (byte offset {err.start}: {err.reason})") from None
    except ConfigError as err:  # a mistyped option names the config file it sits in
        if config.source != "config" and str(err).startswith(f"{bench.name} option "):
            raise ConfigError(f"{config.source}: {err}") from None
        raise
    if not items:
        raise DataError(data, "holds no items to evaluate")
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{data}: item ids are not unique")
    return list(items)


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders digit runs by value (``d2`` before ``d10``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def limit_items(bench: Benchmark, items: list[Any], limit: int | None) -> list[Any]:
    """The items of the first ``limit`` sample keys in natural sort order, in file order.

    Why: the same ``--limit`` must judge the same items in every data file of a benchmark
    (two systems' VDAct files order the same dialogues differently), so runs compare."""
    if not limit:
        return items
    key: Callable[[Any], str] = bench.sample_key or (lambda item: str(item.id))
    kept = set(sorted({key(item) for item in items}, key=natural_key)[:limit])
    return [item for item in items if key(item) in kept]


def _prepare_folder(run_dir: Path, resolved: dict[str, Any], fresh: bool) -> None:
    """Write ``config.json``; an existing folder must hold the same setup (``fresh``
    starts over, keeping the old results aside)."""
    import json

    from dialeval.secrets import scrub

    resolved = json.loads(scrub(json.dumps(resolved)))  # a key pasted into a URL or an option is never written
    config_path = run_dir / CONFIG
    if fresh:
        set_aside_earlier_results(run_dir, time.strftime("%Y%m%d-%H%M%S"))
    elif config_path.exists():
        try:
            before = json.loads(config_path.read_text(encoding="utf-8"))
            if not isinstance(before, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as err:
            raise ConfigError(
                f"{config_path}: not a readable run config ({err}); use --fresh to start this run over"
            ) from None
        check_same_setup(run_dir, before, resolved)
    config_path.write_text(json.dumps(resolved, indent=2))


async def run_async(
    benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True,
    on_interrupt: Callable[[str], None] | None = None, wait: bool = True, batch_poll: float = 30.0,
    callbacks: list[Any] | None = None,
) -> RunResult:
    """Evaluate ``data`` with ``benchmark`` as configured; resume if the run exists.

    Nothing is written before the setup is known to work (config, data, run folder
    paths, stores, models). ``on_interrupt`` receives the line saying how to resume
    when the run is cancelled (Ctrl-C).Models with ``batch: true`` go through batch
    rounds (:mod:`dialeval.run.batch_rounds`), polled every ``batch_poll`` seconds;
    ``wait=False`` raises :class:`BatchesPending` instead of waiting for a batch.
    ``callbacks`` (LangChain callback handlers) see every item's graph run and every model
    call in it, as tracers configured in the environment do."""
    return await _run_async(benchmark, data, config, progress=progress, on_interrupt=on_interrupt, wait=wait,
                            batch_poll=batch_poll, callbacks=callbacks)


async def _run_async(
    benchmark: str, data: str | Path, config: RunConfig | None, *, progress: bool,
    on_interrupt: Callable[[str], None] | None, wait: bool, batch_poll: float, callbacks: list[Any] | None,
) -> RunResult:
    from dialeval.models.batch_queue import batch_queue
    from dialeval.models.prompt_store import close as close_prompts
    from dialeval.models.prompt_store import closing as prompts_closing
    from dialeval.report.writer import finish_run
    from dialeval.run.batch_rounds import BatchesPending, batch_rounds_for

    config = config or RunConfig()
    data = str(data)
    load_user_code(config)
    bench = get_benchmark(benchmark)
    check_setup(bench, config)
    if config.run_id is not None:
        check_run_id(config.run_id)
    every_item = _load_items(bench, data, config)
    items = limit_items(bench, every_item, config.limit)
    context = config.context()
    digest = data_digest(data, config.options, referenced_files(every_item))
    ident = identity(config.templates, used_models(bench, context))
    resolved = resolved_config(benchmark, data, config, digest, context, ident)
    rid = config.run_id or run_id(benchmark, resolved)
    run_dir = Path(config.output_dir) / rid
    check_folder(run_dir)
    check_stores(config.cache_path, run_dir)
    check_requirements(bench, context, config)  # a key or URL missing: even with --no-preflight
    checks = []
    if config.preflight and (config.fresh or not (run_dir / RESULTS).exists()):
        checks = start_preflight(bench, context)  # a new run has items to send: check while the graph builds
    created = not run_dir.exists()
    graph = bench.graph() if created or checks else None  # a finished run re-run needs none
    if created:  # a run that never starts (no key, server down) leaves no folder behind
        warm_clients(bench, context)
        await await_preflight(checks, config)
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir):
        before = None if config.fresh else provenance.earlier(run_dir / CONFIG)
        resolved["provenance"] = provenance.start(before)
        _prepare_folder(run_dir, resolved, config.fresh)
        done = results_by_id(run_dir)
        todo = [item for item in items if done.get(item.id, {}).get("status") != "ok"]
        reread = not todo and before is not None  # nothing to evaluate: the sessions that did keep their code and times
        if todo:
            drop_outdated_report(run_dir)
        elif reread:
            resolved["provenance"] = before
        context = context.model_copy(update={"run_dir": str(run_dir)})
        if todo and graph is None:
            graph = bench.graph()
        if graph is not None and callbacks:
            graph = graph.with_config(callbacks=callbacks)
        if todo and not created:
            if config.preflight and not checks:
                checks = start_preflight(bench, context)
            warm_clients(bench, context)  # while the checks are in flight
            await await_preflight(checks, config)

        halt: list[Callable[[str], None]] = []  # the item runner's stop, once it exists
        say: Callable[[str], None] = lambda line: None  # batch states on stderr, once the bar exists
        batched = batch_rounds_for(
            used_models(bench, context), run_dir, wait=wait, poll_seconds=batch_poll, say=lambda line: say(line),
            on_stop=lambda: [stop("batches submitted, not waited for (--no-wait)") for stop in halt], reuse_answers=not config.fresh,
        )
        job = ItemJob(bench, graph, context, config.options, _evaluate_item, config.effective_concurrency(),
                      config.max_consecutive_errors, track=batched.track if batched else None,
                      items_at_once=max(config.effective_concurrency(), len(todo)) if batched else None)  # a round takes every item
        bar = None
        if progress and todo:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"{benchmark} {rid}", unit="item")
        say = _say(bar)  # batch states: beside the bar, or plain lines with --no-progress (a wait must not look hung)
        queue_token = batch_queue.set(batched)
        tally = RunTally(run_dir / RESULTS, done, bar, config.effective_concurrency())
        finished_before = tally.finished(items)
        stopped: str | None = None
        try:
            calls = known_total(bench.calls_per_item(item, config.options) for item in todo) if bench.calls_per_item else None
            with call_bar(enabled=bar is not None, total=calls):  # moves per model call: a turn, a question
                runner = ItemRunner(job, tally.record, tally.call_ended)
                halt.append(runner.halt)
                for item in todo:
                    runner.add(item)
                runner.close()
                await runner.run()
                stopped = runner.breaker.message
        except asyncio.CancelledError:
            close_prompts(run_dir)  # before on_interrupt, which may end the process at once (the CLI's)
            if on_interrupt is not None:
                finished = tally.finished(items)
                on_interrupt(
                    f"dialeval: interrupted: {finished} of {len(items)} items done ({finished - finished_before} "
                    f"in this session), kept in {run_dir}; "
                    + ("submitted batches keep running; " if batched and batched.batches else "")
                    + "re-run the same command to resume"
                )
            raise
        finally:
            tally.close()
            await close_clients()  # this loop's HTTP pools (each closes in its own loop)
            if batched:
                await batched.finish()
            batch_queue.reset(queue_token)

        with prompts_closing(run_dir):  # this process's prompts go into the run's store while the report is written
            if batched and batched.pending_message:
                raise BatchesPending(batched.pending_message)

            rows = [done[item.id] for item in items if item.id in done]
            not_evaluated = len(items) - len(rows)
            stopped = stopped if len(rows) < len(items) else None
            kept = reread and resolved["provenance"].get("finished")
            ended = resolved["provenance"] if kept else provenance.finish(resolved["provenance"])
            resolved["provenance"] = provenance.stamp(run_dir / CONFIG, ended)
            metrics = finish_run(run_dir, bench, rows, resolved, expected=len(items), stopped=stopped)
    records = [r["result"] for r in rows if r["status"] == "ok"]
    failed = sum(1 for r in rows if r["status"] != "ok")
    summary = failure_summary(rows, len(items))
    if stopped and not_evaluated:
        summary = f"run stopped, {not_evaluated} of {len(items)} items not evaluated: {stopped}" + (
            f"; {summary}" if summary else ""
        )
    return RunResult(
        run_dir=run_dir,
        metrics=metrics,
        records=records,
        failed=failed,
        not_evaluated=not_evaluated,
        stopped=stopped if not_evaluated else None,
        summary=summary,
        evaluated_now=len(todo),
    )


def _say(bar: Any) -> Callable[[str], None]:
    """A line on stderr, above the progress bar when there is one (stdout keeps the report)."""
    import sys

    if bar is not None:
        return lambda line: bar.write(line, file=sys.stderr)
    return lambda line: print(line, file=sys.stderr, flush=True)


def run(
    benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True,
    on_interrupt: Callable[[str], None] | None = None, wait: bool = True, batch_poll: float = 30.0,
    callbacks: list[Any] | None = None,
) -> RunResult:
    """Synchronous wrapper of :func:`run_async`; Ctrl-C raises :class:`RunInterrupted`,
    whose message says how to resume (``on_interrupt`` gets it first, as soon as the
    run is cancelled)."""
    notes: list[str] = []

    def interrupted(line: str) -> None:
        notes.append(line)
        if on_interrupt is not None:
            on_interrupt(line)

    try:
        return asyncio.run(
            run_async(benchmark, data, config, progress=progress, on_interrupt=interrupted, wait=wait, batch_poll=batch_poll,
                      callbacks=callbacks)
        )
    except KeyboardInterrupt:
        if notes:
            raise RunInterrupted(notes[-1]) from None
        raise
