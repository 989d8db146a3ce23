"""Which candidate the figures support: the cheapest one whose agreement is close to the best (pure).

Close means a mean Krippendorff's alpha (over the labelled criteria) at most
``tolerance`` below the best candidate's; a close candidate must also agree above chance
(:func:`failed_conditions`). Among those, a candidate that fails no probe is preferred;
if every one fails some probe, the cheapest is named with its failures; if none is left,
the card names the conditions each candidate failed. A candidate whose cost is unknown (no price) ranks after the priced ones. The
sentence says what the figures support on these units, never that the judge is right.
"""

from __future__ import annotations

from typing import Any

TOLERANCE = 0.05
ALPHA_FLOOR = 0.2  # a mean alpha below this is not "agreeing with the humans", whatever its CI


def fixed(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, never ``-0.000``."""
    return f"{round(value, digits) + 0.0:.{digits}f}"


def failed_conditions(row: dict[str, Any], best: float | None, tolerance: float) -> list[str]:
    """Why ``row`` cannot be recommended, one phrase per condition it fails (none: it can):
    an agreement figure exists, mean alpha at least :data:`ALPHA_FLOOR`, no criterion's
    alpha CI reaching down to 0 (chance), and mean alpha within ``tolerance`` of the best."""
    if row.get("alpha") is None:
        return ["no agreement figure (too few labelled units, or every verdict was unreadable)"]
    out = []
    if row["alpha"] < ALPHA_FLOOR:
        out.append(f"mean alpha {fixed(row['alpha'])} is below {ALPHA_FLOOR:g}")
    for key, figures in (row.get("agreement") or {}).items():
        low = (figures.get("krippendorff_alpha") or {}).get("ci_low")
        if low is not None and low <= 0:
            out.append(f"the 95% CI of alpha on {key} reaches {fixed(low)} (0 is chance)")
    if best is not None and row["alpha"] < best - tolerance:
        out.append(f"mean alpha {fixed(row['alpha'])} is more than {tolerance:g} below the best ({fixed(best)})")
    return out


def above_chance(row: dict[str, Any]) -> bool:
    """The candidate's agreement is clearly above chance: mean alpha at least
    :data:`ALPHA_FLOOR` and no criterion's alpha CI reaching down to 0."""
    return row.get("alpha") is not None and not failed_conditions(row, None, 0.0)


def _cost_key(row: dict[str, Any]) -> tuple[bool, float]:
    cost = row.get("cost_per_1000_units")
    return (cost is None, cost if cost is not None else 0.0)


def recommend(rows: list[dict[str, Any]], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """``rows``: one per candidate with ``label``, ``alpha`` (headline agreement),
    ``cost_per_1000_units`` and ``failed_probes``. Returns the pick and why; without a
    pick, ``why_not`` names the conditions each candidate failed."""
    measured = [r for r in rows if r.get("alpha") is not None]
    best = max((r["alpha"] for r in measured), default=None)
    why_not = {r["label"]: failed_conditions(r, best, tolerance) for r in rows}
    close = sorted((r for r in measured if best is not None and r["alpha"] >= best - tolerance), key=_cost_key)
    eligible = [r for r in close if not why_not[r["label"]]]
    if not eligible:
        reasons = "; ".join(f"{r['label']}: {', '.join(why_not[r['label']])}" for r in rows)
        head = ("No candidate has an agreement figure" if not measured else "No candidate is shown to agree with the humans")
        return {"label": None, **({"closest": close[0]["label"]} if close else {}), "tolerance": tolerance, "best_alpha": best,
                "close": [r["label"] for r in close], "why_not": why_not,
                "sentence": f"{head} ({reasons}). The card supports no recommendation; more labelled units or other judges may."}
    assert best is not None  # an eligible candidate has a figure
    clean = [r for r in eligible if not r["failed_probes"]]
    pick = (clean or eligible)[0]
    cost = pick.get("cost_per_1000_units")
    price = f"${cost:.4g} per 1,000 units" if cost is not None else "an unknown cost (no price)"
    standing = ("the best of the candidates" if pick["alpha"] == best else
                f"within {tolerance:g} of the best candidate's ({fixed(best)})")
    priced = any(r.get("cost_per_1000_units") is not None for r in eligible)
    which = "the cheapest candidate" if priced else "(no candidate has a price) the first candidate"
    sentence = (f"Use **{pick['label']}**: its agreement with the humans (mean alpha {fixed(pick['alpha'])}) is {standing}, "
                f"and it is {which} within {tolerance:g} of the best"
                + (" that agrees above chance" if len(eligible) < len(close) else "")
                + (" and" if len(eligible) < len(close) and clean and len(clean) < len(eligible) else "")
                + (" that fails no probe" if clean and len(clean) < len(eligible) else "") + f", at {price}.")
    if pick["failed_probes"]:
        sentence += f" It fails these probes: {', '.join(pick['failed_probes'])}; read its scores with that in mind."
    others = [f"{r['label']} ({', '.join(r['failed_probes'])})" for r in rows if r["failed_probes"] and r is not pick]
    if others:
        sentence += f" Probes failed by the others: {'; '.join(others)}."
    sentence += " This is what the figures on these labelled units support, not a guarantee on other data."
    return {"label": pick["label"], "tolerance": tolerance, "best_alpha": best, "close": [r["label"] for r in close],
            "why_not": {label: why for label, why in why_not.items() if why}, "sentence": sentence}
