"""Human labels as people keep them: several annotators per unit, floats, "N/A" answers.

A labels file (JSON or JSONL) holds one record per label, or per unit with a list of
scores: ``id`` (conversation), ``turn`` (an assistant turn's number; left out for a
conversation-level criterion), ``criterion``, ``score`` (a number or a label on the
criterion's scale, or a list of them: one per annotator) and an optional ``annotator``.
Several labels of one unit are kept apart per annotator and combined by a named rule
(:data:`RULES`), never "last one wins"; a split majority is broken by a stated rule
(:data:`TIES`). ``null``, ``NaN``, ``"N/A"``, ``"N/A (a reason)"`` and ``""`` mean "no
label": left out, counted by reason and warned. A row repeated exactly is warned and read
once. A label for a criterion the rubric lacks or a unit the data lacks is a counted
warning naming the file and line; a file naming no known unit stops.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from statistics import fmean, median
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.io import DataError, read_records, validate_record
from dialeval.conversation.data import Conversation
from dialeval.conversation.rubric import Criterion, Rubric, dimension, load_rubric

Rule = Literal["mean", "median", "majority"]
RULES: tuple[Rule, ...] = ("mean", "median", "majority")
Tie = Literal["lower", "upper", "middle", "drop"]
TIES: tuple[Tie, ...] = ("lower", "upper", "middle", "drop")
NO_LABEL = {"", "n/a", "na", "nan", "none", "null", "-"}
NO_LABEL_WITH_REASON = re.compile(r"^\s*n/?a\s*[(\[]\s*(?P<reason>.*?)\s*[)\]]\s*$", re.IGNORECASE)  # "N/A (off topic)"
SHOWN = 5  # records named in a warning that sums up many
Key = tuple[str, str]  # (unit, criterion): unit is ``<id>/<turn>`` or ``<id>``


class LabelWarning(UserWarning):
    """A label that was skipped (unknown criterion or unit) or read twice; the run goes on."""


class LabelRecord(BaseModel):
    """One record of a labels file, before it is checked against the rubric and the data."""

    model_config = ConfigDict(extra="forbid")

    id: str | int = Field()
    turn: int | None = Field(default=None, ge=1)
    criterion: str = Field(min_length=1)
    score: bool | int | float | str | None | list[bool | int | float | str | None]  # bool first: true stays true
    annotator: str | int | None = None


@dataclass(frozen=True)
class Rating:
    """One annotator's label of one unit on one criterion, as a number (a label's rank)."""

    unit: str  # ``<id>/<turn>`` or ``<id>``, as ``item_scores`` names the judge's units
    criterion: str  # as ``item_scores`` names it: ``overall (conversation)`` where a turn-level ``overall`` exists
    annotator: str  # the file's ``annotator``, else ``#1``, ``#2``... by order within the unit
    score: float  # on the criterion's scale; a label as its rank (best = number of labels)
    where: str  # file and record (line), for messages
    id: str = ""  # the conversation
    turn: int | None = None


@dataclass
class Labels:
    """Every label of one file, per annotator; :meth:`consensus` combines them by ``rule``."""

    source: str
    rule: Rule = "mean"
    ratings: list[Rating] = field(default_factory=list)
    skipped: int = 0  # "no label" answers: null, NaN, "N/A", "N/A (reason)"
    warnings: list[str] = field(default_factory=list)
    unknown: int = 0  # labels for a criterion or unit that is not there (each a warning)
    no_label: Counter[str] = field(default_factory=Counter)  # the skipped answers by kind: NaN, null, N/A, N/A (reason)
    duplicates: int = 0  # rows that repeat an earlier row exactly (read once)
    unlabelled: list[Key] = field(default_factory=list)  # units every answer of which was "no label"
    majority_tie: Tie | None = None  # None: the middle where the scale has a middle label, else the lower
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)  # criterion -> (lowest, highest) score

    def tie_rule(self, criterion: str) -> Tie:
        """How a split majority on ``criterion`` is broken: the chosen rule, else the
        middle label where its scale has one (A better / tie / B better: the tie), else the lower."""
        if self.majority_tie is not None:
            return self.majority_tie
        low, high = self.scales.get(criterion, (0.0, 1.0))
        return "middle" if ((low + high) / 2).is_integer() else "lower"

    def by_unit(self) -> dict[Key, dict[str, float]]:
        """``(unit, criterion) -> {annotator: score}``, in file order."""
        out: dict[Key, dict[str, float]] = {}
        for r in self.ratings:
            out.setdefault((r.unit, r.criterion), {})[r.annotator] = r.score
        return out

    def criteria(self) -> list[str]:
        return list(dict.fromkeys(r.criterion for r in self.ratings))

    def consensus(self, rule: Rule | None = None) -> dict[Key, float]:
        """One score per ``(unit, criterion)``: the annotators' scores combined by ``rule``
        (a split majority dropped under ``majority_tie: drop`` has none)."""
        out = {}
        for key, scores in self.by_unit().items():
            value = combine(list(scores.values()), rule or self.rule, self.tie_rule(key[1]), self.scales.get(key[1]))
            if value is not None:
                out[key] = value
        return out

    def ties(self) -> dict[str, int]:
        """criterion -> units whose most common label is shared by two or more labels (a split vote)."""
        out: Counter[str] = Counter()
        for (_, criterion), scores in self.by_unit().items():
            counts = Counter(scores.values())
            if len(counts) > 1 and sum(c == max(counts.values()) for c in counts.values()) > 1:
                out[criterion] += 1
        return dict(out)

    def per_criterion(self, rule: Rule | None = None) -> dict[str, dict[str, float]]:
        """The consensus as ``item_scores`` gives the judge's: criterion -> unit -> score."""
        out: dict[str, dict[str, float]] = {}
        for (unit, criterion), score in self.consensus(rule).items():
            out.setdefault(criterion, {})[unit] = score
        return out

    def summary(self) -> dict[str, Any]:
        """What the report states about the file: units, annotators, skipped, repeated and
        unknown labels, and how split majorities were broken."""
        out = {
            "file": self.source, "rule": self.rule, "labels": len(self.ratings), "units": len(self.by_unit()),
            "annotators": len({r.annotator for r in self.ratings}), "no_label": self.skipped,
            "no_label_by_kind": dict(self.no_label), "units_without_label": len(self.unlabelled),
            "duplicates": self.duplicates, "unknown": self.unknown, "warnings": self.warnings[:20],
        }
        if self.rule == "majority":
            out["majority_tie"] = {c: self.tie_rule(c) for c in self.criteria()}
            out["ties"] = self.ties()
        return out


