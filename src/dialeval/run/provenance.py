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

import dialeval.version  # read at call time: a test may set another release

GIT_TIMEOUT_S = 5.0


def now_utc() -> str:
    """The current time, UTC, to the second, ISO 8601 (``2026-11-24T02:14:36Z``)."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@functools.lru_cache(maxsize=1)
def git_checkout() -> tuple[str | None, bool]:
    """The commit of the dialeval checkout this code runs from, and whether its tracked
    files differ from that commit; ``(None, False)`` for an installed wheel, without git, or
    when git does not answer in time. One ``git describe`` answers both (~5 ms)."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty", "--abbrev=40", "--exclude=*"],
            capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None, False
    described = done.stdout.strip()
    commit = described.removesuffix("-dirty")
    if done.returncode != 0 or len(commit) < 7:
        return None, False
    return commit, described != commit


def git_commit() -> str | None:
    """The checkout's commit (:func:`git_checkout`)."""
    return git_checkout()[0]


def start(earlier: dict[str, Any] | None = None) -> dict[str, Any]:
    """Provenance of a run session that starts now; ``earlier`` is the folder's previous
    provenance (a resumed run keeps when it first started)."""
    began = now_utc()
    first = (earlier or {}).get("first_started") or (earlier or {}).get("started") or began
    now = {"dialeval": dialeval.version.__version__, "git_commit": git_commit()}
    out: dict[str, Any] = {**now, "first_started": first, "started": began, "finished": None}
    if now["git_commit"] and git_checkout()[1]:
        out["git_modified"] = True  # the checkout had changes not in that commit: the commit alone does not say what ran
    versions = code_versions(earlier or {})
    if versions and now not in versions:  # resumed with other code: the items' numbers come from both
        out["code_versions"] = [*versions, now]
    return out


def code_versions(provenance: dict[str, Any]) -> list[dict[str, Any]]:
    """The code (dialeval's version and commit) of every session that evaluated this run's
    items, oldest first; ``[]`` for a run without provenance."""
    if isinstance(provenance.get("code_versions"), list):
        return [dict(v) for v in provenance["code_versions"] if isinstance(v, dict)]
    if provenance.get("dialeval"):
        return [{"dialeval": provenance["dialeval"], "git_commit": provenance.get("git_commit")}]
    return []


def code_label(version: dict[str, Any]) -> str:
    """``0.1.0 (git 5a3b498c98f4)``, or the version alone where no commit was known."""
    commit = version.get("git_commit")
    return f"{version.get('dialeval')}" + (f" (git {str(commit)[:12]})" if commit else "")


def mixed_code_warning(provenance: dict[str, Any]) -> str | None:
    """A sentence when the run's items were evaluated by more than one version of the code."""
    versions = provenance.get("code_versions")
    if not isinstance(versions, list) or len(versions) < 2:
        return None
    return (
        f"this run was resumed with other code: its items were evaluated by {len(versions)} versions of dialeval "
        f"({'; '.join(code_label(v) for v in versions)}), whose prompts or scoring may differ; "
        "--fresh evaluates every item with this one"
    )


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
