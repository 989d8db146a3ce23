"""The typed view of a run folder: :class:`ItemResult` per item and :func:`read_run`.

Why: report, compare and the viewer (and users' notebooks) read runs through one
reader instead of each reaching into result dicts whose shape differs per protocol.
The lines of ``results.jsonl`` keep their protocol's shape (it is the ``detail`` here);
the scores per dimension come from the benchmark's own ``item_scores``. The same run as a
pandas DataFrame (:func:`run_frame`, ``RunData.to_pandas``) is one row per scored unit.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialeval.judge_spec import spec_of
from dialeval.data.io import DataError

Scores = dict[str, dict[str, float]]  # dimension -> {unit id -> score}
DERIVED_NAME = re.compile(r"[A-Za-z0-9_.-]+-[0-9a-f]{10}")  # run/identity.py's run_id(): "<benchmark>-<hash>"


class ItemResult(BaseModel):
    """One evaluated item: whether it finished, its scores per dimension and its calls.

    ``scores`` holds readable answers only (the benchmark's ``item_scores`` of this
    item); ``detail`` is the protocol's record as written, for what the scores leave out."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: Literal["ok", "failed"]
    system: str | None = None  # the system under test, when the record names one
    scores: Scores = Field(default_factory=dict)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    traceback: str | None = None
    seconds: float | None = None
    cost_usd: float | None = None  # the item's model calls; None when one has no known price
    models: list[str] = Field(default_factory=list)  # the models its calls went to
    judge_models: list[str] = Field(default_factory=list)  # those of its judges (not the system under test's)
    unit_hash: str | None = None  # content hash of what the item asked (the gate pairs units only when equal)
    system_models: list[str] = Field(default_factory=list)  # those of the system under test (MMRC's, MMDU's responder)
    detail: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_row(cls, row: dict[str, Any], item_scores: Any = None, system_agents: frozenset[str] = frozenset()) -> ItemResult:
        """A ``results.jsonl`` row made typed; ``item_scores`` is the benchmark's function,
        ``system_agents`` the agents that played the system under test."""
        result = row.get("result")
        detail: dict[str, Any] = result if isinstance(result, dict) else {}
        ok = row.get("status") == "ok"
        calls = detail.get("calls") or row.get("calls") or [
            {**u, "raw": "", "cached": bool(u.get("cached"))} for u in row.get("usage", [])
        ]
        system = detail.get("system")
        usage = [u for u in row.get("usage") or [] if isinstance(u, dict)]
        priced = all(u.get("priced", True) for u in usage)
        return cls(
            id=row["id"],
            status="ok" if ok else "failed",
            system=system if isinstance(system, str) else None,
            scores={d: units for d, units in item_scores([detail]).items() if units} if ok and item_scores else {},
            calls=list(calls),
            error=row.get("error"),
            traceback=row.get("traceback"),
            seconds=row.get("seconds"),
            cost_usd=sum(float(u.get("cost") or 0.0) for u in usage) if priced else None,
            models=sorted({str(u["model"]) for u in usage if u.get("model")}),
            judge_models=sorted({str(u["model"]) for u in usage if u.get("model") and u.get("agent") not in system_agents}),
            unit_hash=row.get("unit_hash") if isinstance(row.get("unit_hash"), str) else None,
            system_models=sorted({str(u["model"]) for u in usage if u.get("model") and u.get("agent") in system_agents}),
            detail=detail,
        )


