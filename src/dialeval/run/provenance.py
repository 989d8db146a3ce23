"""Where a run's numbers came from: dialeval's version and commit, and when the run went.

Why: a report read a month later must say which code produced it and when, and a run
resumed tomorrow must not pretend it ran in one sitting. What the models' servers
said about themselves (endpoint, model name) comes from the call records instead
(:func:`served_models`), so it shows what was called, not what was configured.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import subprocess
from pathlib import Path
from typing import Any, Iterable

GIT_TIMEOUT_S = 5.0


def now_utc() -> str:
    """The current time, UTC, to the second, ISO 8601 (``2026-11-24T02:14:36Z``)."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the dialeval checkout this code runs from; ``None`` for an installed
    wheel, without git, or when git does not answer in time."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) >= 7 else None


def start(earlier: dict[str, Any] | None = None) -> dict[str, Any]:
    """Provenance of a run session that starts now; ``earlier`` is the folder's previous
    provenance (a resumed run keeps when it first started)."""
    from dialeval import __version__

    began = now_utc()
    first = (earlier or {}).get("first_started") or (earlier or {}).get("started") or began
    return {"dialeval": __version__, "git_commit": git_commit(), "first_started": first, "started": began, "finished": None}


def finish(provenance: dict[str, Any]) -> dict[str, Any]:
    return {**provenance, "finished": now_utc()}


def earlier(config_path: Path) -> dict[str, Any] | None:
    """The provenance an existing run folder recorded, if any (unreadable: none)."""
    try:
        found = json.loads(config_path.read_text(encoding="utf-8")).get("provenance")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def stamp(config_path: Path, provenance: dict[str, Any]) -> dict[str, Any]:
    """Rewrite only the ``provenance`` of the run's ``config.json`` (already scrubbed); returns it."""
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["provenance"] = provenance
    config_path.write_text(json.dumps(config, indent=2))
    return provenance


def served_models(calls: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Per model spec: the endpoints its requests went to and the model names the server
    gave back (calls answered from the cache or a dry run sent nothing and add nothing)."""
    out: dict[str, dict[str, set[str]]] = {}
    for call in calls:
        seen = out.setdefault(str(call.get("model", "?")), {"endpoints": set(), "server_models": set()})
        if call.get("endpoint"):
            seen["endpoints"].add(str(call["endpoint"]))
        if call.get("server_model"):
            seen["server_models"].add(str(call["server_model"]))
    return {model: {k: sorted(v) for k, v in seen.items()} for model, seen in sorted(out.items())}


OFFICIAL_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}


def foreign_price_notes(served: dict[str, dict[str, list[str]]], per_agent_cost: dict[str, float]) -> list[str]:
    """One line per priced provider model whose requests went to another host than the
    provider's: its cost is the named model's list price, not what that server charges."""
    from urllib.parse import urlsplit

    notes = []
    for model, seen in served.items():
        provider = model.split(":", 1)[0]
        official = OFFICIAL_HOSTS.get(provider)
        if official is None or not per_agent_cost.get(model):
            continue
        elsewhere = [url for url in seen["endpoints"] if urlsplit(url).hostname != official]
        if elsewhere:
            notes.append(
                f"`{model}` was called at {', '.join(f'`{u}`' for u in elsewhere)}, not {official}: its cost is "
                f"{model.split(':', 1)[-1]}'s list price, which that server may not charge"
            )
    return notes
