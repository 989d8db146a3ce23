"""The simulation graph over one scenario: simulated user, auditor, bot, until the stop rule ends it; then the judge.

Its input is one scenario as in the data file (and ``trial``, the seed of a k-run), so
LangGraph Studio takes a scenario pasted from the suite.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Overwrite
from pydantic import Field
from typing_extensions import NotRequired, TypedDict  # LangGraph reads schemas from these on 3.11

from dialeval.config import EvalContext
from dialeval.protocols.simulation import nodes  # noqa: F401  (registers the agents, also when Studio loads this file alone)
from dialeval.protocols.simulation.audit import audit_conversation
from dialeval.protocols.simulation.common import ROLES, SimulationOptions
from dialeval.protocols.simulation.judging import dialogue_graph, judge_node
from dialeval.protocols.simulation.nodes import bot_node, context_of, item_id
from dialeval.protocols.simulation.replay import restore
from dialeval.protocols.simulation.rules import SIMULATOR_REASONS, stop_reason
from dialeval.protocols.simulation.scenario import scenario_of


class SimulationInput(TypedDict):
    """One scenario as in the data file."""

    id: Annotated[str, Field(description="the scenario's id")]
    persona: Annotated[str, Field(description="who the simulated user is")]
    goal: Annotated[str, Field(description="what the user wants from the bot")]
    success: Annotated[dict[str, Any], Field(description="{criteria: [rubric criteria, level conversation], actions: {match, calls: [{name, args}]}, "
                                                          "checks: [{said}|{pattern}|{tool, args}|{not_tool}], state: 'module:function'}")]
    hidden_facts: NotRequired[Annotated[dict[str, str], Field(description="what the user knows and says only when asked")]]
    opening: NotRequired[Annotated[str, Field(description="the first user message (else the simulator opens)")]]
    images: NotRequired[Annotated[list[Any], Field(description="pictures the user may show: files or data: URLs")]]
    max_turns: NotRequired[Annotated[int, Field(description="the most user turns (default 8)")]]
    metadata: NotRequired[Annotated[dict[str, Any], Field(description="free-form data kept with the results")]]
    trial: NotRequired[Annotated[int, Field(description="the run of this scenario (its seed), 1..k")]]


class SimulationOutput(TypedDict):
    turns: Annotated[list[dict[str, Any]], operator.add]  # user and bot turns in order
    audits: Annotated[list[dict[str, Any]], operator.add]  # one per simulated user turn
    stop_reason: str
    checks: list[dict[str, Any]]  # the model-free success checks at the end
    actions: dict[str, Any] | None  # the bot's tool calls against success.actions
    final_state: dict[str, Any] | None  # success.state's answer for this conversation's session
    criteria: list[dict[str, Any]]  # the success criteria's verdicts
    judged: dict[str, Any]  # the dialogue judge's output (turn_units, conversation_units, ...)
    outcome: str
    resimulated: Annotated[list[dict[str, Any]], operator.add]  # spoiled attempts simulated again (option resimulate)
    attempt: int  # 0, then 1.. once re-simulated


class SimulationState(SimulationInput, SimulationOutput, total=False):
    conversation_audited: bool  # the conversation audit has run on this attempt


def route(state: dict[str, Any]) -> str:
    """The stop rule, the graph's one conditional edge (an ended conversation passes the
    conversation audit, which goes on to the judge when the run audits per turn or not at all)."""
    reason = stop_reason(scenario_of(state), state.get("turns", []), state.get("audits", []))
    if reason is None:
        return ROLES.node("user_simulator")
    return "resimulate" if reason in SIMULATOR_REASONS else "audit_conversation"


async def resimulate(state: dict[str, Any], runtime: Any) -> Command[Any]:
    """A conversation the simulator spoiled starts again with the next seed, while the
    ``resimulate`` option allows; the spoiled attempt is kept in the record."""
    attempt = state.get("attempt") or 0
    if attempt >= SimulationOptions.of(context_of(runtime)).resimulate:
        return Command(goto="judge")
    turns, audits = state.get("turns", []), state.get("audits", [])
    spoiled = {"attempt": attempt, "stop_reason": stop_reason(scenario_of(state), turns, audits), "turns": turns, "audits": audits}
    return Command(goto=ROLES.node("user_simulator"), update={"turns": Overwrite([]), "audits": Overwrite([]), "attempt": attempt + 1,
                                                              "resimulated": [spoiled], "conversation_audited": False})


async def resume(state: dict[str, Any], runtime: Any) -> Command[Any]:
    """A conversation the run met before starts from its bot journal (:mod:`replay`): its bot
    turns are never called again; one cut by a crash is sent again with its key."""
    restored = restore(context_of(runtime), item_id(state))
    if restored is None:
        return Command(goto=ROLES.node("user_simulator"))
    goto = "bot" if restored.pending else route({**state, **restored.update})
    return Command(goto=goto, update=restored.update)


def build_graph():
    builder = StateGraph(SimulationState, input_schema=SimulationInput, output_schema=SimulationOutput, context_schema=EvalContext)
    ROLES.add_nodes(builder)
    builder.add_node("bot", bot_node)
    builder.add_node("resimulate", resimulate, destinations=(ROLES.node("user_simulator"), "judge"))
    builder.add_node("audit_conversation", audit_conversation, destinations=("resimulate", "judge"))
    builder.add_node("judge", judge_node(dialogue_graph()))  # the dialogue graph, built once, as its subgraph
    builder.add_node("resume", resume, destinations=(ROLES.node("user_simulator"), "bot", "resimulate", "audit_conversation"))
    builder.add_edge(START, "resume")
    builder.add_edge(ROLES.node("user_simulator"), ROLES.node("simulation_auditor"))
    builder.add_edge(ROLES.node("simulation_auditor"), "bot")
    builder.add_conditional_edges("bot", route, [ROLES.node("user_simulator"), "resimulate", "audit_conversation"])
    builder.add_edge("judge", END)
    return builder.compile(name="simulation").with_config(recursion_limit=1000)
