"""Run a benchmark's graph over its items into ``runs/<run-id>/``, resumably.

:func:`prepare_run` works out what the run is before anything is written (config, data,
used models, run id, folder, stores, keys); :func:`execute` checks the models, runs the
items through the compiled graph concurrently (bounded), appends each finished item to
``results.jsonl`` (:mod:`dialeval.run.folder`) and hands the rows to the caller's
``finish`` (the report) while it still holds the run folder. Re-running the same command
reuses the run id (:mod:`dialeval.run.identity`): finished items are skipped, failed or
unfinished ones start again, and the response cache makes repeated calls free. An item is
``failed`` when any agent call of it ended ``error``. A tripped circuit breaker cancels
every waiting call at once; Ctrl-C stops at once too, keeping the folder and what finished.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dialeval.benchmarks import Benchmark, get_benchmark
from dialeval.config import EvalContext, RunConfig
from dialeval.errors import ConfigError
from dialeval.models.backends.base import error_text
from dialeval.models.client import close_clients
from dialeval.models.progress import call_bar, known_total
from dialeval.models.usage import CallRecord, Ledger, current_ledger
from dialeval.models.single_flight import Flights, current_flights
from dialeval.run import provenance
from dialeval.run.decide import DecisionWatch
from dialeval.run.folder import CONFIG, RESULTS, RunLock, check_folder, check_run_id, drop_outdated_report, results_by_id
from dialeval.run.identity import data_digest, identity, prepare_folder, referenced_files, resolved_config, run_id, unit_hash
from dialeval.run.items import ItemJob, ItemRunner, limit_items, load_items, shard_items
from dialeval.run.preflight import (
    await_preflight,
    check_requirements,
    check_setup,
    check_stores,
    load_user_code,
    start_preflight,
    used_models,
    warm_clients,
)
from dialeval.run.run_options import RunnerOptions, check_option_names, split_options
from dialeval.run.tally import RunTally


@dataclass
class PreparedRun:
    """What a run is, worked out once before anything is written."""

    bench: Benchmark
    config: RunConfig
    items: list[Any]  # after ``limit``
    context: EvalContext
    models: dict[str, Any]  # config field (``model``, ``models.<role>``) -> settings of each model it may call
    resolved: dict[str, Any]  # config.json as it will be written
    run_dir: Path
    runner: RunnerOptions  # the runner's own options, taken out of the benchmark's
    watch: DecisionWatch | None = None  # stop_when_decided: judges units in a seeded order, stops once decided


@dataclass
class RunOutcome:
    """What the items gave: every item's latest row, for the report and the result."""

    prep: PreparedRun
    rows: list[dict[str, Any]]
    stopped: str | None  # why the run stopped before every item was evaluated
    evaluated_now: int  # items sent to the graph by this call (0: a finished run re-run)
    decision: dict[str, Any] | None = None  # stop_when_decided: the decision, units used, calls saved


def prepare_run(benchmark: str, data: str | Path, config: RunConfig | None = None) -> PreparedRun:
    """Check the setup and work out the run (its models, id and folder) without writing anything."""
    config = config or RunConfig()
    load_user_code(config)
    bench = get_benchmark(benchmark)
    check_option_names(config.options, bench.options_model, bench.name)
    options, runner = split_options(config.options)  # the runner's own (stop_when_decided: see run/decide.py)
    watch = DecisionWatch.from_options(bench, runner)
    if options != config.options:
        config = config.model_copy(update={"options": options})
    check_setup(bench, config)
    if config.run_id is not None:
        check_run_id(config.run_id)
    every_item = load_items(bench, str(data), config)
    context = config.context()
    if bench.options_model is not None:  # issue 48: validated once here, read typed by every node
        context.options_as(bench.options_model, bench.name)
    models = used_models(bench, context)
    digest = data_digest(str(data), config.options, referenced_files(every_item))
    resolved = resolved_config(benchmark, str(data), config, digest, context, identity(config.templates, models))
    run_dir = Path(config.output_dir) / (config.run_id or run_id(benchmark, resolved))
    check_folder(run_dir)
    check_stores(config.cache_path, run_dir)
    check_requirements(models, config)  # a key or URL missing: even with --no-preflight
    if watch is not None and (config.processes > 1 or config.shard):
        raise ConfigError(f"{config.source}: stop_when_decided judges the units in one seeded order, in one process of one run; "
                          "leave 'processes' and 'shard' out")
    if config.processes > 1:
        from dialeval.run.processes import check_processes

        check_processes(config, bench, context)
    items = shard_items(bench, limit_items(bench, every_item, config.limit), config.shard_part)
    return PreparedRun(bench, config, items, context, models, resolved, run_dir, runner, watch)


