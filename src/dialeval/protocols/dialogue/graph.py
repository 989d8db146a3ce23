"""The dialogue graph over one conversation: the turns, then the conversation as a whole.

Its input is one record of the data file as it is (OpenAI ``messages`` or ShareGPT
``conversations``, with ``id``, ``system``, ``grounding``, ``metadata``, ``summary``), so
LangGraph Studio takes a conversation pasted from the file; the runner passes the loaded
form (``turns``).
"""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from pydantic import Field
from typing_extensions import NotRequired, TypedDict  # LangGraph reads schemas from these on 3.11

from dialeval.config import EvalContext
from dialeval.conversation.data import Turn
from dialeval.protocols.dialogue import conversation, grounding, judge, pairwise  # noqa: F401  (registers the agents, also when Studio loads this file alone)
from dialeval.protocols.dialogue.common import ROLES


class DialogueInput(TypedDict):
    """One conversation as in the data file."""

    id: NotRequired[Annotated[str, Field(description="the conversation's id")]]
    messages: NotRequired[Annotated[list[dict[str, Any]], Field(description="OpenAI-style turns: {role: system|user|assistant|tool, content, tool_calls}")]]
    conversations: NotRequired[Annotated[list[dict[str, Any]], Field(description="ShareGPT-style turns: {from: human|gpt, value} (instead of messages)")]]
    turns: NotRequired[Annotated[list[Turn], Field(description="the loaded form runs and the simulation pass: {number, role, text, ...} (give messages or conversations instead)")]]
    system: NotRequired[Annotated[str, Field(description="the system prompt the assistant had")]]
    grounding: NotRequired[Annotated[list[str], Field(description="facts the assistant should stay faithful to")]]
    documents: NotRequired[Annotated[list[str], Field(description="documents the assistant could read (grounding)")]]
    metadata: NotRequired[Annotated[dict[str, Any], Field(description="free-form data kept with the results")]]
    summary: NotRequired[Annotated[str, Field(description="a summary of the conversation, for summary-level criteria")]]
    tools: NotRequired[Annotated[list[dict[str, Any]], Field(description="the tool definitions the assistant had (OpenAI or Anthropic shape)")]]
    reference_tool_calls: NotRequired[Annotated[list[dict[str, Any]], Field(description="the tool calls the whole conversation should make: {name, arguments}")]]
    versus: NotRequired[Annotated[list[dict[str, Any]], Field(description="the other system's turns, for pairwise judging (option versus)")]]


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
