"""The smallest protocol: one judge call per answer."""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

import dialeval.agents.answer_judge  # noqa: F401  (registers the agent)
from dialeval.agents.base import agent_node
from dialeval.config import EvalContext


class AnswerState(TypedDict, total=False):
    item: dict[str, Any]
    grade: dict[str, Any]


def build_graph():
    builder = StateGraph(AnswerState, context_schema=EvalContext)
    builder.add_node("judge", agent_node("judge", "answer_judge"))
    builder.add_edge(START, "judge")
    builder.add_edge("judge", END)
    return builder.compile(name="answers")
