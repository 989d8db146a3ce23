"""Every probe by name: the built-in ones, those registered in code and installed packages'.

The registry (:mod:`dialeval.trust.probe_registry`) only holds what registers; this module
sits above the built-in probes so that asking for a probe by name always finds them.
"""

from __future__ import annotations

import dialeval.trust.builtin_probes  # noqa: F401  (registers the built-in probes)
from dialeval.errors import ConfigError
from dialeval.plugins import load_entry_points
from dialeval.trust.probe_registry import Probe, registered


def all_probes() -> dict[str, Probe]:
    """Every probe: the built-in ones, those registered in code and installed packages'."""
    load_entry_points()
    return registered()


def get_probe(name: str) -> Probe:
    probes = all_probes()
    if name not in probes:
        raise ConfigError(f"unknown probe {name!r}; choose from {', '.join(probes)}")
    return probes[name]
