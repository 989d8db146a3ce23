"""The simulation auditor: reads each simulated user turn against its scenario.

Why: a simulated user that leaves its persona, volunteers a hidden fact nobody asked
for, invents a fact, stops before its goal is settled or writes several turns at once
makes a conversation that says nothing about the bot. A turn with a finding makes the
conversation the simulator's failure, reported apart from the bot's and re-simulable.
One rule needs no model (a message that scripts both sides) and is checked in code.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

Rule = Literal["persona", "hidden_fact", "invented_fact", "early_stop", "one_turn"]
RULES: dict[str, str] = {
    "persona": "stays in the persona (voice, knowledge, situation); never speaks as an assistant or a model",
    "hidden_fact": "reveals a hidden fact only when the bot asked for it (or the goal cannot move without it)",
    "invented_fact": "states no fact about the user's situation that the scenario does not give",
    "early_stop": "does not stop with 'goal_reached' before the goal is settled, nor give up while the bot is still helping",
    "one_turn": "sends one user turn: no lines written for the bot, no several turns at once",
}
# a line that starts as another speaker's turn: the simulator wrote the bot's part too
_SCRIPTED = re.compile(r"^\s*(assistant|bot|agent|ai|support|user)\s*:", re.IGNORECASE | re.MULTILINE)


class Finding(BaseModel):
    rule: Rule
    evidence: str = Field(description="the words of the turn that break the rule")


class TurnAudit(BaseModel):
    """Rationale first; no findings when the turn keeps every rule."""

    rationale: str
    findings: list[Finding] = Field(default_factory=list)


def rules_text() -> str:
    return "\n".join(f"- {name}: {text}" for name, text in RULES.items())


def rule_findings(message: str) -> list[Finding]:
    """The findings code can make without a model."""
    lines = _SCRIPTED.findall(message)
    if len(lines) >= 2 or any(s.lower() != "user" for s in lines):
        return [Finding(rule="one_turn", evidence=message[:200])]
    return []
