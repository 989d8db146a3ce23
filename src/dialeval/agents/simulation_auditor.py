"""The simulation auditor: reads each simulated user turn against its scenario.

Why: a simulated user that leaves its persona, volunteers a hidden fact nobody asked
for, invents a fact, stops before its goal is settled or writes several turns at once
makes a conversation that says nothing about the bot. A turn with a finding makes the
conversation the simulator's failure, reported apart from the bot's and re-simulable.
Every rule is checked in code first (:mod:`dialeval.agents.simulation_checks`, what the
words alone show), and a turn code flags costs no model call. The model reviews the rest,
turn by turn or once over the whole conversation (:class:`ConversationAudit`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Rule = Literal["persona", "hidden_fact", "invented_fact", "early_stop", "one_turn"]
RULES: dict[str, str] = {
    "persona": "stays in the persona (voice, knowledge, situation); never speaks as an assistant or a model",
    "hidden_fact": "reveals a hidden fact only when the bot asked for it (or the goal cannot move without it)",
    "invented_fact": "states no fact about the user's situation that the scenario does not give",
    "early_stop": "does not stop with 'goal_reached' before the goal is settled, nor give up while the bot is still helping",
    "one_turn": "sends one user turn: no lines written for the bot, no several turns at once",
}


class Finding(BaseModel):
    rule: Rule
    evidence: str = Field(description="the words of the turn that break the rule")


class TurnFinding(Finding):
    turn: int = Field(description="the number of the simulated turn that breaks the rule")


class ConversationAudit(BaseModel):
    """Rationale first; the findings name their turn; none when every turn keeps every rule."""

    rationale: str
    findings: list[TurnFinding] = Field(default_factory=list)


def turn_checker(turns: list[int]) -> Any:
    """The conversation audit's meaning check: findings name turns that were to be checked."""

    def check(audit: ConversationAudit) -> str | None:
        wrong = [f.turn for f in audit.findings if f.turn not in turns]
        return f"finding for turn {wrong[0]}, which is not one of the turns to check ({turns})" if wrong else None

    return check


def conversation_schema(turns: list[int]) -> dict[str, Any]:
    """:class:`ConversationAudit`'s schema with the turn numbers :func:`turn_checker` accepts."""
    schema = ConversationAudit.model_json_schema()
    schema["$defs"]["TurnFinding"]["properties"]["turn"] = {"type": "integer", "enum": list(turns)}
    return schema


class TurnAudit(BaseModel):
    """Rationale first; no findings when the turn keeps every rule."""

    rationale: str
    findings: list[Finding] = Field(default_factory=list)


def rules_text() -> str:
    return "\n".join(f"- {name}: {text}" for name, text in RULES.items())
