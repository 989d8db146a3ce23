"""Whether anything would watch a LangChain or LangGraph run started here (a tracer, a
callback handler, debug or verbose output, an LLM cache).

LangChain answers by configuring a callback manager, which imports LangSmith's client
(0.3-0.8 s of a run's start-up). Everything that can make a handler appear lives in a few
modules' state (a parent runnable's config, LangSmith's tracing context, registered
tracing hooks, the debug/verbose/cache globals) or in ``LANGCHAIN_*``/``LANGSMITH_*``
environment variables. While none of those modules has been imported and no such
variable is set, nothing can be watching, and :func:`nothing_watches` says so without
asking; otherwise it asks LangChain exactly as ``ainvoke`` would.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# modules holding the state a callback manager reads (imported = possibly set)
_STATE_MODULES = ("langchain_core.runnables.config", "langchain_core.tracers.context", "langsmith.run_helpers",
                  "langchain_core.globals")  # fmt: skip
_ENV_PREFIXES = ("LANGCHAIN_", "LANGSMITH_")


def nothing_watches(callbacks: Any = None, verbose: bool | None = None, tags: Any = None, metadata: Any = None) -> bool:
    """True when a run started here with these callbacks, verbosity (None: LangChain's
    global), tags and metadata would have no callback handler and no LLM cache."""
    if callbacks is None and not verbose and not tags and not metadata and _untouched():
        return True
    from langchain_core.globals import get_llm_cache, get_verbose

    if get_llm_cache() is not None:
        return False
    return not handlers(callbacks, get_verbose() if verbose is None else verbose, tags, metadata)


def handlers(callbacks: Any, verbose: bool, tags: Any, metadata: Any) -> list[Any]:
    """The handlers LangChain's callback manager would configure here (as ``ainvoke`` does)."""
    from langchain_core.callbacks.manager import AsyncCallbackManager
    from langchain_core.runnables.config import ensure_config

    config = ensure_config()
    manager = AsyncCallbackManager.configure(
        config.get("callbacks"), callbacks, verbose, config.get("tags"), tags, config.get("metadata"), metadata
    )
    return manager.handlers


def _untouched() -> bool:
    """No module whose state could add a handler is loaded, and no LangChain/LangSmith variable is set."""
    if any(name in sys.modules for name in _STATE_MODULES):
        return False
    # names first: reading every value costs three conversions a variable, on every call
    return not any(name.startswith(_ENV_PREFIXES) and os.environ[name] for name in os.environ)
