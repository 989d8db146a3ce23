"""dialeval: evaluate (multimodal) dialogue systems and summaries with teams of LLM agents.

Public API::

    import dialeval
    result = dialeval.evaluate("kgds", "KGDS.json", {"model": "openai:gpt-4o-mini", "limit": 5})
    result.metrics, result.run_dir
    result.failed, result.complete, result.summary   # items whose model calls failed
    run = dialeval.read_run(result.run_dir)           # config, metrics, usage, typed items
    run.items[0].status, run.items[0].scores         # ItemResult: scores per dimension and unit
    result.to_pandas()                                # one row per scored unit and dimension
    board = dialeval.sweep("answers", "answers.jsonl", ["openai:gpt-4o-mini", "openai:gpt-4o"])
    board.leaderboard["models"], board.sweep_dir      # ranks with ties, 95% intervals, cost, runs
    card = dialeval.trust_card("chats.jsonl", "labels.jsonl", "rubric.yaml", ["openai:gpt-4o-mini"])

``evaluate()`` also works inside a running event loop (Jupyter): the run then goes on
in a worker thread with its own loop.

Metrics come from finished items only; failed items (a model call ended ``error``)
are counted beside them, reported in a ``RuntimeWarning``, and retried by a re-run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialeval.config import RunConfig
    from dialeval.report.results import RunData
    from dialeval.evaluation import RunResult
    from dialeval.sweeps.runs import SweepResult

from dialeval import trust  # light: the card's modules load on its first call
from dialeval.version import __version__

__all__ = ["evaluate", "aevaluate", "load_dataset", "read_run", "list_benchmarks", "sweep", "trust_card", "trust", "__version__"]


def evaluate(
    benchmark: str, data: str | Path, config: RunConfig | dict[str, Any] | str | Path | None = None, *,
    callbacks: list[Any] | None = None, **overrides: Any,
) -> RunResult:
    """Run ``benchmark`` on ``data``; returns the metrics and the run folder.

    ``config`` is a :class:`RunConfig`, a dict of its fields, or a YAML file path;
    keyword overrides win over it (e.g. ``model="dry-run"``, ``limit=2``). Inside a running
    event loop (a notebook cell) the run goes to a worker thread, since ``asyncio.run``
    cannot nest; the call still blocks until the run ends. ``callbacks`` (LangChain callback
    handlers, e.g. a tracer) see every item's graph run and every model call in it.
    """
    from dialeval.config import resolve_config
    from dialeval.evaluation import run_here

    return _warn_if_incomplete(run_here(benchmark, data, resolve_config(config, overrides), callbacks=callbacks))


async def aevaluate(
    benchmark: str, data: str | Path, config: RunConfig | dict[str, Any] | str | Path | None = None, *,
    callbacks: list[Any] | None = None, **overrides: Any,
) -> RunResult:
    """Async form of :func:`evaluate`, for notebooks and services with a running loop."""
    from dialeval.config import resolve_config
    from dialeval.evaluation import run_async

    result = await run_async(benchmark, data, resolve_config(config, overrides), progress=False, callbacks=callbacks)
    return _warn_if_incomplete(result)


def _warn_if_incomplete(result: RunResult) -> RunResult:
    """A Python caller sees failures as loudly as the CLI's exit code and last lines."""
    import warnings

    if not result.complete:
        warnings.warn(f"{result.summary}; evaluate again to retry them", RuntimeWarning, stacklevel=3)
    if result.system_failures:
        warnings.warn(result.system_failures, RuntimeWarning, stacklevel=3)
    return result


def load_dataset(benchmark: str, data: str | Path, options: dict[str, Any] | None = None) -> list[Any]:
    """The validated items of a data file, as the benchmark's pydantic objects."""
    from dialeval.benchmarks import get_benchmark

    return get_benchmark(benchmark).load(Path(data), options or {})


def sweep(
    benchmark: str, data: str | Path, models: list[str | dict[str, Any]], config: str | Path | None = None, *,
    rank_by: str | None = None, dry_run: bool = False, **overrides: Any,
) -> SweepResult | dict[str, Any]:
    """One ordinary run per model (resumable, the shared cache), then ``sweeps/<id>/``'s
    leaderboard: headline figures with 95% intervals, ranks tied where the paired tests on
    the same units cannot separate two models, cost and time per model. ``dry_run=True``
    prices the whole sweep instead (no model is called) and returns the estimate, as does a
    list of dry-run specs only (their scores are placeholders: never ranked).
    ``overrides`` are run config fields (``limit``, ``options``, ``output_dir``...)."""
    from dialeval.sweeps.runs import dry_run_specs, dry_run_sweep, run_sweep

    if dry_run or (models and len(dry_run_specs(models, overrides.get("base_url"))) == len(models)):  # as the CLI: priced only
        return dry_run_sweep(benchmark, data, models, config, progress=False, **overrides)
    return run_sweep(benchmark, data, models, config, progress=False, rank_by=rank_by, **overrides)


def read_run(path: str | Path) -> RunData:
    """A run folder as typed data: config, metrics, usage and one ``ItemResult`` per item."""
    from dialeval.report import results

    return results.read_run(path)


def trust_card(data: str | Path, labels: str | Path, rubric: str, judges: list[Any], **settings: Any) -> dict[str, Any]:
    """The judge trust card (``dialeval trust``): candidate ``judges`` on the labelled
    conversations ``data`` and ``labels`` under ``rubric``; ``settings`` are the card's
    (``tolerance``, ``repeats``, ``probes``, ``output_dir``...: :func:`dialeval.trust.card`).
    Returns card.json's content (its ``folder``)."""
    return trust.card(data, labels, rubric, judges, **settings)


def list_benchmarks() -> list[str]:
    from dialeval.benchmarks import available

    return available()
