"""MMDU scores (pure): turns -> dialogues -> benchmark, x10; judge vs human; judge vs judge.

A record is one judged dialogue: ``{"id", "turns": [{"turn", "answered", "judge_status",
"scores": {dimension: int | None}, "human": float | None}, ...]}``. A dimension whose
score is ``None`` (unparsed, or the turn was not judged) is left out of that
dimension's means and counted beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from statistics import fmean
from typing import Any

from dialeval.metrics.correlation import kendall_tau_b
from dialeval.metrics.intervals import interval
from dialeval.metrics.scores import mean_or_none
from dialeval.report.tables import cell, ci, markdown_table, num

DIMENSIONS: tuple[str, ...] = (
    "Creativity",
    "Richness",
    "Visual Perception",
    "Logical Coherence",
    "Answer Accuracy",
    "Image Relationship Understanding",
    "Overall Score",
)
SHORT = {
    "Creativity": "C",
    "Richness": "R",
    "Visual Perception": "VP",
    "Logical Coherence": "LC",
    "Answer Accuracy": "AA",
    "Image Relationship Understanding": "IRU",
    "Overall Score": "Overall",
}
SCALE = 10  # the paper's tables report mean scores x10


def _x10(value: float | None) -> float | None:
    return None if value is None else SCALE * value


def dimension_summary(records: Sequence[Mapping[str, Any]], dimension: str, aggregation: str = "dialogue") -> dict[str, Any]:
    """One dimension's benchmark score (x10) and what it rests on.

    ``dialogue`` (Section 2.3): the mean over a dialogue's scored turns, then the mean
    over dialogues with at least one. ``turn`` (the authors' statistics script): the mean
    over every scored turn of every dialogue.
    """
    per_dialogue = []
    pooled: list[float] = []
    unparsed = 0
    for record in records:
        judged = [t for t in record["turns"] if t.get("judge_status") == "ok"]
        scores = [t["scores"].get(dimension) for t in judged]
        unparsed += sum(1 for s in scores if s is None)
        present = [float(s) for s in scores if s is not None]
        pooled += present
        if present:
            per_dialogue.append(fmean(present))
    units = per_dialogue if aggregation == "dialogue" else pooled
    mean, ci = mean_or_none(units), interval(units)  # units resampled whole: dialogues (or turns)
    return {
        "score": _x10(mean),
        "ci": None if ci is None else [SCALE * ci[0], SCALE * ci[1]],
        "mean": mean,
        "turns": len(pooled),
        "dialogues": len(per_dialogue),
        "unparsed": unparsed,
    }


def benchmark_scores(records: Sequence[Mapping[str, Any]], aggregation: str = "dialogue") -> dict[str, Any]:
    """Every dimension's summary, and the turn counts behind them."""
    turns = [t for r in records for t in r["turns"]]
    return {
        "aggregation": aggregation,
        "dialogues": len(records),
        "turns": len(turns),
        "answered": sum(1 for t in turns if t.get("answered")),
        "judged": sum(1 for t in turns if t.get("judge_status") == "ok"),
        "judge_failed": sum(1 for t in turns if t.get("judge_status") not in (None, "ok")),
        "dimensions": {d: dimension_summary(records, d, aggregation) for d in DIMENSIONS},
    }


def correlations(judge: Sequence[float | None], human: Sequence[float | None]) -> dict[str, Any]:
    """Pearson, Spearman and Kendall tau-b over the pairs where both scores exist.

    A coefficient is ``None`` with a reason when it is undefined (fewer than 2 pairs,
    or one side constant).
    """
    from scipy.stats import pearsonr, spearmanr

    pairs = [(float(j), float(h)) for j, h in zip(judge, human, strict=True) if j is not None and h is not None]
    out: dict[str, Any] = {"n": len(pairs), "pearson": None, "spearman": None, "kendall_tau_b": None, "reason": None}
    if len(pairs) < 2:
        out["reason"] = "fewer than 2 pairs"
        return out
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(x)) == 1 or len(set(y)) == 1:
        out["reason"] = "one side is constant"
        return out
    out["pearson"] = float(pearsonr(x, y).statistic)
    out["spearman"] = float(spearmanr(x, y).statistic)
    out["kendall_tau_b"] = kendall_tau_b(x, y).tau
    return out


def _turn_overall(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], float]:
    return {
        (r["id"], t["turn"]): float(t["scores"]["Overall Score"])
        for r in records
        for t in r["turns"]
        if t.get("judge_status") == "ok" and t["scores"].get("Overall Score") is not None
    }


