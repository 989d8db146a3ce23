"""The state of the `answers` graph, apart from its wiring so the runner can read it
without importing LangGraph (the graph is one node: :data:`dialeval.protocols.answers.ONE_NODE`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import NotRequired, TypedDict  # LangGraph reads schemas from these on 3.11


class AnswerInput(TypedDict):
    """One record of the answers data file."""

    question: Annotated[str, Field(description="the question asked")]
    reference: Annotated[str, Field(description="the reference answer")]
    answer: Annotated[str, Field(description="the system's answer to grade")]
    id: NotRequired[Annotated[str, Field(description="the record's id")]]
    context: NotRequired[Annotated[str, Field(description="text the question is about, shown to the judge")]]
    system: NotRequired[Annotated[str, Field(description="which system answered (for comparing systems)")]]


class AnswerOutput(TypedDict):
    grade: dict[str, Any]  # the judge's AgentCall: status, parsed value, raw answer


class AnswerState(AnswerInput, AnswerOutput, total=False):
    pass