async def execute(
    prep: PreparedRun, finish: Callable[[RunOutcome], dict[str, Any]], *, progress: bool = True,
    on_interrupt: Callable[[str], None] | None = None, wait: bool = True, batch_poll: float = 30.0,
    callbacks: list[Any] | None = None, meanwhile: Callable[[], None] | None = None,
) -> tuple[RunOutcome, dict[str, Any]]:
    """Evaluate the items not finished yet, then ``finish(outcome)`` (the report: it returns
    the metrics) while the run folder is still held. Nothing is written before the models
    passed their checks (a run that never starts leaves no folder behind). ``meanwhile``
    runs in a thread of its own once the first item has finished (``finish``'s imports)."""
    from dialeval.models.prompt_store import closing as prompts_closing
    from dialeval.run.batch_rounds import BatchesPending

    bench, config, run_dir, resolved = prep.bench, prep.config, prep.run_dir, prep.resolved
    checks = []
    if config.preflight and (config.fresh or not (run_dir / RESULTS).exists()):
        checks = start_preflight(prep.models)  # a new run has items to send: check while the graph builds
    created = not run_dir.exists()
    graph = bench.graph() if created or checks else None  # a finished run re-run needs none
    if created:
        warm_clients(prep.models)
        await await_preflight(checks, config)
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir):
        before = None if config.fresh else provenance.earlier(run_dir / CONFIG)
        resolved["provenance"] = {**provenance.start(before), "items": len(prep.items)}  # a killed run's report counts what is left
        prepare_folder(run_dir, resolved, config.fresh)
        done = results_by_id(run_dir)
        todo = [item for item in prep.items if done.get(item.id, {}).get("status") != "ok"]
        if prep.watch is not None:  # units in a seeded order; a decided run only retries its failed items
            todo = prep.watch.resume(prep.items, todo, done)
        reread = not todo and before is not None  # nothing to evaluate: the sessions that did keep their code and times
        if todo:
            drop_outdated_report(run_dir)
            if not created:
                if config.preflight and not checks:
                    checks = start_preflight(prep.models)
                warm_clients(prep.models)  # while the checks are in flight
                await await_preflight(checks, config)
            graph = bench.graph() if graph is None else graph
        elif reread:
            resolved["provenance"] = before
        stopped, batched = await _run_items(prep, graph, todo, done, progress, on_interrupt, wait, batch_poll, meanwhile,
                                            callbacks)
        with prompts_closing(run_dir):  # this process's prompts go into the run's store while the report is written
            if batched is not None and batched.pending_message:
                raise BatchesPending(batched.pending_message)
            items = prep.items
            decided = prep.watch.summary(items, done, bench.calls_per_item, config.options) if prep.watch else None
            if decided is not None:  # the units left were not needed: the run is complete without them
                items, stopped = [item for item in items if item.id in done], None
                prep.items = items  # the run's items are the units judged: the rest are not "not evaluated"
                print(f"dialeval: {decided['said']}; {decided['items_skipped']} of {decided['items']} items not judged",
                      file=sys.stderr, flush=True)
            rows = [done[item.id] for item in items if item.id in done]
            kept = reread and resolved["provenance"].get("finished")
            ended = {**(resolved["provenance"] if kept else provenance.finish(resolved["provenance"])), "items": len(items)}
            resolved["provenance"] = provenance.stamp(run_dir / CONFIG, ended)
            outcome = RunOutcome(prep, rows, stopped if len(rows) < len(items) else None, len(todo), decided)
            return outcome, finish(outcome)


