"""The smallest protocol: one judge call per answer.

The input is one record of the answers data file (``id``, ``context``, ``question``,
``reference``, ``answer``, ``system``), so Studio takes a line of that file as it is.
"""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from pydantic import Field
from typing_extensions import NotRequired, TypedDict  # LangGraph reads schemas from these on 3.11

from dialeval.config import EvalContext
from dialeval.protocols.answers import judge  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)
from dialeval.protocols.answers.common import ROLES


class AnswerInput(TypedDict):
    """One record of the answers data file."""

    question: Annotated[str, Field(description="the question asked")]
    reference: Annotated[str, Field(description="the reference answer")]
    answer: Annotated[str, Field(description="the system's answer to grade")]
    id: NotRequired[Annotated[str, Field(description="the record's id")]]
    context: NotRequired[Annotated[str, Field(description="text the question is about, shown to the judge")]]
    system: NotRequired[Annotated[str, Field(description="which system answered (for comparing systems)")]]


class AnswerOutput(TypedDict):
    grade: dict[str, Any]  # the judge's AgentCall: status, parsed value, raw answer


class AnswerState(AnswerInput, AnswerOutput, total=False):
    pass


def build_graph():
    builder = StateGraph(AnswerState, input_schema=AnswerInput, output_schema=AnswerOutput, context_schema=EvalContext)
    ROLES.add_nodes(builder)
    builder.add_edge(START, ROLES.node("judge"))
    builder.add_edge(ROLES.node("judge"), END)
    return builder.compile(name="answers")
