"""VDAct: walk one dialogue turn by turn, judging each turn with the verdicts so far.

    START -> judge_turn -> (more turns? judge_turn : END)

The state carries ``judged`` (one verdict per finished turn, in order), so the
session judge (VDEval) sees turns 1..t-1 with their ratings and rationales when it
grades turn t; the turn-level baselines ignore it. Turns of one dialogue are
therefore sequential; dialogues run in parallel in the runner.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

import dialeval.agents.vdact_llm_acc  # noqa: F401  (registers the agents)
import dialeval.agents.vdact_llm_rel  # noqa: F401
import dialeval.agents.vdact_session_judge  # noqa: F401
import dialeval.agents.vdact_turn_judge  # noqa: F401
from dialeval.agents.base import NodeFn, resolve_agent
from dialeval.config import EvalContext

# option `judge` -> the agent used for the role "judge" unless `agents: {judge: ...}` says otherwise
JUDGE_AGENTS = {
    "session": "vdact.session_judge",
    "turn": "vdact.turn_judge",
    "llm_acc": "vdact.llm_acc",
    "llm_rel": "vdact.llm_rel",
}


class VdactInput(TypedDict):
    dialogue: dict[str, Any]


class VdactState(TypedDict, total=False):
    dialogue: dict[str, Any]
    index: int  # the next turn to judge
    judged: Annotated[list[dict[str, Any]], operator.add]


def judge_node() -> NodeFn:
    """Runs the judge chosen by option ``judge`` (or ``agents.judge``) on the next turn."""
    built: dict[str, NodeFn] = {}

    async def judge_turn(state: VdactState, runtime: Any) -> dict[str, Any]:
        context = runtime.context if runtime is not None and runtime.context is not None else EvalContext()
        if isinstance(context, dict):
            context = EvalContext.model_validate(context)
        kind = context.options.get("judge", "session")
        if kind not in JUDGE_AGENTS:
            raise KeyError(f"option judge={kind!r}: choose one of {sorted(JUDGE_AGENTS)}")
        entry = resolve_agent("judge", JUDGE_AGENTS[kind], context)
        if entry.name not in built:
            built[entry.name] = entry.build()
        return await built[entry.name](state, context)

    return judge_turn


def more_turns(state: VdactState) -> str:
    return "judge_turn" if state.get("index", 0) < len(state["dialogue"]["turns"]) else END


def build_graph():
    builder = StateGraph(VdactState, input_schema=VdactInput, context_schema=EvalContext)
    builder.add_node("judge_turn", judge_node())
    builder.add_conditional_edges(START, more_turns, ["judge_turn", END])
    builder.add_conditional_edges("judge_turn", more_turns, ["judge_turn", END])
    return builder.compile(name="vdact")