class RunData(BaseModel):
    """What a run folder holds: the resolved config, metrics, usage and every item."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    config: dict[str, Any]
    metrics: dict[str, Any]
    usage: dict[str, Any]
    items: list[ItemResult]

    @property
    def benchmark(self) -> str:
        return str(self.config.get("benchmark", "?"))

    @property
    def records(self) -> list[dict[str, Any]]:
        """The protocol records of the finished items, as ``Benchmark.aggregate`` takes them."""
        return [i.detail for i in self.items if i.status == "ok"]

    @property
    def failed(self) -> int:
        return sum(1 for i in self.items if i.status != "ok")

    @property
    def systems(self) -> list[str]:
        """The systems under test the finished items name (several: one VDAct run over many files)."""
        return sorted({i.system for i in self.items if i.status == "ok" and i.system is not None})

    def systems_share_units(self) -> bool:
        """Whether two systems of this run scored the same unit id (one VDAct run over
        several files: same dialogue, same turn); their units then need the system's name."""
        seen: dict[str, str | None] = {}
        for item in self.items:
            for units in item.scores.values():
                for unit in units:
                    if seen.setdefault(unit, item.system) != item.system:
                        return True
        return False

    def scores(self) -> Scores:
        """Every finished item's scores per dimension, merged in the order the items finished;
        a unit is ``<system>/<unit>`` when the run's systems share unit ids."""
        prefix = self.systems_share_units()
        out: Scores = {}
        for item in self.items:
            for dimension, units in item.scores.items():
                out.setdefault(dimension, {}).update({(f"{item.system}/{u}" if prefix else u): v for u, v in units.items()})
        return out

    def unit_items(self) -> dict[str, str]:
        """Unit id (as :meth:`scores` names it) -> the id of the item that scored it."""
        prefix = self.systems_share_units()
        return {(f"{item.system}/{u}" if prefix else u): item.id
                for item in self.items for units in item.scores.values() for u in units}

    @property
    def description(self) -> str:
        """Benchmark, system, judge model and start time (see :func:`run_label`)."""
        return run_label(self.config, self.systems, started_at(self.path, self.config))

    @property
    def label(self) -> str:
        """The run's name in ``compare`` and the viewer: the folder name a person chose
        (``--run-id``), else :attr:`description`, since a derived name (``answers-<10 hex>``) is a hash."""
        return self.description if DERIVED_NAME.fullmatch(self.path.name) else self.path.name

    def __repr__(self) -> str:
        """A line or two (never the items: a run's records can be megabytes)."""
        return (f"RunData(path={str(self.path)!r}, benchmark={self.benchmark!r}, items={len(self.items)}, "
                f"failed={self.failed}, systems={self.systems})")

    __str__ = __repr__

    def to_pandas(self) -> Any:
        """One row per scored unit and dimension (see :func:`run_frame`)."""
        return run_frame(self)


def judge_model(config: dict[str, Any]) -> str:
    """The model that judged: the ``judge`` role's own, else the run's default (a spec
    such as ``openai:gpt-4o-mini``; ``?`` when the config names none)."""
    context = config.get("context") or {}
    for settings in ((context.get("models") or {}).get("judge"), context.get("default_model"), config.get("model")):
        if isinstance(settings, dict) and spec_of(settings):
            return str(spec_of(settings))
    return "?"


def started_at(path: Path, config: dict[str, Any]) -> datetime | None:
    """When the run started: the time its config records, else when ``config.json`` was
    written (the run's first act); None when neither can be read."""
    for holder in (config, config.get("provenance") or {}, config.get("identity") or {}):
        value = (holder.get("first_started") or holder.get("started")) if isinstance(holder, dict) else None
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                pass
    try:
        return datetime.fromtimestamp((path / "config.json").stat().st_mtime, tz=timezone.utc)
    except OSError:
        return None


def run_label(config: dict[str, Any], systems: list[str], when: datetime | None) -> str:
    """``benchmark · system · judge model · date``, e.g.
    ``vdact · demo-bot · openai:gpt-4o-mini · 2026-11-24 02:10 UTC``.

    Why: run folders are named by a hash, and two systems' runs or two judges' runs read
    the same in a table. The system is the one the items name, else the predictions or
    data file's stem (several: their count)."""
    options = config.get("options") or {}
    source = options.get("predictions") or config.get("data")
    if len(systems) == 1:
        system = systems[0]
    elif systems:
        system = f"{len(systems)} systems"
    else:
        system = Path(str(source)).stem if source else "?"
    parts = [str(config.get("benchmark", "?")), system, judge_model(config)]
    if when is not None:
        parts.append(when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return " · ".join(parts)


def read_json(path: Path, *, required: bool = False) -> dict[str, Any]:
    """A JSON object file of a run folder; a missing optional file is ``{}``, a corrupt one
    stops with :class:`DataError` naming it (never a traceback)."""
    if not path.exists():
        if required:
            raise DataError(path, "missing: not a run folder")
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, OSError) as err:
        raise DataError(path, f"not readable JSON ({err}); rebuild it with `dialeval report` or delete the run") from None
    if not isinstance(value, dict):
        raise DataError(path, f"expected a JSON object, found {type(value).__name__}")
    return value


