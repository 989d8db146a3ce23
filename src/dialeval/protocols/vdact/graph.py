"""VDAct: walk one dialogue turn by turn, judging each turn with the verdicts so far.

    START -> prepare -> judge_turn -> (more turns? judge_turn : END)

The input is the benchmark's own format: one dialogue's prediction records
(``{id, dial_id, turn_num, question, ref_answer, gen_answer}``), optionally its video
summary and the one-shot example. ``prepare`` checks them and builds the dialogue; the
state then carries ``judged`` (one verdict per finished turn, in order), so the session
judge (VDEval) sees turns 1..t-1 with their ratings and rationales when it grades turn
t; the turn-level judges ignore it. Turns of one dialogue are sequential; dialogues run
in parallel in the runner.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from dialeval.agents.base import NodeFn, resolve_agent
from dialeval.config import EvalContext
from dialeval.protocols.vdact import lave_judge, llm_acc, llm_rel, session_judge, turn_judge, video_chatgpt  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)
from dialeval.protocols.vdact.common import ROLES

JUDGE_TURN = ROLES.node("judge")

# option `judge` -> the agent used for the role "judge" unless `agents: {judge: ...}` says otherwise
JUDGE_AGENTS = {
    "session": "vdact.session_judge",
    "turn": "vdact.turn_judge",
    "lave": "vdact.lave_judge",
    "video_chatgpt": "vdact.video_chatgpt",
    "llm_acc": "vdact.video_chatgpt",  # one Video-ChatGPT call gives LLM-Acc and LLM-Rel
    "llm_rel": "vdact.video_chatgpt",
}


class VdactInput(TypedDict):
    """One dialogue in the prediction-file format (see docs/vdact.md for an example)."""

    records: Annotated[list[dict[str, Any]], Field(description="one dialogue's rows of a prediction file: {dialogue_id, turn_id, question, ref_answer, gen_answer, ...}")]
    summary: NotRequired[Annotated[str | None, Field(description="the video summary; absent: looked up with the options kg_dir / summary_path")]]
    example: NotRequired[Annotated[dict[str, Any] | None, Field(description="the one-shot example; absent: option example_path, else the built-in one")]]


class VdactState(TypedDict, total=False):
    records: list[dict[str, Any]]
    summary: str | None
    example: dict[str, Any] | None
    dialogue: dict[str, Any]
    index: int  # the next turn to judge
    judged: Annotated[list[dict[str, Any]], operator.add]


def _context(runtime: Any) -> EvalContext:
    context = runtime.context if runtime is not None and runtime.context is not None else EvalContext()
    return EvalContext.model_validate(context) if isinstance(context, dict) else context


async def prepare(state: VdactState, runtime: Any) -> dict[str, Any]:
    """Input records -> the dialogue to judge (summary attached), and the example if one is configured.

    Async, like ``more_turns``: LangGraph runs a sync node or branch in a thread pool, a
    thread hand-off per step that cost more CPU than the step's own work."""
    from dialeval.protocols.vdact.data import dialogue_input, load_example
    from dialeval.protocols.vdact.summaries import explicit_summaries
    from dialeval.protocols.vdact.options import VdactOptions

    opts = _context(runtime).options_as(VdactOptions, "vdact")
    dialogue = dialogue_input(
        state.get("records"),  # type: ignore[arg-type]
        summary=state.get("summary"),
        summary_kind=opts.summary_kind,  # type: ignore[arg-type]
        kg_dir=opts.kg_dir,
        summary_path=opts.summary_path,
    )
    out: dict[str, Any] = {"dialogue": dialogue, "index": 0}
    if not state.get("example") and opts.example_path:
        source = explicit_summaries(opts.summary_kind, opts.kg_dir, opts.summary_path)  # type: ignore[arg-type]
        out["example"] = load_example(opts.example_path, opts.example_dialogue, source).model_dump()
    return out


def judge_node() -> NodeFn:
    """Runs the judge chosen by option ``judge`` (or ``agents.judge``) on the next turn."""
    built: dict[str, NodeFn] = {}

    async def judge_turn(state: VdactState, runtime: Any) -> dict[str, Any]:
        context = _context(runtime)
        kind = context.options.get("judge", "session")
        if kind not in JUDGE_AGENTS:
            raise KeyError(f"option judge={kind!r}: choose one of {sorted(JUDGE_AGENTS)}")
        entry = resolve_agent("judge", JUDGE_AGENTS[kind], context)
        if entry.name not in built:
            built[entry.name] = entry.build()
        return await built[entry.name](state, context)

    return judge_turn


async def more_turns(state: VdactState) -> str:
    return JUDGE_TURN if state.get("index", 0) < len(state["dialogue"]["turns"]) else END


def build_graph():
    builder = StateGraph(VdactState, input_schema=VdactInput, context_schema=EvalContext)
    builder.add_node("prepare", prepare)
    ROLES.add_nodes(builder, custom={"judge": judge_node()})
    builder.add_edge(START, "prepare")
    builder.add_conditional_edges("prepare", more_turns, [JUDGE_TURN, END])
    builder.add_conditional_edges(JUDGE_TURN, more_turns, [JUDGE_TURN, END])
    return builder.compile(name="vdact")
