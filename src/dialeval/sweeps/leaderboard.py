"""A sweep's leaderboard: each model's headline figures with 95% intervals, and ranks that
tie where the units cannot separate two models.

Why ranks with ties: two means 0.1 apart on twelve units say nothing about which model
is better. Every pair of models is compared on the units both scored, with the one paired
test of ``metrics/`` (:func:`pair_p`, the only call to it, so a better test drops in),
the p-values corrected together by Holm; a model's rank is one more than the number of
models separated from it and above it, so models no test separates share a rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.metrics.intervals import mean_with_interval
from dialeval.metrics.multiple import holm

ALPHA = 0.05  # family-wise: the chance that any pair is separated by chance alone


@dataclass
class Entry:
    """One model's run as the leaderboard reads it."""

    model: str
    run_dir: Path
    scores: dict[str, dict[str, float]]  # dimension -> unit -> score (the benchmark's item_scores)
    items: int
    failed: int
    cost_usd: float | None  # None: a model without a known price
    seconds: float  # item evaluation time, summed over items (resumed sessions included)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for dim, units in self.scores.items():
            values = list(units.values())
            mean, ci = mean_with_interval(values)
            figure: dict[str, Any] = {"mean": mean, "ci": None if ci is None else [ci[0], ci[1]], "n": len(units)}
            if figure["ci"] is None:  # never a zero-width interval: the units cannot show the spread
                same = len(values) > 1 and len(set(values)) == 1
                figure["ci_reason"] = f"{len(units)} unit(s)" + (", every one scored the same" if same else ": an interval needs 2")
            self.figures[dim] = figure


def pair_p(a: dict[str, float], b: dict[str, float]) -> dict[str, Any]:
    """The paired test of two models on the units both scored: ``n``, ``mean_diff`` (b - a)
    and ``p`` (``None``: no unit, or no unit where they differ). The one place the test is called."""
    from dialeval.metrics.paired import paired_test

    out = paired_test(dict(a), dict(b))
    return {"n": out["n"], "mean_diff": out.get("mean_diff"), "p": out.get("p_value")}


def rank(entries: list[Entry], dimension: str, alpha: float = ALPHA) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Ranks on ``dimension`` (higher is better) and the pairwise tests behind them."""
    scored = [e for e in entries if e.figures.get(dimension, {}).get("mean") is not None]
    pairs = []
    for i, a in enumerate(scored):
        for b in scored[i + 1:]:
            pairs.append({"a": a.model, "b": b.model, **pair_p(a.scores[dimension], b.scores[dimension])})
    for pair, adjusted in zip(pairs, holm([p["p"] for p in pairs])):
        pair["p_holm"] = adjusted
        pair["separated"] = adjusted is not None and adjusted < alpha and bool(pair["mean_diff"])
        pair["better"] = (pair["b"] if pair["mean_diff"] > 0 else pair["a"]) if pair["separated"] else None
    above = {e.model: sum(1 for p in pairs if p["better"] not in (None, e.model) and e.model in (p["a"], p["b"])) for e in scored}
    return {model: 1 + n for model, n in above.items()}, pairs


def leaderboard(entries: list[Entry], dimension: str, info: dict[str, Any], alpha: float = ALPHA) -> dict[str, Any]:
    """``leaderboard.json``'s content: the models in rank order (then by mean), the pairs."""
    ranks, pairs = rank(entries, dimension, alpha)

    def order(e: Entry) -> tuple[int, float]:
        return ranks.get(e.model, len(entries) + 1), -(e.figures.get(dimension, {}).get("mean") or float("-inf"))

    models = [{
        "rank": ranks.get(e.model), "tied": sum(1 for r in ranks.values() if r == ranks.get(e.model)) > 1,
        "model": e.model, "run": str(e.run_dir), "items": e.items, "failed": e.failed, "complete": e.failed == 0,
        "cost_usd": e.cost_usd, "seconds": round(e.seconds, 3), "figures": e.figures,
    } for e in sorted(entries, key=order)]
    return {**info, "rank_by": dimension, "alpha": alpha, "correction": "holm", "models": models, "pairs": pairs}


def markdown(board: dict[str, Any], sweep_dir: Path) -> str:
    """``leaderboard.md``: the ranking table, every figure with its interval, and the pairs."""
    from dialeval.report.tables import cell, ci, code, markdown_table, num

    dim = board["rank_by"]
    lines = [f"# Leaderboard: {board['benchmark']}", "", f"- data: {code(board['data'])}",
             f"- ranked by {code(dim)} (higher is better); 95% CI: bootstrap interval over units",
             f"- ties: models whose paired test on the same units (Holm-corrected over {len(board['pairs'])} pairs, "
             f"alpha {board['alpha']}) does not separate them share a rank", ""]
    rows = []
    for m in board["models"]:
        f = m["figures"].get(dim) or {}
        run = Path(m["run"])
        link = f"[{cell(run.name)}]({relative(run / 'report.md', sweep_dir)})"
        rows.append([f"{m['rank']}{' (tie)' if m['tied'] else ''}" if m["rank"] else "-", code(m["model"], table=True),
                     num(f.get("mean"), 3), ci(f.get("ci"), 3) if f.get("ci") or not f.get("ci_reason") else cell(f"n/a ({f['ci_reason']})"), f.get("n", 0), "n/a" if m["cost_usd"] is None else f"{m['cost_usd']:.4f}",
                     f"{m['seconds']:.1f}", "yes" if m["complete"] else f"no ({m['failed']} failed)", link])
    lines += markdown_table(["rank", "model", "mean", "95% CI", "n", "cost (USD)", "time (s)", "complete", "run"], rows, "llrrrrrll")
    dims = sorted({d for m in board["models"] for d in m["figures"]})
    if len(dims) > 1:
        lines += ["", "Every figure (mean [95% CI]):", ""]
        lines += markdown_table(["model", *(cell(d) for d in dims)], [
            [code(m["model"], table=True), *(f"{num((m['figures'].get(d) or {}).get('mean'), 3)} {ci((m['figures'].get(d) or {}).get('ci'), 3)}"
                                             for d in dims)] for m in board["models"]], "l" + "r" * len(dims))
    if board["pairs"]:
        lines += ["", f"Pairs on {code(dim)} (difference B - A on the units both scored):", ""]
        lines += markdown_table(["A", "B", "n", "B - A", "p", "p (Holm)", "verdict"], [
            [code(p["a"], table=True), code(p["b"], table=True), p["n"], num(p["mean_diff"], 3, signed=True), num(p["p"], 4),
             num(p["p_holm"], 4), f"{code(p['better'], table=True)} better" if p["separated"] else "not separated"]
            for p in board["pairs"]], "llrrrrl")
    return "\n".join(lines) + "\n"


def relative(path: Path, start: Path) -> str:
    """``path`` as a link from a page in ``start`` (``../../runs/<run>/report.md``)."""
    import os

    return Path(os.path.relpath(Path(path).resolve(), start.resolve())).as_posix()
