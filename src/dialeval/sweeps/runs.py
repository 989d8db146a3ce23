"""A sweep's runs: one ordinary run per model (same benchmark, data and config; only the
default model differs), then the leaderboard of those runs in ``sweeps/<id>/``.

Why ordinary runs: each is resumable on its own (a killed sweep re-run picks every run up
where it stopped), shares the response cache, and opens in ``dialeval view`` and
``dialeval compare`` like any other run. ``dry_run_sweep`` prices the whole sweep first.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dialeval.config import ModelSettings, RunConfig, as_dry_run, load_config

ModelEntry = str | dict[str, Any]  # a spec, or ModelSettings fields (spec, base_url, price...)


@dataclass
class SweepResult:
    """Where the sweep's leaderboard lives and what it says."""

    sweep_dir: Path
    leaderboard: dict[str, Any]
    runs: list[Path]

    @property
    def complete(self) -> bool:
        return all(m["complete"] for m in self.leaderboard["models"])

    def __repr__(self) -> str:
        ranked = ", ".join(f"{m['rank']}. {m['model']}" for m in self.leaderboard["models"])
        return f"SweepResult(sweep_dir={str(self.sweep_dir)!r}, {ranked})"


def settings_of(model: ModelEntry, base_url: str | None = None) -> ModelSettings:
    """A sweep's model entry as settings (``base_url`` given once for every string spec)."""
    if isinstance(model, str):
        return ModelSettings.model_validate({"spec": model, **({"base_url": base_url} if base_url else {})})
    return ModelSettings.model_validate(model)


def dry_run_specs(models: list[ModelEntry], base_url: str | None = None) -> list[str]:
    """The models given as dry-run specs: their runs price a sweep, never rank it."""
    return [s.spec for s in (settings_of(m, base_url) for m in models) if s.parsed.is_dry_run]


def refuse_dry_runs(specs: list[str]) -> None:
    """:class:`ConfigError` when a sweep to rank holds dry runs, whose scores are placeholders."""
    from dialeval.config import ConfigError

    if specs:
        raise ConfigError(f"dialeval sweep: {', '.join(specs)}: a dry run's scores are placeholders, not results to rank; "
                          "price the sweep with --dry-run (dry_run_sweep), or give real models to rank them")


def configs(benchmark: str, data: str | Path, models: list[ModelEntry], config: str | Path | None = None, *,
            base_url: str | None = None, dry_run: bool = False, **overrides: Any) -> list[tuple[str, RunConfig]]:
    """(label, run config) per model: the config file with that model as the default model."""
    if not models:
        from dialeval.config import ConfigError

        raise ConfigError("dialeval sweep: no model given (use --model, or `models:` in the sweep file)")
    out = []
    for entry in models:
        settings = settings_of(entry, base_url)
        model = as_dry_run(settings) if dry_run else settings
        run_config = load_config(config, benchmark=benchmark, data=str(data), model=model.model_dump(exclude_defaults=True),
                                 **{k: v for k, v in overrides.items() if v is not None})
        out.append((settings.spec, run_config))
    return out


def sweep_id(benchmark: str, data: str | Path, pairs: list[tuple[str, RunConfig]]) -> str:
    """``<benchmark>-<digest>`` of the data's path and the models' run configs."""
    blob = json.dumps([benchmark, str(data), [c.model_dump(mode="json", exclude={"progress"}) for _, c in pairs]],
                      sort_keys=True, default=str)
    return f"{benchmark}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def sweep_dir_for(pairs: list[tuple[str, RunConfig]], benchmark: str, data: str | Path) -> Path:
    """``sweeps/<id>`` beside the runs folder of the first model's config."""
    return Path(pairs[0][1].output_dir).parent / "sweeps" / sweep_id(benchmark, data, pairs)


def run_sweep(benchmark: str, data: str | Path, models: list[ModelEntry], config: str | Path | None = None, *,
              progress: bool = True, rank_by: str | None = None, base_url: str | None = None,
              on_run: Callable[[str, Any], None] | None = None, **overrides: Any) -> SweepResult:
    """Run (or resume) every model's run, then write the leaderboard; ``on_run(model, result)``
    hears each run as it ends. ``overrides`` are ``load_config``'s (limit, options, output_dir...)."""
    from dialeval.evaluation import run

    refuse_dry_runs(dry_run_specs(models, base_url))
    pairs = configs(benchmark, data, models, config, base_url=base_url, **overrides)
    results = []
    for label, run_config in pairs:
        result = run(benchmark, run_config.data or data, run_config, progress=progress)
        results.append((label, result.run_dir))
        if on_run is not None:
            on_run(label, result)
    return write_leaderboard(benchmark, data, results, sweep_dir_for(pairs, benchmark, data), rank_by)


