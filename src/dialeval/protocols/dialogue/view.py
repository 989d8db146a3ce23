"""A dialogue record as the viewer shows it: the conversation turn by turn, each verdict beside its turn.

The viewer knows nothing about dialogue records; it asks the benchmark's
``conversation_view`` for these typed rows and renders them (autoescaped).
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
    verdict: int | str | None
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
class TurnRow:
    """One message in order; an assistant turn carries its verdicts and fact check."""

    number: int
    role: str
    text: str
    images: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    facts: Facts | None = None


@dataclass(frozen=True)
class ConversationView:
    """The whole page section: system prompt, turns, then conversation- and summary-level verdicts."""

    system: str
    turns: list[TurnRow]
    whole: list[Verdict]
    summary: str | None
    summary_facts: Facts | None


def image_label(source: str) -> str:
    """How the page names an image: its file name or URL (inline bytes are never kept in results)."""
    if source.startswith("data:"):
        return "inline image"
    return source if source.startswith(("http://", "https://")) else Path(source).name


def _verdict(unit: dict[str, Any], level: str) -> Verdict:
    call = unit.get("call") or {}
    status = str(unit.get("status") or "error")
    return Verdict(
        criterion=str(unit.get("criterion", "?")),
        level=str(unit.get("level") or level),
        status=status,
        verdict=unit.get("verdict"),
        rationale=unit.get("rationale"),
        reason=unit.get("reason") or call.get("reason"),
        raw=call.get("raw") if status in ("unparsed", "truncated", "error") else None,
    )


def _facts(unit: dict[str, Any]) -> Facts:
    return Facts(status=str(unit.get("status") or "error"), precision=unit.get("precision"),
                 facts=len(unit.get("facts") or []), unsupported=list(unit.get("unsupported") or []))


def conversation_view(record: dict[str, Any]) -> ConversationView | None:
    """The rows of one ``results.jsonl`` record of the dialogue benchmark (None without turns)."""
    turns = record.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    by_turn: dict[int, list[Verdict]] = {}
    for unit in record.get("turn_units") or []:
        by_turn.setdefault(int(unit.get("turn", 0)), []).append(_verdict(unit, "turn"))
    facts = {int(u["turn"]): _facts(u) for u in record.get("grounding_units") or [] if u.get("turn") is not None}
    summary_facts = next((_facts(u) for u in record.get("grounding_units") or [] if u.get("level") == "summary"), None)
    rows = [
        TurnRow(number=int(t.get("turn", i)), role=str(t.get("role", "?")), text=str(t.get("text", "")),
                images=list(t.get("images") or []), verdicts=by_turn.get(int(t.get("turn", i)), []),
                facts=facts.get(int(t.get("turn", i))))
        for i, t in enumerate(turns, start=1)
    ]
    whole = [_verdict(u, "conversation") for u in record.get("conversation_units") or []]
    return ConversationView(system=str(record.get("system_prompt") or ""), turns=rows, whole=whole,
                            summary=record.get("summary"), summary_facts=summary_facts)
