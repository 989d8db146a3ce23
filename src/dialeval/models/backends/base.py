"""What every backend answers: how to build its chat model, where it sends requests,
which key it reads, how it is checked before a run, how it asks for structured output,
and what its errors mean. :class:`dialeval.models.client.ModelClient` asks this object
instead of testing backend names."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from dialeval.models.concurrency import AdaptiveLimit
from dialeval.endpoint import Endpoint, split_base_url
from dialeval.spec import ModelSpec

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.config import ModelSettings
    from dialeval.models.pricing import Price

API_MAX_CONCURRENCY = 64

# What a failed call means; the circuit breaker stops a run on the first two kinds only.
CONNECTION, AUTHENTICATION, MISSING_MODEL, RATE_LIMIT = "connection", "authentication", "missing-model", "rate-limit"
STOPPING_KINDS = (CONNECTION, AUTHENTICATION)
_CONNECTION_ERRORS = {
    "APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ReadTimeout",
    "TimeoutException", "ConnectionError", "TimeoutError", "RemoteProtocolError",
}


def classify_error(err: BaseException) -> str | None:
    """The kind of a failed call, from its class names and HTTP status (the OpenAI and
    Anthropic SDKs and httpx name their errors alike); ``None`` when nothing is known."""
    names = {c.__name__ for c in type(err).__mro__}
    status = getattr(err, "status_code", None)
    if status in (401, 403) or names & {"AuthenticationError", "PermissionDeniedError"}:
        return AUTHENTICATION
    if names & _CONNECTION_ERRORS:
        return CONNECTION
    if status == 404 or "NotFoundError" in names:
        return MISSING_MODEL
    if status == 429 or "RateLimitError" in names:
        return RATE_LIMIT
    return None


def error_text(err: BaseException, kind: str | None = None) -> str:
    """``Type: message`` of a failed call, with the first error that caused it when that says
    more: the SDKs name a refused connection "Request timed out." or "Connection error."
    and keep the reason (host, port, refused) on ``__cause__``. ``kind`` replaces the type's name."""
    text = f"{kind or type(err).__name__}: {err}"
    root, seen = err, {id(err)}
    while root.__cause__ is not None and id(root.__cause__) not in seen:
        root = root.__cause__
        seen.add(id(root))
    said = str(root).strip()
    if root is not err and said and said not in text:
        text += f" (caused by {type(root).__name__}: {said})"
    return text


def error_kind(err: BaseException) -> str | None:
    """``connection`` or ``authentication`` for errors that no retry will cure soon."""
    kind = classify_error(err)
    return kind if kind in STOPPING_KINDS else None


