"""MDSEval over one dialogue: every selected evaluator judges its five summaries.

    START -> pointwise || pairwise || faithfulness || image_prompt || checklist || summarizer -> END

Each node is the agent the run selects for its role; a node whose evaluator is not in
the ``evaluators`` option (or ``setups`` is empty, for the summarizer) returns nothing.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from dialeval.config import EvalContext
from dialeval.protocols.mdseval.common import ROLES
from dialeval.protocols.mdseval import checklist, faithfulness, image_prompt, pairwise, pointwise, summarizer  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)

Rows = Annotated[list[dict[str, Any]], operator.add]


class MdsevalInput(TypedDict):
    """One dialogue record as it is in MDSEval_annotations.json (see docs/data.md)."""

    dialogue_id: Annotated[str, Field(description="the dialogue's id")]
    images: Annotated[list[dict[str, Any]], Field(description="the shared images, each with image_statements (what it shows) and image_path or image_url")]
    summary_list: Annotated[list[dict[str, Any]], Field(description="the candidate summaries to judge, each with summary and summary_sentence_lvl (its sentences)")]
    dialogue_statements: NotRequired[Annotated[list[str], Field(description="statements standing in for the conversation's text")]]
    pseudo_summary: NotRequired[Annotated[str, Field(description="a reference summary, if the file has one")]]
    human_annotations: NotRequired[Annotated[list[dict[str, Any]], Field(description="per summary, the annotators' ratings per aspect (for the meta-evaluation)")]]
    dialogue: NotRequired[Annotated[list[dict[str, Any]] | None, Field(description="the conversation's turns (speaker, utterance), when merged in")]]
    record: NotRequired[Annotated[dict[str, Any], Field(description="the same record wrapped (how runs pass it); leave empty when the fields above are given")]]


class MdsevalState(MdsevalInput, total=False):
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
