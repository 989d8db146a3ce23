"""A VDAct record as the viewer shows it: each question, the reference, the system's answer
and the judge's score with its rationale, turn by turn under the video summary."""

from __future__ import annotations

from typing import Any

from dialeval.report.view_rows import ConversationView, TurnRow, score_verdicts


def _rationales(record: dict[str, Any], turns: int) -> list[str | None]:
    """The judge's rationale per turn, when its calls line up one to one with the turns
    (the session and turn judges make one call per turn, in order); else none."""
    judged = [c for c in record.get("calls") or [] if c.get("role") == "judge"]
    if len(judged) != turns:
        return [None] * turns
    return [str(c["value"].get("rationale")) if isinstance(c.get("value"), dict) and c["value"].get("rationale") else None
            for c in judged]


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    """Questions come from the data item (the record keeps reference and answer only)."""
    turns = record.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    questions = {str(t.id): t.question for t in getattr(item, "turns", None) or []}
    rows: list[TurnRow] = []
    for turn, rationale in zip(turns, _rationales(record, len(turns))):
        number = int(turn.get("turn_num") or len(rows) // 2 + 1)
        question = questions.get(str(turn.get("id")))
        rows.append(TurnRow(number=number, role="user", text=question if question is not None else "(question not in the data file found)",
                            label=f"question · turn {number}" + (" · " + ", ".join(turn["types"]) if turn.get("types") else "")))
        rows.append(TurnRow(number=number, role="assistant", text=str(turn.get("candidate") or ""),
                            reference=turn.get("reference"), label=f"answer of {record.get('system') or 'the system'}",
                            verdicts=score_verdicts(turn.get("scores") or {}, str(turn.get("status") or "error"), rationale)))
    summary = getattr(item, "summary", None)
    return ConversationView(system=str(summary or ""), turns=rows, system_label="video summary")
