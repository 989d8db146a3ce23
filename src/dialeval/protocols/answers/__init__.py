"""`answers`: grade system answers against references with one judge (the smallest protocol)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from dialeval.benchmarks import Benchmark, RunFacts, register_benchmark
from dialeval.config import parse_options
from dialeval.protocols.answers.data import AnswerItem, load_answers
from dialeval.metrics.paired import system_tests
from dialeval.metrics.scores import mean_or_none, scale_to_unit
from dialeval.protocols.answers.common import ROLES
from dialeval.report.paired import system_test_lines
from dialeval.report.tables import cell, markdown_table, num
from dialeval.protocols.answers import judge  # noqa: F401  (registers the agents)


class AnswersOptions(BaseModel):
    """``options:`` of an answers run: none yet, so any key given is a mistake to name."""

    model_config = ConfigDict(extra="forbid")


def load(path: Path, options: dict[str, Any]) -> list[AnswerItem]:
    """The answers file, after the options are checked as every benchmark checks them."""
    parse_options(AnswersOptions, options, "answers")
    return load_answers(path)


def _graph():
    from dialeval.protocols.answers.graph import build_graph

    return build_graph()


def to_input(item: AnswerItem, options: dict[str, Any]) -> dict[str, Any]:
    return item.model_dump()


def to_record(item: AnswerItem, state: dict[str, Any]) -> dict[str, Any]:
    grade = state["grade"]
    score = grade["value"]["score"] if grade["status"] == "ok" else None
    return {"id": item.id, "system": item.system, "pair": item.pair_key, "score": score, "calls": [grade]}


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    systems: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        systems.setdefault(r["system"], []).append(r)
    table = {}
    for name, rows in sorted(systems.items()):
        scores = [r["score"] for r in rows if r["score"] is not None]
        mean = mean_or_none(scores)
        unread = [_status(r) for r in rows if r["score"] is None]
        table[name] = {
            "items": len(rows),
            "scored": len(scores),
            "unparsed": len(unread) - unread.count("truncated"),  # unreadable verdicts
            "truncated": unread.count("truncated"),  # verdicts cut off at the token limit
            "mean_score": mean,
            "mean_scaled": None if mean is None else scale_to_unit(mean, 1, 5),
        }
    by_system = {name: {"score (1-5)": {r.get("pair", r["id"]): r["score"] for r in rows}} for name, rows in systems.items()}
    return {"systems": table, "system_tests": system_tests(by_system)}


def _status(record: dict[str, Any]) -> str:
    """How the judge's call ended (``truncated``: cut off at the token limit)."""
    calls = record.get("calls") or [{}]
    return str(calls[-1].get("status", "unparsed"))


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {"score (1-5)": [r["score"] for r in records if r["score"] is not None]}


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The judge's 1-5 score per item, readable answers only (for `dialeval compare`)."""
    return {"score (1-5)": {r["id"]: r["score"] for r in records if r["score"] is not None}}


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


register_benchmark(
    Benchmark(
        name="answers",
        title="Answer grading with one judge (1-5 against a reference)",
        paper="a generic protocol, no paper",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        item_scores=item_scores,
        describe=describe,
        calls_per_item=lambda item, options: 1,  # one judge call per answer (retries are part of it)
    )
)