def read_run(path: str | Path, *, scores: bool = True) -> RunData:
    """Read a run folder (``runs/<run id>/``) into typed items.

    ``scores=False`` skips the per-item scores (no benchmark module is imported), for
    readers that only list items. A corrupt file stops with a one-line
    :class:`~dialeval.data.io.DataError` that names it."""
    from dialeval.run.folder import read_results

    path = Path(path)
    config = read_json(path / "config.json", required=True)
    item_scores = None
    system_agents: frozenset[str] = frozenset()
    if scores and config.get("benchmark"):
        from dialeval.benchmarks import get_benchmark

        try:
            bench = get_benchmark(str(config["benchmark"]))
        except KeyError:
            bench = None  # a plugin benchmark not installed here: items without scores
        if bench is not None:
            item_scores = bench.item_scores
            swapped = config.get("agents") or {}
            system_agents = frozenset(str(swapped.get(role) or bench.roles.get(role)) for role in bench.system_roles)
    rows = read_results(path)
    return RunData(
        path=path,
        config=config,
        metrics=read_json(path / "metrics.json"),
        usage=read_json(path / "usage.json"),
        items=[ItemResult.from_row(row, item_scores, system_agents) for row in rows],
    )


# A run as a pandas DataFrame: notebooks filter, group and plot long tables; the protocols'
# records are nested and differ per benchmark, these rows have one shape for every benchmark.
COLUMNS = ["item", "unit", "dimension", "score", "label", "status", "system", "judge_model", "cost_usd"]


def run_frame(data: RunData) -> Any:
    """Rows ``item, unit, dimension, score, label, status, system, judge_model, cost_usd``.

    ``label`` is the verdict in words where the scale has labels (``yes`` beside its
    rank ``3``), else None. ``system`` is the record's, else the models that played the
    system under test (MMRC: the responder), so a ``groupby("system")`` finds every row.
    A benchmark's ``frame_columns`` adds its own columns after these (MMRC: ability,
    condition, metric).

    ``unit`` is the benchmark's unit id (a VDAct turn is ``<dial_id>/<turn>``); ``status``
    is the item's; a failed item (or a finished one without a readable score) is one row
    with no unit, dimension or score, so it is counted, never scored. ``judge_model`` lists
    the models the item's judges called (not the system under test's); ``cost_usd`` is the item's whole cost (repeated on
    each of its rows: sum it per item, not per row), NaN when a model has no known price."""
    import pandas as pd

    words = labeller(data.benchmark)
    columns = _benchmark(data.benchmark, "frame_columns")
    rows: list[dict[str, Any]] = []
    for item in data.items:
        base = {"item": item.id, "status": item.status, "system": item.system or ", ".join(item.system_models) or None,
                "judge_model": ", ".join(item.judge_models) or None, "cost_usd": item.cost_usd}
        scored = [(u, dim, v) for dim, units in item.scores.items() for u, v in units.items()]
        labels = words([item.detail]) if words is not None and scored else {}
        rows += [{**base, "unit": u, "dimension": dim, "score": float(v), "label": labels.get(dim, {}).get(u),
                  **(columns(u, dim) if columns is not None else {})} for u, dim, v in scored]
        if not scored:
            rows.append({**base, "unit": None, "dimension": None, "score": None})
    extra = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in COLUMNS]
    frame = pd.DataFrame(rows, columns=COLUMNS + extra)
    frame["score"] = frame["score"].astype(float)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    return frame


def labeller(benchmark: str) -> Any:
    """The benchmark's ``item_labels`` (verdicts in words, e.g. for the viewer's item page), or None."""
    return _benchmark(benchmark, "item_labels")


def _benchmark(benchmark: str, name: str) -> Any:
    """A field of the registered benchmark; None when the benchmark is not known here."""
    from dialeval.benchmarks import get_benchmark

    try:
        return getattr(get_benchmark(benchmark), name)
    except (KeyError, ImportError):
        return None

