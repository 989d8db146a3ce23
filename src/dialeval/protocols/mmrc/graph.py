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
from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from dialeval.protocols.mmrc.common import ROLES
from dialeval.protocols.mmrc.notetaker import clear_note
from dialeval.config import EvalContext
from dialeval.protocols.mmrc import helpers, judge, notetaker, responder  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)


class MmrcInput(TypedDict):
    """One conversation, exactly as a record of the data file."""

    id: Annotated[str, Field(description="the conversation's id")]
    domain: NotRequired[Annotated[str, Field(description="its topic, for reports")]]
    turns: Annotated[list[dict[str, Any]], Field(description="user turns in order: {user, images? (paths relative to the server's folder, or URLs), assistant? (a recorded reply)}")]
    questions: Annotated[list[dict[str, Any]], Field(description="the evaluation questions: {ability (IE, CR, IU, IM, MR or AR), question, answer, format?, options?, items? (IE), images? (IM), refuse? (AR)}")]


class MmrcState(MmrcInput, total=False):
    turn: int  # the user turn being replayed (0-based)
    question: int  # the evaluation question being asked (0-based)
    replies: Annotated[list[dict[str, Any]], operator.add]  # the model's own replies
    note_updates: Annotated[list[dict[str, Any]], operator.add]
    answers: Annotated[list[dict[str, Any]], operator.add]  # one per condition and question
    grades: list[dict[str, Any]]
    item_checks: list[dict[str, Any]]
    refusal_checks: list[dict[str, Any]]


ANSWER = ROLES.node("answer")
TURN_NODES = [ROLES.node("reply"), ROLES.node("notetaker")]
CHECK_NODES = [ROLES.node("judge"), ROLES.node("item_extractor"), ROLES.node("refusal_detector")]
RECURSION_LIMIT = 10_000


def next_turn(state: MmrcState) -> dict[str, Any]:
    return {"turn": state.get("turn", 0) + 1}


def after_turn(state: MmrcState) -> list[str] | str:
    return TURN_NODES if state["turn"] < len(state["turns"]) else ANSWER


def next_question(state: MmrcState) -> dict[str, Any]:
    return {"question": state.get("question", 0) + 1}


def after_question(state: MmrcState) -> list[str] | str:
    return ANSWER if state["question"] < len(state["questions"]) else CHECK_NODES


def build_graph():
    builder = StateGraph(MmrcState, input_schema=MmrcInput, context_schema=EvalContext)
    builder.add_node("clear_note", clear_note)
    ROLES.add_nodes(builder)
    builder.add_node("next_turn", next_turn)
    builder.add_node("next_question", next_question)

    builder.add_edge(START, "clear_note")
    for node in TURN_NODES:
        builder.add_edge("clear_note", node)
    builder.add_edge(TURN_NODES, "next_turn")
    builder.add_conditional_edges("next_turn", after_turn, [*TURN_NODES, ANSWER])
    builder.add_edge(ANSWER, "next_question")
    builder.add_conditional_edges("next_question", after_question, [ANSWER, *CHECK_NODES])
    for check in CHECK_NODES:
        builder.add_edge(check, END)
    # two steps a turn and two a question: past LangGraph's default limit of 25 (Studio)
    return builder.compile(name="mmrc").with_config(recursion_limit=RECURSION_LIMIT)
