"""Agents: one module per role. Importing a module registers its agents."""
