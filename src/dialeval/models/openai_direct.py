"""A ChatOpenAI call without LangChain's run machinery, when nothing would watch it.

Why: with an instant model, LangChain's ``ainvoke`` around one chat completion (config
merging, callback managers, ``LLMResult`` objects, the SDK's ``parse`` helper and a
thread hop to build the result) costs about as much as the HTTP request itself
(measured in ``benchmarks/runner_overhead.py``). When no callback handler would see
the call (no LangSmith tracing, no LangGraph Studio stream, no user callbacks, no
LangChain cache), those steps do nothing for the result, so :func:`direct_call` sends
the request through the SDK client the ``ChatOpenAI`` already holds, with the request
body ``ChatOpenAI`` itself builds (``_get_request_payload``), and turns the answer into
the same ``AIMessage`` (``_create_chat_result``). Whenever a handler is attached, or the
model is not a plain ``ChatOpenAI`` this module knows, it returns ``None`` and the caller
goes through ``ainvoke`` as before, so traces stay complete.
"""

from __future__ import annotations

from typing import Any

_REQUIRED = ("_get_request_payload", "_create_chat_result", "_use_responses_api", "async_client")


def _plain_chat_openai(model: Any) -> bool:
    """A ``ChatOpenAI`` (not a subclass that may change the request) with the helpers used here."""
    cls = type(model)
    return (
        cls.__name__ == "ChatOpenAI"
        and cls.__module__.startswith("langchain_openai")
        and all(hasattr(model, name) for name in _REQUIRED)
        and not getattr(model, "streaming", False)
    )


def unobserved(model: Any) -> bool:
    """True when ``model.ainvoke`` here would run with no callback handler and no LangChain cache.

    The callback manager is configured exactly as ``ainvoke`` would configure it (the
    parent runnable's config from the context, tracing and debug settings from the
    environment, the model's own callbacks), so anything that would record the call
    makes this False.
    """
    from langchain_core.callbacks.manager import AsyncCallbackManager
    from langchain_core.globals import get_llm_cache
    from langchain_core.runnables.config import ensure_config

    if model.cache is not None and model.cache is not False:
        return False
    if model.cache is None and get_llm_cache() is not None:
        return False
    config = ensure_config()
    manager = AsyncCallbackManager.configure(
        config.get("callbacks"),
        model.callbacks,
        model.verbose,
        config.get("tags"),
        model.tags,
        config.get("metadata"),
        model.metadata,
    )
    return not manager.handlers


async def direct_call(model: Any, messages: list[Any], kwargs: dict[str, Any]) -> Any | None:
    """The ``AIMessage`` ``model.bind(**kwargs).ainvoke(messages)`` would return, or ``None``
    when this call must go through ``ainvoke`` (see the module docstring).

    Errors come out as ``ainvoke`` raises them (LangChain's context-overflow and
    authentication types), and a structured answer cut off by a content filter raises
    the SDK's ``ContentFilterFinishReasonError`` as its ``parse`` helper does. A
    structured answer cut by the token limit comes back as a message with finish
    reason ``length`` (``parse`` raises instead; callers treat both as truncated).
    """
    if not _plain_chat_openai(model) or model.output_version == "v1" or not unobserved(model):
        return None
    try:  # what ainvoke does to the provider's result (private to LangChain: checked, not assumed)
        from langchain_core.language_models.chat_models import _gen_info_and_msg_metadata
    except ImportError:
        return None
    payload = model._get_request_payload(messages, **kwargs)
    if model._use_responses_api(payload):
        return None
    import openai
    from langchain_openai.chat_models import base as lc_openai

    if model.rate_limiter is not None:
        await model.rate_limiter.aacquire(blocking=True)
    structured = "response_format" in payload
    try:
        # the body parse() would send (it adds "stream": false itself), without its result parsing
        response = await model.async_client.create(**payload)
    except openai.BadRequestError as err:
        lc_openai._handle_openai_bad_request(err)
        raise
    except openai.APIError as err:
        lc_openai._handle_openai_api_error(err)
        raise
    if structured and any(choice.finish_reason == "content_filter" for choice in response.choices):
        raise openai.ContentFilterFinishReasonError(completion=response)
    result = model._create_chat_result(response)
    message = result.generations[0].message
    message.response_metadata = _gen_info_and_msg_metadata(result.generations[0])  # finish reason and more
    if len(result.generations) == 1 and result.llm_output is not None:
        message.response_metadata = {**result.llm_output, **message.response_metadata}
    return message
