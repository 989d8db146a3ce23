"""The stop rule, the model-free success checks and a conversation's outcome: pure functions.

The stop rule is the graph's one conditional edge; its reasons, checked in this order:
``simulator_unparsed`` (the simulator's answer could not be read), ``audit_failure`` (the
auditor flagged the simulated turn), ``user_stop`` (the simulator said stop, with its
reason), ``bot_failure`` (the bot raised, timed out or sent no reply),
``checks_passed`` (every model-free part holds: checks and actions, one of them asking for
something that happened) and ``max_turns``. Actions are compared as agentevals compares
trajectories (strict, unordered, subset, superset); a wanted call fits a made one with the
same name and every given argument equal.
"""

from __future__ import annotations

import re
from typing import Any

from dialeval.protocols.simulation.scenario import Actions, Call, Check, Scenario
from dialeval.protocols.simulation.transcript import bot_text, tool_calls

Turn = dict[str, Any]
SIMULATOR_REASONS = ("simulator_unparsed", "audit_failure")


def calls_made(turns: list[Turn]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of every tool call of the bot's answered turns, in order."""
    return [call for t in turns if t["role"] == "assistant" and not t.get("failure")
            for m in t.get("messages", []) for call in tool_calls(m)]


def call_fits(made: tuple[str, dict[str, Any]], name: str, args: dict[str, Any]) -> bool:
    """A made call is ``name`` with every given argument equal (others may be present)."""
    return made[0] == name and all(made[1].get(k) == v for k, v in args.items())


def check_passes(check: Check, turns: list[Turn]) -> bool:
    """Whether the bot's turns so far satisfy ``check``."""
    bot = [t for t in turns if t["role"] == "assistant" and not t.get("failure")]
    if check.said:
        return any(check.said.lower() in bot_text(t).lower() for t in bot)
    if check.pattern:
        return any(re.search(check.pattern, bot_text(t)) for t in bot)
    fits = any(call_fits(made, check.tool or check.not_tool or "", check.args) for made in calls_made(turns))
    return fits if check.tool else not fits


def _pairs(made: list[tuple[str, dict[str, Any]]], wanted: list[Call]) -> dict[int, int]:
    """A largest pairing of wanted calls to distinct made calls (wanted index -> made index):
    augmenting paths, since a call with fewer given arguments fits several made calls."""
    owner: dict[int, int] = {}  # made index -> wanted index

    def place(w: int, seen: set[int]) -> bool:
        for m, call in enumerate(made):
            if m not in seen and call_fits(call, wanted[w].name, wanted[w].args):
                seen.add(m)
                if m not in owner or place(owner[m], seen):
                    owner[m] = w
                    return True
        return False

    for w in range(len(wanted)):
        place(w, set())
    return {w: m for m, w in owner.items()}


def actions_of(actions: Actions | None, turns: list[Turn]) -> dict[str, Any] | None:
    """The bot's tool calls against ``actions`` in its match mode: passed, and the calls
    missing (wanted, not made) and extra (made, not wanted)."""
    if actions is None:
        return None
    made, wanted = calls_made(turns), list(actions.calls)
    if actions.match == "strict":
        in_order = len(made) == len(wanted) and all(call_fits(m, w.name, w.args) for m, w in zip(made, wanted))
        pairs = {i: i for i in range(len(wanted)) if i < len(made) and call_fits(made[i], wanted[i].name, wanted[i].args)}
    else:
        pairs = _pairs(made, wanted)
    missing = [w.describe() for i, w in enumerate(wanted) if i not in pairs]
    extra = [Call(name=n, args=a).describe() for j, (n, a) in enumerate(made) if j not in pairs.values()]
    passed = {"strict": in_order if actions.match == "strict" else False, "unordered": not missing and not extra,
              "superset": not missing, "subset": not extra}[actions.match]
    return {"match": actions.match, "passed": passed, "missing": missing, "extra": extra,
            "made": [Call(name=n, args=a).describe() for n, a in made]}


def checks_of(scenario: Scenario, turns: list[Turn]) -> list[dict[str, Any]]:
    return [{"check": c.describe(), "passed": check_passes(c, turns)} for c in scenario.success.checks]


def goals_met(scenario: Scenario, turns: list[Turn]) -> bool:
    """Every model-free part holds, and one of them asked for something that happened
    (a ``not_tool`` check or a ``subset`` alone would end the conversation at once)."""
    actions = actions_of(scenario.success.actions, turns)
    return (scenario.success.wanted and all(c["passed"] for c in checks_of(scenario, turns))
            and (actions is None or actions["passed"]))


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
    if goals_met(scenario, turns):
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


def outcome(reason: str | None, checks: list[dict[str, Any]], criteria: list[dict[str, Any]], audits: list[dict[str, Any]],
            actions: dict[str, Any] | None = None, final_state: dict[str, Any] | None = None) -> str:
    """``simulator_failure`` (not the bot's doing: re-simulate), ``bot_failure``,
    ``judge_failure`` (a success criterion got no readable verdict, or the state check could not
    say), ``success`` (every check, the actions, the state and every criterion pass) or ``failure``."""
    if reason in SIMULATOR_REASONS or flagged(audits):
        return "simulator_failure"
    if reason == "bot_failure":
        return "bot_failure"
    if any(c["passed"] is None for c in criteria) or (final_state is not None and final_state["passed"] is None):
        return "judge_failure"
    parts = [c["passed"] for c in checks] + [c["passed"] for c in criteria]
    parts += [actions["passed"]] if actions is not None else []
    parts += [final_state["passed"]] if final_state is not None else []
    return "success" if all(parts) else "failure"
