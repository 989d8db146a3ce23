"""The dialogue graph over one conversation: the turns, then the conversation as a whole.

Its input is one record of the data file as it is (OpenAI ``messages`` or ShareGPT
``conversations``, with ``id``, ``system``, ``grounding``, ``metadata``, ``summary``), so
LangGraph Studio takes a conversation pasted from the file; the runner passes the loaded
form (``turns``).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired, TypedDict  # LangGraph reads schemas from these on 3.11

from dialeval.config import EvalContext
from dialeval.protocols.dialogue import conversation, grounding, judge, pairwise  # noqa: F401  (registers the agents, also when Studio loads this file alone)
from dialeval.protocols.dialogue.common import ROLES


class DialogueInput(TypedDict):
    """One conversation as in the data file."""

    id: NotRequired[str]
    messages: NotRequired[list[dict[str, Any]]]
    conversations: NotRequired[list[dict[str, Any]]]
    turns: NotRequired[list[dict[str, Any]]]
    system: NotRequired[str]
    grounding: NotRequired[list[str]]
    documents: NotRequired[list[str]]
    metadata: NotRequired[dict[str, Any]]
    summary: NotRequired[str]
    versus: NotRequired[list[dict[str, Any]]]  # the other system's turns (option versus)


class DialogueOutput(TypedDict):
    turn_units: list[dict[str, Any]]  # one per (assistant turn, turn-level criterion)
    conversation_units: list[dict[str, Any]]  # one per conversation- or summary-level criterion
    note_updates: list[dict[str, Any]]  # the note-taker's calls (context=notes)
    pairwise_units: list[dict[str, Any]]  # option versus: one per (unit, criterion), both orders
    grounding_units: list[dict[str, Any]]  # atomic facts per assistant turn (and summary), verified


class DialogueState(DialogueInput, DialogueOutput, total=False):
    pass


def build_graph():
    builder = StateGraph(DialogueState, input_schema=DialogueInput, output_schema=DialogueOutput, context_schema=EvalContext)
    ROLES.add_nodes(builder)
    builder.add_edge(START, ROLES.node("judge"))
    builder.add_edge(ROLES.node("judge"), ROLES.node("conversation_judge"))
    builder.add_edge(ROLES.node("conversation_judge"), ROLES.node("fact_checker"))
    builder.add_edge(ROLES.node("fact_checker"), ROLES.node("pairwise_judge"))
    builder.add_edge(ROLES.node("pairwise_judge"), END)
    return builder.compile(name="dialogue")
