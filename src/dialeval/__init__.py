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

from dialeval.version import __version__
__all__ = ["evaluate", "aevaluate", "load_dataset", "read_run", "list_benchmarks", "sweep", "trust", "__version__"]


def _config(config: RunConfig | dict[str, Any] | str | Path | None, overrides: dict[str, Any]) -> RunConfig:
    """Keyword overrides win, ``None`` included (``cache_path=None`` turns the cache off);
    ``base_url=`` goes with ``model=``, as ``--base-url`` with ``--model``."""
    from pydantic import ValidationError

    from dialeval.config import ConfigError, RunConfig, describe_error, load_config, unknown_key

    keywords = [*RunConfig.model_fields, "base_url"]  # base_url= goes into model=
    for key in overrides:
        if key not in keywords:
            raise ConfigError(f"evaluate() arguments: field '{key}': {unknown_key(key, keywords)}")
    if isinstance(config, RunConfig):
        base = config.model_dump(exclude_unset=True)
    elif isinstance(config, (str, Path)):
        base = load_config(config).model_dump(exclude_unset=True)
    else:
        base = dict(config or {})
    if "base_url" in overrides:
        overrides = dict(overrides)
        url = overrides.pop("base_url")
        model = overrides.get("model", base.get("model"))
        if model is None:
            raise ConfigError("evaluate(): base_url= is the URL of the model= given with it; give model= too")
        if not isinstance(model, dict):
            model = {"spec": model} if isinstance(model, str) else model.model_dump(exclude_unset=True)
        overrides["model"] = {**model, "base_url": url}
    if "model" in overrides:
        from dialeval.config import dry_run_over

        overrides = {**overrides, "model": dry_run_over(overrides["model"], base.get("model"))}
    where = str(config) if isinstance(config, (str, Path)) else "evaluate() arguments"
    try:
        result = RunConfig.model_validate({**base, **overrides})
    except ValidationError as err:  # a misspelt keyword: the valid ones and the closest, as the CLI says it
        raise ConfigError(f"{where}: {describe_error(err, RunConfig)}") from None
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if isinstance(config, (str, Path)):
        result._source = str(config)  # messages name the file
    return result


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
    import asyncio

    from dialeval.evaluation import run

    resolved = _config(config, overrides)
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here: the usual script or CLI case
        return _warn_if_incomplete(run(benchmark, data, resolved, progress=False, callbacks=callbacks))
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dialeval-evaluate") as pool:
        result = pool.submit(contextvars.copy_context().run, run, benchmark, data, resolved, progress=False,
                             callbacks=callbacks).result()  # collect_runs() and other context tracers come along
    return _warn_if_incomplete(result)


async def aevaluate(
    benchmark: str, data: str | Path, config: RunConfig | dict[str, Any] | str | Path | None = None, *,
    callbacks: list[Any] | None = None, **overrides: Any,
) -> RunResult:
    """Async form of :func:`evaluate`, for notebooks and services with a running loop."""
    from dialeval.evaluation import run_async

    result = await run_async(benchmark, data, _config(config, overrides), progress=False, callbacks=callbacks)
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


def __getattr__(name: str) -> Any:
    """``dialeval.trust(...)``: the trust package itself is callable (a submodule import
    would replace a function of that name), loaded on first use."""
    if name == "trust":
        import importlib

        return importlib.import_module("dialeval.trust")
    raise AttributeError(f"module 'dialeval' has no attribute {name!r}")


def list_benchmarks() -> list[str]:
    from dialeval.benchmarks import available

    return available()
