"""The final-state check of a scenario: a ``module:function`` that reads the bot's environment.

tau-bench judges a task by the state its agent leaves behind, not by what the agent said.
The function receives the conversation's session id (the one the bot was called with) and
returns a bool or ``{"passed": bool, "reason": str}``; sync or async. It is imported when
the suite loads, so a wrong name stops the run before the first call; an answer of another
shape, or an exception, is recorded as a check that could not say (``passed: None``).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any, Callable

from dialeval.errors import DataError


def state_function(ref: str, suite: Path, record: str) -> Callable[[str], Any]:
    """The function ``ref`` names (the current folder importable, as for bots)."""
    module_name, _, attr = ref.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as err:
        raise DataError(suite, f"cannot import {ref!r}: {err}", record=record, field="success.state") from None
    if not callable(value):
        raise DataError(suite, f"{ref!r} is not a function", record=record, field="success.state")
    return value  # type: ignore[no-any-return]


async def check_state(ref: str, session_id: str) -> dict[str, Any]:
    """``{"state": ref, "passed": True | False | None, "reason": ...}`` for one conversation."""
    try:
        function = state_function(ref, Path("graph input"), "input")
        answer = await function(session_id) if inspect.iscoroutinefunction(function) else await asyncio.to_thread(function, session_id)
    except Exception as err:  # the user's check failed to run: no verdict, never a pass
        from dialeval.secrets import scrub

        return {"state": ref, "passed": None, "reason": scrub(f"the check raised {type(err).__name__}: {err}")[:500]}
    if isinstance(answer, bool):
        return {"state": ref, "passed": answer, "reason": None}
    if isinstance(answer, dict) and isinstance(answer.get("passed"), bool):
        return {"state": ref, "passed": answer["passed"], "reason": None if answer.get("reason") is None else str(answer["reason"])}
    return {"state": ref, "passed": None, "reason": f"the check returned {type(answer).__name__}, not a bool or {{passed, reason}}"}