def human_agreement(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Judge vs expert Overall scores, per turn and per dialogue (means over turns both scored)."""
    rated = [(r["id"], t) for r in records for t in r["turns"] if t.get("human") is not None]
    if not rated:
        return None
    judge = _turn_overall(records)
    keys = [(rid, t["turn"]) for rid, t in rated]
    human = {(rid, t["turn"]): float(t["human"]) for rid, t in rated}
    turn_level = correlations([judge.get(k) for k in keys], [human[k] for k in keys])
    by_dialogue: dict[str, list[tuple[float, float]]] = {}
    for k in keys:
        if k in judge:
            by_dialogue.setdefault(k[0], []).append((judge[k], human[k]))
    dialogue_level = correlations(
        [fmean(p[0] for p in v) for v in by_dialogue.values()], [fmean(p[1] for p in v) for v in by_dialogue.values()]
    )
    return {"rated_turns": len(rated), "judge_missing": sum(1 for k in keys if k not in judge), "turns": turn_level, "dialogues": dialogue_level}


def judge_agreement(runs: Mapping[str, Sequence[Mapping[str, Any]]], aggregation: str = "dialogue") -> dict[str, Any]:
    """The paper's consistency study: the same answers judged by several judges.

    ``runs`` maps a judge label to its records. Returns each judge's benchmark scores
    (x10, the paper's Table 4) and, per pair of judges, the correlation of their
    Overall scores on the turns both scored, with the mean absolute difference. Turns
    whose answer texts differ between the runs are left out and counted.
    """
    if len(runs) < 2:
        raise ValueError("judge agreement needs the records of at least two judges")
    judges = {label: benchmark_scores(records, aggregation) for label, records in runs.items()}
    overall = {label: _turn_overall(records) for label, records in runs.items()}
    answers = {label: {(r["id"], t["turn"]): t.get("answer") for r in records for t in r["turns"]} for label, records in runs.items()}
    pairs = []
    for a, b in combinations(runs, 2):
        both = set(overall[a]) & set(overall[b])
        common = sorted(k for k in both if answers[a][k] == answers[b][k])
        xs, ys = [overall[a][k] for k in common], [overall[b][k] for k in common]
        pairs.append(
            {
                "a": a,
                "b": b,
                "different_answers": len(both) - len(common),  # judged different texts: not comparable, left out
                **correlations(xs, ys),
                "mean_abs_diff": fmean(abs(x - y) for x, y in zip(xs, ys)) if common else None,
                "mean_diff_x10": SCALE * fmean(x - y for x, y in zip(xs, ys)) if common else None,
            }
        )
    return {"aggregation": aggregation, "judges": judges, "pairs": pairs}


def scores_table(summaries: Mapping[str, Mapping[str, Any]], label: str = "judge", intervals: bool = False) -> list[str]:
    """Rows of the paper's tables: one line per summary, dimensions x10, Overall last; with
    ``intervals``, each summary's 95% intervals on the line below its scores."""
    rows = []
    for name, s in summaries.items():
        rows.append([cell(name), *(num(s["dimensions"][d]["score"], 1) for d in DIMENSIONS)])
        if intervals:
            rows.append(["95% CI", *(ci(s["dimensions"][d].get("ci"), 1) for d in DIMENSIONS)])
    return markdown_table([label, *(SHORT[d] for d in DIMENSIONS)], rows, "l" + "r" * len(DIMENSIONS))


def agreement_table(result: Mapping[str, Any]) -> str:
    """Markdown of :func:`judge_agreement`: scores per judge, then agreement per pair."""
    lines = ["Scores per judge (x10):", "", *scores_table(result["judges"])]
    lines += [
        "",
        "Agreement on Overall scores of the turns both judges scored:",
        "",
        *markdown_table(
            ["judge A", "judge B", "turns", "Pearson", "Spearman", "Kendall tau-b", "mean abs. diff (1-10)", "A - B (x10)",
             "different answers (left out)"],
            [
                [cell(p["a"]), cell(p["b"]), p["n"], *(num(p[k], 3) for k in ("pearson", "spearman", "kendall_tau_b")),
                 num(p["mean_abs_diff"], 2), num(p["mean_diff_x10"], 1), p["different_answers"]]
                for p in result["pairs"]
            ],
            "llrrrrrrr",
        ),
    ]
    return "\n".join(lines)
