"""A whole run as the CLI and the Python API start it: prepare, evaluate, report.

:mod:`dialeval.run.runner` evaluates the items and :mod:`dialeval.report.writer` writes the
report; this module, above both, joins them, so ``run/`` never imports ``report/``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dialeval.config import RunConfig
from dialeval.run.folder import failure_summary
from dialeval.run.runner import RunOutcome, execute, prepare_run


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


def _report(outcome: RunOutcome) -> dict[str, Any]:
    """The report of what the items gave (``metrics.json``, ``usage.json``, ``report.md``): the metrics."""
    from dialeval.report.writer import finish_run

    prep = outcome.prep
    return finish_run(prep.run_dir, prep.bench, outcome.rows, prep.resolved, expected=len(prep.items), stopped=outcome.stopped,
                      decision=outcome.decision)


def _import_report() -> None:
    """The report's heavy imports (matplotlib), made while the items run (``execute``'s ``meanwhile``)."""
    from dialeval.report.plots import import_matplotlib

    import_matplotlib()


async def run_async(
    benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True,
    on_interrupt: Callable[[str], None] | None = None, wait: bool = True, batch_poll: float = 30.0,
    callbacks: list[Any] | None = None,
) -> RunResult:
    """Evaluate ``data`` with ``benchmark`` as configured; resume if the run exists.

    Nothing is written before the setup is known to work (config, data, run folder
    paths, stores, models). ``on_interrupt`` receives the line saying how to resume
    when the run is cancelled (Ctrl-C). Models with ``batch: true`` go through batch
    rounds (:mod:`dialeval.run.batch_rounds`), polled every ``batch_poll`` seconds;
    ``wait=False`` raises :class:`BatchesPending` instead of waiting for a batch.
    ``callbacks`` (LangChain callback handlers) see every item's graph run and every model
    call in it, as tracers configured in the environment do."""
    prep = prepare_run(benchmark, data, config)
    drawn = not all(m.parsed.is_dry_run for m in prep.models.values())  # a dry run draws no figure
    outcome, metrics = await execute(prep, _report, progress=progress, on_interrupt=on_interrupt, wait=wait,
                                     batch_poll=batch_poll, callbacks=callbacks, meanwhile=_import_report if drawn else None)
    return _result(prep.run_dir, metrics, outcome.rows, len(prep.items), outcome.stopped, outcome.evaluated_now)


def _result(run_dir: Path, metrics: dict[str, Any], rows: list[dict[str, Any]], expected: int, stopped: str | None,
            evaluated_now: int) -> RunResult:
    not_evaluated = expected - len(rows)
    summary = failure_summary(rows, expected)
    if stopped and not_evaluated:
        summary = f"run stopped, {not_evaluated} of {expected} items not evaluated: {stopped}" + (
            f"; {summary}" if summary else ""
        )
    return RunResult(
        run_dir=run_dir,
        metrics=metrics,
        records=[r["result"] for r in rows if r["status"] == "ok"],
        failed=sum(1 for r in rows if r["status"] != "ok"),
        not_evaluated=not_evaluated,
        stopped=stopped if not_evaluated else None,
        summary=summary or (f"{not_evaluated} of {expected} items not evaluated" if not_evaluated else ""),
        evaluated_now=evaluated_now,
    )


def merge(runs: list[str | Path], out: str | Path | None = None, data: str | Path | None = None) -> RunResult:
    """Join the shard folders of one run (``--shard i/n``, on any machines) into the run
    folder one process would have written, with its report (:mod:`dialeval.run.merge`)."""
    from dialeval.report.writer import finish_run
    from dialeval.run.merge import merge_shards

    merged = merge_shards(runs, out, data)
    metrics = finish_run(merged.run_dir, merged.bench, merged.rows, merged.resolved, expected=merged.expected)
    return _result(merged.run_dir, metrics, merged.rows, merged.expected, None, 0)


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
        return asyncio.run(run_async(benchmark, data, config, progress=progress, on_interrupt=interrupted, wait=wait,
                                     batch_poll=batch_poll, callbacks=callbacks))
    except KeyboardInterrupt:
        if notes:
            raise RunInterrupted(notes[-1]) from None
        raise


def run_here(benchmark: str, data: str | Path, config: RunConfig, *, callbacks: list[Any] | None = None) -> RunResult:
    """A run started from Python (``dialeval.evaluate``, the trust card's runs), without a
    progress bar. Inside a running event loop (a notebook cell) it goes to a worker thread,
    since ``asyncio.run`` cannot nest; the call still blocks until the run ends."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here: the usual script or CLI case
        return run(benchmark, data, config, progress=False, callbacks=callbacks)
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dialeval-evaluate") as pool:
        return pool.submit(contextvars.copy_context().run, run, benchmark, data, config, progress=False,
                           callbacks=callbacks).result()  # collect_runs() and other context tracers come along


def run_warnings(metrics: dict[str, object]) -> list[str]:
    """What the end of a run warns about, one line each: unknown cost, the system under test's
    failures, judges past the unreadable share, code that changed between sessions."""
    run = metrics.get("run", {}) if isinstance(metrics.get("run"), dict) else {}
    usage = run.get("usage", {}) if isinstance(run, dict) else {}
    out = []
    if isinstance(usage, dict) and usage.get("unpriced_calls"):
        models = ", ".join(usage.get("unpriced_models", []))
        out.append(f"cost unknown: no price is known for {models}; set `price` or `price_as` for it")
    system = run.get("system_outputs") if isinstance(run, dict) else None
    if isinstance(system, dict) and system.get("warning"):
        out.append(str(system["warning"]))
    judges = run.get("warnings") if isinstance(run, dict) else None  # judges past the unreadable share
    out.extend(str(w) for w in judges or [])
    provenance = run.get("provenance") if isinstance(run, dict) else None
    if isinstance(provenance, dict):
        from dialeval.run.provenance import mixed_code_warning

        mixed = mixed_code_warning(provenance)
        if mixed:
            out.append(mixed)
    return out
