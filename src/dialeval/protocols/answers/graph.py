"""The smallest protocol: one judge call per answer.

The input is one record of the answers data file (``id``, ``context``, ``question``,
``reference``, ``answer``, ``system``), so Studio takes a line of that file as it is.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired, TypedDict  # LangGraph reads schemas from these on 3.11

from dialeval.agents.base import agent_node
from dialeval.config import EvalContext
from dialeval.protocols.answers import judge  # noqa: F401  (registers the judge when Studio loads this file by path)


class AnswerInput(TypedDict):
    """One record of the answers data file."""

    question: str
    reference: str
    answer: str
    id: NotRequired[str]
    context: NotRequired[str]
    system: NotRequired[str]


class AnswerOutput(TypedDict):
    grade: dict[str, Any]  # the judge's AgentCall: status, parsed value, raw answer


class AnswerState(AnswerInput, AnswerOutput, total=False):
    pass


def build_graph():
    builder = StateGraph(AnswerState, input_schema=AnswerInput, output_schema=AnswerOutput, context_schema=EvalContext)
    builder.add_node("judge", agent_node("judge", "answer_judge"))
    builder.add_edge(START, "judge")
    builder.add_edge("judge", END)
    return builder.compile(name="answers")
