"""A run as a pandas DataFrame: one row per scored unit and dimension.

Why: notebooks filter, group and plot long tables; the protocols' records are nested
and differ per benchmark, the rows here have one shape for every benchmark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialeval.report.results import RunData

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

