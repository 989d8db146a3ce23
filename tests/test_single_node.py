"""A one-node graph runs per item without LangGraph's machinery, and gives what LangGraph gives.

Only graphs provably equivalent take that path: one node, plain last-value state, no
retries or checkpointer, and nothing (a callback, a tracer) watching the run.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict

from dialeval.config import EvalContext, ModelSettings
from dialeval.models.usage import Ledger, current_ledger
from dialeval.protocols.answers.graph import build_graph
from dialeval.run.single_node import single_node
from dialeval.testing.openai_server import OpenAIStub


class Counted(TypedDict, total=False):
    question: str
    notes: Annotated[list[str], operator.add]  # a reducer: LangGraph's merge is needed


class Plain(TypedDict, total=False):
    question: str
    answer: str


async def _note(state: dict[str, Any]) -> dict[str, Any]:
    return {"notes": ["seen"]}


async def _answer(state: dict[str, Any]) -> dict[str, Any]:
    return {"answer": state["question"].upper(), "not_a_state_key": 1}


def _one_node(state: type, node: Any, **options: Any) -> Any:
    builder = StateGraph(state)
    builder.add_node("only", node, **options)
    builder.add_edge(START, "only")
    builder.add_edge("only", END)
    return builder.compile()


def _both(graph: Any, graph_input: dict[str, Any], context: Any = None) -> tuple[Any, Any]:
    """(LangGraph's output, the direct path's output) for the same input."""
    direct = single_node(graph)
    assert direct is not None

    async def run() -> tuple[Any, Any]:
        token = current_ledger.set(Ledger())
        try:
            return await graph.ainvoke(graph_input, context=context), await direct.ainvoke(graph_input, context=context)
        finally:
            current_ledger.reset(token)

    return asyncio.run(run())


def test_the_answers_graph_runs_its_judge_directly_with_the_same_output_and_request():
    with OpenAIStub(respond=lambda body: '{"rationale": "right", "score": 5}') as server:
        settings = ModelSettings(spec="openai-compatible:judge", base_url=server.base_url)
        context = EvalContext(default_model=settings, cache_path=None, run_dir=None)
        item = {"id": "q1", "question": "2+2?", "reference": "4", "answer": "4", "extra": "not in the input schema"}
        invoked, direct = _both(build_graph(), item, context)
    assert direct == invoked and direct["grade"]["value"] == {"rationale": "right", "score": 5}
    assert set(direct) == {"grade"}  # the output schema, as LangGraph returns it
    assert len(server.requests) == 2 and server.requests[0] == server.requests[1]


def test_a_plain_one_node_graph_keeps_langgraphs_state_rules():
    graph = _one_node(Plain, _answer)
    invoked, direct = _both(graph, {"question": "why?", "ignored": True})
    assert direct == invoked == {"question": "why?", "answer": "WHY?"}  # unknown keys dropped both ways


def test_graphs_that_need_langgraph_keep_it():
    assert single_node(_one_node(Counted, _note)) is None  # a reducer
    assert single_node(_one_node(Plain, _answer, retry_policy=RetryPolicy())) is None
    two = StateGraph(Plain)
    two.add_node("a", _answer)
    two.add_node("b", _answer)
    two.add_edge(START, "a")
    two.add_edge("a", "b")
    two.add_edge("b", END)
    assert single_node(two.compile()) is None
    assert single_node(object()) is None  # not a compiled graph (a stand-in, a test double)


def test_a_watched_run_goes_through_langgraph_so_traces_stay_whole():
    from langchain_core.tracers.context import collect_runs

    graph = _one_node(Plain, _answer)
    assert single_node(graph) is not None
    with collect_runs():
        assert single_node(graph) is None
