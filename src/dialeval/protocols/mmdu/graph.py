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
from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from dialeval.config import EvalContext
from dialeval.protocols.mmdu import judge, responder  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)
from dialeval.protocols.mmdu.common import ROLES

RESPOND, JUDGE = ROLES.node("responder"), ROLES.node("judge")


class MmduInput(TypedDict):
    """One dialogue record as it is in the MMDU data file (see docs/data.md)."""

    id: Annotated[str, Field(description="the dialogue's id")]
    image: Annotated[list[Any], Field(description="its images in <image-k> order: a path (relative to the option image_root, else the server's folder) or URL, or {source, caption}")]
    conversations: Annotated[list[dict[str, Any]], Field(description="alternating {from: user|assistant, value} messages; assistant values are the reference answers")]
    answers: NotRequired[Annotated[list[str] | None, Field(description="the system's answer per user turn, to judge them as given; absent: the responder model answers")]]


class MmduState(TypedDict, total=False):
    id: str
    image: list[Any]
    conversations: list[dict[str, Any]]
    answers: list[str] | None
    turn: int  # the next question to answer (0-based)
    replies: Annotated[list[dict[str, Any]], operator.add]
    grades: list[dict[str, Any]]


def first_step(state: MmduState) -> str:
    return JUDGE if state.get("answers") is not None else RESPOND


def next_step(state: MmduState) -> str:
    replies = state.get("replies") or []
    stopped = bool(replies) and replies[-1]["call"]["status"] == "error"
    return RESPOND if not stopped and state.get("turn", 0) < len(state["conversations"]) // 2 else JUDGE


def build_graph():
    builder = StateGraph(MmduState, input_schema=MmduInput, context_schema=EvalContext)
    ROLES.add_nodes(builder)
    builder.add_conditional_edges(START, first_step, [RESPOND, JUDGE])
    builder.add_conditional_edges(RESPOND, next_step, [RESPOND, JUDGE])
    builder.add_edge(JUDGE, END)
    return builder.compile(name="mmdu")
