"""Keep API keys out of everything a run writes or prints.

Keys live in environment variables only. A key can still reach text: servers echo the
key they received in error messages, a model may repeat one, and data files may hold
one. So every writer of run artifacts (results, prompts, the response cache, notes,
reports, viewer pages) and every error message passes its text through :func:`scrub`,
which replaces the value of every key variable in use (the SDK defaults plus each
model's ``api_key_env``) by its name, and a ``base_url``'s password and query values
(:func:`register_url`) by ``[base_url secret]``.
"""

from __future__ import annotations

import os
import threading
from typing import Any

DEFAULT_KEY_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MIN_SECRET_LENGTH = 6  # shorter values ("x", "none") are placeholders, not secrets

_extra: set[str] = set()
_values: set[str] = set()  # secrets that live in no variable of their own: a base_url's password or query values
_lock = threading.Lock()
URL_SECRET = "[base_url secret]"


def register_key_env(name: str | None) -> None:
    """Scrub the value of ``name`` from now on (a model's ``api_key_env``)."""
    if name:
        with _lock:
            _extra.add(name)


def register_url(url: str | None) -> None:
    """Scrub, from now on, what ``url`` carries besides the address (a ``base_url``'s
    password and query values, :func:`dialeval.models.endpoint.secrets_of`)."""
    from dialeval.models.endpoint import secrets_of

    found = [v for v in secrets_of(url) if len(v) >= MIN_SECRET_LENGTH]
    if found:
        with _lock:
            _values.update(found)


def key_envs() -> list[str]:
    with _lock:
        return [*DEFAULT_KEY_ENVS, *sorted(_extra - set(DEFAULT_KEY_ENVS))]


def scrub(text: str) -> str:
    """``text`` with every configured key replaced by ``[$NAME]``."""
    if not text:
        return text
    for name in key_envs():
        value = os.environ.get(name, "")
        if len(value) >= MIN_SECRET_LENGTH and value in text:
            text = text.replace(value, f"[${name}]")
    with _lock:
        values = sorted(_values, key=len, reverse=True)
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
