"""The simulation benchmark's options and roles, shared by its nodes and graph."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.agents.roles import Role, RoleTable
from dialeval.config import EvalContext
from dialeval.memory.client import MemorySettings

ROLES = RoleTable(
    Role("user_simulator", "simulation.user_simulator", node="simulate_user"),
    Role("simulation_auditor", "simulation.auditor", node="audit", templates=("simulation_auditor", "simulation_auditor_conversation")),
)
# the finished conversation is judged by the dialogue benchmark's graph: its roles' keys
# are valid here too (models.judge, models.notetaker, templates.judge_conversation, ...)
JUDGING_DEFAULTS: dict[str, Any] = {"context": "full", "context_budget": 8000}


class SimulationOptions(BaseModel):
    """``options:`` of a simulation run (``--option key=value``)."""

    model_config = ConfigDict(extra="forbid")

    bot: Any = Field(default=None, description='the bot under test: "module:function", or {model, base_url, system}, {url, body, reply}, {graph}')
    k: int = Field(default=1, ge=1, le=100, description="runs per scenario (seeds 1..k), for pass^k and pass@k")
    judging: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the dialogue judge for finished conversations (rubric, context, context_budget, ...); "
        "default context full, budget 8000",
    )
    resimulate: int = Field(
        default=0, ge=0, le=5,
        description="simulate a conversation the simulator spoiled (audit finding, unreadable turn) again, with a new seed, at most this many times",
    )
    audit: Literal["turn", "conversation", "off"] = Field(
        default="conversation",
        description="the model audit of the simulated turns: once over the whole conversation when it ends (default), "
        "after every turn, or off; the code checks run on every turn in every mode",
    )
    context_budget: int = Field(default=4000, gt=0, description="the most tokens a simulator or auditor prompt may have (the dialogue default)")
    window_turns: int = Field(default=8, gt=0, description="the latest turns the simulator and auditor see beside the notes")
    note_top_k: int = Field(default=12, gt=0, description="the most note entries shown when all do not fit")
    memory: MemorySettings = Field(default_factory=MemorySettings)

    @field_validator("audit", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        """``audit=true``/``false`` as before: the default mode, or off."""
        return {True: "conversation", False: "off"}.get(value, value) if isinstance(value, bool) else value

    @classmethod
    def of(cls, context: EvalContext) -> SimulationOptions:
        return context.options_as(cls, "simulation")  # validated once per run (or Studio invocation)

    def judging_options(self) -> dict[str, Any]:
        return {**JUDGING_DEFAULTS, **self.judging}
