"""Checks before the first model call: a mistake in the setup costs seconds, not a run.

Config mistakes (role, agent and template names) stop with the file and field; every
API model the run will use gets one cheap round trip (in threads, overlapping the
graph's build); the SQLite stores the calls will write (the response cache, the run's
``prompts.sqlite``) must open, or the run stops naming the file and the fix instead of
failing every item with "re-run to retry".
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Iterable

from dialeval.benchmarks import Benchmark
from dialeval.config import RunConfig, did_you_mean
from dialeval.errors import ConfigError, RunError


def load_user_code(config: RunConfig) -> None:
    """Import what the config names as code (``plugins:`` modules, agents given as
    ``package.module:factory``) before the benchmark is looked up, so a plugin can register
    it; a bad path stops the run, naming the field. Reading a config imports nothing."""
    from dialeval.plugins import agent_factory, is_import_path, load_plugins

    try:
        load_plugins(config.plugins)
    except ConfigError as err:
        raise ConfigError(f"{config.source}: field 'plugins': {err}") from None
    for role, name in config.agents.items():
        if is_import_path(name):
            try:
                agent_factory(name)
            except ConfigError as err:
                raise ConfigError(f"{config.source}: field 'agents.{role}': {err}") from None


def check_setup(bench: Benchmark, config: RunConfig) -> None:
    """Config mistakes stop before the first call, naming the file, the field and the
    valid choices: role and agent names and template files for this benchmark (importing
    its package registered its agents)."""
    from dialeval.agents.base import AGENTS
    from dialeval.plugins import is_import_path

    check_templates(bench, config)
    src = config.source
    model_roles = bench.model_roles or tuple(bench.roles)
    for role in config.models:
        if role not in model_roles:
            raise ConfigError(
                f"{src}: field 'models.{role}': {bench.name} has no model role {role!r}; valid: {', '.join(model_roles)}"
                + did_you_mean(role, model_roles)
            )
    for role, name in config.agents.items():
        if role not in bench.roles:
            raise ConfigError(
                f"{src}: field 'agents.{role}': {bench.name} has no agent role {role!r}; valid: {', '.join(bench.roles)}"
                + did_you_mean(role, bench.roles)
            )
        if is_import_path(name):
            continue  # a user's own factory: imported (and checked) by load_user_code
        default = AGENTS.get(bench.roles[role])
        choices = sorted(
            n for n, e in AGENTS.items() if default is not None and (e.benchmark, e.role) == (default.benchmark, default.role)
        )
        entry = AGENTS.get(name)
        # an agent of this benchmark may stand in for another role (MDSEval's checklist for
        # its pointwise judge); one of another benchmark, or a typo, may not
        if name not in choices and (entry is None or default is None or entry.benchmark != default.benchmark):
            raise ConfigError(f"{src}: field 'agents.{role}': no agent named {name!r} for {role}; valid: {', '.join(choices)}")


def check_templates(bench: Benchmark, config: RunConfig) -> None:
    """Each template the config names is one this benchmark has, and its file loads (as
    it is now: a file edited since an earlier run in this process is read again)."""
    from dialeval.agents.templates import TemplateError, check_variables, load_template

    load_template.cache_clear()
    src = config.source
    template_keys = bench.template_keys or tuple(bench.roles)
    for key, ref in config.templates.items():
        if key not in template_keys:
            raise ConfigError(
                f"{src}: field 'templates.{key}': {bench.name} has no template {key!r}; valid: {', '.join(template_keys)}"
            )
        try:
            check_variables(load_template(ref), bench.name, key)
        except (TemplateError, OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{src}: field 'templates.{key}': {err}") from None


# a model's check that passed is trusted this long within one process: repeated
# evaluate() calls skip the round trip; another URL, key or setting is checked again
PREFLIGHT_TTL = 600.0
_preflight_passed: dict[str, float] = {}


def _preflight_key(client: Any) -> str:
    """What a check vouches for: the settings, the URL and the key (as a digest, never kept)."""
    key = os.environ.get(client.key_env or "") or ""
    return json.dumps(
        [client.settings.model_dump_json(), client.endpoint, client.key_env, hashlib.sha256(key.encode()).hexdigest()]
    )


def used_models(bench: Benchmark, context: Any) -> dict[str, Any]:
    """Config field (``model``, ``models.<role>``) -> settings of each model the run may call."""
    model_roles = bench.model_roles or tuple(bench.roles)
    fields: dict[str, Any] = {}
    if set(model_roles) - set(context.models):
        fields["model"] = context.default_model
    for role, m in context.models.items():  # an ensemble's or cascade's members one by one (issue 49)
        many = getattr(m, "models", None)
        fields.update({f"models.{role}[{i}]": x for i, x in enumerate(many)} if many else {f"models.{role}": m})
    return fields


def start_preflight(models: dict[str, Any]) -> list[tuple[str, Future[None]]]:
    """Start the cheap check of every configured model this benchmark will use, each in
    a daemon thread: the round trips overlap loading the data and building the graph,
    and a check nobody waits for (a config mistake found meanwhile) never holds the
    process. :func:`await_preflight` collects them before the first item."""
    from dialeval.models.client import get_client, preflight

    seen: set[str] = set()
    checks: list[tuple[str, Future[None]]] = []
    for name, settings in models.items():
        client = get_client(settings)
        key = _preflight_key(client)
        if key in seen or time.monotonic() - _preflight_passed.get(key, -PREFLIGHT_TTL) < PREFLIGHT_TTL:
            continue
        seen.add(key)
        future: Future[None] = Future()

        def check(client: Any = client, key: str = key, future: Future[None] = future) -> None:
            try:
                preflight(client)
            except BaseException as err:  # handed to the waiting run
                future.set_exception(err)
            else:
                _preflight_passed[key] = time.monotonic()
                future.set_result(None)

        threading.Thread(target=check, name=f"dialeval-preflight-{name}", daemon=True).start()
        checks.append((name, future))
    return checks


def missing_requirements(models: Iterable[tuple[str, Any]]) -> list[tuple[str, Exception]]:
    """``(name, PreflightError)`` of each named model whose key or URL is missing, without a
    round trip; a chat model object given in code needs no key of ours and is skipped."""
    from dialeval.models.client import PreflightError, get_client

    failed: list[tuple[str, Exception]] = []
    for name, settings in models:
        client = get_client(settings)
        if client.injected:
            continue
        try:
            client.impl.requirements()
        except PreflightError as err:
            failed.append((name, err))
    return failed


def check_requirements(models: dict[str, Any], config: RunConfig) -> None:
    """Keys and URLs every used API model needs, without a round trip: checked even with
    ``--no-preflight``, so a missing key stops the run before its folder is made."""
    failed = missing_requirements(models.items())
    if failed:
        raise ConfigError("; ".join(f"{config.source}: field '{name}': {err}" for name, err in failed))


async def await_preflight(checks: list[tuple[str, Future[None]]], config: RunConfig) -> None:
    """Every check is awaited and every failing model is named at once, by its config field."""
    from dialeval.models.client import PreflightError

    outcomes = await asyncio.gather(*(asyncio.wrap_future(f) for _, f in checks), return_exceptions=True)
    failed = [(name, err) for (name, _), err in zip(checks, outcomes) if isinstance(err, BaseException)]
    for _, err in failed:
        if not isinstance(err, PreflightError):
            raise err
    if failed:
        raise ConfigError("; ".join(f"{config.source}: field '{name}': {err}" for name, err in failed))


def warm_clients(models: dict[str, Any]) -> None:
    """Build the API models' chat clients (the first one imports the SDK) during set-up,
    while preflight checks are in flight, rather than inside the first item. A failure
    is left to the items, which record it as they always do."""
    from dialeval.models.client import API_BACKENDS, get_client

    for settings in models.values():
        client = get_client(settings)
        if client.backend in API_BACKENDS:
            try:
                client.impl.warm(client)
            except Exception:
                pass


# a store larger than this gets the light check (its schema reads) instead of a full page scan
QUICK_CHECK_LIMIT = 64 << 20


def _store_problem(path: Path) -> str | None:
    """Why the SQLite file at ``path`` cannot be used, or ``None`` when it can (or is absent)."""
    if not path.exists():
        return None
    if not path.is_file():
        return "is not a file"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as err:
        return str(err)
    try:
        conn.execute("SELECT name FROM sqlite_master").fetchall()
        if path.stat().st_size <= QUICK_CHECK_LIMIT:
            verdict = conn.execute("PRAGMA quick_check(1)").fetchone()
            if verdict and verdict[0] != "ok":
                return str(verdict[0])
    except sqlite3.Error as err:
        return str(err)
    finally:
        conn.close()
    return None


def check_stores(cache_path: str | None, run_dir: Path) -> None:
    """The response cache and the run's prompt store must be readable SQLite files."""
    stores = [(run_dir / "prompts.sqlite", "the run's stored prompts, which only the viewer reads", "")]
    if cache_path:
        cache = Path(cache_path).expanduser()
        stores.append((cache, "answers already paid for", ", or run with --no-cache"))
    for path, what, other in stores:
        problem = _store_problem(path)
        if problem is not None:
            raise RunError(
                f"{path}: not a usable SQLite database ({problem}); it holds {what}: "
                f"move it aside (mv {path} {path}.broken) and re-run{other}"
            )
