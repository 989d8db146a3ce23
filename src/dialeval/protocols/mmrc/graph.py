"""MMRC with NOTE-TAKING over one conversation (the paper's Algorithm 1).

    clear_note (NOTE-TAKING on: the conversation's note starts empty)
    turn i:      reply (the model under test) || take_note (NOTE-TAKING on) -> next_turn
    question j:  answer (each condition: notes off / on)                    -> next_question
    then:        judge || extract_items || detect_refusals

The input is one conversation record as in the data file (see docs/mmrc.md).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired, TypedDict

from dialeval.agents.base import agent_node
from dialeval.protocols.mmrc.notetaker import clear_note
from dialeval.config import EvalContext
from dialeval.protocols.mmrc import helpers, judge, notetaker, responder  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)


class MmrcInput(TypedDict):
    """One conversation, exactly as a record of the data file."""

    id: str
    domain: NotRequired[str]
    turns: list[dict[str, Any]]  # {"user", "images"?, "assistant"?}
    questions: list[dict[str, Any]]  # {"ability", "question", "answer", ...}


class MmrcState(MmrcInput, total=False):
    turn: int  # the user turn being replayed (0-based)
    question: int  # the evaluation question being asked (0-based)
    replies: Annotated[list[dict[str, Any]], operator.add]  # the model's own replies
    note_updates: Annotated[list[dict[str, Any]], operator.add]
    answers: Annotated[list[dict[str, Any]], operator.add]  # one per condition and question
    grades: list[dict[str, Any]]
    item_checks: list[dict[str, Any]]
    refusal_checks: list[dict[str, Any]]


TURN_NODES = ["reply", "take_note"]
CHECK_NODES = ["judge", "extract_items", "detect_refusals"]
RECURSION_LIMIT = 10_000


def next_turn(state: MmrcState) -> dict[str, Any]:
    return {"turn": state.get("turn", 0) + 1}


def after_turn(state: MmrcState) -> list[str] | str:
    return TURN_NODES if state["turn"] < len(state["turns"]) else "answer"


def next_question(state: MmrcState) -> dict[str, Any]:
    return {"question": state.get("question", 0) + 1}


def after_question(state: MmrcState) -> list[str] | str:
    return "answer" if state["question"] < len(state["questions"]) else CHECK_NODES


def build_graph():
    builder = StateGraph(MmrcState, input_schema=MmrcInput, context_schema=EvalContext)
    builder.add_node("clear_note", clear_note)
    builder.add_node("reply", agent_node("reply", "mmrc.reply"))
    builder.add_node("take_note", agent_node("notetaker", "mmrc.notetaker"))
    builder.add_node("next_turn", next_turn)
    builder.add_node("answer", agent_node("answer", "mmrc.answer"))
    builder.add_node("next_question", next_question)
    builder.add_node("judge", agent_node("judge", "mmrc.ability_judge"))
    builder.add_node("extract_items", agent_node("item_extractor", "mmrc.item_extractor"))
    builder.add_node("detect_refusals", agent_node("refusal_detector", "mmrc.refusal_detector"))

    builder.add_edge(START, "clear_note")
    builder.add_edge("clear_note", "reply")
    builder.add_edge("clear_note", "take_note")
    builder.add_edge(TURN_NODES, "next_turn")
    builder.add_conditional_edges("next_turn", after_turn, [*TURN_NODES, "answer"])
    builder.add_edge("answer", "next_question")
    builder.add_conditional_edges("next_question", after_question, ["answer", *CHECK_NODES])
    for check in CHECK_NODES:
        builder.add_edge(check, END)
    # two steps a turn and two a question: past LangGraph's default limit of 25 (Studio)
    return builder.compile(name="mmrc").with_config(recursion_limit=RECURSION_LIMIT)
