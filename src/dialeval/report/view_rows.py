"""The typed rows a benchmark's ``conversation_view`` returns for the viewer's item page.

Why: every conversational benchmark (dialogue, VDAct, MMDU, MMRC, MDSEval) shows its
record turn by turn with the judge's verdicts beside each turn; one set of row types
lets the viewer render them all with one template and no per-benchmark branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STATUS_LABELS = {"not_applicable": "not applicable", "over_budget": "over budget"}


@dataclass(frozen=True)
class Verdict:
    """One criterion's verdict on one unit, with why (rationale, or the reason it has none)."""

    criterion: str
    level: str
    status: str
    verdict: int | float | str | None
    rationale: str | None
    reason: str | None  # not applicable: what is missing; unparsed: why the answer was unreadable
    raw: str | None  # the judge's raw answer when it could not be read

    @property
    def status_label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)


@dataclass(frozen=True)
class Facts:
    """The atomic-fact check of one reply (or the summary): precision and the unsupported claims."""

    status: str
    precision: float | None
    facts: int
    unsupported: list[str]


@dataclass(frozen=True)
class ToolCallRow:
    """One tool call an assistant made in its turn: name, arguments (as text) and result."""

    name: str
    arguments: str
    result: str | None
    error: bool = False


@dataclass(frozen=True)
class TurnRow:
    """One message in order; an answer carries its reference, verdicts and fact check.

    ``images`` are the sources as the data names them (a file path or URL): the viewer
    makes thumbnails of local files inside the run's data folder and names the others."""

    number: int
    role: str
    text: str
    images: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    facts: Facts | None = None
    reference: str | None = None
    label: str | None = None  # what the bubble's heading says instead of "<role> · turn <n>"
    tool_calls: list[ToolCallRow] = field(default_factory=list)


@dataclass(frozen=True)
class Section:
    """Rows shown after the conversation under their own heading (MMRC's probe questions,
    MDSEval's candidate summaries)."""

    title: str
    rows: list[TurnRow]


@dataclass(frozen=True)
class ConversationView:
    """The whole page section: system prompt, turns, later sections, then conversation- and summary-level verdicts."""

    system: str
    turns: list[TurnRow]
    whole: list[Verdict] = field(default_factory=list)
    summary: str | None = None
    summary_facts: Facts | None = None
    sections: list[Section] = field(default_factory=list)
    system_label: str = "system prompt"  # what the box above the turns holds (VDAct: the video summary)


def image_label(source: str) -> str:
    """How the page names an image: its file name or URL (inline bytes are never kept in results)."""
    if source.startswith("data:"):
        return "inline image"
    return source if source.startswith(("http://", "https://")) else Path(source).name


def score_verdicts(scores: dict[str, Any], status: str, rationale: str | None = None,
                   unparsed: dict[str, Any] | None = None) -> list[Verdict]:
    """One verdict per scored dimension of a judge call, the rationale on the first card only
    (one judge answer explains all its scores), an unreadable dimension marked unparsed."""
    cards = [Verdict(criterion=str(name), level="turn", status=status, verdict=value,
                     rationale=rationale if i == 0 else None, reason=None, raw=None)
             for i, (name, value) in enumerate(scores.items())]
    cards += [Verdict(criterion=str(name), level="turn", status="unparsed", verdict=None, rationale=None,
                      reason="the judge's answer gave no readable score", raw=str(raw) if raw is not None else None)
              for name, raw in (unparsed or {}).items()]
    if not cards and status != "ok":
        cards.append(Verdict(criterion="judge", level="turn", status=status, verdict=None, rationale=rationale,
                             reason="no score recorded", raw=None))
    return cards
