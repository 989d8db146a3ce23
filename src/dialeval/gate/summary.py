"""The Markdown summary of a gate, for a CI job's page (e.g. ``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

from dialeval.gate.evaluate import GateResult, Outcome
from dialeval.report.tables import cell, markdown_table, num


def worst_lines(outcome: Outcome) -> list[str]:
    """The units that dropped most under a regression rule, as a small table."""
    worst = outcome.detail.get("worst") or []
    if not worst:
        return []
    rows = [[cell(w["unit"]), num(w["baseline"], 3), num(w["run"], 3), num(w["change"], 3, signed=True)] for w in worst]
    return ["", f"Largest drops of {outcome.detail['dimension']}:", "", *markdown_table(["unit", "baseline", "run", "change"], rows, "lrrr")]


def summary_markdown(result: GateResult) -> str:
    """A heading with the verdict, one row per rule, then the regressions' worst units."""
    failed = [o for o in result.outcomes if o.failed]
    undecided = [o for o in result.outcomes if o.status == "undecided"]
    verdict = "passed" if not failed else f"failed ({len(failed)} of {len(result.outcomes)} rules)"
    verdict += f", {len(undecided)} undecided" if undecided else ""
    lines = [f"## dialeval gate: {verdict}", "", f"Run: `{result.run}`" + (f"; baseline: `{result.baseline}`" if result.baseline else ""), ""]
    lines += [f"**--allow-incomplete: judged although {cell(r)}.**" for r in result.allowed_incomplete]
    lines += [""] if result.allowed_incomplete else []
    shown = {"pass": "pass", "fail": "**FAIL**", "undecided": "undecided"}
    rows = [[shown[o.status], cell(o.rule), cell(o.message)] for o in result.outcomes]
    lines += markdown_table(["result", "rule", "what was found"], rows, "lll")
    if undecided:
        lines += ["", *(f"- undecided: {cell(o.rule)}: {cell(o.detail.get('reason') or o.message)}" for o in undecided)]
    for outcome in result.outcomes:
        if "decision" in outcome.detail:
            d = outcome.detail["decision"]
            lines += ["", f"Sequential decision for {outcome.detail['dimension']}: {d['decision']} after {d['units_used']} of "
                      f"{d['units']} units (anytime-valid 95% confidence sequence; {d['units'] - d['units_used']} units' calls not needed)."]
        lines += worst_lines(outcome)
    return "\n".join(lines) + "\n"