def combine(scores: list[float], rule: Rule, tie: Tie = "lower", scale: tuple[float, float] | None = None) -> float | None:
    """The annotators' scores of one unit as one: mean, median, or the most common, a split
    vote broken by ``tie`` (:func:`break_tie`; ``None`` where ``drop`` leaves it out)."""
    if rule == "mean":
        return fmean(scores)
    if rule == "median":
        return float(median(scores))
    counts = Counter(scores)
    top = max(counts.values())
    tied = [s for s, c in counts.items() if c == top]
    return tied[0] if len(tied) == 1 else break_tie(tied, tie, scale)


def break_tie(tied: list[float], tie: Tie, scale: tuple[float, float] | None = None) -> float | None:
    """One of the labels that share the most votes: the lowest, the highest, none (``drop``),
    or the label halfway between the lowest and the highest (``middle``): where that falls
    between two labels, the one nearer the centre of the ``scale`` (the lower if as near)."""
    if tie == "drop":
        return None
    if tie in ("lower", "upper"):
        return min(tied) if tie == "lower" else max(tied)
    half = (min(tied) + max(tied)) / 2
    if half.is_integer():
        return half
    centre = half if scale is None else sum(scale) / 2
    below, above = float(math.floor(half)), float(math.ceil(half))
    return above if abs(above - centre) < abs(below - centre) else below


