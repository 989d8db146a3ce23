"""Which candidate the figures support: the cheapest one whose agreement is close to the best (pure).

Close means a mean Krippendorff's alpha (over the labelled criteria) at most
``tolerance`` below the best candidate's. Among those, a candidate that fails no probe
is preferred; if every close one fails some probe, the cheapest is named with its
failures. A candidate whose cost is unknown (no price) ranks after the priced ones. The
sentence says what the figures support on these units, never that the judge is right.
"""

from __future__ import annotations

from typing import Any

TOLERANCE = 0.05
ALPHA_FLOOR = 0.2  # a mean alpha below this is not "agreeing with the humans", whatever its CI


def fixed(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, never ``-0.000``."""
    return f"{round(value, digits) + 0.0:.{digits}f}"


def above_chance(row: dict[str, Any]) -> bool:
    """The candidate's agreement is clearly above chance: mean alpha at least
    :data:`ALPHA_FLOOR` and no criterion's alpha CI reaching down to 0."""
    lows = [(a.get("krippendorff_alpha") or {}).get("ci_low") for a in (row.get("agreement") or {}).values()]
    return row["alpha"] >= ALPHA_FLOOR and all(low is None or low > 0 for low in lows)


def _cost_key(row: dict[str, Any]) -> tuple[bool, float]:
    cost = row.get("cost_per_1000_units")
    return (cost is None, cost if cost is not None else 0.0)


def recommend(rows: list[dict[str, Any]], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """``rows``: one per candidate with ``label``, ``alpha`` (headline agreement),
    ``cost_per_1000_units`` and ``failed_probes``. Returns the pick and why."""
    measured = [r for r in rows if r.get("alpha") is not None]
    if not measured:
        return {"label": None, "tolerance": tolerance, "best_alpha": None, "close": [],
                "sentence": "No candidate has an agreement figure (too few labelled units, or every verdict was unreadable): "
                            "the card supports no recommendation."}
    best = max(r["alpha"] for r in measured)
    close = sorted((r for r in measured if r["alpha"] >= best - tolerance), key=_cost_key)
    clean = [r for r in close if not r["failed_probes"]]
    pick = (clean or close)[0]
    if not above_chance(pick):
        return {"label": None, "closest": pick["label"], "tolerance": tolerance, "best_alpha": best,
                "close": [r["label"] for r in close],
                "sentence": f"No candidate is shown to agree with the humans: the closest, {pick['label']}, has a mean alpha "
                            f"of {fixed(pick['alpha'])}, below {ALPHA_FLOOR:g} or with a 95% CI that reaches 0 (chance). "
                            "The card supports no recommendation; more labelled units or other judges may."}
    cost = pick.get("cost_per_1000_units")
    price = f"${cost:.4g} per 1,000 units" if cost is not None else "an unknown cost (no price)"
    standing = ("the best of the candidates" if pick["alpha"] == best else
                f"within {tolerance:g} of the best candidate's ({fixed(best)})")
    priced = any(r.get("cost_per_1000_units") is not None for r in close)
    which = "the cheapest candidate" if priced else "(no candidate has a price) the first candidate"
    sentence = (f"Use **{pick['label']}**: its agreement with the humans (mean alpha {fixed(pick['alpha'])}) is {standing}, "
                f"and it is {which} within {tolerance:g} of the best"
                + (" that fails no probe" if clean and len(clean) < len(close) else "") + f", at {price}.")
    if pick["failed_probes"]:
        sentence += f" It fails these probes: {', '.join(pick['failed_probes'])}; read its scores with that in mind."
    others = [f"{r['label']} ({', '.join(r['failed_probes'])})" for r in rows if r["failed_probes"] and r is not pick]
    if others:
        sentence += f" Probes failed by the others: {'; '.join(others)}."
    sentence += " This is what the figures on these labelled units support, not a guarantee on other data."
    return {"label": pick["label"], "tolerance": tolerance, "best_alpha": best, "close": [r["label"] for r in close],
            "sentence": sentence}
