"""The smallest protocol: one judge call per answer.

The input is one record of the answers data file (``id``, ``context``, ``question``,
``reference``, ``answer``, ``system``), so Studio takes a line of that file as it is.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from dialeval.config import EvalContext
from dialeval.protocols.answers import judge  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)
from dialeval.protocols.answers.common import ROLES
from dialeval.protocols.answers.state import AnswerInput, AnswerOutput, AnswerState


def build_graph():
    builder = StateGraph(AnswerState, input_schema=AnswerInput, output_schema=AnswerOutput, context_schema=EvalContext)
    ROLES.add_nodes(builder)
    builder.add_edge(START, ROLES.node("judge"))
    builder.add_edge(ROLES.node("judge"), END)
    return builder.compile(name="answers")
