"""An MMDU record as the viewer shows it: each question with its images, the reference, the
answer judged and the judge's scores per dimension with its explanation."""

from __future__ import annotations

from typing import Any

from dialeval.report.view_rows import ConversationView, TurnRow, score_verdicts


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    """Questions, references and images come from the data item; answers and scores from the record."""
    turns = record.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    dialogue = getattr(item, "dialogue", None)
    sources = [image.source for image in getattr(dialogue, "image", None) or []]
    data_turns = {t.number: t for t in (dialogue.turns if dialogue is not None else [])}
    rows: list[TurnRow] = []
    for turn in turns:
        number = int(turn.get("turn") or 0)
        known = data_turns.get(number)
        if known is not None:
            images = [sources[k - 1] for k in known.images if 0 < k <= len(sources)]
            rows.append(TurnRow(number=number, role="user", text=known.question, images=images))
        scores = turn.get("scores") or {}
        status = str(turn.get("judge_status") or ("ok" if scores else "error"))
        rows.append(TurnRow(number=number, role="assistant", text=str(turn.get("answer") or ""),
                            reference=known.reference if known is not None else None,
                            label=f"answer of {record.get('system') or 'the system'} · turn {number} ({turn.get('answer_status', '?')})",
                            verdicts=score_verdicts(scores, status, turn.get("explanation"), turn.get("unparsed"))))
    return ConversationView(system="", turns=rows)