def _starting(meanwhile: Callable[[], None], record: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """``record``, starting ``meanwhile`` in a daemon thread at the first finished item: by then
    the first requests are out, and the thread works while the event loop waits for answers
    (the report's ~0.6 s of imports no longer follow the last answer; docs/performance.md)."""
    started: list[threading.Thread] = []

    def first(row: dict[str, Any]) -> None:
        record(row)
        if not started:
            started.append(threading.Thread(target=meanwhile, name="dialeval-meanwhile", daemon=True))
            started[0].start()

    return first


async def _run_items(
    prep: PreparedRun, graph: Any, todo: list[Any], done: dict[str, dict[str, Any]], progress: bool,
    on_interrupt: Callable[[str], None] | None, wait: bool, batch_poll: float, meanwhile: Callable[[], None] | None,
    callbacks: list[Any] | None = None,
) -> tuple[str | None, Any]:
    """``todo`` through the graph, each finished row into ``done`` and ``results.jsonl``:
    why the run stopped early (or ``None``) and its batch rounds (``None`` without batches)."""
    from dialeval.models.batch_queue import batch_queue
    from dialeval.models.prompt_store import close as close_prompts
    from dialeval.run.batch_rounds import batch_rounds_for

    bench, config, run_dir, items = prep.bench, prep.config, prep.run_dir, prep.items
    concurrency = config.effective_concurrency()
    halt: list[Callable[[str], None]] = []  # the item runner's stop, once it exists
    say: Callable[[str], None] = lambda line: None  # batch states on stderr, once the bar exists
    batched = batch_rounds_for(
        prep.models, run_dir, wait=wait, poll_seconds=batch_poll, say=lambda line: say(line),
        on_stop=lambda: [stop("batches submitted, not waited for (--no-wait)") for stop in halt], reuse_answers=not config.fresh,
    )
    context = prep.context.model_copy(update={"run_dir": str(run_dir)})
    processes = min(config.processes, len(todo), concurrency)
    pool = None
    if processes > 1:  # forked before the bar's thread and the first row's; each worker relays the tracers of this process
        from dialeval.run.processes import WorkerPool
        from dialeval.run.relay import process_handlers

        job = ItemJob(bench, graph, context, config.options, _evaluate_item, concurrency, config.max_consecutive_errors)
        pool = WorkerPool(job, todo, processes, process_handlers(callbacks)).start()
    graph = graph.with_config(callbacks=callbacks) if callbacks and graph is not None else graph
    job = ItemJob(bench, graph, context, config.options, _evaluate_item, concurrency, config.max_consecutive_errors,
                  track=batched.track if batched else None,
                  items_at_once=max(concurrency, len(todo)) if batched else None)  # a round takes every item
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"{bench.name} {run_dir.name}", unit="item")
    say = _say(bar)  # batch states: beside the bar, or plain lines with --no-progress (a wait must not look hung)
    queue_token = batch_queue.set(batched)
    flights_token = current_flights.set(Flights())  # identical requests of this run: sent once, shared
    tally = RunTally(run_dir / RESULTS, done, bar, concurrency)
    finished_before = tally.finished(items)
    try:
        calls = known_total(bench.calls_per_item(item, config.options) for item in todo) if bench.calls_per_item else None
        with call_bar(enabled=bar is not None, total=calls):  # moves per model call: a turn, a question
            watch = prep.watch
            record = _starting(meanwhile, tally.record) if meanwhile is not None else tally.record
            if pool is not None:
                stopped = await pool.run(tally, record)
                return stopped, batched
            on_row = watch.recorder(record, lambda line: [stop(line) for stop in halt]) if watch else record
            runner = ItemRunner(job, on_row, tally.call_ended, on_request=watch.request_left if watch else None)
            halt.append(runner.halt)
            for item in todo:
                runner.add(item)
            runner.close()
            await runner.run()
            return runner.breaker.message, batched
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
        current_flights.reset(flights_token)


def _say(bar: Any) -> Callable[[str], None]:
    """A line on stderr, above the progress bar when there is one (stdout keeps the report)."""
    if bar is not None:
        return lambda line: bar.write(line, file=sys.stderr)
    return lambda line: print(line, file=sys.stderr, flush=True)


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
            "error": scrub(error_text(err)),
            "causes": causes or [{"error": type(err).__name__, "endpoint": None, "model": None, "agent": None,
                                  "message": scrub(error_text(err))}],
            "traceback": scrub(traceback.format_exc(limit=6)),
        }
    finally:
        current_ledger.reset(token)
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["unit_hash"] = unit_hash(bench, item)  # the gate pairs two runs' units only when they judged the same content
    row["usage"] = [c.__dict__ for c in ledger.calls]
    return row
