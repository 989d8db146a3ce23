"""The OpenAI API and OpenAI-compatible servers (vLLM, Ollama, LM Studio) through ``ChatOpenAI``.

Structured output is OpenAI's JSON-schema response format. When no callback would see
a call, it skips LangChain's run machinery (see :func:`direct_call`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import weakref
from typing import TYPE_CHECKING, Any, ClassVar

from dialeval.models.backends.base import ApiBackend
from dialeval.models.backends.http import PreflightError, async_http, check_models_route, http_timeout, sdk_http, sync_http
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.models.endpoint import redacted, split_base_url
from dialeval.models.openai_body import answer_message, plain_setup, request_body, verified
from dialeval.models.head_start import HeadStart, first_attempts, sdk_pending, sdk_ready, start_sdk_import
from dialeval.models.head_start import allowed as head_start_allowed
from dialeval.models.openai_direct import send_body
from dialeval.models.spec import SpecError
from dialeval.models.usage import note_start_up
from dialeval.models.watchers import handlers, nothing_watches

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.models.pricing import Price


@functools.lru_cache(maxsize=256)
def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """OpenAI's JSON-schema response format; built once per schema (it is not cheap)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
    }


class OpenAIBackend(ApiBackend):
    """``openai:<model>``: key from ``$OPENAI_API_KEY``, URL from the SDK's variables or its default."""

    name = "openai"
    key_var = "OPENAI_API_KEY"
    url_vars = ("OPENAI_API_BASE", "OPENAI_BASE_URL")
    default_endpoint: ClassVar[str | None] = "https://api.openai.com/v1"
    needs_key = True

    def __init__(self, spec: Any, settings: Any):
        super().__init__(spec, settings)
        self._light_clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # event loop -> SDK client
        self._head_start: HeadStart | None = None  # set by warm(head_start=True)

    def build(self, limit: AdaptiveLimit | None = None) -> BaseChatModel:
        from langchain_openai import ChatOpenAI

        s = self.settings
        kwargs: dict[str, Any] = dict(
            model=self.spec.name, max_tokens=s.max_tokens, timeout=http_timeout(s), max_retries=s.max_retries
        )
        if not s.base_url and not self.needs_key and not os.environ.get("OPENAI_BASE_URL"):
            raise SpecError(f"{s.spec}: openai-compatible models need base_url (or OPENAI_BASE_URL)")
        kwargs.update(self.sdk_url_args())  # issue 33: base_url, and its query and credentials apart
        key = self._key()
        if key:  # local servers usually ignore the key
            kwargs["api_key"] = key
        # our own pool: langchain-openai shares one process-wide async pool, which breaks
        # as soon as a second event loop (a second evaluate() call) uses it
        kwargs["http_async_client"] = async_http(s, limit, sdk="openai")
        kwargs["http_client"] = sync_http(s.timeout)
        return ChatOpenAI(**kwargs, temperature=s.temperature, rate_limiter=self.rate_limiter())

    def requirements(self) -> None:
        """A URL, and a key where the OpenAI API needs one."""
        super().requirements()
        if self.endpoint is None:
            raise PreflightError(
                f"model {self.settings.spec}: openai-compatible models need base_url in the config (or $OPENAI_BASE_URL)"
            )
        if self.needs_key and not os.environ.get(self.key_env or ""):
            raise PreflightError(f"model {self.settings.spec}: no API key; set ${self.key_env} in the environment")
        parts = self.endpoint_parts
        if parts is not None and parts.has_userinfo and (self.needs_key or self.settings.api_key_env):
            # issue 33: both would be the Authorization header; basic auth would silently drop the key
            raise PreflightError(
                f"model {self.settings.spec}: base_url {redacted(self.endpoint)} carries user:password (sent as "
                f"HTTP basic auth in the Authorization header), which is where the key from ${self.key_env} goes too; "
                "use an openai-compatible model without api_key_env for a server behind basic auth"
            )

    def preflight(self, where: str) -> None:
        """:meth:`requirements`, and a ``GET .../models`` that connects and accepts the key."""
        self.requirements()
        parts = self.endpoint_parts or split_base_url("")
        key = os.environ.get(self.key_env or "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        headers.update(parts.auth_headers())  # issue 33: as the SDK sends it (default_headers win)
        check_models_route(parts.with_path("/models"), headers, where, self.settings.timeout)

    def structured(self, model: Any, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> Any:
        return model.bind(response_format=response_format(schema))

    async def call(
        self, client: Any, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None
    ) -> Any:
        """The light path (no ``ChatOpenAI`` built, ``langchain_openai`` not imported) when it
        can send what ``ChatOpenAI`` would send, else :meth:`send` as every backend does."""
        if not client.injected:
            message = await self.light_call(client, messages, schema)
            if message is not None:
                return message
        return await self.send(client.model, messages, schema, json_schema, client.injected)

    def warm(self, client: Any, head_start: bool = False) -> None:
        """The light path's SDK client when the first request will take that path, else the
        chat model; with ``head_start`` (one process, nothing watching), nothing: the first
        requests leave while the SDK imports (:mod:`dialeval.models.head_start`)."""
        if head_start and not client.injected:
            self._head_start = self._head_start_for()
            if self._head_start is not None:
                return
        if client.injected or self.light_client(client.limit) is None:
            super().warm(client)

    def _head_start_for(self) -> HeadStart | None:
        """The head start of this model, when its requests can take one."""
        s = self.settings
        if not head_start_allowed(s.base_url, self.key_env) or not self._light_possible():
            return None
        key = self._key()
        return HeadStart(s.base_url or "", key, s.timeout) if key else None

    def _key(self) -> str | None:
        """The key sent: the configured variable's, else a placeholder where none is needed."""
        return os.environ.get(self.key_env or "") or (None if self.needs_key else "not-needed")

    async def light_call(self, client: Any, messages: list[BaseMessage], schema: type[BaseModel] | None) -> Any | None:
        """What ``ChatOpenAI``'s unobserved ``ainvoke`` returns, built without LangChain's chat
        model (``models/openai_body.py``); ``None`` before anything is sent when this call is
        not one the light path knows, or something would watch it."""
        s = self.settings
        structured = schema is not None and s.structured_output
        body = request_body(
            self.spec.name, messages, max_tokens=s.max_tokens, temperature=s.temperature,
            response_format=response_format(schema) if structured and schema is not None else None,
        )  # fmt: skip
        if body is None or not nothing_watches():  # the ChatOpenAI build() makes: no callbacks, tags or cache of its own
            return None
        if self._head_start is not None and sdk_pending():
            asyncio.get_running_loop().call_soon(start_sdk_import)  # once the items waiting to send have sent
            await self._head_start.send(body)  # kept: the SDK client's first attempt at this body (below)
            answered = time.perf_counter()
            await sdk_ready()
            note_start_up(time.perf_counter() - answered)  # the answer waited for the import, not for the model
        sdk = self.light_client(client.limit)
        if sdk is None:
            return None
        response = await post(sdk, body)
        return answer_message(response, self.spec.name) or chat_result_message(client.model, response)

    def _light_possible(self) -> bool:
        s = self.settings
        extras = set(self.sdk_url_args()) - {"base_url"}  # issue 33: a query or credentials go through ChatOpenAI
        return not s.requests_per_second and not extras and verified() and plain_setup(self.spec.name)

    def light_client(self, limit: AdaptiveLimit | None) -> Any | None:
        """The SDK client ``ChatOpenAI`` would hold (``root_async_client``) for this event
        loop, built as its ``validate_environment`` builds it from :meth:`build`'s arguments;
        ``None`` when the light path is off (another langchain-openai release, a special model
        name or environment, a rate limiter) or the client cannot be built that way."""
        loop = asyncio.get_running_loop()
        clients = self._light_clients
        if loop in clients:  # built after the same checks (the body's own run on every call)
            return clients[loop]
        if not self._light_possible():
            return None
        s = self.settings
        base_url = s.base_url or os.environ.get("OPENAI_API_BASE") or None
        if not base_url and not self.needs_key and not os.environ.get("OPENAI_BASE_URL"):
            return None  # build() refuses it: the chat model's path says why
        key = self._key() or os.environ.get("OPENAI_API_KEY")
        if not key:
            return None  # the SDK refuses a client without a key: the chat model's path raises it
        import openai

        params: dict[str, Any] = {
            "organization": os.getenv("OPENAI_ORG_ID") or os.getenv("OPENAI_ORGANIZATION"),
            "base_url": base_url,
            "timeout": http_timeout(s),
            "default_headers": None,
            "default_query": None,
        }
        if s.max_retries is not None:
            params["max_retries"] = s.max_retries
        # the requests a head start sent early are this client's first attempts
        wrap = first_attempts(self._head_start, sdk_http("openai")) if self._head_start is not None else None
        clients[loop] = sdk = openai.AsyncOpenAI(**params, http_client=async_http(s, limit, wrap=wrap), api_key=key)
        if getattr(sdk, "_platform", False) is None:
            sdk._platform = sdk_platform()
        return sdk

    async def send(
        self, model: Any, messages: list[BaseMessage], schema: type[BaseModel] | None,
        json_schema: dict[str, Any] | None, injected: bool,
    ) -> Any:
        """The direct path when nothing watches the call, else ``ainvoke``: same request, same message."""
        if not injected:  # a chat model given from outside may not be a plain ChatOpenAI
            structured = schema is not None and self.settings.structured_output
            kwargs = {"response_format": response_format(schema)} if structured and schema is not None else {}
            message = await direct_call(model, messages, kwargs)
            if message is not None:
                return message
        return await super().send(model, messages, schema, json_schema, injected)

    async def close(self, model: Any | None) -> None:
        """This loop's SDK clients (the chat model's and the light path's) close the HTTP pools
        they were given (aiohttp's sessions need closing in their loop), and the head start's."""
        loop = asyncio.get_running_loop()
        for sdk in (self._light_clients.pop(loop, None), getattr(model, "root_async_client", None)):
            if sdk is not None:
                await sdk.close()
        if self._head_start is not None:
            await self._head_start.close()

    def truncated(self, err: Exception) -> Any | None:
        """The SDK raises on a cut-off structured answer; keep it as a ``length`` finish."""
        completion = getattr(err, "completion", None)
        if type(err).__name__ != "LengthFinishReasonError" or completion is None:
            return None
        from langchain_core.messages import AIMessage

        usage = getattr(completion, "usage", None)
        return AIMessage(
            completion.choices[0].message.content or "",
            response_metadata={"finish_reason": "length"},
            usage_metadata={
                "input_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                "output_tokens": getattr(usage, "completion_tokens", 0) or 0,
                "total_tokens": getattr(usage, "total_tokens", 0) or 0,
            },
        )


@functools.cache
def sdk_platform() -> Any:
    """The OpenAI SDK's platform header value, found once per process.

    Why: a new SDK client finds it on its first request in a worker thread, and every
    request of the first burst starts before the first finding is back: 40 thread hops
    for one value (2 ms to find the first time in a process, microseconds after)."""
    from openai._base_client import get_platform

    return get_platform()


class OpenAICompatibleBackend(OpenAIBackend):
    """``openai-compatible:<model>`` + ``base_url``: a server of one's own; the key is optional, the price unknown."""

    name = "openai-compatible"
    default_endpoint = None
    needs_key = False

    def price(self) -> Price | None:
        return None


# --- the direct path -------------------------------------------------------------------
# With an instant model, LangChain's ``ainvoke`` around one chat completion (config
# merging, callback managers, ``LLMResult`` objects, the SDK's ``parse`` helper and a
# thread hop to build the result) costs about as much as the HTTP request itself
# (measured in ``benchmarks/runner_overhead.py``). When no callback handler would see
# the call (no LangSmith tracing, no LangGraph Studio stream, no user callbacks, no
# LangChain cache), those steps do nothing for the result, so :func:`direct_call` sends
# the request through the SDK client the ``ChatOpenAI`` already holds, with the request
# body ``ChatOpenAI`` itself builds, and turns the answer into the same ``AIMessage``
# (without the SDK's per-request body transform and typed answer: ``models/openai_direct.py``).
# It relies on private LangChain names: each is checked before use, and when one is
# missing (a LangChain release renamed it) the call goes through ``ainvoke`` instead.

_REQUIRED = ("_get_request_payload", "_create_chat_result", "_use_responses_api", "root_async_client")
_MODULE_HELPERS = ("_handle_openai_bad_request", "_handle_openai_api_error")


def _plain_chat_openai(model: Any) -> bool:
    """A ``ChatOpenAI`` (not a subclass that may change the request) with the helpers used here."""
    cls = type(model)
    return (
        cls.__name__ == "ChatOpenAI"
        and cls.__module__.startswith("langchain_openai")
        and all(hasattr(model, name) for name in _REQUIRED)
        and not getattr(model, "streaming", False)
    )


def private_helpers() -> tuple[Any, Any, Any] | None:
    """LangChain's private helpers ``ainvoke`` uses (result metadata; turning SDK errors
    into LangChain's types), or ``None`` when any is gone."""
    try:
        from langchain_core.language_models.chat_models import _gen_info_and_msg_metadata
        from langchain_openai.chat_models import base as lc_openai
    except ImportError:
        return None
    bad_request, api_error = (getattr(lc_openai, name, None) for name in _MODULE_HELPERS)
    if not callable(bad_request) or not callable(api_error):
        return None
    return _gen_info_and_msg_metadata, bad_request, api_error


def unobserved(model: Any) -> bool:
    """True when ``model.ainvoke`` here would run with no callback handler and no LangChain cache.

    The callback manager is configured exactly as ``ainvoke`` would configure it (the
    parent runnable's config from the context, tracing and debug settings from the
    environment, the model's own callbacks), so anything that would record the call
    makes this False.
    """
    from langchain_core.globals import get_llm_cache

    if model.cache is not None and model.cache is not False:
        return False
    if model.cache is None and get_llm_cache() is not None:
        return False
    return not handlers(model.callbacks, model.verbose, model.tags, model.metadata)


async def direct_call(model: Any, messages: list[Any], kwargs: dict[str, Any]) -> Any | None:
    """The ``AIMessage`` ``model.bind(**kwargs).ainvoke(messages)`` would return, or ``None``
    when this call must go through ``ainvoke`` (observed, or a private name is gone).

    Errors come out as ``ainvoke`` raises them (LangChain's context-overflow and
    authentication types), and a structured answer cut off by a content filter raises
    the SDK's ``ContentFilterFinishReasonError`` as its ``parse`` helper does. A
    structured answer cut by the token limit comes back as a message with finish
    reason ``length`` (``parse`` raises instead; callers treat both as truncated).
    """
    if not _plain_chat_openai(model) or model.output_version == "v1" or not unobserved(model):
        return None
    if private_helpers() is None:
        return None
    payload = model._get_request_payload(messages, **kwargs)
    if model._use_responses_api(payload):
        return None
    if model.rate_limiter is not None:
        await model.rate_limiter.aacquire(blocking=True)
    return chat_result_message(model, await post(model.root_async_client, payload))


async def post(sdk: Any, body: dict[str, Any]) -> Any:
    """The answer to ``body`` through the SDK client ``sdk`` (a dict, or a non-JSON answer's
    text), with SDK errors turned into LangChain's types as ``ainvoke`` turns them, and a
    structured answer stopped by the content filter raised as the SDK's ``parse`` raises it."""
    import openai

    try:
        response = await send_body(sdk, body)
    except openai.APIError as err:
        helpers = private_helpers()  # imports langchain_openai: only on this error path
        if helpers is not None:
            _, on_bad_request, on_api_error = helpers
            (on_bad_request if isinstance(err, openai.BadRequestError) else on_api_error)(err)
        raise
    return checked(body, response)


def checked(body: dict[str, Any], response: Any) -> Any:
    """``response``, unless it is a structured answer the content filter stopped: the SDK's
    ``parse`` raises ``ContentFilterFinishReasonError`` for it, and so does this."""
    import openai

    if "response_format" in body and isinstance(response, dict) and any(
        isinstance(choice, dict) and choice.get("finish_reason") == "content_filter" for choice in response.get("choices") or ()
    ):
        from openai.types.chat import ChatCompletion

        raise openai.ContentFilterFinishReasonError(completion=ChatCompletion.construct(**response))
    return response


def chat_result_message(model: Any, response: Any) -> Any:
    """The ``AIMessage`` ``ainvoke`` makes of ``response``: ``model._create_chat_result`` and
    the result's metadata (finish reason, token usage, model name)."""
    helpers = private_helpers()
    if helpers is None or not _plain_chat_openai(model):
        raise RuntimeError("langchain-openai changed its private helpers; dialeval's direct path needs updating")
    metadata_of = helpers[0]
    result = model._create_chat_result(response)
    message = result.generations[0].message
    said = (response.get("choices") or [{}])[0].get("message") if isinstance(response, dict) else None
    if isinstance(said, dict) and said.get("refusal"):  # issue 33: as ainvoke keeps it (a typed answer)
        message.additional_kwargs["refusal"] = said["refusal"]
    message.response_metadata = metadata_of(result.generations[0])  # finish reason and more
    if len(result.generations) == 1 and result.llm_output is not None:
        message.response_metadata = {**result.llm_output, **message.response_metadata}
    return message
