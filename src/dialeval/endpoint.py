"""What a ``base_url`` may carry besides the URL, and how each part reaches the server.

A server behind a proxy often wants ``https://user:password@host/v1`` (HTTP basic auth)
or a query string on every request (``?api-version=2024-06-01&key=...``). Handed to an
SDK as one string, neither works: the SDK appends its route to the whole string
(``/v1?key=...chat/completions``), and credentials in the URL clash with the SDK's own
key header once a retry rebuilds the request. So :func:`split_base_url` splits the
string into the parts the SDKs take through their public constructor arguments: the
URL itself (``base_url``), the query (``default_query``) and the credentials (an
``Authorization: Basic`` entry of ``default_headers``). :func:`redacted` is the form
anything written or printed uses: user info gone, query values masked.

Pure: no I/O, no SDK import.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"


class EndpointError(ValueError):
    """A ``base_url`` that cannot be sent as given (said before the first call)."""


@dataclass(frozen=True)
class Endpoint:
    """A ``base_url`` taken apart: :attr:`url` has neither credentials, query nor fragment."""

    url: str
    username: str | None = None
    password: str | None = None
    query: dict[str, str] = field(default_factory=dict)

    @property
    def has_userinfo(self) -> bool:
        return self.username is not None

    def auth_headers(self) -> dict[str, str]:
        """``Authorization: Basic ...`` for the URL's user info; ``{}`` without it."""
        if self.username is None:
            return {}
        token = base64.b64encode(f"{self.username}:{self.password or ''}".encode()).decode("ascii")
        return {"Authorization": f"Basic {token}"}

    def sdk_args(self) -> dict[str, Any]:
        """Constructor arguments of ``ChatOpenAI``, ``openai.AsyncOpenAI`` and the Anthropic
        SDK's client: ``base_url``, and ``default_query`` / ``default_headers`` when the
        URL carried a query or credentials."""
        args: dict[str, Any] = {"base_url": self.url}
        if self.query:
            args["default_query"] = dict(self.query)
        if self.username is not None:
            args["default_headers"] = self.auth_headers()
        return args

    def with_path(self, route: str) -> str:
        """``url`` + ``route`` with the query appended: a request URL built by hand (the preflight's GET)."""
        url = self.url.rstrip("/") + route
        return f"{url}?{urlencode(self.query)}" if self.query else url


def split_base_url(url: str) -> Endpoint:
    """``url`` taken apart (see :class:`Endpoint`); a URL without extras comes back unchanged
    as :attr:`Endpoint.url` (so cache keys and run ids of plain URLs stay what they were).
    EndpointError for a fragment, which no server ever receives, and for a URL that cannot be parsed."""
    try:
        parts = urlsplit(url)
    except ValueError as err:  # an unclosed '[' of an IPv6 host
        raise EndpointError(f"base_url {redacted(url)}: {err}") from None
    if parts.fragment:
        raise EndpointError(f"base_url {redacted(url)}: a '#fragment' is never sent to a server; remove it")
    if "@" not in parts.netloc and not parts.query:
        return Endpoint(url)
    username = password = None
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, netloc = netloc.rsplit("@", 1)
        name, _, secret = userinfo.partition(":")
        username, password = unquote(name), unquote(secret) if ":" in userinfo else None
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return Endpoint(urlunsplit((parts.scheme, netloc, parts.path, "", "")), username, password, query)


def redacted(url: str | None) -> str | None:
    """``url`` as it may be written or printed: user info :data:`MASK` (``https://***@host``),
    each query value :data:`MASK` (names kept: ``?api-version=***&key=***``), fragment dropped."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # unparseable (an unclosed IPv6 '['): mask by pattern, as much as could be a secret
        return _redacted_by_pattern(url)
    netloc = (f"{MASK}@" if "@" in parts.netloc else "") + parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(f"{quote(k, safe='-_.')}={MASK}" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _redacted_by_pattern(url: str) -> str:
    """A URL ``urlsplit`` refuses, redacted without parsing: everything up to the last ``@``
    of the authority :data:`MASK`, each query value :data:`MASK`, the fragment dropped."""
    url = url.split("#", 1)[0]
    url, _, query = url.partition("?")
    scheme, sep, rest = url.rpartition("://")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = f"{MASK}@" + authority.rsplit("@", 1)[1]
    masked = "&".join(f"{pair.partition('=')[0]}={MASK}" for pair in query.split("&") if pair) if query else ""
    return f"{scheme}{sep}{authority}{slash}{path}" + (f"?{masked}" if masked else "")


def checked_url(url: str) -> str:
    """``url`` unchanged if a request can be sent to it: http or https, a host, an integer port
    in range, no whitespace, no fragment. Otherwise EndpointError saying what is wrong, the URL
    :func:`redacted` (read when a config is, so a typo stops before any call, not per item)."""
    shown = redacted(url)
    if any(ch.isspace() for ch in url):
        raise EndpointError(f"{shown!r} contains whitespace; remove it")
    try:
        parts = urlsplit(url)
    except ValueError:  # the one thing urlsplit refuses: an unbalanced '[' or ']' of an IPv6 host
        raise EndpointError(f"{shown!r} is not a valid URL: an IPv6 host needs both '[' and ']'") from None
    try:  # the error's own text is not shown: what stands after the ':' may be a password without its '@'
        port = parts.port
    except ValueError:
        port = 0
    if parts.scheme not in ("http", "https"):
        raise EndpointError(f"{shown!r} needs an http:// or https:// scheme")
    if not parts.hostname:
        raise EndpointError(f"{shown!r} has no host")
    if port == 0:
        raise EndpointError(f"{shown!r} is not a valid URL: the port after the host's ':' must be a number from 1 to 65535")
    split_base_url(url)  # a fragment
    return url


URL_FIELDS = ("base_url", "url")  # the fields of configs, specs and cards that hold a URL the user gave


def redact_urls(value: Any) -> Any:
    """``value`` (JSON-like) with the string of every :data:`URL_FIELDS` field :func:`redacted`."""
    if isinstance(value, dict):
        return {k: (redacted(v) if k in URL_FIELDS and isinstance(v, str) else redact_urls(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_urls(v) for v in value]
    return value


_VERSION_LIKE = re.compile(r"[0-9][0-9.\-]*(-?[a-z]+)?", re.IGNORECASE)  # 2024-06-01, 2024-06-01-preview, 1.2


def secrets_of(url: str | None) -> list[str]:
    """The values a URL carries that must never be written: its password and each query
    value that is not a date or version (``api-version=2024-06-01`` is left in prose),
    for scrubbing text that may quote them (a server's error, a traceback)."""
    if not url:
        return []
    try:
        endpoint = split_base_url(url)
    except EndpointError:
        return []
    values = [endpoint.password or "", *(v for v in endpoint.query.values() if not _VERSION_LIKE.fullmatch(v))]
    return sorted({v for v in values if v}, key=len, reverse=True)
