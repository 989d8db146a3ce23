"""A benchmark's roles, written once: the default agent, graph node, model and template keys of each.

The benchmark's registration (``Benchmark.roles``, ``model_roles``, ``template_keys``,
``system_roles``) and its graph's node names derive from one table, so a config key the
agents read is never missing from what the runner accepts, nor the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from dialeval.config import EvalContext, ModelSettings, primary


@dataclass(frozen=True)
class Role:
    """One role: the keys a config uses for it and the node that runs it.

    ``models``/``templates`` are the keys its agents read under ``models:`` and
    ``templates:`` (default: the role's name; ``()`` for none). ``node`` is the graph node
    running the role's agent (``None`` when the graph picks the agent another way).
    ``system``: played by the system under test, whose cut-off or unreadable outputs are
    the system's failures, not a judge's. ``follows``: the role whose model this one uses
    when the config gives it none (a turn that continues that role's conversation).
    """

    name: str
    agent: str
    node: str | None = None
    models: tuple[str, ...] | None = None
    templates: tuple[str, ...] | None = None
    system: bool = False
    follows: str | None = None

    @property
    def model_keys(self) -> tuple[str, ...]:
        return (self.name,) if self.models is None else self.models

    @property
    def template_keys(self) -> tuple[str, ...]:
        return (self.name,) if self.templates is None else self.templates


class RoleTable:
    """The roles of one benchmark, in the order reports list them."""

    def __init__(self, *roles: Role) -> None:
        names = [r.name for r in roles]
        if len(set(names)) != len(names):
            raise ValueError(f"a role is listed twice: {names}")
        self._roles = {r.name: r for r in roles}

    def __iter__(self) -> Iterator[Role]:
        return iter(self._roles.values())

    def __getitem__(self, name: str) -> Role:
        return self._roles[name]

    def model(self, context: EvalContext, name: str) -> ModelSettings:
        """The model of role ``name``: its own, else that of the role it follows, else the default."""
        follows = self._roles[name].follows
        if follows is None:
            return context.model_for(name)
        own = context.models.get(name)
        return primary(own) if own is not None else self.model(context, follows)

    def node(self, name: str) -> str:
        """The graph node of role ``name``."""
        node = self._roles[name].node
        if node is None:
            raise KeyError(f"role {name!r} has no graph node of its own")
        return node

    def add_nodes(self, builder: Any, custom: dict[str, Any] | None = None) -> None:
        """Add to a LangGraph ``builder`` the node of every role that has one: the agent the
        run selects for the role (:func:`agent_node`), or the node ``custom`` gives for it."""
        from dialeval.agents.base import agent_node

        custom = custom or {}
        for role in self:
            if role.node is not None:
                builder.add_node(role.node, custom.get(role.name) or agent_node(role.name, role.agent))

    def benchmark_fields(self) -> dict[str, Any]:
        """``roles``, ``model_roles``, ``template_keys`` and ``system_roles`` of ``Benchmark``."""
        return {
            "roles": {r.name: r.agent for r in self},
            "model_roles": _unique(k for r in self for k in r.model_keys),
            "template_keys": _unique(k for r in self for k in r.template_keys),
            "system_roles": tuple(r.name for r in self if r.system),
        }


def _unique(keys: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))
