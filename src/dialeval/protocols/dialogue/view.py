"""A dialogue record as the viewer shows it: the conversation turn by turn, each verdict beside its turn.

The viewer knows nothing about dialogue records; it asks the benchmark's
``conversation_view`` for these typed rows and renders them (autoescaped).
"""

from __future__ import annotations

from typing import Any

from dialeval.conversation.toolcalls import arguments_text
from dialeval.report.view_rows import ConversationView, Facts, ToolCallRow, TurnRow, Verdict, image_label

__all__ = ["conversation_view", "image_label"]


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


def _calls(turn: dict[str, Any]) -> list[ToolCallRow]:
    return [ToolCallRow(name=str(c.get("name", "?")), arguments=arguments_text(c.get("arguments", {})),
                        result=c.get("result"), error=bool(c.get("error"))) for c in turn.get("tool_calls") or []]


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    """The rows of one ``results.jsonl`` record of the dialogue benchmark (None without turns).
    The record names a turn's images by file name only; the data item, when given, has
    their paths, so the viewer can show them."""
    turns = record.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    by_turn: dict[int, list[Verdict]] = {}
    for unit in record.get("turn_units") or []:
        by_turn.setdefault(int(unit.get("turn", 0)), []).append(_verdict(unit, "turn"))
    facts = {int(u["turn"]): _facts(u) for u in record.get("grounding_units") or [] if u.get("turn") is not None}
    summary_facts = next((_facts(u) for u in record.get("grounding_units") or [] if u.get("level") == "summary"), None)
    sources = {t.number: [i.source for i in t.images] for t in getattr(item, "turns", None) or []}
    rows = [
        TurnRow(number=int(t.get("turn", i)), role=str(t.get("role", "?")), text=str(t.get("text", "")),
                images=sources.get(int(t.get("turn", i))) or list(t.get("images") or []), verdicts=by_turn.get(int(t.get("turn", i)), []),
                facts=facts.get(int(t.get("turn", i))), tool_calls=_calls(t))
        for i, t in enumerate(turns, start=1)
    ]
    whole = [_verdict(u, "conversation") for u in record.get("conversation_units") or []]
    return ConversationView(system=str(record.get("system_prompt") or ""), turns=rows, whole=whole,
                            summary=record.get("summary"), summary_facts=summary_facts)
