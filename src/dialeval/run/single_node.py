"""A one-node graph run per item without LangGraph's per-item machinery.

Protocols such as ``answers`` are one node between START and END. For them LangGraph's
``ainvoke`` (channels, checkpoints of the step, task scheduling, a stream) costs about
as much CPU as the model call itself, and does nothing for the result. When a compiled
graph is exactly that shape, with plain last-value state and nothing watching the run,
:func:`single_node` gives an object whose ``ainvoke`` calls the node function with the
same state LangGraph would give it and returns the same output. Any graph it cannot
prove equivalent (reducers, branches, retries, a checkpointer, a store, callbacks or
tracing) gets ``None`` and runs through LangGraph. Studio always loads the real graph
(``langgraph.json``); this is used by the runner only.

A benchmark may also declare its one node (:class:`dialeval.benchmarks.OneNode`): the
runner then calls it without importing or building LangGraph at all (about a second of
start-up), and builds the real graph only if something watches (:class:`DeclaredGraph`).
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field, is_dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from dialeval.benchmarks import Benchmark, OneNode

_START, _END = "__start__", "__end__"
_CHECKED: weakref.WeakKeyDictionary[Any, SingleNode | None] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class SingleNode:
    """The node function of a START -> node -> END graph and the keys its state moves through."""

    name: str
    call: Callable[..., Any]  # async (state, runtime=...) -> update
    input_keys: frozenset[str]  # what the graph takes from its input
    node_keys: tuple[str, ...]  # what the node reads from the state
    state_keys: frozenset[str]  # what an update may write
    output_keys: tuple[str, ...]  # what the graph returns
    coerce_context: Callable[[Any], Any]  # a dict context made the graph's context type, as LangGraph does
    runtime: Callable[..., Any] | None = None  # what the node gets as ``runtime`` (None: LangGraph's Runtime)

    async def ainvoke(self, graph_input: dict[str, Any], context: Any = None, config: Any = None) -> dict[str, Any]:
        """What ``graph.ainvoke(graph_input, context=context)`` returns for this graph."""
        runtime = self.runtime or _langgraph_runtime()
        state = {k: v for k, v in graph_input.items() if k in self.input_keys}
        update = await self.call({k: state[k] for k in self.node_keys if k in state}, runtime=runtime(context=self.coerce_context(context)))
        if update is not None:
            if not isinstance(update, dict):  # LangGraph raises too (a Command would need its routing)
                raise TypeError(f"node {self.name!r} returned {type(update).__name__}, expected a dict of state updates")
            state.update((k, v) for k, v in update.items() if k in self.state_keys)
        return {k: state[k] for k in self.output_keys if k in state}


@dataclass(frozen=True)
class ContextOnly:
    """The ``runtime`` a declared node gets: the run's context (all a declared node may read)."""

    context: Any


@dataclass(eq=False)
class DeclaredGraph:
    """A declared one-node graph as the runner runs it: its node called directly while
    nothing watches, the real graph (built on first need) when something does."""

    direct: SingleNode
    build_graph: Callable[[], Any]
    _graph: Any = field(default=None, repr=False)

    @property
    def graph(self) -> Any:
        if self._graph is None:
            self._graph = self.build_graph()
        return self._graph

    async def ainvoke(self, graph_input: dict[str, Any], context: Any = None, config: Any = None) -> dict[str, Any]:
        if _watched():
            return await self.graph.ainvoke(graph_input, context=context, config=config)
        return await self.direct.ainvoke(graph_input, context=context, config=config)


def declared_node(one: OneNode) -> SingleNode:
    """The direct form of a declared one-node graph, built without LangGraph."""
    state_keys = _keys(one.state_schema)
    return SingleNode(
        name=one.name,
        call=one.node(),
        input_keys=frozenset(_keys(one.input_schema)),
        node_keys=state_keys,  # a node added without its own input schema reads the whole state
        state_keys=frozenset(state_keys),
        output_keys=_keys(one.output_schema),
        coerce_context=functools.partial(_coerce_context, one.context_schema),
        runtime=ContextOnly,
    )


def run_graph(bench: Benchmark) -> Any:
    """What the runner evaluates items with: a declared one node when nothing watches
    (LangGraph never imported), else the benchmark's compiled graph."""
    if bench.one_node is not None and not _watched():
        return DeclaredGraph(declared_node(bench.one_node()), bench.graph)
    return bench.graph()


def _langgraph_runtime() -> Callable[..., Any]:
    from langgraph.runtime import Runtime

    return Runtime


def _keys(schema: type) -> tuple[str, ...]:
    """A TypedDict's keys, inherited ones first, as LangGraph orders its channels."""
    return tuple(schema.__annotations__)


