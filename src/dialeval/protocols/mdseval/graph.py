"""MDSEval over one dialogue: every selected evaluator judges its five summaries.

    START -> pointwise || pairwise || faithfulness || image_prompt || checklist || summarizer -> END

Each node is the agent the run selects for its role; a node whose evaluator is not in
the ``evaluators`` option (or ``setups`` is empty, for the summarizer) returns nothing.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from dialeval.config import EvalContext
from dialeval.protocols.mdseval.common import ROLES
from dialeval.protocols.mdseval import checklist, faithfulness, image_prompt, pairwise, pointwise, summarizer  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)

Rows = Annotated[list[dict[str, Any]], operator.add]


class MdsevalInput(TypedDict):
    record: dict[str, Any]  # one dialogue record as in MDSEval_annotations.json


class MdsevalState(TypedDict, total=False):
    record: dict[str, Any]
    scores: Rows  # pointwise, image_prompt and checklist scores
    preferences: Rows
    faithfulness: Rows
    captions: Rows
    candidates: Rows


def build_graph():
    builder = StateGraph(MdsevalState, input_schema=MdsevalInput, context_schema=EvalContext)
    ROLES.add_nodes(builder)
    for role in ROLES:
        builder.add_edge(START, role.node)
        builder.add_edge(role.node, END)
    return builder.compile(name="mdseval")
