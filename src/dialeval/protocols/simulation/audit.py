"""The conversation audit: one model call reviewing every simulated turn once the conversation ends.

Why: a per-turn audit doubles the calls a simulation makes (one audit per simulated turn).
Reviewing the finished conversation once reads each turn with what came before and after
it, and the code checks still run on every turn as it is written (nodes.py), so the
faults code can see stop the conversation at once. ``audit: turn`` keeps the per-turn call.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import Command

from dialeval.agents.judge import Judge
from dialeval.agents.simulated_user import facts_text
from dialeval.agents.simulation_auditor import ConversationAudit, conversation_schema, rules_text, turn_checker
from dialeval.protocols.simulation.common import SimulationOptions
from dialeval.protocols.simulation.nodes import context_of, fitted, stable_prefix
from dialeval.protocols.simulation.scenario import scenario_of
from dialeval.protocols.simulation.transcript import turn_line

CONVERSATION_AUDITOR = Judge("simulation.conversation_auditor", "simulation_auditor", "simulation", "simulation/auditor_conversation",
                             ConversationAudit, template_key="simulation_auditor_conversation")


def audited_turns(turns: list[dict[str, Any]]) -> list[int]:
    """The simulated turns the model reviews (not a scripted opening, not an unreadable turn)."""
    return [t["number"] for t in turns if t["role"] == "user" and not t.get("scripted") and not t.get("unparsed")]


async def audit_conversation(state: dict[str, Any], runtime: Any) -> Command[Any]:
    """Review the finished conversation (``audit: conversation``); findings spoil it as a
    per-turn finding does (re-simulated while ``resimulate`` allows)."""
    context = context_of(runtime)
    options = SimulationOptions.of(context)
    turns = state.get("turns", [])
    checked = audited_turns(turns)
    if options.audit != "conversation" or state.get("conversation_audited") or not checked:
        return Command(goto="judge")
    scenario = scenario_of(state)
    ctx = CONVERSATION_AUDITOR.context(context)
    values = {"persona": scenario.persona, "goal": scenario.goal, "hidden_facts": facts_text(scenario.hidden_facts), "rules": rules_text()}
    lines = [turn_line(t) for t in turns]

    def fit(numbers: list[int]) -> tuple[Any, int]:
        messages, shown, _ = fitted(lambda _note, conversation: ctx.template.render(**values, conversation=conversation,
                                                                                   turns=", ".join(map(str, numbers))),
                                    lines, [], options.context_budget)
        return messages, shown

    messages, shown = fit(checked)
    seen = {t["number"] for t in turns[len(turns) - shown:]} if shown else set()
    if not set(checked) <= seen:  # the oldest turns did not fit the budget: they are not reviewed
        checked = [n for n in checked if n in seen] or checked[-1:]
        messages, _ = fit(checked)
    answer = await CONVERSATION_AUDITOR.ask(ctx, stable_prefix(messages, "</hidden_facts>"), validate=turn_checker(checked),
                                            json_schema=conversation_schema(checked))
    findings = [f.model_dump() for f in answer.value.findings] if answer.value else []
    record = {"turn": None, "turns": checked, "mode": "conversation", "status": answer.call.status, "findings": findings,
              "rationale": answer.value.rationale if answer.value else None, "call": answer.call.model_dump()}
    return Command(goto="resimulate" if findings else "judge", update={"audits": [record], "conversation_audited": True})
