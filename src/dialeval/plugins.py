"""Users' own agents and benchmarks: import paths in the config and plugin modules.

- ``agents: {fact_verifier: "my_package.verifiers:strict_verifier"}`` names an agent
  factory by import path: a function with no arguments that returns the async node
  ``(state, context) -> dict``, exactly what :func:`dialeval.agents.base.register_agent`
  decorates.
- ``plugins: [my_package.dialeval_plugins]`` imports modules that call
  ``register_agent`` / ``register_benchmark``; installed packages can do the same
  through the ``dialeval.plugins`` entry-point group, loaded once per process.

Every failure names the import path, so a typo is found from the message alone.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any, Callable, Iterable

from dialeval.errors import ConfigError

ENTRY_POINT_GROUP = "dialeval.plugins"
_loaded_entry_points = False


def is_import_path(name: str) -> bool:
    """``package.module:attribute`` (a registered agent name has no colon)."""
    return ":" in name


def import_object(path: str) -> Any:
    """The object at ``package.module:attribute``; ConfigError naming the path otherwise."""
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"{path!r} is not an import path of the form 'package.module:name'")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # ImportError, or an error raised by the module itself
        raise ConfigError(f"cannot import {module_name!r} (from {path!r}): {type(err).__name__}: {err}") from None
    obj: Any = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{path!r}: module {module_name!r} has no attribute {attribute!r}") from None
    return obj


def agent_factory(path: str) -> Callable[[], Any]:
    """The agent factory named by ``path``, checked to be callable."""
    factory = import_object(path)
    if not callable(factory):
        raise ConfigError(f"{path!r} is not an agent factory (a function returning the agent's node)")
    return factory


def load_plugins(modules: Iterable[str]) -> None:
    """Import each plugin module (which registers agents or benchmarks as it loads)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as err:
            raise ConfigError(f"cannot import plugin module {name!r}: {type(err).__name__}: {err}") from None
    load_entry_points()


def load_entry_points() -> None:
    """Import the modules of installed packages' ``dialeval.plugins`` entry points, once."""
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry.load()
        except Exception as err:
            raise ConfigError(
                f"cannot load the {ENTRY_POINT_GROUP} entry point {entry.name!r} ({entry.value}): {type(err).__name__}: {err}"
            ) from None


def reset_entry_points() -> None:
    """Forget that entry points were loaded (tests install plugins at run time)."""
    global _loaded_entry_points
    _loaded_entry_points = False
