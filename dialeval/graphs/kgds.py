"""KGDS: summarize, reflect, then evaluate both summaries hierarchically (one sample).

    decompose (only paragraphs without atomic facts)
      -> summarize -> reflect x reflection_rounds      (skipped when predictions are given)
      -> verify_facts (ABS)  |  verify_opinions -> classify_errors  |  feedback (EBS)
      -> score (pure metrics)
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

import dialeval.agents.kgds_error_classifier  # noqa: F401  (registers the agents)
import dialeval.agents.kgds_fact_decomposer  # noqa: F401
import dialeval.agents.kgds_fact_verifier  # noqa: F401
import dialeval.agents.kgds_feedback_judge  # noqa: F401
import dialeval.agents.kgds_opinion_verifier  # noqa: F401
import dialeval.agents.kgds_reflection  # noqa: F401
import dialeval.agents.kgds_summarizer  # noqa: F401
from dialeval.agents.base import agent_node
from dialeval.agents.kgds_common import options_of
from dialeval.config import EvalContext
from dialeval.data.kgds import prediction_summaries
from dialeval.metrics.kgds import sample_scores

EVALUATE = ["verify_facts", "verify_opinions", "feedback"]


class KgdsInput(TypedDict, total=False):
    sample: dict[str, Any]  # a KgdsSample dump
    options: dict[str, Any]  # KgdsOptions
    predictions: list[dict[str, Any]] | None  # Prediction dumps; None = generate summaries
    facts: Annotated[list[dict[str, Any]], operator.add]  # scored facts (ScoredFact dumps + fact_id)
    fact_gaps: list[int]  # paragraphs whose atomic facts are unknown


class KgdsState(KgdsInput, total=False):
    round: int
    summaries: Annotated[list[dict[str, Any]], operator.add]
    decompositions: list[dict[str, Any]]
    fact_checks: Annotated[list[dict[str, Any]], operator.add]
    opinion_checks: Annotated[list[dict[str, Any]], operator.add]
    error_checks: Annotated[list[dict[str, Any]], operator.add]
    feedback: Annotated[list[dict[str, Any]], operator.add]
    scores: dict[str, Any]


def use_predictions(state: KgdsState) -> dict[str, Any]:
    return {"summaries": prediction_summaries(state["predictions"] or [])}


def score(state: KgdsState) -> dict[str, Any]:
    sample = state["sample"]
    supporting = {p["paragraph_index"] for p in sample["BSP"]}
    return {
        "scores": sample_scores(
            supporting=supporting,
            nonsupporting={p["paragraph_index"] for p in sample["SBK"]} - supporting,
            n_opinions=len(sample["CAO"]),
            summaries=state.get("summaries", []),
            fact_checks=state.get("fact_checks", []),
            opinion_checks=state.get("opinion_checks", []),
            error_checks=state.get("error_checks", []),
            fact_gaps=state.get("fact_gaps", []),
        )
    }


def after_decompose(state: KgdsState) -> str:
    return "use_predictions" if state.get("predictions") is not None else "summarize"


def after_summaries(state: KgdsState) -> str | list[str]:
    if state.get("round", 0) < options_of(state).reflection_rounds:
        return "reflect"
    return EVALUATE


def build_graph():
    builder = StateGraph(KgdsState, input_schema=KgdsInput, context_schema=EvalContext)
    builder.add_node("decompose", agent_node("fact_decomposer", "kgds.fact_decomposer"))
    builder.add_node("use_predictions", use_predictions)
    builder.add_node("summarize", agent_node("summarizer", "kgds.summarizer"))
    builder.add_node("reflect", agent_node("reflection", "kgds.reflection"))
    builder.add_node("verify_facts", agent_node("fact_verifier", "kgds.fact_verifier"))
    builder.add_node("verify_opinions", agent_node("opinion_verifier", "kgds.opinion_verifier"))
    builder.add_node("classify_errors", agent_node("error_classifier", "kgds.error_classifier"))
    builder.add_node("feedback", agent_node("feedback_judge", "kgds.feedback_judge"))
    builder.add_node("score", score)

    builder.add_edge(START, "decompose")
    builder.add_conditional_edges("decompose", after_decompose, ["use_predictions", "summarize"])
    builder.add_conditional_edges("summarize", after_summaries, ["reflect", *EVALUATE])
    builder.add_conditional_edges("reflect", after_summaries, ["reflect", *EVALUATE])
    for node in EVALUATE:
        builder.add_edge("use_predictions", node)
    builder.add_edge("verify_opinions", "classify_errors")
    builder.add_edge(["verify_facts", "classify_errors", "feedback"], "score")
    builder.add_edge("score", END)
    return builder.compile(name="kgds")
