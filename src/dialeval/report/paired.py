"""The report table of paired tests between the systems of one run (any benchmark)."""

from __future__ import annotations

from typing import Any

from dialeval.metrics.paired import FEW_UNITS
from dialeval.report.tables import cell, num, row, rule


def system_test_lines(tests: list[dict[str, Any]], *, unit: str, scores: str = "", compared: str = "Systems") -> list[str]:
    """Each pair of systems per dimension, over the ``unit``s (turns, questions) both were
    scored on (``scores`` says which, e.g. "headline scores"; ``compared`` names what is paired); empty when the run had one system."""
    if not tests:
        return []
    units = f"{unit}s"
    which = f", {scores}" if scores else ""
    lines = [
        "",
        f"{compared} compared {unit} by {unit} (paired over the {units} both were scored on{which}): B - A with "
        "the 95% CI and two-sided p of dialeval's paired test (exact sign-flip up to 16 units, a t interval "
        f"held to the scale's variance at every n; docs/gate.md). `few` marks fewer than {FEW_UNITS} shared {units}.",
        "",
        row(["dimension", "A", "B", "n", "only A", "only B", "mean A", "mean B", "B - A [95% CI]", "p"]),
        rule("lllrrrrrlr"),
    ]
    for t in tests:
        ci = f"{num(t['mean_diff'], 3, signed=True)} [{num(t['ci_low'], 3)}, {num(t['ci_high'], 3)}]"
        lines.append(row([
            t["dimension"], cell(t["a"]), cell(t["b"]), f"{t['n']}" + (" (few)" if t["few_units"] else ""), t["only_a"], t["only_b"],
            num(t["mean_a"], 3), num(t["mean_b"], 3), ci, num(t.get("p_value", t.get("p_permutation")), 4),
        ]))
    return lines
