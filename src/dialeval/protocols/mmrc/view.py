"""An MMRC record as the viewer shows it: the conversation with its images, then each probe
question (notes off and on) with the reference, the answer and the judge's score."""

from __future__ import annotations

from typing import Any

from dialeval.report.view_rows import ConversationView, Section, TurnRow, Verdict


def _probe_verdicts(q: dict[str, Any]) -> list[Verdict]:
    status = str(q.get("judge_status") or "error")
    source = q.get("score_source") or "judge"
    cards = [Verdict(criterion=f"{q.get('ability')} score (0-5)", level="probe", status=status, verdict=q.get("score"),
                     rationale=None, reason=None if source == "judge" else f"scored by {source}", raw=None)]
    ep = q.get("ep") or {}
    if ep.get("status"):
        cards.append(Verdict(criterion="EP items found", level="probe", status=str(ep["status"]),
                             verdict=f"{ep.get('n_hit', 0)}/{ep.get('n_model', 0)}", rationale=None, reason=None, raw=None))
    return cards


def _assistant_row(number: int, recorded: str | None, live: dict[str, Any] | None, unkept: bool) -> TurnRow | None:
    """The assistant turn the model saw: its own live reply where the run asked it for one,
    else the data file's recorded reply, each labelled so that neither passes for the other."""
    if live is not None:
        status = str(live.get("status") or "?")
        label = f"assistant · turn {number} · live reply of the model under test" + ("" if status == "ok" else f" ({status})")
        return TurnRow(number=number, role="assistant", text=str(live.get("text") or ""), label=label)
    if recorded:
        note = "; the model saw its own live reply, which this older record did not keep" if unkept else ""
        return TurnRow(number=number, role="assistant", text=recorded, label=f"assistant · turn {number} · recorded reply (data file{note})")
    return None


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    """The conversation comes from the data item with the live replies the record kept; the
    probe questions, answers and scores from the record."""
    questions = record.get("questions")
    if not isinstance(questions, list):
        return None
    live = {int(r["turn"]): r for r in record.get("replies") or [] if isinstance(r, dict) and "turn" in r}
    unkept = bool(record.get("live_replies")) and "replies" not in record  # written before records kept them
    rows: list[TurnRow] = []
    for number, turn in enumerate(getattr(item, "turns", None) or [], start=1):
        rows.append(TurnRow(number=number, role="user", text=turn.user, images=[i.source for i in turn.images]))
        assistant = _assistant_row(number, turn.assistant, live.get(number), unkept)
        if assistant is not None:
            rows.append(assistant)
    probes: list[TurnRow] = []
    for q in questions:
        number = int(q.get("index", 0)) + 1
        where = f"{q.get('ability')} · notes {q.get('condition')}"
        probes.append(TurnRow(number=number, role="user", text=str(q.get("question") or ""), label=f"probe {number} · {where}"))
        probes.append(TurnRow(number=number, role="assistant", text=str(q.get("answer") or ""), reference=q.get("reference"),
                              label=f"answer ({q.get('answer_status', '?')})", verdicts=_probe_verdicts(q)))
    return ConversationView(system="", turns=rows, sections=[Section("Probe questions", probes)])
