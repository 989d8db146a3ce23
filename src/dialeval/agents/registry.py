"""The agent registry: each agent registers its node builder by name, and a graph node
runs whichever agent the run's context picks for its role (a config can swap it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from dialeval.config import EvalContext

NodeFn = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class AgentEntry:
    name: str
    role: str
    benchmark: str
    build: Callable[[], NodeFn]
    summary: str


AGENTS: dict[str, AgentEntry] = {}


def register_agent(name: str, *, role: str, benchmark: str) -> Callable[[Callable[[], NodeFn]], Callable[[], NodeFn]]:
    """Register a node builder under ``name`` so a config can pick it for ``role``."""

    def wrap(build: Callable[[], NodeFn]) -> Callable[[], NodeFn]:
        if name in AGENTS:
            raise ValueError(f"agent {name!r} is registered twice")
        doc = (build.__doc__ or "").strip().splitlines()
        AGENTS[name] = AgentEntry(name, role, benchmark, build, doc[0] if doc else "")
        return build

    return wrap


def resolve_agent(role: str, default: str, context: EvalContext) -> AgentEntry:
    """The agent chosen for ``role`` in the run context, else ``default``."""
    name = context.agents.get(role, default)
    if ":" in name:  # "package.module:factory", a user's own agent (see dialeval.plugins)
        from dialeval.plugins import agent_factory

        return AgentEntry(name, role, "custom", agent_factory(name), f"imported from {name}")
    entry = AGENTS.get(name)
    if entry is None:
        from dialeval.plugins import load_entry_points

        load_entry_points()
        entry = AGENTS.get(name)
    if entry is None:
        choices = sorted(n for n, e in AGENTS.items() if e.role == AGENTS[default].role) if default in AGENTS else []
        raise KeyError(f"no agent named {name!r} for role {role!r}; registered: {choices}")
    return entry


def agent_node(role: str, default: str) -> NodeFn:
    """A graph node that runs whichever agent the context selects for ``role``."""
    built: dict[str, NodeFn] = {}

    async def node(state: Any, runtime: Any) -> dict[str, Any]:
        context = runtime.context if runtime is not None and runtime.context is not None else EvalContext()
        if isinstance(context, dict):
            context = EvalContext.model_validate(context)
        entry = resolve_agent(role, default, context)
        if entry.name not in built:
            built[entry.name] = entry.build()
        return await built[entry.name](state, context)

    node.__name__ = f"{role}_node"
    return node
