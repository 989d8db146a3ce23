"""VDAct scores: per-system means (raw and 0-1), question types, human majority votes.

Question types follow the paper's keyword rules (its appendix on performance per
question type): T-SEQ, T-FRQ, EXP, QNT, and binary questions/answers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from dialeval.metrics.scores import mean_or_none, scale_to_unit

# judge kind -> (lowest, highest) score; 0-1 scaling is (s - low) / (high - low)
SCALES: dict[str, tuple[int, int]] = {"session": (1, 3), "turn": (1, 3), "llm_acc": (0, 1), "llm_rel": (0, 5)}

QUESTION_TYPES = ("T-SEQ", "T-FRQ", "EXP", "QNT", "Binary-Q", "Binary-A", "Binary-QA")

_SEQ = re.compile(r"\b(first|last|before|after|next)\b")
_FRQ = re.compile(r"\bhow (long|frequently|often)\b")
_QNT = re.compile(r"\bhow (many|much)\b")
_HOW = re.compile(r"\bhow\b(?! (many|much|long|frequently|often)\b)")
_WHY = re.compile(r"\bwhy\b")
_BINARY_Q = re.compile(r"^(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b")
_BINARY_A = re.compile(r"^(yes|no)\b")


def question_types(question: str, reference: str) -> list[str]:
    """The keyword-rule types of one turn (a turn may have several, or none)."""
    q = question.strip().lower()
    a = reference.strip().lower()
    types = []
    if _SEQ.search(q):
        types.append("T-SEQ")
    if _FRQ.search(q):
        types.append("T-FRQ")
    if _HOW.search(q) or _WHY.search(q):
        types.append("EXP")
    if _QNT.search(q):
        types.append("QNT")
    binary_q, binary_a = bool(_BINARY_Q.search(q)), bool(_BINARY_A.search(a))
    if binary_q:
        types.append("Binary-Q")
    if binary_a:
        types.append("Binary-A")
    if binary_q and binary_a:
        types.append("Binary-QA")
    return types


def majority_vote(scores: Sequence[int] | None) -> int | None:
    """The score most annotators gave; ``None`` when no single score leads (all disagree)."""
    if not scores:
        return None
    ranked = Counter(scores).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def score_summary(scores: Sequence[float | None], low: int, high: int) -> dict[str, Any]:
    """Count, unparsed count, mean on the judge's scale and mean scaled to 0-1."""
    present = [s for s in scores if s is not None]
    mean = mean_or_none(present)
    return {
        "turns": len(scores),
        "scored": len(present),
        "unparsed": len(scores) - len(present),
        "mean": mean,
        "mean_scaled": None if mean is None else scale_to_unit(mean, low, high),
    }


def type_breakdown(turns: Sequence[tuple[list[str], float | None]], low: int, high: int) -> dict[str, dict[str, Any]]:
    """Per question type: scores of turns of that type, and of all other turns ("All-<type>")."""
    out: dict[str, dict[str, Any]] = {}
    for kind in QUESTION_TYPES:
        inside = [s for types, s in turns if kind in types]
        outside = [s for types, s in turns if kind not in types]
        out[kind] = {"type": score_summary(inside, low, high), "others": score_summary(outside, low, high)}
    return out
