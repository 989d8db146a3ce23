"""A graph whose nodes run one after another, walked without LangGraph's per-step machinery.

VDAct's graph is ``START -> prepare -> judge_turn``, then ``judge_turn`` again while turns
are left: one LangGraph super-step per judge call. Each step's channels, task
preparation, callbacks and stream cost about as much CPU as dialeval's own work for the
call (0.85 of 1.85 ms per call on VDAct's released file; ``benchmarks/vdact_cpu.py``).
When a compiled graph is provably such a chain (one node per step, each node followed by
a plain edge or by a router that names one next node, state keys that are last-value
channels or lists extended with ``operator.add``, async nodes, nothing watching),
:func:`node_chain` gives an object whose ``ainvoke`` runs the same nodes, in the same
order, on the same states, and returns what ``graph.ainvoke`` returns. Any other graph
gets ``None`` and runs through LangGraph. Studio loads the real graph (``langgraph.json``);
this is used by the runner only, like :mod:`dialeval.run.single_node`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import operator
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from dialeval.run.single_node import DeclaredGraph, _validated, direct_form, plain_compiled, single_node, state_graph_parts

_START, _END = "__start__", "__end__"
_CHECKED: weakref.WeakKeyDictionary[Any, NodeChain | None] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Step:
    """One node: its async function, whether it takes the runtime, and what follows it."""

    call: Callable[..., Any]
    takes_runtime: bool
    next_node: str | None  # a plain edge (a node or END), or None when a router decides
    route: Callable[..., Any] | None = None  # async (state) -> a key of ``ends``
    route_takes_runtime: bool = False
    ends: dict[Any, str] | None = None
    route_sees_update: bool = False  # a router without an input schema also sees the node's extra keys


@dataclass(frozen=True)
class NodeChain:
    """The nodes of a chain-shaped graph and the keys its state moves through."""

    first: str
    steps: dict[str, Step]
    input_keys: frozenset[str]
    state_keys: frozenset[str]  # what an update may write; other keys are dropped, as LangGraph drops them
    appended: frozenset[str]  # list keys extended by each update (operator.add); the rest keep the last value
    output_keys: tuple[str, ...]
    coerce_context: Callable[[Any], Any]

    async def ainvoke(self, graph_input: dict[str, Any], context: Any = None, config: Any = None) -> dict[str, Any]:
        """What ``graph.ainvoke(graph_input, context=context, config=config)`` returns for this graph."""
        from langgraph.errors import ErrorCode, GraphRecursionError, create_error_message
        from langgraph.runtime import Runtime

        limit = int((config or {}).get("recursion_limit", 25))
        runtime = Runtime(context=self.coerce_context(context))
        state: dict[str, Any] = {key: [] for key in self.appended}  # as LangGraph starts an operator.add list
        for key, value in graph_input.items():
            if key in self.input_keys:
                state[key] = state[key] + value if key in self.appended else value
        node: str = self.first
        done = 0
        while node != _END:
            step = self.steps[node]
            update = await _isolated(step.call, dict(state), runtime if step.takes_runtime else None)
            done += 1
            if update is not None and not isinstance(update, dict):
                raise TypeError(f"node {node!r} returned {type(update).__name__}, expected a dict of state updates")
            extra: dict[str, Any] = {}
            for key, value in (update or {}).items():
                if key in self.appended:
                    state[key] = state[key] + value
                elif key in self.state_keys:
                    state[key] = value
                else:
                    extra[key] = value
            node = await self._route(step, state, extra, runtime) if step.route is not None else step.next_node or _END
            if done >= limit:  # LangGraph stops here even when this step ended the graph
                raise GraphRecursionError(create_error_message(
                    message=f"Recursion limit of {limit} reached without hitting a stop condition. You can increase "
                    "the limit by setting the `recursion_limit` config key.",
                    error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
                ))
        return {key: state[key] for key in self.output_keys if key in state}

    async def _route(self, step: Step, state: dict[str, Any], extra: dict[str, Any], runtime: Any) -> str:
        assert step.route is not None and step.ends is not None
        seen = {**extra, **state} if step.route_sees_update else dict(state)
        chosen = await _isolated(step.route, seen, runtime if step.route_takes_runtime else None)
        if isinstance(chosen, (list, tuple)) and len(chosen) == 1:
            chosen = chosen[0]
        if isinstance(chosen, (list, tuple)):
            raise ValueError(f"the router after a node returned {chosen!r}; this chain walks one next node of {sorted(map(str, step.ends))}")
        return step.ends[chosen]  # an unknown destination is a KeyError, as under LangGraph


async def _isolated(call: Callable[..., Any], state: dict[str, Any], runtime: Any) -> Any:
    """``call(state)`` in a copy of the current context, as LangGraph runs a node: what it
    sets in context variables stays inside the step."""
    coro = call(state, runtime=runtime) if runtime is not None else call(state)
    return await asyncio.create_task(coro, context=contextvars.copy_context())


def node_chain(graph: Any) -> NodeChain | None:
    """The direct form of ``graph`` when it is provably a plain chain of nodes, else ``None``
    (checked once per compiled graph; whether anything watches is checked on every call)."""
    return direct_form(graph, _CHECKED, _inspect)  # type: ignore[no-any-return]


def _async_callable(runnable: Any, allowed: frozenset[str]) -> tuple[Callable[..., Any], bool] | None:
    """(the async function, whether it takes ``runtime``) of a plain async node or router."""
    from langgraph._internal._runnable import RunnableCallable

    if type(runnable) is not RunnableCallable or runnable.func is not None or runnable.afunc is None:
        return None  # a sync function runs in a thread pool under LangGraph: not walked here
    if not set(runnable.func_accepts) <= allowed or runnable.kwargs or runnable.explode_args:
        return None
    return runnable.afunc, "runtime" in runnable.func_accepts


def _plain_spec(spec: Any, state_schema: Any) -> bool:
    return bool(
        spec.retry_policy is None
        and spec.cache_policy is None
        and not spec.ends
        and not spec.defer
        and not getattr(spec, "is_error_handler", False)
        and getattr(spec, "error_handler_node", None) is None
        and getattr(spec, "timeout", None) is None
        and spec.input_schema is state_schema
    )


def _channels(builder: Any) -> frozenset[str] | None:
    """The keys extended with ``operator.add`` (lists), when every other key keeps its last value."""
    from langgraph.channels.binop import BinaryOperatorAggregate
    from langgraph.channels.last_value import LastValue

    appended = set()
    for key, channel in builder.channels.items():
        if type(channel) is LastValue:
            continue
        if type(channel) is BinaryOperatorAggregate and channel.operator is operator.add and channel.value == []:
            appended.add(key)
            continue
        return None
    return frozenset(appended)


def _step(name: str, spec: Any, builder: Any, edges: dict[str, list[str]]) -> Step | None:
    node = _async_callable(spec.runnable, frozenset({"runtime"}))
    if node is None or not _plain_spec(spec, builder.state_schema):
        return None
    branches = list(builder.branches.get(name, {}).values())
    if len(edges.get(name, [])) + len(branches) != 1:
        return None  # a fan-out, a dead end, or an edge beside a router
    if not branches:
        return Step(node[0], node[1], edges[name][0])
    branch = branches[0]
    route = _async_callable(branch.path, frozenset({"runtime"}))
    if route is None or not branch.ends or branch.input_schema not in (None, builder.state_schema):
        return None
    return Step(node[0], node[1], None, route[0], route[1], dict(branch.ends), branch.input_schema is None)


def _inspect(graph: Any) -> NodeChain | None:
    try:
        from langgraph.pregel.main import _coerce_context
    except ImportError:  # a LangGraph release moved it: take the graph's own path
        return None
    parts = state_graph_parts(graph)
    if parts is None or not parts[1] or not plain_compiled(graph, parts[0]):
        return None
    builder, nodes = parts
    edges: dict[str, list[str]] = {}
    for source, target in builder.edges:
        edges.setdefault(source, []).append(target)
    if len(edges.get(_START, [])) != 1 or builder.branches.get(_START) or edges[_START][0] not in nodes:
        return None
    steps = {}
    for name, spec in nodes.items():
        step = _step(name, spec, builder, edges)
        if step is None:
            return None
        steps[name] = step
    if any(target not in nodes and target != _END for step in steps.values()
           for target in ([step.next_node] if step.route is None else list(step.ends or {}.values()))):
        return None
    appended = _channels(builder)
    schemas = builder.schemas
    if appended is None or any(_validated(s) or s not in schemas for s in (builder.input_schema, builder.state_schema)):
        return None
    output = graph.output_channels
    if not isinstance(output, list) or not set(output) <= set(builder.channels):
        return None
    return NodeChain(
        first=edges[_START][0],
        steps=steps,
        input_keys=frozenset(schemas[builder.input_schema]) & frozenset(builder.channels),
        state_keys=frozenset(builder.channels),
        appended=appended,
        output_keys=tuple(output),
        coerce_context=functools.partial(_coerce_context, graph.context_schema),  # not the graph: a weak key
    )


def runnable(graph: Any) -> Any:
    """What runs one item: a declared graph as it is, a provably one-node compiled graph
    directly (:func:`~dialeval.run.single_node.single_node`), a provable chain walked
    (:func:`node_chain`), any other graph through LangGraph."""
    if isinstance(graph, DeclaredGraph):
        return graph
    return single_node(graph) or node_chain(graph) or graph
