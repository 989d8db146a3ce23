"""Tracers of the run's own process see the model calls its worker processes make.

A callback handler given to ``evaluate(callbacks=...)``, or the collector of
``collect_runs()``, lives in the process that started the run; a forked worker holds only
a copy. In a worker each of them is replaced by a :class:`Relay`, which sends every
event it hears (LangChain's public callback methods, with their arguments) up the
worker's pipe, and :func:`replay` calls the same method of the original handler in the
run's process, in the order the worker heard them. Tracers configured by the environment
(LangSmith) need no relay: each worker sends its own runs.
"""

from __future__ import annotations

import logging
import pickle
from typing import Any, Callable

from langchain_core.callbacks import BaseCallbackHandler

# BaseCallbackHandler's methods (langchain_core's documented callback interface)
EVENTS = (
    "on_llm_start", "on_chat_model_start", "on_llm_new_token", "on_llm_end", "on_llm_error",
    "on_chain_start", "on_chain_end", "on_chain_error", "on_tool_start", "on_tool_end", "on_tool_error",
    "on_retriever_start", "on_retriever_end", "on_retriever_error", "on_text", "on_retry",
    "on_agent_action", "on_agent_finish", "on_custom_event",
)
IGNORES = ("ignore_llm", "ignore_chain", "ignore_agent", "ignore_retriever", "ignore_chat_model", "ignore_retry",
           "ignore_custom_event")


def process_handlers(callbacks: list[Any] | None) -> list[Any]:
    """The handlers of the run's process that a worker's copy would hide: the given
    ``callbacks`` and the collector of an enclosing ``collect_runs()``."""
    from langchain_core.tracers.context import run_collector_var

    collector = run_collector_var.get()
    return [*(callbacks or []), *([collector] if collector is not None else [])]


def picklable(value: Any) -> Any:
    """``value``, with any part that cannot cross a pipe replaced by its ``repr``."""
    try:
        pickle.dumps(value)
        return value
    except Exception:  # noqa: BLE001 - whatever pickling raises, the text still goes
        if isinstance(value, dict):
            return {k: picklable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(picklable(v) for v in value) if isinstance(value, list) else tuple(picklable(v) for v in value)
        if isinstance(value, BaseException):
            return RuntimeError(f"{type(value).__name__}: {value}")
        return repr(value)


class Relay(BaseCallbackHandler):
    """In a worker: the stand-in of the run process's handler number ``index``."""

    run_inline = True  # in the event loop, in order: every event and then the item's row share one pipe

    def __init__(self, index: int, like: Any, send: Callable[[tuple[str, Any]], None]):
        self.index = index
        self._send = send
        self._ignores = {name: bool(getattr(like, name, False)) for name in IGNORES}

    def __getattribute__(self, name: str) -> Any:
        if name in IGNORES:
            return object.__getattribute__(self, "_ignores")[name]
        if name in EVENTS:
            index, send = object.__getattribute__(self, "index"), object.__getattribute__(self, "_send")

            def forward(*args: Any, **kwargs: Any) -> None:
                try:
                    send(("callback", (index, name, args, kwargs)))
                except (pickle.PicklingError, TypeError, AttributeError):
                    send(("callback", (index, name, picklable(args), picklable(kwargs))))

            return forward
        return super().__getattribute__(name)


def relays(handlers: list[Any], send: Callable[[tuple[str, Any]], None]) -> list[Relay]:
    """One relay per handler, and the worker's copy of ``collect_runs()`` switched off."""
    from langchain_core.tracers.context import run_collector_var

    run_collector_var.set(None)
    return [Relay(index, handler, send) for index, handler in enumerate(handlers)]


def replay(handlers: list[Any], event: tuple[int, str, tuple[Any, ...], dict[str, Any]]) -> None:
    """Call the original handler's method with the worker's arguments (a handler without
    ``on_chat_model_start`` hears ``on_llm_start`` with the prompts as text, as LangChain does)."""
    import asyncio

    index, name, args, kwargs = event
    handler = handlers[index]
    try:
        try:
            result = getattr(handler, name)(*args, **kwargs)
        except NotImplementedError:
            if name != "on_chat_model_start":
                return
            from langchain_core.messages import get_buffer_string

            serialized, messages = args[0], args[1]
            result = handler.on_llm_start(serialized, [get_buffer_string(m) for m in messages], **kwargs)
        if asyncio.iscoroutine(result):  # an AsyncCallbackHandler
            asyncio.ensure_future(result)
    except Exception as err:  # as LangChain does: a handler's failure is logged, the run goes on
        if getattr(handler, "raise_error", False):
            raise
        logging.getLogger("dialeval").warning("Error in %s.%s callback: %r", type(handler).__name__, name, err)
