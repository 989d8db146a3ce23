"""A simulated conversation as the viewer shows it: audit flags beside the simulated turns, bot failures beside the bot's."""

from __future__ import annotations

from typing import Any

from dialeval.protocols.simulation.transcript import bot_text
from dialeval.protocols.view_rows import ConversationView, TurnRow, Verdict


def _audit(audit: dict[str, Any]) -> list[Verdict]:
    if not audit.get("findings"):
        status = "ok" if audit.get("status") == "ok" else str(audit.get("status"))
        return [Verdict("audit", "simulated turn", status, "kept the rules" if status == "ok" else None,
                        audit.get("rationale"), (audit.get("call") or {}).get("reason"), None)]
    return [Verdict(f"audit: {f['rule']}", "simulated turn", "flagged", f["rule"], f.get("evidence"), audit.get("rationale"), None)
            for f in audit["findings"]]


def _unit(unit: dict[str, Any]) -> Verdict:
    call = unit.get("call") or {}
    return Verdict(str(unit.get("criterion")), str(unit.get("level", "turn")), str(unit.get("status")), unit.get("verdict"),
                   unit.get("rationale"), unit.get("reason") or call.get("reason"), None)


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    turns = record.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    audits = {a["turn"]: a for a in record.get("audits", [])}
    rows = []
    for turn in turns:
        if turn["role"] == "user":
            verdicts = _audit(audits[turn["number"]]) if turn["number"] in audits else []
            if turn.get("unparsed"):
                verdicts.append(Verdict("simulator", "simulated turn", "unparsed", None, None,
                                        (turn.get("call") or {}).get("reason"), (turn.get("call") or {}).get("raw")))
            label = "simulated user" + (f" · stops: {turn['stop']}" if turn.get("stop") else "") + (" · scripted opening" if turn.get("scripted") else "")
            rows.append(TurnRow(number=turn["number"], role="user", text=turn.get("text", ""), verdicts=verdicts,
                                images=[turn["image"]] if turn.get("image") else [], label=f"{label} · turn {turn['number']}"))
        else:
            failure = [Verdict("bot failure", "bot turn", "error", None, None, turn["failure"], None)] if turn.get("failure") else []
            rows.append(TurnRow(number=turn["number"], role="assistant", text=bot_text(turn), verdicts=failure,
                                label=f"bot under test · turn {turn['number']}"))
    whole = [Verdict("outcome", "conversation", "ok", record.get("outcome"), f"stopped: {record.get('stop_reason')}", None, None)]
    whole += [Verdict(f"check: {c['check']}", "conversation", "ok", "passed" if c["passed"] else "not passed", None, None, None)
              for c in record.get("checks", [])]
    whole += [_unit(u) for u in record.get("conversation_units", [])]
    return ConversationView(system=f"scenario {record.get('scenario')} (trial {record.get('trial')})", turns=rows, whole=whole,
                            system_label="scenario")
