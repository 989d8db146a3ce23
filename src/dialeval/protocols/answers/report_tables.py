"""The `answers` report: its table per system, the paired tests and what the run graded."""

from __future__ import annotations

from typing import Any

from dialeval.benchmarks import RunFacts
from dialeval.report.paired import system_test_lines
from dialeval.report.tables import cell, markdown_table, num


def tables(metrics: dict[str, Any]) -> str:
    return "\n".join(markdown_table(
        ["system", "items", "scored", "unparsed", "truncated", "mean (1-5)", "scaled (0-1)"],
        [
            [cell(name), row["items"], row["scored"], row["unparsed"], row.get("truncated", 0), num(row["mean_score"]), num(row["mean_scaled"], 3)]
            for name, row in metrics["systems"].items()
        ],
        "lrrrrrr",
    ) + system_test_lines(metrics.get("system_tests") or [], unit="question"))


def describe(run: RunFacts) -> str:
    """The answers of the data file and the judge that graded them."""
    return f"the answers in `{run.data}`, graded 1-5 by `{run.model('judge')}` against each record's reference"
