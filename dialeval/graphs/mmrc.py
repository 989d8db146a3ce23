"""MMRC with NOTE-TAKING over one conversation.

    turn i:  reply (live replies only) || take_note (NOTE-TAKING on only) -> advance
    after the last turn:  answer the questions (notes off / on)
                          -> judge || extract_items || detect_refusals
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

import dialeval.agents.mmrc_helpers  # noqa: F401  (registers the agents)
import dialeval.agents.mmrc_judge  # noqa: F401
import dialeval.agents.mmrc_notetaker  # noqa: F401
import dialeval.agents.mmrc_responder  # noqa: F401
from dialeval.agents.base import agent_node
from dialeval.config import EvalContext


class MmrcInput(TypedDict):
    item: dict[str, Any]


class MmrcState(TypedDict, total=False):
    item: dict[str, Any]
    turn: int
    replies: Annotated[list[dict[str, Any]], operator.add]
    note_updates: Annotated[list[dict[str, Any]], operator.add]
    answers: list[dict[str, Any]]
    grades: list[dict[str, Any]]
    item_checks: list[dict[str, Any]]
    refusal_checks: list[dict[str, Any]]


TURN_NODES = ["reply", "take_note"]


def advance(state: MmrcState) -> dict[str, Any]:
    return {"turn": state.get("turn", 0) + 1}


def next_step(state: MmrcState) -> list[str] | str:
    return TURN_NODES if state["turn"] < len(state["item"]["turns"]) else "answer"


def build_graph():
    builder = StateGraph(MmrcState, input_schema=MmrcInput, context_schema=EvalContext)
    builder.add_node("reply", agent_node("reply", "mmrc.reply"))
    builder.add_node("take_note", agent_node("notetaker", "mmrc.notetaker"))
    builder.add_node("advance", advance)
    builder.add_node("answer", agent_node("answer", "mmrc.answer"))
    builder.add_node("judge", agent_node("judge", "mmrc.ability_judge"))
    builder.add_node("extract_items", agent_node("item_extractor", "mmrc.item_extractor"))
    builder.add_node("detect_refusals", agent_node("refusal_detector", "mmrc.refusal_detector"))

    builder.add_edge(START, "reply")
    builder.add_edge(START, "take_note")
    builder.add_edge(TURN_NODES, "advance")
    builder.add_conditional_edges("advance", next_step, [*TURN_NODES, "answer"])
    for check in ("judge", "extract_items", "detect_refusals"):
        builder.add_edge("answer", check)
        builder.add_edge(check, END)
    return builder.compile(name="mmrc")
