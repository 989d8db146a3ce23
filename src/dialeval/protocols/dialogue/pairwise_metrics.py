"""Pure summary of pairwise verdicts (option ``versus``): win rate with a bootstrap CI, and positional bias.

System A is the data file's, B the ``versus`` file's. A unit scores 1 when A wins, 0.5
for a tie (position-inconsistent verdicts included), 0 when B wins; the win rate is
their mean with a 95% bootstrap CI (the one resampler, :mod:`dialeval.metrics.intervals`). The
positional-bias figure is the share of decisive single-order answers that picked the
candidate shown first (0.5: no bias), beside the share of position-inconsistent units.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from dialeval.metrics.intervals import mean_with_interval
from dialeval.report.tables import cell, markdown_table, num

POINTS = {"a": 1.0, "tie": 0.5, "b": 0.0}


def win_rate_ci(points: list[float]) -> tuple[float | None, float | None]:
    """The win rate's 95% interval by the one resampler of ``metrics/intervals.py``; none
    under two units or where every pair was decided alike."""
    ci = mean_with_interval(points)[1]
    return (None, None) if ci is None else ci


def summarize_pairs(units: list[dict[str, Any]]) -> dict[str, Any]:
    decided = [u for u in units if u.get("winner") is not None]
    outcomes = Counter(u["winner"] for u in decided)
    points = [POINTS[u["winner"]] for u in decided]
    first = decisive = 0
    for u in decided:
        for order, pick in zip(("a", "b"), u.get("orders", [])):  # order 0 shows A first, order 1 shows B first
            if pick in ("a", "b"):
                decisive += 1
                first += pick == order
    low, high = win_rate_ci(points)
    failures = Counter(u["status"] for u in units if u.get("winner") is None)
    inconsistent = sum(1 for u in decided if u.get("position_inconsistent"))
    return {
        "n": len(decided),
        "a_wins": outcomes.get("a", 0), "b_wins": outcomes.get("b", 0), "ties": outcomes.get("tie", 0),
        "win_rate_a": float(np.mean(points)) if points else None, "ci_low": low, "ci_high": high,
        "position_inconsistent": inconsistent,
        "position_inconsistent_rate": inconsistent / len(decided) if decided else None,
        "first_position_rate": first / decisive if decisive else None,
        "failures": dict(failures),
    }


def pairwise(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``<level>/<criterion>`` -> summary, over every conversation."""
    units = [u for r in records for u in r.get("pairwise_units", [])]
    keys = list(dict.fromkeys(f"{'turn' if 'turn' in u else u.get('level')}/{u['criterion']}" for u in units))
    return {
        key: summarize_pairs([u for u in units if f"{'turn' if 'turn' in u else u.get('level')}/{u['criterion']}" == key])
        for key in keys
    }


def pairwise_table(summary: dict[str, dict[str, Any]]) -> str:
    headers = ["level/criterion", "n", "A wins", "B wins", "ties", "win rate A [95% CI]", "position-inconsistent", "first-position rate", "failures"]
    rows = [
        [cell(key), row["n"], row["a_wins"], row["b_wins"], row["ties"],
         f"{num(row['win_rate_a'])} [{num(row['ci_low'])}, {num(row['ci_high'])}]", row["position_inconsistent"],
         num(row["first_position_rate"]), ", ".join(f"{k}: {v}" for k, v in row["failures"].items()) or "-"]
        for key, row in summary.items()
    ]
    return "\n".join(["System A (data file) against B (versus file), both orders asked:", "", *markdown_table(headers, rows, "lrrrrlrrl")])


def votes_table(rows: dict[str, dict[str, Any]]) -> str:
    """The judge's agreement with the votes beside the humans' own, S1 and S2."""
    headers = ["level/criterion", "units", "votes", "S1 vote by vote", "S1 vs majority", "S1 humans", "S2 vote by vote",
               "S2 vs majority", "S2 humans", "order-inconsistent verdicts"]
    body = [[cell(key), r["units"], r["votes"], *(f"{num(r[s][k]['agreement'])} (n {r[s][k]['n']})" for s in ("s1", "s2")
                                                 for k in ("vote", "majority", "humans")), r["order_inconsistent"]]
            for key, r in rows.items()]
    return "\n".join(["Agreement with the human votes (S1: ties a third class; S2: votes and verdicts that are ties left out):", "",
                      *markdown_table(headers, body, "lrrllllllr")])
