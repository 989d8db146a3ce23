"""Human labels (option ``human_scores``) and the judge's agreement with them.

The file (JSON or JSONL) holds one record per label: ``id`` (conversation), ``turn``
(an assistant turn's number; left out for a conversation-level criterion),
``criterion`` and ``score`` (on the criterion's scale: a number, or a label). Agreement
per criterion: Spearman, Kendall tau-b and Krippendorff's alpha (ordinal), each with a
95% paired bootstrap CI (percentile, fixed seed); ``None`` where undefined.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.io import DataError, read_records, validate_all
from dialeval.metrics.agreement import krippendorff_alpha
from dialeval.protocols.dialogue.data import Conversation
from dialeval.protocols.dialogue.rubric import Rubric
from dialeval.report.tables import cell, markdown_table, num

SEED = 0
RESAMPLES = 999


class HumanLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    turn: int | None = Field(default=None, ge=1)
    criterion: str = Field(min_length=1)
    score: int | float | str


def load_labels(path: str | Path, rubric: Rubric, conversations: list[Conversation] | None = None) -> dict[tuple[str, str], float]:
    """``(unit, criterion) -> score`` where unit is ``<id>/<turn>`` or ``<id>``; checked against
    the rubric (and the conversations, when given) with file, record and field named."""
    labels = validate_all(HumanLabel, read_records(path), path, id_field="id")
    by_id = {c.id: c for c in conversations or []}
    names = {c.name: c for c in rubric.criteria}
    out: dict[tuple[str, str], float] = {}
    for index, label in enumerate(labels):
        criterion = names.get(label.criterion)
        if criterion is None:
            raise DataError(path, f"{label.criterion!r} is not a criterion of {rubric.source}", record=index, field="criterion")
        if (criterion.level == "turn") != (label.turn is not None):
            raise DataError(path, f"criterion {criterion.name!r} is {criterion.level}-level: "
                            + ("give the turn" if criterion.level == "turn" else "leave the turn out"), record=index, field="turn")
        value = criterion.scale.read(label.score)
        if value is None:
            raise DataError(path, f"{label.score!r} is not {criterion.scale.describe()}", record=index, field="score")
        conv = by_id.get(label.id)
        if conversations is not None and conv is None:
            raise DataError(path, f"no conversation {label.id!r} in the data file", record=index, field="id")
        if conv is not None and label.turn is not None and (label.turn > len(conv.turns) or conv.turn(label.turn).role != "assistant"):
            raise DataError(path, f"turn {label.turn} of {label.id!r} is not an assistant turn", record=index, field="turn")
        unit = label.id if label.turn is None else f"{label.id}/{label.turn}"
        out[(unit, criterion.name)] = criterion.scale.score(value)
    return out


def _finite(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy import stats

    return float(stats.spearmanr(a, b).statistic)


def _kendall(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy import stats

    return float(stats.kendalltau(a, b, variant="b").statistic)


def _alpha(a: Sequence[float], b: Sequence[float]) -> float:
    value = krippendorff_alpha(list(a), list(b), "ordinal")
    return float("nan") if value is None else value


def with_ci(statistic: Callable[[Any, Any], float], a: list[float], b: list[float]) -> dict[str, float | None]:
    """The statistic and a 95% percentile bootstrap CI over paired units. Resamples where
    the statistic is undefined (all scores alike) are left out of the percentiles, which
    ``scipy.stats.bootstrap`` cannot do (one NaN makes its whole interval NaN)."""
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return {"value": None, "ci_low": None, "ci_high": None}
    x, y = np.asarray(a), np.asarray(b)
    rng = np.random.default_rng(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = statistic(a, b)
        draws = []
        for _ in range(RESAMPLES):
            pick = rng.integers(0, len(x), len(x))
            draws.append(statistic(x[pick], y[pick]) if len(set(x[pick])) > 1 and len(set(y[pick])) > 1 else math.nan)
    kept = np.asarray(draws, dtype=float)
    if not np.isfinite(kept).any():
        return {"value": _finite(value), "ci_low": None, "ci_high": None}
    low, high = np.nanpercentile(kept, [2.5, 97.5])
    return {"value": _finite(value), "ci_low": _finite(low), "ci_high": _finite(high)}


def agreement(scores: dict[str, dict[str, float]], labels: dict[tuple[str, str], float]) -> dict[str, dict[str, Any]]:
    """Per criterion: n paired units and the three statistics with CIs (judge ``scores``
    as :func:`item_scores` gives them, readable verdicts only)."""
    out: dict[str, dict[str, Any]] = {}
    for criterion in dict.fromkeys(c for _, c in labels):
        units = [u for (u, c) in labels if c == criterion and u in scores.get(criterion, {})]
        judge = [scores[criterion][u] for u in units]
        human = [labels[(u, criterion)] for u in units]
        out[criterion] = {
            "n": len(units),
            "labels": sum(1 for (_, c) in labels if c == criterion),
            "spearman": with_ci(_spearman, judge, human),
            "kendall_tau_b": with_ci(_kendall, judge, human),
            "krippendorff_alpha": with_ci(_alpha, judge, human),
        }
    return out


def _with_ci(stat: dict[str, float | None]) -> str:
    if stat["value"] is None or stat["ci_low"] is None:
        return num(stat["value"])
    return f"{num(stat['value'])} [{num(stat['ci_low'])}, {num(stat['ci_high'])}]"


def agreement_table(rows: dict[str, dict[str, Any]]) -> str:
    headers = ["criterion", "paired units", "labels", "Spearman", "Kendall tau-b", "Krippendorff's alpha (ordinal)"]
    body = [
        [cell(name), row["n"], row["labels"], _with_ci(row["spearman"]), _with_ci(row["kendall_tau_b"]), _with_ci(row["krippendorff_alpha"])]
        for name, row in rows.items()
    ]
    return "\n".join(["Agreement of the judge with the human labels (95% bootstrap CI):", "", *markdown_table(headers, body, "lrrlll")])
