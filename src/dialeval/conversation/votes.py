"""Pairwise human labels (how MT-Bench and Chatbot Arena label): votes A / B / tie, and the
judge's agreement with them in a ``versus`` run.

A votes file (option ``human_scores`` of a ``versus`` run, JSON or JSONL) holds one record
per vote, or per unit with a list: ``id``, ``turn`` (an assistant turn; left out for a
conversation-level criterion), ``criterion``, ``vote`` (``a``: the data file's system,
``b``: the versus file's, ``tie``; or ``votes``: a list, one per annotator) and optionally
``annotator``. Agreement follows the MT-Bench paper (Zheng et al., 2023, section 4.2): **S1**
counts ties as a third class, **S2** leaves out the votes and verdicts that are ties; each
vote by vote (every judge-human pair) and against each unit's majority vote (a split vote
is a tie); the **human ceiling** is the same figure between pairs of annotators of one
unit. The judge's verdict is its two-order verdict, so a verdict that changes with the
order counts as a tie, as the paper treats inconsistent verdicts, and those are counted.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialeval.data.io import DataError, read_records, validate_record

VOTES = ("a", "b", "tie")


class VoteRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | int
    turn: int | None = Field(default=None, ge=1)
    criterion: str = Field(min_length=1)
    vote: str | None = None
    votes: list[str] | None = None
    annotator: str | int | None = None


def holds_votes(path: str | Path) -> bool:
    """Whether a labels file holds pairwise votes (its first record has ``vote`` or ``votes``)."""
    records = read_records(path)
    return bool(records) and isinstance(records[0], dict) and ("vote" in records[0] or "votes" in records[0])


def read_votes(path: str | Path, rubric: Any) -> dict[tuple[str, str], dict[str, str]]:
    """``(<level>/<criterion>, unit) -> {annotator: vote}``; a vote off a/b/tie, an unknown
    criterion or a turn-level criterion without its turn stops, naming file, record and field."""
    records = read_records(path)
    lines = getattr(records, "lines", None)
    levels = {c.name: c.level for c in rubric.criteria}
    out: dict[tuple[str, str], dict[str, str]] = {}
    for index, raw in enumerate(records):
        where: str | int = f"{index} (line {lines[index]})" if lines else index
        rec = validate_record(VoteRecord, raw, path, where)
        level = levels.get(rec.criterion)
        if level is None:
            raise DataError(path, f"no criterion {rec.criterion!r} in the rubric", record=where, field="criterion")
        if (level == "turn") != (rec.turn is not None):
            raise DataError(path, f"{rec.criterion} is a {level}-level criterion: "
                            + ("give the turn" if level == "turn" else "leave the turn out"), record=where, field="turn")
        given = rec.votes if rec.votes is not None else [rec.vote] if rec.vote is not None else []
        if not given:
            raise DataError(path, "give a vote (a, b or tie) or votes", record=where, field="vote")
        key = (f"{level}/{rec.criterion}", str(rec.id) if rec.turn is None else f"{rec.id}/{rec.turn}")
        unit = out.setdefault(key, {})
        for k, vote in enumerate(given):
            value = str(vote).strip().lower()
            if value not in VOTES:
                raise DataError(path, f"{vote!r} is not a vote: a, b or tie", record=where, field="vote" if rec.vote else f"votes.{k}")
            name = str(rec.annotator) if rec.annotator is not None and len(given) == 1 else f"#{len(unit) + 1}"
            unit[name] = value
    return out


def majority(votes: list[str]) -> str:
    """The unit's majority vote; a split (no vote above the others) is a tie."""
    counts = Counter(votes).most_common()
    return "tie" if len(counts) > 1 and counts[0][1] == counts[1][1] else counts[0][0]


def _share(pairs: list[tuple[str, str]], ties: bool) -> dict[str, Any]:
    kept = pairs if ties else [(x, y) for x, y in pairs if "tie" not in (x, y)]
    return {"n": len(kept), "agreement": sum(x == y for x, y in kept) / len(kept) if kept else None}


def votes_agreement(records: list[dict[str, Any]], votes: dict[tuple[str, str], dict[str, str]]) -> dict[str, dict[str, Any]]:
    """Per ``<level>/<criterion>``: the judge against the votes (S1 with ties, S2 without),
    vote by vote and against the majority; the humans among themselves; inconsistent verdicts."""
    judged: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        for u in r.get("pairwise_units", []):
            if u.get("winner") is not None:
                level = "turn" if "turn" in u else u.get("level")
                unit = f"{r['id']}/{u['turn']}" if "turn" in u else str(r["id"])
                judged[(f"{level}/{u['criterion']}", unit)] = u
    out: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(k for k, _ in votes):
        units = [(unit, by) for (k, unit), by in votes.items() if k == key]
        paired = [(judged[(key, unit)], by) for unit, by in units if (key, unit) in judged]
        by_vote = [(j["winner"], v) for j, by in paired for v in by.values()]
        by_majority = [(j["winner"], majority(list(by.values()))) for j, by in paired]
        humans = [(by[a], by[b]) for _, by in units for a, b in combinations(by, 2)]
        out[key] = {
            "units": len(paired), "votes": len(by_vote), "units_without_verdict": len(units) - len(paired),
            "s1": {"vote": _share(by_vote, True), "majority": _share(by_majority, True), "humans": _share(humans, True)},
            "s2": {"vote": _share(by_vote, False), "majority": _share(by_majority, False), "humans": _share(humans, False)},
            "order_inconsistent": sum(bool(j.get("order_inconsistent")) for j, _ in paired),
        }
    return out
