"""The stop rule, the model-free success checks and a conversation's outcome: pure functions.

The stop rule is the graph's one conditional edge; its reasons, checked in this order:
``simulator_unparsed`` (the simulator's answer could not be read), ``audit_failure`` (the
auditor flagged the simulated turn), ``user_stop`` (the simulator said stop, with its
reason), ``bot_failure`` (the bot raised, timed out or sent no reply),
``checks_passed`` (every model-free success check holds) and ``max_turns``.
"""

from __future__ import annotations

import re
from typing import Any

from dialeval.protocols.simulation.scenario import Check, Scenario
from dialeval.protocols.simulation.transcript import bot_text, tool_calls

Turn = dict[str, Any]
SIMULATOR_REASONS = ("simulator_unparsed", "audit_failure")


def check_passes(check: Check, turns: list[Turn]) -> bool:
    """Whether the bot's turns so far satisfy ``check``."""
    bot = [t for t in turns if t["role"] == "assistant" and not t.get("failure")]
    if check.said:
        return any(check.said.lower() in bot_text(t).lower() for t in bot)
    if check.pattern:
        return any(re.search(check.pattern, bot_text(t)) for t in bot)
    calls = [call for t in bot for m in t.get("messages", []) for call in tool_calls(m)]
    return any(name == check.tool and all(args.get(k) == v for k, v in check.args.items()) for name, args in calls)


def checks_of(scenario: Scenario, turns: list[Turn]) -> list[dict[str, Any]]:
    return [{"check": c.describe(), "passed": check_passes(c, turns)} for c in scenario.success.checks]


def flagged(audits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in audits if a.get("findings")]


def stop_reason(scenario: Scenario, turns: list[Turn], audits: list[dict[str, Any]]) -> str | None:
    """Why the conversation ends after its latest turn, or None to go on."""
    if not turns:
        return None
    last = turns[-1]
    users = [t for t in turns if t["role"] == "user"]
    if users and users[-1].get("unparsed"):
        return "simulator_unparsed"
    if flagged(audits):
        return "audit_failure"
    if users and users[-1].get("stop"):
        return "user_stop"
    if last["role"] == "assistant" and last.get("failure"):
        return "bot_failure"
    if last["role"] == "user":
        return None  # the bot has not answered yet
    if scenario.success.checks and all(c["passed"] for c in checks_of(scenario, turns)):
        return "checks_passed"
    if len(users) >= scenario.max_turns:
        return "max_turns"
    return None


def criterion_passes(scenario: Scenario, units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each success criterion's verdict and whether it passes (None: no readable verdict)."""
    by_name = {u["criterion"]: u for u in units}
    out = []
    for criterion in scenario.success.criteria:
        unit = by_name.get(criterion.name, {})
        verdict = unit.get("verdict")
        passed = None if verdict is None else str(verdict).lower() in criterion.passes()
        out.append({"criterion": criterion.name, "verdict": verdict, "status": unit.get("status", "not_judged"), "passed": passed})
    return out


def outcome(reason: str | None, checks: list[dict[str, Any]], criteria: list[dict[str, Any]], audits: list[dict[str, Any]]) -> str:
    """``simulator_failure`` (not the bot's doing: re-simulate), ``bot_failure``,
    ``judge_failure`` (a success criterion got no readable verdict), ``success`` or ``failure``."""
    if reason in SIMULATOR_REASONS or flagged(audits):
        return "simulator_failure"
    if reason == "bot_failure":
        return "bot_failure"
    if any(c["passed"] is None for c in criteria):
        return "judge_failure"
    passed = all(c["passed"] for c in checks) and all(c["passed"] for c in criteria)
    return "success" if passed else "failure"
