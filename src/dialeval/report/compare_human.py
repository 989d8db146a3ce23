"""``dialeval compare --human``: human labels read as one more run, and the ceiling they set.

Why apart from compare: the labels are read by the benchmark with a run's own option
files, and the ceiling (:mod:`dialeval.metrics.ceiling`) holds each run's judge to the
annotators the way they are held to each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.errors import CompareError
from dialeval.metrics.alpha import ALPHA_LEVEL
from dialeval.report.results import RunData
from dialeval.report.tables import cell, markdown_table, num

RANKED = ("spearman", "kendall_tau_b", "krippendorff_alpha")  # the ceiling's figures


def human_scores(bench: Any, run: RunData, label: str, path: str | Path) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Human labels as scores per dimension and unit, read by the benchmark with the first
    run's options (``label``: that run's name in the comparison), and per dimension each annotator's labels (where the benchmark gives
    them); a file an option named (a rubric) is the run's own copy of it (``option_files``
    in its metrics), not a path relative to the current folder."""
    import tempfile

    if bench.human_scores is None:
        raise CompareError(f"benchmark {bench.name!r} does not read human labels (Benchmark.human_scores)")
    options = dict(run.config.get("options") or {})
    saved = run.metrics.get("option_files") or {}
    with tempfile.TemporaryDirectory(prefix="dialeval-compare-") as folder:
        for key, copy in saved.items():
            if key in options and isinstance(copy, dict) and isinstance(copy.get("text"), str):
                written = Path(folder) / key / Path(str(copy.get("name") or key)).name
                written.parent.mkdir()
                written.write_text(copy["text"], encoding="utf-8")
                options[key] = str(written)
        scores = bench.human_scores(Path(path), options)
        ratings = bench.human_ratings(Path(path), options) if bench.human_ratings else {}
    if not any(set(units) & set(run.scores().get(dim, {})) for dim, units in scores.items()):
        named = sum(len(units) for units in scores.values())
        raise CompareError(f"{path}: none of its {named} labelled units is a unit {label} scored "
                           "(ids are conversation ids; turns count every message from 1; criteria as in the rubric)")
    return scores, ratings


def ceiling_of(ratings: dict[str, dict[str, dict[str, float]]], runs: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any]:
    """Per dimension the annotators' own agreement, and each run's judge held to it: in each
    annotator's place, against the mean of the others (never the mean of all)."""
    from dialeval.metrics.annotators import annotator_agreement

    return {dim: annotator_agreement(units, {label: s.get(dim, {}) for label, s in runs.items() if s.get(dim)})
            for dim, units in ratings.items()}


def ceiling_table(ceiling: dict[str, Any]) -> list[str]:
    """The annotators' own agreement per dimension, each against the mean of the others, and
    each run's judge in their place: the ceiling for the rows against the humans."""
    rows = []
    for dim, c in ceiling.items():
        if c["annotators"] < 2 or not c.get("leave_one_out"):
            continue
        rows.append([cell(dim), f"humans ({c['annotators']} annotators; alpha among them {_interval(c['alpha'])})",
                     c["multi_labelled"], *(_interval(c["leave_one_out"][k]) for k in RANKED)])
        rows += [[cell(dim), f"{cell(judge)}, in each annotator's place", figures["units"], *(_interval(figures[k]) for k in RANKED)]
                 for judge, figures in (c.get("judges") or {}).items()]
    if not rows:
        return []
    return ["The ceiling: each annotator against the mean of the others, and each run's judge against the same means "
            "(each annotator left out in turn, averaged), on the units with two or more labels (95% bootstrap CI):", "",
            *markdown_table(["dimension", "who", "units", "Spearman", "Kendall tau-b", f"alpha ({ALPHA_LEVEL})"], rows, "llrlll"), ""]


def _interval(stat: dict[str, Any]) -> str:
    if stat.get("value") is None or stat.get("ci_low") is None:
        return num(stat.get("value"), 3)
    return f"{num(stat['value'], 3)} [{num(stat['ci_low'], 3)}, {num(stat['ci_high'], 3)}]"
