"""Keep secrets out of everything a run writes or prints: one redaction, at the writers.

Keys live in environment variables only. A key can still reach text: servers echo the
key (or the ``Authorization`` header) they received, a model may repeat one, and data
files may hold one. So every writer of run artifacts (results, the bot journal, prompts,
the response cache, notes, reports, viewer pages, trust cards) and every error message
passes its text through :func:`scrub`, which writes each URL the user gave
(:func:`register_url`: a ``base_url`` of any role or candidate, a bot's ``url``) in its
redacted form (user info and query values ``***``), then replaces the value of every key
variable in use (the SDK defaults plus each ``api_key_env``) by its name, and a URL's
user name, password and query values by ``[base_url secret]``, each also in its base64
forms (an echoed ``Authorization: Basic`` header) and percent-encoded.
"""

from __future__ import annotations

import base64
import functools
import io
import os
import sys
import threading
from typing import Any, TextIO
from urllib.parse import quote

from dialeval.endpoint import EndpointError, redacted, secrets_of, split_base_url

DEFAULT_KEY_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MIN_SECRET_LENGTH = 6  # shorter values ("x", "none") are placeholders, not secrets

_extra: set[str] = set()
_values: set[str] = set()  # secrets that live in no variable of their own: a URL's user info and query values
_urls: dict[str, str] = {}  # a URL the user gave -> its redacted form
_lock = threading.Lock()
URL_SECRET = "[base_url secret]"


def register_key_env(name: str | None) -> None:
    """Scrub the value of ``name`` from now on (a model's or a bot's ``api_key_env``)."""
    if name:
        with _lock:
            _extra.add(name)


@functools.lru_cache(maxsize=256)
def encoded_forms(value: str) -> list[str]:
    """``value`` as text may quote it: as is, percent-encoded, base64 (standard and URL-safe, with and without padding)."""
    raw = value.encode("utf-8", "surrogatepass")
    forms = {value, quote(value, safe="")}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(raw).decode("ascii")
        forms.update((text, text.rstrip("=")))
    return [f for f in forms if len(f) >= MIN_SECRET_LENGTH]


def register_url(url: str | None) -> None:
    """Write ``url`` redacted from now on, and scrub what it carries besides the address: its
    user name and password (also as the ``Basic`` header's base64) and query values
    (:func:`dialeval.endpoint.secrets_of`)."""
    if not url:
        return
    found = [v for v in secrets_of(url) if len(v) >= MIN_SECRET_LENGTH]
    try:
        parts = split_base_url(url)
    except EndpointError:
        parts = None
    if parts is not None and parts.username is not None:
        if len(parts.username) >= MIN_SECRET_LENGTH:
            found.append(parts.username)
        found.append(f"{parts.username}:{parts.password or ''}")  # what the Basic header encodes
    with _lock:
        if redacted(url) != url:
            _urls[url] = redacted(url) or ""
        for value in found:
            _values.update(encoded_forms(value))


def key_envs() -> list[str]:
    with _lock:
        return [*DEFAULT_KEY_ENVS, *sorted(_extra - set(DEFAULT_KEY_ENVS))]


def scrub(text: str) -> str:
    """``text`` with every registered URL redacted, every configured key replaced by ``[$NAME]``
    and every other known secret by ``[base_url secret]``, in their encoded forms too."""
    if not text:
        return text
    with _lock:
        urls = sorted(_urls.items(), key=lambda pair: len(pair[0]), reverse=True)
        values = sorted(_values, key=len, reverse=True)
    for url, shown in urls:
        if url in text:
            text = text.replace(url, shown)
    for name in key_envs():
        value = os.environ.get(name, "")
        if len(value) >= MIN_SECRET_LENGTH:
            for form in sorted(encoded_forms(value), key=len, reverse=True):
                if form in text:
                    text = text.replace(form, f"[${name}]")
    for value in values:
        if value in text:
            text = text.replace(value, URL_SECRET)
    return text


def scrub_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with :func:`scrub` applied to every string, keys included."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_data(k): scrub_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_data(v) for v in value]
    return value


class ScrubbedStream(io.TextIOBase):
    """A text stream that scrubs every write first (:func:`scrub`): the command line's stdout and
    stderr, so no line printed (a report, a progress line, a warning, a traceback) shows a secret."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(scrub(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


def scrub_output() -> None:
    """Scrub everything written to stdout and stderr from now on (the ``dialeval`` command)."""
    if not isinstance(sys.stdout, ScrubbedStream):
        sys.stdout = ScrubbedStream(sys.stdout)
    if not isinstance(sys.stderr, ScrubbedStream):
        sys.stderr = ScrubbedStream(sys.stderr)