def _coerce_context(schema: type | None, context: Any) -> Any:
    """LangGraph's rule: a dict context becomes the context schema's class (a pydantic
    model or a dataclass); anything else passes as it is."""
    if context is None or schema is None or not isinstance(context, dict):
        return context
    from pydantic import BaseModel

    if (isinstance(schema, type) and issubclass(schema, BaseModel)) or is_dataclass(schema):
        return schema(**context)
    return context


def single_node(graph: Any) -> SingleNode | None:
    """The direct form of ``graph`` when it is provably a plain one-node graph, else ``None``
    (checked once per compiled graph; whether anything watches is checked on every call)."""
    return direct_form(graph, _CHECKED, _inspect)


def direct_form(graph: Any, checked: weakref.WeakKeyDictionary[Any, Any], inspect: Callable[[Any], Any]) -> Any:
    """``inspect(graph)``, remembered in ``checked`` per compiled graph, unless something watches the run."""
    try:
        if graph in checked:
            found = checked[graph]
        else:
            found = checked[graph] = inspect(graph)
    except TypeError:  # not weak-referenceable or not hashable: not a compiled graph
        return None
    return found if found is not None and not _watched() else None


def state_graph_parts(graph: Any) -> tuple[Any, dict[str, Any]] | None:
    """(builder, nodes) of a compiled ``StateGraph``, else ``None``."""
    try:
        from langgraph.graph.state import CompiledStateGraph
    except ImportError:  # a LangGraph release moved it: take the graph's own path
        return None
    if type(graph) is not CompiledStateGraph:
        return None
    builder = getattr(graph, "builder", None)
    nodes = getattr(builder, "nodes", None)
    return (builder, nodes) if builder is not None and isinstance(nodes, dict) else None


def plain_compiled(graph: Any, builder: Any) -> bool:
    """No join, managed value, checkpointer, store, cache, interrupt, retry or debug: nothing
    LangGraph's own loop would do beyond running the nodes."""
    return bool(
        not builder.waiting_edges
        and not getattr(builder, "managed", None)
        and graph.checkpointer in (None, False)
        and graph.store is None
        and graph.cache is None
        and not graph.interrupt_before_nodes
        and not graph.interrupt_after_nodes
        and not graph.retry_policy
        and graph.cache_policy is None
        and not graph.debug
    )


def _watched() -> bool:
    """True when a callback handler or tracer would see a graph run started here."""
    from dialeval.models.watchers import nothing_watches

    return not nothing_watches(verbose=False)


def _inspect(graph: Any) -> SingleNode | None:
    try:
        from langgraph._internal._runnable import RunnableCallable
        from langgraph.channels.last_value import LastValue
        from langgraph.pregel.main import _coerce_context
    except ImportError:  # a LangGraph release moved them: take the graph's own path
        return None
    parts = state_graph_parts(graph)
    if parts is None or len(parts[1]) != 1:
        return None
    builder, nodes = parts
    (name, spec), = nodes.items()
    plain_graph = (
        set(builder.edges) == {(_START, name), (name, _END)}
        and not any(builder.branches.values())
        and plain_compiled(graph, builder)
    )
    runnable: Any = getattr(spec, "runnable", None)
    plain_node = (
        type(runnable) is RunnableCallable
        and runnable.afunc is not None
        and set(runnable.func_accepts) <= {"runtime"}
        and not runnable.kwargs
        and not runnable.explode_args
        and spec.retry_policy is None
        and spec.cache_policy is None
        and not spec.ends
        and not spec.defer
        and getattr(spec, "error_handler_node", None) is None
        and getattr(spec, "timeout", None) is None
    )
    if not plain_graph or not plain_node:
        return None
    schemas = builder.schemas
    keys = {schema: schemas.get(schema) for schema in (builder.input_schema, spec.input_schema, builder.state_schema)}
    channels = dict(builder.channels)
    if any(found is None for found in keys.values()) or not all(type(c) is LastValue for c in channels.values()):
        return None  # a reducer or a managed value: LangGraph's own merge is needed
    if any(_validated(schema) for schema in keys):
        return None
    output = graph.output_channels
    if not isinstance(output, list) or not set(output) <= set(channels):
        return None
    accepts_runtime = "runtime" in runnable.func_accepts
    afunc = runnable.afunc
    call = afunc if accepts_runtime else (lambda state, runtime: afunc(state))
    return SingleNode(
        name=name,
        call=call,
        input_keys=frozenset(keys[builder.input_schema]),
        node_keys=tuple(keys[spec.input_schema]),
        state_keys=frozenset(channels),
        output_keys=tuple(output),
        coerce_context=functools.partial(_coerce_context, graph.context_schema),  # not the graph: a weak key
    )


def _validated(schema: Any) -> bool:
    """LangGraph coerces pydantic models and dataclasses; only a TypedDict state passes as is."""
    from typing_extensions import is_typeddict

    return not is_typeddict(schema)
