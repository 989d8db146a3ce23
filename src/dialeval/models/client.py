"""The one door every agent call goes through: :class:`ModelClient`.

It adds what an evaluation needs around a chat model, whatever the backend: the
response cache, the run's request limit, token/cost accounting and the finish reason.
What differs between backends (building the model, endpoint, key, preflight,
structured output, error kinds) is asked of the backend object
(:mod:`dialeval.models.backends`), chosen once from the typed spec
(:class:`dialeval.spec.ModelSpec`). Heavy libraries load on first use only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable

from dialeval.endpoint import redacted
from dialeval.models.backends import Backend, backend_for, spec_backend
from dialeval.models.backends.base import API_MAX_CONCURRENCY, error_kind
from dialeval.models.backends.dry_run import DryRunBackend
from dialeval.models.backends.http import CONNECT_TIMEOUT, PreflightError, http_timeout
from dialeval.models.backends.local import LOCAL_DECODING, local_decoding
from dialeval.models.batch_queue import QueuedCall, batch_queue
from dialeval.models.breaker import CircuitBreaker, RunStopped, current_breaker
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.models.generation import Generation, finish_reason, logprobs_of, message_payload, refusal_of, text_of
from dialeval.models.pricing import Price
from dialeval.spec import API_BACKENDS, BACKENDS, ModelSpec, SpecError, parse_spec
from dialeval.models.usage import count_tokens, note_server_model, price_of

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.config import ModelSettings

__all__ = [
    "API_BACKENDS", "API_MAX_CONCURRENCY", "BACKENDS", "CONNECT_TIMEOUT", "LOCAL_DECODING", "CircuitBreaker",
    "Generation", "ModelClient", "ModelSpec", "PreflightError", "RunStopped", "SpecError",
    "build_chat_model", "current_breaker", "current_limits", "error_kind", "get_client", "http_timeout",
    "local_decoding", "parse_spec", "preflight", "register_client", "request_slots",
]


def build_chat_model(settings: ModelSettings, limit: AdaptiveLimit | None = None) -> BaseChatModel:
    """A LangChain chat model for ``settings``; agents never see which backend it is.

    ``limit`` (API backends) hears every HTTP response, so rate limits shrink it."""
    return backend_for(settings.parsed, settings).build(limit)


# The runner bounds model requests in flight across all items with this semaphore.
# told just before each request leaves (the run counts what the server saw: stop_when_decided's calls saved)
request_sent: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("dialeval_request_sent", default=None)
request_slots: contextvars.ContextVar[asyncio.Semaphore | None] = contextvars.ContextVar(
    "dialeval_request_slots", default=None
)


class ModelClient:
    """Cache, limits and accounting around one chat model; built once per settings."""

    def __init__(self, settings: ModelSettings, chat_model: BaseChatModel | None = None):
        from dialeval.secrets import register_key_env, register_url

        self.settings = settings
        self.spec: ModelSpec = settings.parsed
        self.backend, self.name = self.spec.backend, self.spec.name  # the backend's name, e.g. "openai"
        self.impl: Backend = backend_for(self.spec, settings)
        self._model = chat_model
        self.injected = chat_model is not None  # tests and custom backends: no preflight
        self._per_loop: weakref.WeakKeyDictionary[Any, BaseChatModel] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.price = self._price()
        self.is_dry_run = self.spec.is_dry_run
        self.batch_price = self._batch_price() if settings.batch else None
        register_key_env(settings.api_key_env)
        register_url(self.impl.endpoint)  # issue 33: a base_url's password and query values are scrubbed too
        self.limit = self.impl.new_limit()
        self._limit_memory: str | None = None  # the cache path whose limits.json the limit follows

    def _price(self) -> Price | None:
        s = self.settings
        if s.price:
            return Price.of(s.price)
        if s.price_as:
            named = spec_backend(s.price_as, s)
            return named.price() if named is not None else price_of(s.price_as)
        return self.impl.price()

    def _batch_price(self) -> Price | None:
        """What a batched call costs: the provider's batch rate (:mod:`dialeval.models.batch.costs`)."""
        from dialeval.models.batch.costs import batch_price_for

        return batch_price_for(self)

    @property
    def label(self) -> str:
        return self.settings.spec

    @property
    def endpoint(self) -> str | None:
        """The URL requests go to (see :attr:`Backend.endpoint`); ``None`` for local backends."""
        return self.impl.endpoint

    @property
    def endpoint_source(self) -> str:
        """Where :attr:`endpoint` came from, for messages."""
        return self.impl.endpoint_source

    @property
    def key_env(self) -> str | None:
        """The environment variable holding this model's key (API backends)."""
        return self.impl.key_env

    def where(self) -> str:
        """``spec at URL (URL from ..., key from $VAR)``: what a failure message names; a
        variable that is not set is said to be unset, not named as the key's source."""
        if self.endpoint is None:
            return self.label
        key = f"key from ${self.key_env}" if os.environ.get(self.key_env or "") else f"no key: ${self.key_env} is not set"
        return f"{self.label} at {redacted(self.endpoint)} (URL from {self.endpoint_source}; {key})"

    @property
    def model(self) -> BaseChatModel:
        """The chat model; API clients are built per event loop, since their HTTP pools
        belong to the loop that opened them (two ``evaluate()`` calls = two loops)."""
        with self._lock:
            if self._model is not None:
                return self._model
            if not self.is_api:
                self._model = self.impl.build()
                return self._model
            try:
                loop: Any = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            model = self._per_loop.get(loop) if loop is not None else None
            if model is None:
                model = self.impl.build(self.limit)
                if loop is not None:
                    self._per_loop[loop] = model
            return model

    async def close_loop(self) -> None:
        """Close the HTTP pool this event loop's chat model opened and forget the model (a
        later run in this loop builds a new one): an async HTTP client must be closed in its
        own loop."""
        if not self.is_api or self.injected:
            return
        loop = asyncio.get_running_loop()
        with self._lock:
            model = self._per_loop.pop(loop, None)
        if model is not None:
            self.impl.forget(model)
        await self.impl.close(model)  # also what the backend keeps per loop without a chat model

    def _cost(
        self, input_tokens: int, output_tokens: int, cached_input: int = 0, cache_write: int = 0, price: Price | None = None
    ) -> float:
        price = price or self.price
        if not price:
            return 0.0
        return price.cost(input_tokens, output_tokens, cached_input, cache_write)

    @property
    def is_local(self) -> bool:
        return self.impl.is_local

    @property
    def is_api(self) -> bool:
        """An HTTP API model (OpenAI, Anthropic, OpenAI-compatible): per-loop clients, an adaptive limit."""
        return self.impl.is_api

    @property
    def sees_images(self) -> bool:
        """Whether image blocks reach the model as images (a local vision-language model)."""
        return self.impl.sees_images(self._model)

    def _prefilled(self, messages: list[BaseMessage], schema: type[BaseModel] | None) -> list[BaseMessage]:
        """The messages as cached and sent (local models without a grammar get the answer started)."""
        return self.impl.prepare(messages, schema)

    def cache_parts(
        self, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None = None,
        sample_index: int | None = None,
    ) -> dict[str, Any]:
        s = self.settings
        seed = {"seed": s.seed} if s.seed is not None else {}  # issue 49: a cascade's readings are distinct requests
        return {
            **seed,
            **({"logprobs": True} if s.logprobs else {}),
            **({"sample_index": sample_index} if sample_index is not None else {}),  # a distinct sample, on purpose
            "backend": self.backend,
            "model": self.name,
            # the server actually asked: two servers may serve different models by one name
            "base_url": self.endpoint,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
            "structured": schema.__name__ if (schema is not None and s.structured_output) else None,
            "messages": message_payload(messages),
            "local_decoding": self.impl.decoding(schema, json_schema) if self.is_local else None,
        }

    def estimate(self, messages: list[BaseMessage], placeholder: str | None, *, batched: bool = False) -> Generation:
        """A dry run's answer: the placeholder, with a real call's tokens and cost (``batched``: at the batch rate)."""
        assert isinstance(self.impl, DryRunBackend)
        text, n_in, n_out, hit = self.impl.estimate(messages, placeholder)
        price = self.batch_price if batched else None
        return Generation(
            text, "stop", n_in, n_out, cached=False, cost=self._cost(n_in, n_out, hit, price=price), estimated=True,
            cached_input_tokens=hit, uncached_cost=self._cost(n_in, n_out, price=price),
        )

    async def generate(
        self,
        messages: list[BaseMessage],
        *,
        schema: type[BaseModel] | None = None,
        json_schema: dict[str, Any] | None = None,
        placeholder: str | None = None,
        cache_path: str | None = None,
        read_cache: bool = True,
        sample_index: int | None = None,
    ) -> Generation:
        """Answer ``messages``: from the cache when possible, else from the model, once per
        identical request of the run (:mod:`~dialeval.models.single_flight`; ``sample_index``
        makes a request distinct on purpose). ``json_schema`` narrows ``schema``'s JSON schema
        for this call (e.g. an array length known in advance); local models decode under it.
        Nothing is stored here: the caller calls :meth:`remember` once the answer has been
        parsed and validated, so only answers that ended ``ok`` are replayed."""
        from dialeval.jsonsafe import sendable
        from dialeval.models.cache import cache_key
        from dialeval.models.single_flight import shared

        messages = sendable(self._prefilled(messages, schema))  # a quoted reply's lone surrogate goes as U+FFFD
        key = cache_key(self.cache_parts(messages, schema, json_schema, sample_index))
        return await shared(key, lambda: self._answer(messages, schema, json_schema, placeholder, key, cache_path, read_cache),
                            alone=bool(self.settings.batch and batch_queue.get()))  # a batch round shares identical calls itself

    async def _answer(
        self, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None,
        placeholder: str | None, key: str, cache_path: str | None, read_cache: bool,
    ) -> Generation:
        """The response cache's answer, else the batch queue's, the dry run's or the model's."""
        if cache_path and not self.is_dry_run:
            from dialeval.models.cache import open_cache

            hit: Any = open_cache(cache_path).get(key) if read_cache else None
            if hit is not None:
                return Generation(
                    text=hit["text"],
                    finish_reason=hit.get("finish_reason"),
                    input_tokens=hit.get("input_tokens", 0),
                    output_tokens=hit.get("output_tokens", 0),
                    cached=True,
                    cost=0.0,
                    logprobs=[(str(t), float(p)) for t, p in hit["logprobs"]] if hit.get("logprobs") else None,
                )
        queue = batch_queue.get() if self.settings.batch else None
        if queue is not None:  # the runner's next batch round answers it
            return await queue.ask(self, QueuedCall(messages, schema, json_schema, placeholder, key, cache_path))
        if self.is_dry_run:
            return self.estimate(messages, placeholder)
        if cache_path and cache_path != self._limit_memory:
            self.use_limit_memory(cache_path)
        message = await self._call(messages, schema, json_schema)
        return self.answer_of(message, messages, key, cache_path)

    def answer_of(
        self, message: Any, messages: list[BaseMessage], key: str | None, cache_path: str | None, price: Price | None = None
    ) -> Generation:
        """The :class:`Generation` of a model's answer to ``messages`` (live, or a batch line's at ``price``)."""
        note_server_model(message)
        text = text_of(message)
        usage = getattr(message, "usage_metadata", None) or {}
        n_in = usage.get("input_tokens") or sum(count_tokens(str(m.content)) for m in messages)
        n_out = usage.get("output_tokens") or count_tokens(text)
        details = usage.get("input_token_details") or {}  # LangChain's names for both providers
        cache_read, written = int(details.get("cache_read") or 0), int(details.get("cache_creation") or 0)
        return Generation(
            text=text,
            finish_reason=finish_reason(message),
            input_tokens=n_in,
            output_tokens=n_out,
            cached=False,
            cost=self._cost(n_in, n_out, cache_read, written, price=price),
            cached_input_tokens=cache_read,
            cache_write_tokens=written,
            uncached_cost=self._cost(n_in, n_out, price=price),
            cache_key=key,
            cache_path=cache_path,
            refusal=refusal_of(message),
            logprobs=logprobs_of(message),
        )

    def use_limit_memory(self, cache_path: str) -> None:
        """Start from the request limit the last run against this endpoint and model learned,
        and keep what this one learns (:mod:`dialeval.models.limit_memory`)."""
        self._limit_memory = cache_path
        if self.is_api and not self.injected and self.endpoint and self.limit.adaptive:
            from dialeval.models.limit_memory import keep_learning

            keep_learning(self.limit, self.endpoint, self.name, cache_path)

    async def _call(self, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> Any:
        """One request within the model's limit and the run's slots, told to the circuit breaker."""
        breaker = current_breaker.get()
        if breaker is not None:
            breaker.check()
        slots = request_slots.get()
        sent = self.impl.outgoing(messages)
        try:
            async with self.limit, slots if slots is not None else contextlib.nullcontext():
                told = request_sent.get()
                if told is not None:
                    told()
                message = await self.impl.send(self.model, sent, schema, json_schema)
        except Exception as err:
            message = self.impl.truncated(err)
            if message is None:
                self.impl.refused(self.limit, err)
                if breaker is not None:
                    breaker.failed(self, err)
                raise
        if breaker is not None:
            breaker.succeeded()
        return message

    def remember(self, generation: Generation) -> None:
        """Store an answer that ended ``ok`` for reuse (others are never replayed)."""
        from dialeval.models.cache import store_answer

        store_answer(generation, self.settings.spec)


def preflight(client: ModelClient) -> None:
    """Cheap checks before the first item, so a setup mistake costs seconds, not a run.

    API models: a key where the SDK needs one, a URL, and one ``GET .../models`` (which
    answers without spending tokens) that must connect and must not refuse the key;
    a server without that route passes. Local models: the file or folder exists.
    """
    if client.injected or client.is_dry_run:
        return
    client.impl.preflight(client.where())


_CLIENTS: dict[str, ModelClient] = {}
_CLIENTS_LOCK = threading.Lock()


async def close_clients() -> None:
    """Close every API client's HTTP pool opened in this event loop (the end of a run)."""
    with _CLIENTS_LOCK:
        clients = list(_CLIENTS.values())
    for client in clients:
        await client.close_loop()


def current_limits() -> dict[str, int]:
    """Requests allowed in flight now, per API model in use."""
    return {label: limit.current for label, limit in active_limits().items()}


def active_limits() -> dict[str, AdaptiveLimit]:
    """The request limit of each API model with requests in flight (the progress bar shows
    each, and why it fell)."""
    with _CLIENTS_LOCK:
        clients = list(_CLIENTS.values())
    return {c.label: c.limit for c in clients if c.is_api and c.limit.in_flight}


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
