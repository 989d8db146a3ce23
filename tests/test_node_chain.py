"""A chain-shaped graph (VDAct's turn loop) runs without LangGraph's per-step machinery,
and gives what LangGraph gives: same nodes, same states, same output, same errors.

Only graphs provably equivalent take that path: async nodes one after another, each
followed by an edge or a router naming one next node, last-value keys and lists extended
with ``operator.add``, no retries or checkpointer, nothing watching the run.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict

from dialeval.config import EvalContext, ModelSettings
from dialeval.models.usage import Ledger, current_ledger
from dialeval.protocols.vdact.graph import build_graph as vdact_graph
from dialeval.run.node_chain import node_chain
from dialeval.testing.openai_server import OpenAIStub

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo"
STEP = contextvars.ContextVar("STEP", default="outside")


class Walk(TypedDict, total=False):
    todo: list[str]
    index: int
    done: Annotated[list[str], operator.add]
    label: str


class WalkInput(TypedDict):
    todo: list[str]


async def start(state: dict[str, Any]) -> dict[str, Any]:
    return {"index": 0, "label": "started", "not_a_state_key": 1}


async def visit(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
    STEP.set(f"visiting {state['index']}")  # stays inside the step, as under LangGraph
    prefix = runtime.context["prefix"] if runtime.context else ""
    return {"done": [prefix + state["todo"][state["index"]]], "index": state["index"] + 1}


async def more(state: dict[str, Any]) -> str:
    return "visit" if state["index"] < len(state["todo"]) else END


def walk_graph(**compile_options: Any) -> Any:
    builder = StateGraph(Walk, input_schema=WalkInput)
    builder.add_node("start", start)
    builder.add_node("visit", visit)
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", more, ["visit", END])
    builder.add_conditional_edges("visit", more, ["visit", END])
    return builder.compile(**compile_options)


def both(graph: Any, graph_input: dict[str, Any], context: Any = None, limit: int = 25) -> tuple[Any, Any]:
    """(LangGraph's output or error, the chain's) for the same input."""
    chain = node_chain(graph)
    assert chain is not None

    async def one(runnable: Any) -> Any:
        token = current_ledger.set(Ledger())
        try:
            return await runnable.ainvoke(graph_input, context=context, config={"recursion_limit": limit})
        except Exception as err:
            return f"{type(err).__name__}: {err}"
        finally:
            current_ledger.reset(token)

    async def run() -> tuple[Any, Any]:
        return await one(graph), await one(chain)

    return asyncio.run(run())


@pytest.mark.parametrize("todo", [[], ["a"], ["a", "b", "c"]])
def test_a_loop_of_steps_gives_langgraphs_output(todo):
    invoked, walked = both(walk_graph(), {"todo": todo, "ignored": True}, {"prefix": "> "})
    assert walked == invoked
    assert walked == {"todo": todo, "index": len(todo), "done": ["> " + t for t in todo], "label": "started"}


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
def test_the_recursion_limit_stops_both_at_the_same_step(limit):
    invoked, walked = both(walk_graph(), {"todo": ["a", "b", "c"]}, limit=limit)
    assert walked == invoked  # LangGraph stops when `limit` steps ran, even if the last one ended the graph
    assert isinstance(walked, dict) if limit > 4 else walked.startswith(GraphRecursionError.__name__)


def test_a_node_that_raises_raises_the_same_error():
    async def broken(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
        raise KeyError("no such turn")

    builder = StateGraph(Walk)
    builder.add_node("visit", broken)
    builder.add_edge(START, "visit")
    builder.add_edge("visit", END)
    invoked, walked = both(builder.compile(), {"todo": []})
    assert walked == invoked == "KeyError: 'no such turn'"


def test_context_variables_set_in_a_step_stay_in_the_step():
    chain = node_chain(walk_graph())
    assert chain is not None
    asyncio.run(chain.ainvoke({"todo": ["a"]}))
    assert STEP.get() == "outside"


def test_the_vdact_graph_walks_directly_with_the_same_output_and_requests():
    records = json.loads((DEMO / "predictions" / "demo-bot.json").read_text())
    dialogue = [r for r in records if r["dial_id"] == records[0]["dial_id"]]
    with OpenAIStub(respond=lambda body: f"Close enough. So rating={1 + len(json.dumps(body)) % 3}") as server:
        settings = ModelSettings(spec="openai-compatible:judge", base_url=server.base_url)
        context = EvalContext(default_model=settings, cache_path=None, run_dir=None, options={"summary": "none"})
        invoked, walked = both(vdact_graph(), {"records": dialogue, "summary": None, "example": None}, context)
    assert walked == invoked and len(walked["judged"]) == len(dialogue)
    half = len(server.requests) // 2
    assert half == len(dialogue) and server.requests[:half] == server.requests[half:]


def _fan_out() -> Any:
    builder = StateGraph(Walk)
    builder.add_node("start", start)
    builder.add_node("visit", visit)
    builder.add_edge(START, "start")
    builder.add_edge(START, "visit")
    return builder.compile()


def _sync_node() -> Any:
    builder = StateGraph(Walk)
    builder.add_node("start", lambda state: {"index": 0})
    builder.add_edge(START, "start")
    return builder.compile()


def _retried() -> Any:
    builder = StateGraph(Walk)
    builder.add_node("start", start, retry_policy=RetryPolicy(max_attempts=2))
    builder.add_edge(START, "start")
    return builder.compile()


def _higher(a: int, b: int) -> int:
    return max(a, b)


class Kept(TypedDict, total=False):
    best: Annotated[int, _higher]  # a reducer other than list concatenation


def _other_reducer() -> Any:
    async def keep(state: dict[str, Any]) -> dict[str, Any]:
        return {"best": 3}

    builder = StateGraph(Kept)
    builder.add_node("keep", keep)
    builder.add_edge(START, "keep")
    return builder.compile()


def _checkpointed() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    return walk_graph(checkpointer=InMemorySaver())


@pytest.mark.parametrize("build", [_fan_out, _sync_node, _retried, _other_reducer, _checkpointed])
def test_graphs_it_cannot_prove_equivalent_run_through_langgraph(build):
    assert node_chain(build()) is None


def test_a_watched_run_goes_through_langgraph():
    from langchain_core.runnables.config import var_child_runnable_config

    graph = walk_graph()
    assert node_chain(graph) is not None
    token = var_child_runnable_config.set({"callbacks": [AsyncCallbackHandler()]})
    try:
        assert node_chain(graph) is None  # a handler would see LangGraph's events: keep them
    finally:
        var_child_runnable_config.reset(token)


def test_a_router_naming_no_known_node_fails_the_same_way():
    async def lost(state: dict[str, Any]) -> str:
        return "nowhere"

    builder = StateGraph(Walk)
    builder.add_node("start", start)
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", lost, ["start", END])
    invoked, walked = both(builder.compile(), {"todo": []})
    assert walked == invoked == "KeyError: 'nowhere'"
