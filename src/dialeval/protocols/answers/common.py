"""The roles of the `answers` protocol: one judge."""

from __future__ import annotations

from dialeval.agents.roles import Role, RoleTable

ROLES = RoleTable(Role("judge", "answer_judge", node="judge"))