def write_leaderboard(benchmark: str, data: str | Path, runs: list[tuple[str, Path]], sweep_dir: Path,
                      rank_by: str | None = None) -> SweepResult:
    """``leaderboard.json``, ``leaderboard.md``, ``plots/leaderboard.png`` and ``index.html``
    of the sweep from its runs' folders."""
    from dialeval.report.results import read_run
    from dialeval.sweeps.leaderboard import Entry, leaderboard, markdown
    from dialeval.sweeps.page import write_page

    entries = []
    for label, run_dir in runs:
        data_of = read_run(run_dir)
        if (data_of.metrics.get("run") or {}).get("dry_run"):  # a config's roles may make it one
            refuse_dry_runs([f"{label} (run {run_dir})"])
        total = data_of.usage.get("total") or {}
        entries.append(Entry(
            model=label, run_dir=run_dir, scores=data_of.scores(), items=len(data_of.items), failed=data_of.failed,
            cost_usd=None if total.get("unpriced_calls") else float(total.get("cost_usd") or 0.0),
            seconds=sum(float(i.seconds or 0.0) for i in data_of.items),
        ))
    dimensions = [d for e in entries for d in e.scores]
    dimension = rank_by or (dimensions[0] if dimensions else "")
    if rank_by and rank_by not in dimensions:
        from dialeval.config import ConfigError

        raise ConfigError(f"--rank-by {rank_by!r}: not a dimension of these runs; valid: {', '.join(sorted(set(dimensions)))}")
    board = leaderboard(entries, dimension, {"sweep": sweep_dir.name, "benchmark": benchmark, "data": str(data)})
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / "leaderboard.json").write_text(json.dumps(board, indent=2), encoding="utf-8")
    (sweep_dir / "leaderboard.md").write_text(markdown(board, sweep_dir), encoding="utf-8")
    write_page(board, sweep_dir)
    return SweepResult(sweep_dir=sweep_dir, leaderboard=board, runs=[r for _, r in runs])


def dry_run_sweep(benchmark: str, data: str | Path, models: list[ModelEntry], config: str | Path | None = None, *,
                  progress: bool = True, base_url: str | None = None, **overrides: Any) -> dict[str, Any]:
    """Every model's run as a dry run (no model called, every role priced as its model):
    per model its calls, tokens and estimated cost, and the sweep's total (``None``: unknown)."""
    from dialeval.evaluation import run

    rows = []
    for label, run_config in configs(benchmark, data, models, config, base_url=base_url, dry_run=True, **overrides):
        usage = (run(benchmark, run_config.data or data, run_config, progress=progress).metrics.get("run") or {}).get("usage") or {}
        rows.append({"model": label, "calls": usage.get("calls", 0), "input_tokens": usage.get("input_tokens", 0),
                     "output_tokens": usage.get("output_tokens", 0),
                     "cost_usd": None if usage.get("unpriced_calls") else float(usage.get("cost_usd") or 0.0)})
    costs = [r["cost_usd"] for r in rows]
    return {"benchmark": benchmark, "models": rows, "total_cost_usd": None if None in costs else sum(c for c in costs if c is not None)}


def dry_run_text(estimate: dict[str, Any]) -> str:
    """The dry run's table, as the CLI prints it."""
    from dialeval.report.tables import code, markdown_table

    def usd(value: float | None) -> str:
        return "unknown (no price for this model)" if value is None else f"{value:.4f}"

    rows = [[code(r["model"], table=True), r["calls"], r["input_tokens"], r["output_tokens"], usd(r["cost_usd"])] for r in estimate["models"]]
    rows.append(["**sweep**", sum(r["calls"] for r in estimate["models"]), sum(r["input_tokens"] for r in estimate["models"]),
                 sum(r["output_tokens"] for r in estimate["models"]), usd(estimate["total_cost_usd"])])
    return "\n".join([f"Dry run of the sweep ({estimate['benchmark']}): no model was called; tokens counted, costs estimated.", "",
                      *markdown_table(["model", "calls", "input tokens", "output tokens", "cost (USD)"], rows, "lrrrr")]) + "\n"
