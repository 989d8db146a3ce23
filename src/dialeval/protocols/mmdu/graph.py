"""MMDU over one dialogue: answer the questions turn by turn (unless answers are given), then judge every turn.

    START -> respond -> respond -> ... (one node run per turn) -> judge -> END
    START -> judge -> END                  (the input carries the system's answers)

The input is a dialogue record in the data format (``id``, ``image``,
``conversations``) plus, optionally, ``answers`` (one per turn). Generation stops at a
reply that errored; the turns after it are left unanswered and unjudged.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired, TypedDict

from dialeval.agents.base import agent_node
from dialeval.config import EvalContext
from dialeval.protocols.mmdu import judge, responder  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)


class MmduInput(TypedDict):
    id: str
    image: list[Any]
    conversations: list[dict[str, Any]]
    answers: NotRequired[list[str] | None]


class MmduState(TypedDict, total=False):
    id: str
    image: list[Any]
    conversations: list[dict[str, Any]]
    answers: list[str] | None
    turn: int  # the next question to answer (0-based)
    replies: Annotated[list[dict[str, Any]], operator.add]
    grades: list[dict[str, Any]]


def first_step(state: MmduState) -> str:
    return "judge" if state.get("answers") is not None else "respond"


def next_step(state: MmduState) -> str:
    replies = state.get("replies") or []
    stopped = bool(replies) and replies[-1]["call"]["status"] == "error"
    return "respond" if not stopped and state.get("turn", 0) < len(state["conversations"]) // 2 else "judge"


def build_graph():
    builder = StateGraph(MmduState, input_schema=MmduInput, context_schema=EvalContext)
    builder.add_node("respond", agent_node("responder", "mmdu.responder"))
    builder.add_node("judge", agent_node("judge", "mmdu.judge"))
    builder.add_conditional_edges(START, first_step, ["respond", "judge"])
    builder.add_conditional_edges("respond", next_step, ["respond", "judge"])
    builder.add_edge("judge", END)
    return builder.compile(name="mmdu")
