"""The judge trust card: candidate judges on labelled units, agreement against the human
ceiling, bias probes, cost, and the cheapest candidate the figures support (docs/trust.md)."""

PROBES = ("position", "verbosity", "self_preference", "needle", "consistency")
