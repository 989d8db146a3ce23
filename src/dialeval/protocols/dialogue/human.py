"""The judge's agreement with human labels (option ``human_scores``), beside the humans' own.

Labels are read by :mod:`dialeval.conversation.labels` (several annotators per
unit, combined by a named rule). Per criterion: Spearman, Kendall tau-b and
Krippendorff's alpha (ordinal) of the judge against the combined label, each with a 95%
bootstrap CI; and the human ceiling (:func:`human_ceiling`): alpha among the annotators,
each annotator against the mean of the others, and the judge against the same means in
each annotator's place (a judge read against the mean of all would be favoured). ``None``
where undefined.
"""

from __future__ import annotations

from typing import Any

from dialeval.metrics.alpha import ALPHA_LEVEL
from dialeval.metrics.annotators import annotator_agreement
from dialeval.metrics.judge_agreement import STATISTICS, paired_agreement
from dialeval.conversation.labels import Labels, Rating, Rule, load_labels
from dialeval.report.compare_notes import Footnotes, undefined
from dialeval.report.tables import cell, markdown_table, num

__all__ = ["Labels", "Rating", "Rule", "load_labels", "agreement", "human_ceiling", "agreement_table"]
JUDGE = "judge"  # the run's judge, among the ceiling's readings


def human_ceiling(labels: Labels, criterion: str, judge: dict[str, float] | None = None) -> dict[str, Any]:
    """How far the annotators agree among themselves on ``criterion`` (see
    :func:`dialeval.metrics.annotators.annotator_agreement`): alpha with its CI, each
    annotator against the mean of the others (``leave_one_out``), and the ``judge``'s
    scores read the same way, in each annotator's place (``judges.judge``)."""
    table = {unit: scores for (unit, name), scores in labels.by_unit().items() if name == criterion}
    return annotator_agreement(table, {JUDGE: judge} if judge is not None else None)


def agreement(scores: dict[str, dict[str, float]], labels: Labels) -> dict[str, dict[str, Any]]:
    """Per criterion: n paired units, the judge's three statistics with CIs against the
    labels combined by ``labels.rule``, and the human ceiling with the judge held to it
    (judge ``scores`` as :func:`item_scores` gives them, readable verdicts only)."""
    combined = labels.per_criterion()
    out: dict[str, dict[str, Any]] = {}
    for criterion, human in combined.items():
        units = [u for u in human if u in scores.get(criterion, {})]
        judge = [scores[criterion][u] for u in units]
        row = out[criterion] = {
            "n": len(units),
            "labels": sum(1 for r in labels.ratings if r.criterion == criterion),
            "rule": labels.rule,
            "alpha_level": ALPHA_LEVEL,
            **paired_agreement(judge, [human[u] for u in units]),
            "human": human_ceiling(labels, criterion, scores.get(criterion, {})),
        }
        why = undefined({"the judge": judge, "the humans": [human[u] for u in units]}, 3)
        row["not_computed"] = {k: why for k in STATISTICS if row[k]["value"] is None} if why else {}
    return out


def _with_ci(stat: dict[str, float | None] | None) -> str:
    if not stat or stat["value"] is None or stat["ci_low"] is None:
        return num(stat["value"] if stat else None)
    return f"{num(stat['value'])} [{num(stat['ci_low'])}, {num(stat['ci_high'])}]"


def agreement_table(rows: dict[str, dict[str, Any]], summary: dict[str, Any] | None = None) -> str:
    """The judge's figures against the combined labels; then the ceiling: the annotators
    each against the others' mean, and the judge in their place, read alike."""
    alpha = f"Krippendorff's alpha ({ALPHA_LEVEL})"
    headers = ["criterion", "paired units", "labels", "Spearman", "Kendall tau-b", alpha]
    notes = Footnotes()
    body = [[cell(name), row["n"], row["labels"], *(notes.mark(row["not_computed"][k]) if k in row.get("not_computed", {})
                                                    else _with_ci(row[k]) for k in STATISTICS)] for name, row in rows.items()]
    rule = next((row.get("rule") for row in rows.values() if row.get("rule")), "mean")
    lines = [f"Agreement of the judge with the human labels ({rule} of the annotators per unit; 95% bootstrap CI):", "",
             *markdown_table(headers, body, "lrrlll"), *notes.lines()]
    ceiling = []
    for name, row in rows.items():
        human = row.get("human") or {}
        if not human.get("leave_one_out"):
            continue
        among = f"{human['annotators']} annotators, alpha among them {_with_ci(human['alpha'])}"
        judge = (human.get("judges") or {}).get(JUDGE) or {}
        ceiling += [[cell(name), f"humans ({among})", human["multi_labelled"], *(_with_ci(human["leave_one_out"][k]) for k in STATISTICS)],
                    [cell(name), "judge, in each annotator's place", judge.get("units", 0), *(_with_ci(judge.get(k)) for k in STATISTICS)]]
    if ceiling:
        lines += ["", "The ceiling: each annotator against the mean of the others, and the judge against the same means "
                  "(each annotator left out in turn, averaged), on the units with two or more labels (95% bootstrap CI):", "",
                  *markdown_table(["criterion", "who", "units", "Spearman", "Kendall tau-b", alpha], ceiling, "llrlll")]
    return "\n".join(lines + label_notes(summary or {}))


def label_notes(summary: dict[str, Any]) -> list[str]:
    """What the labels file held besides labels: answers without one (by kind), rows read
    twice, unknown units, and how split majorities were broken."""
    lines = []
    if summary.get("majority_tie"):
        ties = summary.get("ties") or {}
        lines.append("Split majorities: " + "; ".join(f"{cell(c)}: {ties.get(c, 0)} units, to the {rule} label" if rule != "drop"
                                                      else f"{cell(c)}: {ties.get(c, 0)} units, dropped"
                                                      for c, rule in summary["majority_tie"].items()) + " (option majority_tie).")
    if summary.get("no_label") or summary.get("unknown") or summary.get("duplicates"):
        kinds = ", ".join(f"{n} {cell(kind)}" for kind, n in (summary.get("no_label_by_kind") or {}).items())
        lines.append(f"Labels file {cell(summary['file'])}: {summary['no_label']} answers without a label"
                     + (f" ({kinds})" if kinds else "") + f" left out, {summary.get('units_without_label', 0)} units with no label "
                     f"left; {summary.get('duplicates', 0)} rows repeated exactly, read once; {summary['unknown']} labels for a "
                     "criterion or unit that is not there skipped.")
        lines += [f"- {cell(w)}" for w in summary.get("warnings", [])[:5]]
    return ["", *lines] if lines else []