def no_label(value: Any) -> str | None:
    """What kind of "no label" ``value`` is (``NaN``, ``null``, ``N/A``, ``N/A (reason)``
    with the file's reason), ``None`` when it is a label."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.lower() in NO_LABEL:
        return {"": "empty", "nan": "NaN", "none": "null", "null": "null"}.get(text.lower(), "N/A")
    reason = NO_LABEL_WITH_REASON.match(text)
    return f"N/A ({reason['reason']})" if reason else None


def is_no_label(value: Any) -> bool:
    """``null``, ``NaN``, ``N/A (a reason)`` and the usual spellings of "not applicable" / "no answer"."""
    return no_label(value) is not None


def load_labels(
    path: str | Path, rubric: Rubric, conversations: list[Conversation] | None = None, rule: Rule = "mean",
    run_records: list[dict[str, Any]] | None = None, majority_tie: Tie | None = None,
) -> Labels:
    """The labels of ``path`` checked against ``rubric`` (and ``conversations``, or a run's
    ``run_records``, when given: a label naming a user turn is skipped and counted there
    too). Off-scale scores and level mistakes stop with file, record and field named."""
    records = read_records(path)
    lines = getattr(records, "lines", None)
    labels = Labels(source=str(path), rule=rule, majority_tie=majority_tie)
    shared = {c.name for c in rubric.at("turn")} & {c.name for c in rubric.criteria if c.level != "turn"}
    labels.scales = {dimension(c.name, c.level, c.name in shared): c.scale.bounds for c in rubric.criteria}
    rows: dict[str, str] = {}  # each row's content -> where it was first read
    missing: dict[Key, bool] = {}  # (unit, criterion) -> whether any answer of it was a label
    places: dict[str, dict[str, None]] = {}  # kind of "no label" -> the records that gave it
    units = _units(conversations) if conversations is not None else None
    scope = None  # the conversations whose units are known (None: all of them)
    if conversations is None and run_records is not None:
        units, scope = record_units(run_records)
    positions: Counter[Key] = Counter()  # anonymous annotators are numbered per unit: #1, #2...
    seen: set[tuple[str, str, str]] = set()
    for index, raw in enumerate(records):
        where: str | int = f"{index} (line {lines[index]})" if lines else index
        label = validate_record(LabelRecord, raw, path, where)
        place = f"{path}, record {index + 1}" + (f" (line {lines[index]})" if lines else "")
        row = json.dumps(label.model_dump(), sort_keys=True, default=str)  # NaN prints as NaN: equal rows match
        if row in rows:
            labels.duplicates += 1
            labels.warnings.append(f"{place}: repeats {rows[row]} exactly; read once (two annotators who agree need "
                                   "their own `annotator` names)")
            continue
        rows[row] = f"record {index + 1}" + (f" (line {lines[index]})" if lines else "")
        criterion = _criterion(rubric, label, path, where, labels, place)
        if criterion is None:
            continue
        unit = str(label.id) if label.turn is None else f"{label.id}/{label.turn}"
        if units is not None and unit not in units and (scope is None or str(label.id) in scope):
            labels.unknown += 1
            kind = "assistant turn" if label.turn else "conversation"
            labels.warnings.append(f"{place}: no {kind} {unit!r} in the data file; label skipped")
            continue
        values = label.score if isinstance(label.score, list) else [label.score]
        name = dimension(criterion.name, criterion.level, criterion.name in shared)
        key = (unit, name)
        for position, value in enumerate(values):
            why = no_label(value)
            if why is not None:
                labels.skipped += 1
                labels.no_label[why] += 1
                places.setdefault(why, {})[rows[row]] = None  # each record once
                missing.setdefault(key, False)
                continue
            missing[key] = True
            read = criterion.scale.read_label(value)
            field_name = "score" if len(values) == 1 else f"score.{position}"
            if read is None:
                raise DataError(path, f"{value!r} is not {criterion.scale.describe_labels()}", record=where, field=field_name)
            if isinstance(label.score, list):
                annotator = f"#{position + 1}"
            elif label.annotator is not None:
                annotator = str(label.annotator)
            else:
                positions[key] += 1
                annotator = f"#{positions[key]}"
            if (unit, name, annotator) in seen:
                labels.warnings.append(f"{place}: annotator {annotator!r} labelled {unit!r} on {name!r} again; "
                                       "both labels kept, as two annotators")
                annotator += f"@{index + 1}"
            seen.add((unit, name, annotator))
            labels.ratings.append(Rating(unit, name, annotator, read, place, str(label.id), label.turn))
    labels.unlabelled = [key for key, labelled in missing.items() if not labelled]
    if labels.skipped:
        labels.warnings.append(_no_label_warning(path, labels, places))
    if records and not labels.ratings and labels.unknown:
        raise DataError(path, f"none of its {len(records)} labels names a unit of the data or a criterion of {rubric.source}: "
                        "is it the labels file of this data? (ids are conversation ids; turns count every message from 1)")
    return labels


def _no_label_warning(path: str | Path, labels: Labels, places: dict[str, dict[str, None]]) -> str:
    """One line for every answer without a label: how many of each kind, where the first
    are, and the units left with no label at all (they drop out of every figure)."""
    kinds = ", ".join(f"{count} {kind} ({', '.join(list(places[kind])[:SHOWN])}" + (", ...)" if len(places[kind]) > SHOWN else ")")
                      for kind, count in labels.no_label.most_common())
    gone = labels.unlabelled
    units = (f"; {len(gone)} units have no label left and are left out: "
             + ", ".join(f"{u!r} on {c!r}" for u, c in gone[:SHOWN]) + (", ..." if len(gone) > SHOWN else "")) if gone else ""
    return f"{path}: {labels.skipped} answers without a label, read as N/A and left out: {kinds}{units}"


def labelled_units(path: str | Path, rubric: str) -> frozenset[Key]:
    """Every ``(unit, criterion)`` that carries a label (option ``judge_only=labelled``),
    read once per version of the file however many conversations ask."""
    stat = Path(path).stat()
    return _labelled(str(path), stat.st_mtime_ns, stat.st_size, rubric)


@lru_cache(maxsize=8)
def _labelled(path: str, mtime_ns: int, size: int, rubric: str) -> frozenset[Key]:
    return frozenset((r.unit, r.criterion) for r in load_labels(path, load_rubric(rubric)).ratings)


def only_labelled(conversations: list[Conversation], labels: Labels) -> list[Conversation]:
    """The conversations that carry a label (option ``judge_only=labelled``): the judge's
    calls go where there is something to compare them with."""
    ids = {r.id for r in labels.ratings}
    return [c for c in conversations if c.id in ids]


def _units(conversations: list[Conversation]) -> set[str]:
    """Every unit a label may name: conversations and their assistant turns."""
    out = {c.id for c in conversations}
    out.update(f"{c.id}/{t.number}" for c in conversations for t in c.assistant_turns())
    return out


def record_units(records: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The units a label may name in a run's records (conversations and their assistant
    turns) and the conversations they cover: those whose record keeps its turns."""
    kept = [r for r in records if isinstance(r.get("turns"), list)]
    units = {str(r["id"]) for r in kept}
    units.update(f"{r['id']}/{t['turn']}" for r in kept for t in r["turns"] if t.get("role") == "assistant")
    return units, {str(r["id"]) for r in kept}


def _criterion(rubric: Rubric, label: LabelRecord, path: str | Path, where: str | int, labels: Labels, place: str) -> Criterion | None:
    """The rubric's criterion the label names at its level (turn given: turn level), else
    a counted warning (unknown name) or an error (the name exists at the other level)."""
    named = [c for c in rubric.criteria if c.name == label.criterion]
    if not named:
        labels.unknown += 1
        labels.warnings.append(f"{place}: {label.criterion!r} is not a criterion of {rubric.source}; label skipped")
        return None
    turn_level = label.turn is not None
    for criterion in named:
        if (criterion.level == "turn") == turn_level:
            return criterion
    level = named[0].level
    raise DataError(path, f"criterion {label.criterion!r} is {level}-level: "
                    + ("give the turn" if level == "turn" else "leave the turn out"), record=where, field="turn")
