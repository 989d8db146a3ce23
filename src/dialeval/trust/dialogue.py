"""The trust card's one door into the dialogue benchmark: its data, rubric, labels and scores.

Why one module: the card builds on the dialogue benchmark's public pieces (its loader via
:func:`dialeval.load_dataset`, its registered ``item_scores``), and the few internals it
needs (the rubric, the labels reader) are imported here only, so a change there is one
change here.
"""

from __future__ import annotations

import warnings as _warnings

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.data.io import DataError
from dialeval.conversation.labels import LabelWarning as LabelWarning  # a label left out: counted, listed, warned once

Key = tuple[str, str]  # (unit, criterion): unit is ``<id>/<turn>`` or ``<id>``


@dataclass
class HumanLabels:
    """Every annotator's score per unit and criterion (label ranks for label scales)."""

    by_unit: dict[Key, dict[str, float]]
    levels: dict[str, str]  # dimension -> turn | conversation | summary
    scales: dict[str, tuple[float, float]]  # dimension -> (lowest, highest) score
    names: dict[str, str]  # dimension -> the rubric's criterion name (they differ for a name used at two levels)
    warnings: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)  # what the file held besides labels (N/A by kind, repeats)

    def criteria(self) -> list[str]:
        """The labelled dimensions, as the judge's scores name them."""
        return list(dict.fromkeys(c for _, c in self.by_unit))

    def rubric_criteria(self) -> list[str]:
        """The rubric's names of the labelled criteria (the runs' ``criteria`` option)."""
        return list(dict.fromkeys(self.names.get(c, c) for c in self.criteria()))

    def consensus(self) -> dict[Key, float]:
        """The annotators' mean per unit: the humans' reading the judge is compared with."""
        return {key: sum(s.values()) / len(s) for key, s in self.by_unit.items()}

    def conversations(self) -> list[str]:
        return list(dict.fromkeys(unit.split("/", 1)[0] for unit, _ in self.by_unit))


def load_rubric(ref: str) -> Any:
    from dialeval.conversation.rubric import load_rubric as load

    return load(ref)


def load_conversations(path: str | Path) -> list[Any]:
    """The data file's conversations, checked as a dialogue run checks them."""
    from dialeval.benchmarks import get_benchmark

    return get_benchmark("dialogue").load(Path(path), {})




def read_labels(path: str | Path, rubric: Any, conversations: list[Any]) -> HumanLabels:
    """The labels file, one or several annotators per unit (``annotator`` or a list of
    ``score``s), checked against the rubric and the data."""
    from dialeval.conversation.labels import load_labels

    labels = load_labels(path, rubric, conversations)
    by_unit, warnings = labels.by_unit(), list(labels.warnings)
    if not by_unit:
        raise DataError(path, "no labels for the data's conversations")
    for warning in warnings:
        _warnings.warn(warning, LabelWarning, stacklevel=2)
    known = _dimensions(rubric)
    levels = {d: c.level for d, c in known.items()}
    scales = {d: _bounds(c.scale) for d, c in known.items()}
    summary = {k: v for k, v in labels.summary().items() if k in ("no_label", "no_label_by_kind", "units_without_label", "duplicates")}
    return HumanLabels(by_unit, levels, scales, {d: c.name for d, c in known.items()}, warnings, summary)


def _dimensions(rubric: Any) -> dict[str, Any]:
    """How scores name each criterion: its name, and ``name (level)`` for one that shares its
    name with a turn-level criterion; a bare shared name means the turn-level one."""
    out = {f"{c.name} ({c.level})": c for c in rubric.criteria}
    for c in sorted(rubric.criteria, key=lambda c: c.level == "turn"):  # turn level last: it keeps the bare name
        out[c.name] = c
    return out


def _bounds(scale: Any) -> tuple[float, float]:
    return (float(scale.low), float(scale.high)) if scale.numeric else (1.0, float(len(scale.labels)))


def scores_by_unit(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """criterion -> unit -> the judge's score, read verdicts only (the benchmark's ``item_scores``)."""
    from dialeval.benchmarks import get_benchmark

    scores = get_benchmark("dialogue").item_scores
    assert scores is not None
    return scores(records)


def to_record(conv: Any) -> dict[str, Any]:
    """A loaded conversation back in the data file's form (OpenAI messages), for derived files."""
    messages: list[dict[str, Any]] = []
    for turn in conv.turns:
        content: Any = turn.text
        if turn.images:
            content = [{"type": "text", "text": turn.text}] + [{"type": "image_url", "image_url": {"url": i.source}} for i in turn.images]
        message: dict[str, Any] = {"role": turn.role, "content": content}
        if turn.reference is not None:
            message["reference"] = turn.reference
        messages.append(message)
    record: dict[str, Any] = {"id": conv.id, "messages": messages}
    for key in ("system", "grounding", "metadata", "summary"):
        value = getattr(conv, key)
        if value:
            record[key] = value
    return record


def write_conversations(path: Path, records: list[dict[str, Any]]) -> Path:
    """A derived data file (JSONL), rewritten only when its content changed (a resumed card
    keeps its files, so its run folders keep their ids)."""
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
