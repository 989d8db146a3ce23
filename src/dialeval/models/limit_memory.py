"""What the last run learned about an endpoint's rate limit, so the next one starts there.

A run that met HTTP 429 knows roughly how many requests the provider takes at once; the
next run against the same endpoint and model should start at that number rather than
at the configured maximum and pay for the 429s again. The memory is one small JSON file
beside the response cache (``limits.json``), keyed by endpoint and model: it holds no keys
(the URL loses its user info and query), is replaced atomically, and is ignored when it
cannot be read.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

FILE_NAME = "limits.json"


def memory_path(cache_path: str) -> Path:
    """``limits.json`` in the response cache's folder."""
    return Path(cache_path).expanduser().parent / FILE_NAME


def endpoint_key(endpoint: str, model: str) -> str:
    """``URL model`` with the URL's user info, query and fragment dropped (they can carry keys)."""
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return f"{urlunsplit((parts.scheme, host, parts.path.rstrip('/'), '', ''))} {model}"


def _read(path: Path) -> dict[str, dict[str, float]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # absent or corrupt: start from the configured maximum
    return data if isinstance(data, dict) else {}


def learned_limit(path: Path, key: str) -> int | None:
    """The limit last learned for ``key``, or ``None`` when nothing usable is stored."""
    entry = _read(path).get(key)
    value = entry.get("limit") if isinstance(entry, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def remember_limit(path: Path, key: str, limit: int) -> None:
    """Store ``limit`` for ``key`` (a temporary file renamed over the old one); a folder
    that cannot be written only costs the next run its head start."""
    data = _read(path)
    data[key] = {"limit": int(limit), "learned": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".limits-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def keep_learning(limit: Any, endpoint: str, model: str, cache_path: str) -> None:
    """Start ``limit`` (an :class:`~dialeval.models.concurrency.AdaptiveLimit`) from what the
    last run against ``endpoint`` and ``model`` learned, and keep what it learns from now on:
    a provider that said no at 64 is not sent 64 again by every new process."""
    path, key = memory_path(cache_path), endpoint_key(endpoint, model)
    learned = learned_limit(path, key)
    if learned is not None:
        limit.start_from(learned)
    limit.on_change = lambda value: remember_limit(path, key, value)
