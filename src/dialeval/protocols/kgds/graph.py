"""KGDS: summarize, reflect, then evaluate both summaries hierarchically (one sample).

The input is one sample exactly as it is in ``KGDS.json`` (``SBK``, ``KGD``, ``BSP``,
``CAO``, ``BSPAF``, ``BNPAF``), optionally with ``id``, ``options`` and ``predictions``.

    prepare (validate the sample, list the facts to verify)
      -> decompose (only paragraphs without atomic facts)
      -> summarize -> reflect x reflection_rounds      (skipped when predictions are given)
      -> verify_facts (ABS)  |  verify_opinions -> classify_errors  |  feedback (EBS)
      -> score (pure metrics)
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, cast

from langgraph.graph import END, START, StateGraph
from pydantic import Field
from typing_extensions import TypedDict  # LangGraph Studio on Python 3.11 needs these for schemas

from dialeval.protocols.kgds.common import ROLES, options_of
from dialeval.config import EvalContext
from dialeval.protocols.kgds.data import KgdsSample, prediction_summaries
from dialeval.protocols.kgds.metrics import sample_scores
from dialeval.protocols.kgds import error_classifier, fact_decomposer, fact_verifier, feedback_judge, opinion_verifier, reflection, summarizer  # noqa: F401  (registers the agents it wires, also when Studio loads this file alone)

# node names, from the role table
DECOMPOSE, SUMMARIZE, REFLECT = ROLES.node("fact_decomposer"), ROLES.node("summarizer"), ROLES.node("reflection")
VERIFY_FACTS, VERIFY_OPINIONS = ROLES.node("fact_verifier"), ROLES.node("opinion_verifier")
CLASSIFY_ERRORS, FEEDBACK = ROLES.node("error_classifier"), ROLES.node("feedback_judge")
EVALUATE = [VERIFY_FACTS, VERIFY_OPINIONS, FEEDBACK]
SAMPLE_FIELDS = ("id", "SBK", "KGD", "BSP", "CAO", "BSPAF", "BNPAF")


class KgdsInput(TypedDict, total=False):
    """One KGDS.json record as it is in the file, plus optional run settings."""

    id: Annotated[str, Field(description="the sample's id")]
    SBK: Annotated[list[dict[str, Any]], Field(description="background paragraphs: {paragraph_index, paragraph_text}")]
    KGD: Annotated[list[dict[str, Any]], Field(description="discussion turns: {participant, utterance}")]
    BSP: Annotated[list[dict[str, Any]], Field(description="gold background-supporting paragraphs (as in SBK)")]
    CAO: Annotated[list[str], Field(description="clear atomic opinions; clarified references between **")]
    BSPAF: Annotated[list[dict[str, Any]], Field(description="atomic facts of the supporting paragraphs: {paragraph_index, atomic_facts: [{atomic_fact, type}]}; type 1 = key fact")]
    BNPAF: Annotated[list[dict[str, Any]], Field(description="atomic facts of the other paragraphs, same shape; type 0 facts are the non-supporting ones scored")]
    options: Annotated[dict[str, Any], Field(description="KGDS options for this sample (as --option); usually set in the context instead")]
    predictions: Annotated[list[dict[str, Any]] | None, Field(description="the system's summaries (prediction-file rows); absent: the summarizer writes them")]


class KgdsState(KgdsInput, total=False):
    sample: dict[str, Any]  # the validated sample (KgdsSample dump)
    facts: Annotated[list[dict[str, Any]], operator.add]  # scored facts (ScoredFact dumps + fact_id)
    fact_gaps: list[int]  # paragraphs whose atomic facts are unknown
    round: int
    summaries: Annotated[list[dict[str, Any]], operator.add]
    decompositions: list[dict[str, Any]]
    fact_checks: Annotated[list[dict[str, Any]], operator.add]
    opinion_checks: Annotated[list[dict[str, Any]], operator.add]
    error_checks: Annotated[list[dict[str, Any]], operator.add]
    feedback: Annotated[list[dict[str, Any]], operator.add]
    scores: dict[str, Any]


def prepare(state: KgdsState) -> dict[str, Any]:
    """Validate the sample (a bad record fails the item with the field named) and list
    the facts the ABS is checked against."""
    fields = cast(dict[str, Any], state)  # the sample's fields, looked up by name
    sample = KgdsSample.model_validate({k: fields[k] for k in SAMPLE_FIELDS if fields.get(k) is not None})
    return {
        "sample": sample.model_dump(),
        "facts": [{**f.model_dump(), "fact_id": f.fact_id} for f in sample.scored_facts()],
        "fact_gaps": sample.paragraphs_without_facts(),
    }


def use_predictions(state: KgdsState) -> dict[str, Any]:
    return {"summaries": prediction_summaries(state["predictions"] or [])}


def errored_calls(state: KgdsState) -> list[str]:
    """Agents whose call errored (no answer at all): such an item fails, it is not scored."""
    parts = ("summaries", "fact_checks", "opinion_checks", "error_checks", "feedback", "decompositions")
    fields = cast(dict[str, Any], state)
    return [row["call"]["agent"] for part in parts for row in fields.get(part) or [] if (row.get("call") or {}).get("status") == "error"]


def score(state: KgdsState) -> dict[str, Any]:
    errored = errored_calls(state)
    if errored:
        raise RuntimeError(f"calls errored (no answer, not scored; a re-run retries): {', '.join(sorted(set(errored)))}")
    sample = state["sample"]
    supporting = {p["paragraph_index"] for p in sample["BSP"]}
    return {
        "scores": sample_scores(
            supporting=supporting,
            nonsupporting={p["paragraph_index"] for p in sample["SBK"]} - supporting,
            n_opinions=len(sample["CAO"]),
            key_facts=sum(1 for f in state.get("facts", []) if f["kind"] == "key"),
            summaries=state.get("summaries", []),
            fact_checks=state.get("fact_checks", []),
            opinion_checks=state.get("opinion_checks", []),
            error_checks=state.get("error_checks", []),
            fact_gaps=state.get("fact_gaps", []),
        )
    }


def after_decompose(state: KgdsState) -> str:
    return "use_predictions" if state.get("predictions") is not None else SUMMARIZE


def after_summaries(state: KgdsState) -> str | list[str]:
    if state.get("round", 0) < options_of(state).reflection_rounds:
        return REFLECT
    return EVALUATE


def build_graph():
    builder = StateGraph(KgdsState, input_schema=KgdsInput, context_schema=EvalContext)
    builder.add_node("prepare", prepare)
    ROLES.add_nodes(builder)
    builder.add_node("use_predictions", use_predictions)
    builder.add_node("score", score)

    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", DECOMPOSE)
    builder.add_conditional_edges(DECOMPOSE, after_decompose, ["use_predictions", SUMMARIZE])
    builder.add_conditional_edges(SUMMARIZE, after_summaries, [REFLECT, *EVALUATE])
    builder.add_conditional_edges(REFLECT, after_summaries, [REFLECT, *EVALUATE])
    for node in EVALUATE:
        builder.add_edge("use_predictions", node)
    builder.add_edge(VERIFY_OPINIONS, CLASSIFY_ERRORS)
    builder.add_edge([VERIFY_FACTS, CLASSIFY_ERRORS, FEEDBACK], "score")
    builder.add_edge("score", END)
    return builder.compile(name="kgds")