class Backend:
    """One backend for one model spec and its settings (subclasses override what differs)."""

    name: ClassVar[str]
    is_api: ClassVar[bool] = False
    is_local: ClassVar[bool] = False
    key_var: ClassVar[str | None] = None  # the SDK's own key variable
    url_vars: ClassVar[tuple[str, ...]] = ()  # the SDK's own base-URL variables, first wins
    default_endpoint: ClassVar[str | None] = None  # the SDK's default, for messages and cache keys

    def __init__(self, spec: ModelSpec, settings: ModelSettings):
        self.spec = spec
        self.settings = settings
        self._bound: dict[tuple[int, type], tuple[Any, Any]] = {}  # (id(model), schema) -> (model, bound)

    def build(self, limit: AdaptiveLimit | None = None) -> BaseChatModel:
        """A LangChain chat model; ``limit`` (API backends) hears every HTTP response."""
        raise NotImplementedError

    def rate_limiter(self) -> Any:
        """LangChain's limiter for ``requests_per_second``, or ``None``."""
        if not self.settings.requests_per_second:
            return None
        from langchain_core.rate_limiters import InMemoryRateLimiter

        return InMemoryRateLimiter(
            requests_per_second=self.settings.requests_per_second, check_every_n_seconds=0.01, max_bucket_size=1
        )

    def new_limit(self) -> AdaptiveLimit:
        """Requests in flight: local models batch what arrives together, nothing to adapt to."""
        s = self.settings
        return AdaptiveLimit(s.max_concurrency or max(s.batch_size, 8), adaptive=False)

    @property
    def endpoint(self) -> str | None:
        """The URL requests go to: the configured ``base_url``, else the SDK's own
        environment variables, else the SDK default (``None`` for local backends)."""
        if not self.is_api:
            return None
        return self.settings.base_url or next(
            (os.environ[v] for v in self.url_vars if os.environ.get(v)), self.default_endpoint
        )

    # --- issue 33: a base_url's credentials and query (endpoint.py) ---
    @property
    def endpoint_parts(self) -> Endpoint | None:
        """:attr:`endpoint` split into URL, query and credentials (``None`` without one)."""
        url = self.endpoint
        return split_base_url(url) if url else None

    def sdk_url_args(self) -> dict[str, Any]:
        """``base_url`` (and ``default_query`` / ``default_headers`` for a URL that carries
        a query or credentials) for the SDK client or chat model: the configured URL, or
        one from the SDK's environment variable that carries extras; ``{}`` leaves the
        SDK to find its URL as it always does."""
        parts = self.endpoint_parts
        if parts is None or not (self.settings.base_url or parts.url != self.endpoint):
            return {}
        return parts.sdk_args()

    @property
    def endpoint_source(self) -> str:
        """Where :attr:`endpoint` came from, for messages."""
        if self.settings.base_url:
            return "base_url (the config or --base-url)"
        return next((f"${v}" for v in self.url_vars if os.environ.get(v)), "the SDK default")

    @property
    def key_env(self) -> str | None:
        """The environment variable holding this model's key (API backends)."""
        return (self.settings.api_key_env or self.key_var) if self.is_api else None

    def price(self) -> Price | None:
        """The price table's entry for this model; ``None`` when unknown."""
        return None

    def requirements(self) -> None:
        """What must be there without asking any server (a key, a URL); checked even with
        ``--no-preflight``, which only skips the round trip. PreflightError names it."""

    def preflight(self, where: str) -> None:
        """Cheap checks before the first item; PreflightError names what is wrong."""

    def prepare(self, messages: list[BaseMessage], schema: type[BaseModel] | None) -> list[BaseMessage]:
        """The messages as cached and sent (local models may start the answer)."""
        return messages

    def outgoing(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """The messages as they go on the wire (after the cache key was taken)."""
        return messages

    def structured(self, model: Any, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> Any:
        """``model`` set up to answer in ``schema`` (the backend's native way, if any)."""
        return model

    def bound(self, model: Any, schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> Any:
        """``model`` as a call for ``schema`` sends it (:meth:`structured` where structured output
        is on), bound once per chat model and schema: binding builds a runnable and, for some
        backends, converts the schema, on every call otherwise (docs/performance.md). A call's
        own narrowed ``json_schema`` is bound for that call."""
        if schema is None or not self.settings.structured_output:
            return model
        if json_schema is not None:
            return self.structured(model, schema, json_schema)
        key = (id(model), schema)  # the entry holds the model: its id is not reused while it is kept
        kept = self._bound.get(key)
        if kept is None:
            if len(self._bound) >= 256:  # a bound on what a long session keeps of models no longer used
                self._bound.clear()
            kept = self._bound[key] = (model, self.structured(model, schema, None))
        return kept[1]

    def forget(self, model: Any) -> None:
        """Drop what :meth:`bound` keeps for ``model`` (its event loop's run ended)."""
        for key in [key for key, (kept, _) in list(self._bound.items()) if kept is model]:
            self._bound.pop(key, None)

    async def send(
        self, model: Any, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None
    ) -> Any:
        """One request: the chat model's ``ainvoke`` (bound to ``schema`` where structured output is on)."""
        return await self.bound(model, schema, json_schema).ainvoke(messages)

    def warm(self, client: Any) -> None:
        """Build what ``client``'s first request will need (the SDK import), during set-up."""
        client.model  # noqa: B018  (built and kept for this event loop)

    def refused(self, limit: AdaptiveLimit, err: BaseException) -> None:
        """A failed call's word to the request limit, for backends whose HTTP responses it
        does not hear (:func:`dialeval.models.backends.http.limit_hooks`)."""

    def truncated(self, err: Exception) -> Any | None:
        """The message of an answer cut off by the token limit that the SDK raised as an error, else ``None``."""
        return None

    async def close(self, model: Any | None) -> None:
        """Close the HTTP pools this event loop opened: ``model``'s (``None``: no chat model was
        built here) and any the backend keeps per loop; API backends only."""

    def decoding(self, schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> Any:
        """Decoding rules that change answers without any parameter changing (cache key part)."""
        return None

    def classify(self, err: BaseException) -> str | None:
        """``connection``, ``authentication``, ``missing-model``, ``rate-limit`` or ``None``."""
        return classify_error(err)

    def sees_images(self, model: Any) -> bool:
        """Whether image blocks reach the model as images (local vision-language models)."""
        return False


class ApiBackend(Backend):
    """What the HTTP APIs share: a per-loop client, an adaptive limit, a key and a URL."""

    is_api = True

    def new_limit(self) -> AdaptiveLimit:
        s = self.settings
        most = s.max_concurrency or API_MAX_CONCURRENCY
        # the first burst goes out at full width; a 429 halves it (ModelClient may start it
        # lower, at what the last run against this endpoint learned)
        return AdaptiveLimit(most, minimum=s.min_concurrency, maximum=most, adaptive=s.adaptive_concurrency)

    def requirements(self) -> None:
        """A URL that can be sent as given; subclasses add key and URL."""
        from dialeval.models.backends.http import PreflightError
        from dialeval.endpoint import EndpointError, checked_url

        try:  # issue 33: a '#fragment' is refused before the first call
            if self.endpoint and not self.settings.base_url:  # an SDK variable's URL: the config's was checked when read
                checked_url(self.endpoint)
            self.endpoint_parts  # noqa: B018
        except EndpointError as err:
            raise PreflightError(f"model {self.settings.spec}: {self.endpoint_source}: {err}") from None

    def price(self) -> Price | None:
        from dialeval.models.usage import price_of

        return price_of(str(self.spec))
