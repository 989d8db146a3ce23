"""A benchmark's declared one node (``Benchmark.one_node``) is the node its compiled graph
wires, over the same state keys, and a run through it records what LangGraph's records."""

from __future__ import annotations

import asyncio
from typing import Any

from dialeval.benchmarks import get_benchmark
from dialeval.config import EvalContext, ModelSettings
from dialeval.models.usage import Ledger, current_ledger
from dialeval.run.single_node import DeclaredGraph, declared_node, run_graph, single_node
from dialeval.testing.openai_server import OpenAIStub

GRADE = '{"rationale": "right", "score": 5}'


def _declared_benchmarks() -> list[Any]:
    from dialeval.benchmarks import available

    benches = [get_benchmark(name) for name in available()]
    return [b for b in benches if b.one_node is not None]


def test_every_declared_node_matches_its_compiled_graph():
    declared = _declared_benchmarks()
    assert [b.name for b in declared] == ["answers"]  # the one-node protocols today
    for bench in declared:
        one = bench.one_node()
        real = single_node(bench.graph())
        assert real is not None, f"{bench.name}: its graph is no longer a plain one-node graph"
        mine = declared_node(one)
        assert (mine.name, mine.input_keys, mine.node_keys, mine.state_keys, mine.output_keys) == (
            real.name, real.input_keys, real.node_keys, real.state_keys, real.output_keys
        )  # fmt: skip
        # the same node function: the one the graph wires for the same role and agent
        assert mine.call.__qualname__ == real.call.__qualname__ == "agent_node.<locals>.node"
        closure = lambda fn: {n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, fn.__closure__) if n != "built"}  # noqa: E731
        assert closure(mine.call) == closure(real.call)


def test_the_declared_answers_node_gives_what_the_graph_gives():
    bench = get_benchmark("answers")
    with OpenAIStub(respond=lambda body: GRADE) as server:
        settings = ModelSettings(spec="openai-compatible:judge", base_url=server.base_url)
        context = EvalContext(default_model=settings, cache_path=None, run_dir=None)
        item = {"id": "q1", "question": "2+2?", "reference": "4", "answer": "4", "system": "s", "extra": "dropped"}

        async def both() -> tuple[Any, Any]:
            token = current_ledger.set(Ledger())
            try:
                via_graph = await bench.graph().ainvoke(item, context=context)
                direct = await declared_node(bench.one_node()).ainvoke(item, context=context.model_dump())  # a dict context too
                return via_graph, direct
            finally:
                current_ledger.reset(token)

        via_graph, direct = asyncio.run(both())
    assert direct == via_graph and set(direct) == {"grade"} and direct["grade"]["value"] == {"rationale": "right", "score": 5}
    assert len(server.requests) == 2 and server.requests[0] == server.requests[1]


def test_a_watched_run_gets_the_real_graph():
    from langchain_core.tracers.context import collect_runs

    bench = get_benchmark("answers")
    assert isinstance(run_graph(bench), DeclaredGraph)
    with collect_runs():
        graph = run_graph(bench)
    assert not isinstance(graph, DeclaredGraph) and single_node(graph) is not None  # LangGraph's compiled graph
