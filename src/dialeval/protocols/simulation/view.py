"""A simulated conversation as the viewer shows it: the scenario in a box, audit flags beside the
simulated turns, bot failures beside the bot's, and the outcome with what decided it.

Outcomes are shown by what they are (success, failure, bot failure, simulator failure, judge
failure: the badge's colour follows), verdicts as their words.
"""

from __future__ import annotations

import json
from typing import Any

from dialeval.protocols.simulation.transcript import bot_text
from dialeval.report.view_rows import ConversationView, TurnRow, Verdict

OUTCOME_WORDS = {"success": "success", "failure": "failure", "bot_failure": "bot failure",
                 "simulator_failure": "simulator failure", "judge_failure": "judge failure"}


def _audit(audit: dict[str, Any]) -> list[Verdict]:
    how = "code checks" if audit.get("status") == "code" else "model audit"
    if not audit.get("findings"):
        status = "ok" if audit.get("status") in ("ok", "code") else str(audit.get("status"))
        return [Verdict("audit", "simulated turn", status, f"kept the rules ({how})" if status == "ok" else None,
                        audit.get("rationale"), (audit.get("call") or {}).get("reason"), None)]
    return [Verdict(f"audit: {f['rule']}", "simulated turn", "flagged", f["rule"], f.get("evidence"),
                    audit.get("rationale") or how, None) for f in audit["findings"]]


def _unit(unit: dict[str, Any]) -> Verdict:
    call = unit.get("call") or {}
    return Verdict(str(unit.get("criterion")), str(unit.get("level", "turn")), str(unit.get("status")), unit.get("verdict"),
                   unit.get("rationale"), unit.get("reason") or call.get("reason"), None)


def _passed(passed: bool | None) -> tuple[str, str]:
    """(status, word) of a model-free part: passed, failed, or could not say."""
    return ("ok", "passed") if passed else ("undecided", "could not say") if passed is None else ("failed", "failed")


def scenario_text(spec: dict[str, Any]) -> str:
    """The scenario as the box above the conversation shows it: who, what, what they know, what counts."""
    lines = [f"persona: {spec.get('persona', '?')}", f"goal: {spec.get('goal', '?')}"]
    facts = spec.get("hidden_facts") or {}
    lines.append("hidden facts: " + ("; ".join(f"{k} = {v}" for k, v in facts.items()) or "none"))
    if spec.get("opening"):
        lines.append(f"opening: {spec['opening']}")
    success = spec.get("success") or {}
    actions = success.get("actions")
    if actions:
        calls = ", ".join(f"{c['name']}({json.dumps(c.get('args') or {}, ensure_ascii=False)})" for c in actions.get("calls", []))
        lines.append(f"actions ({actions.get('match', 'unordered')}): {calls or 'none'}")
    for check in success.get("checks") or []:
        kind = next(k for k in ("said", "pattern", "tool", "not_tool") if check.get(k))
        args = f" {json.dumps(check['args'], ensure_ascii=False)}" if check.get("args") else ""
        lines.append(f"check: {kind.replace('_', ' ')} {check[kind]}{args}")
    if success.get("state"):
        lines.append(f"state: {success['state']}")
    lines += [f"criterion: {c['name']}: {c['description']}" for c in success.get("criteria") or []]
    return "\n".join(lines)


def whole_verdicts(record: dict[str, Any]) -> list[Verdict]:
    """The outcome first (its badge coloured by the outcome), then what decided it."""
    outcome = str(record.get("outcome"))
    whole = [Verdict("outcome", "conversation", outcome, OUTCOME_WORDS.get(outcome, outcome), f"stopped: {record.get('stop_reason')}",
                     record.get("bot_failure"), None)]
    actions = record.get("actions")
    if actions:
        status, word = _passed(actions["passed"])
        missing = f"missing: {', '.join(actions['missing'])}" if actions["missing"] else ""
        extra = f"not expected: {', '.join(actions['extra'])}" if actions["extra"] else ""
        whole.append(Verdict(f"actions ({actions['match']})", "conversation", status, word,
                             "made: " + (", ".join(actions["made"]) or "no tool call"), "; ".join(p for p in (missing, extra) if p) or None, None))
    for check in record.get("checks", []):
        status, word = _passed(check["passed"])
        whole.append(Verdict(f"check: {check['check']}", "conversation", status, word, None, None, None))
    state = record.get("final_state")
    if state:
        status, word = _passed(state["passed"])
        whole.append(Verdict(f"state: {state['state']}", "conversation", status, word, state.get("reason"), None, None))
    return whole + [_unit(u) for u in record.get("conversation_units", [])]


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    turns = record.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    audits = {a["turn"]: a for a in record.get("audits", []) if a.get("turn") is not None}
    reviewed = [a for a in record.get("audits", []) if a.get("turn") is None]  # the conversation audit
    flagged_later: dict[int, list[Verdict]] = {f["turn"]: [] for a in reviewed for f in a.get("findings", [])}
    for a in reviewed:
        for f in a.get("findings", []):
            flagged_later[f["turn"]].append(Verdict(f"audit: {f['rule']}", "simulated turn", "flagged", f["rule"], f.get("evidence"),
                                                    a.get("rationale") or "conversation audit", None))
    rows = []
    for turn in turns:
        if turn["role"] == "user":
            verdicts = (_audit(audits[turn["number"]]) if turn["number"] in audits else []) + flagged_later.get(turn["number"], [])
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
    whole = whole_verdicts(record)
    for a in reviewed:
        status = "ok" if a.get("status") == "ok" and not a.get("findings") else "flagged" if a.get("findings") else str(a.get("status"))
        whole.append(Verdict("conversation audit", "conversation", status, f"{len(a.get('findings', []))} findings",
                             a.get("rationale"), (a.get("call") or {}).get("reason"), None))
    spec = record.get("scenario_spec") or {}
    box = f"scenario {record.get('scenario')} (trial {record.get('trial')})\n" + scenario_text(spec) if spec else \
        f"scenario {record.get('scenario')} (trial {record.get('trial')})"
    return ConversationView(system=box, turns=rows, whole=whole, system_label="scenario")


def item_labels(records: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Each score in words (``item_scores``' dimensions): the outcome behind ``success``, a criterion's label."""
    out: dict[str, dict[str, str]] = {}
    for r in records:
        if r.get("outcome") is not None:
            out.setdefault("success", {})[r["id"]] = OUTCOME_WORDS.get(r["outcome"], r["outcome"])
        for u in r.get("conversation_units", []):
            if isinstance(u.get("verdict"), str):
                out.setdefault(u["criterion"], {})[r["id"]] = u["verdict"]
    return out
