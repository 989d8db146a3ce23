"""Run a benchmark's graph over its items into ``runs/<run-id>/``, resumably.

Items run concurrently (bounded); each finished item is appended as one JSON line to
``results.jsonl`` with a single write, so a crash never leaves a torn line that counts.
Re-running the same command reuses the same run id (it derives from the data's content
and the config): finished items are skipped, failed or unfinished ones start again, and
the response cache makes repeated calls free. An item is ``failed`` when any agent call
of it ended ``error``; one process at a time writes a run folder (a file lock).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, get_benchmark
from dialeval.config import ConfigError, RunConfig
from dialeval.models.progress import call_bar
from dialeval.models.usage import CallRecord, Ledger, current_ledger, summarize_calls

RESULTS = "results.jsonl"
LOCK = ".lock"
# fields that change how a run executes, not what it measures
EXECUTION_ONLY = ("run_id", "limit", "concurrency", "output_dir", "cache_path", "fresh", "max_consecutive_errors", "preflight")
CONTEXT_EXECUTION_ONLY = ("cache_path", "refresh_cache", "run_dir")


@dataclass
class RunResult:
    """Where a run lives, what it measured, and what it could not measure.

    ``metrics`` come from the finished items only; ``failed`` items (an agent call
    ended ``error``) are left out of them and retried by the next run, and
    ``not_evaluated`` items were never started because the run was stopped.
    """

    run_dir: Path
    metrics: dict[str, Any]
    records: list[dict[str, Any]]
    failed: int = 0
    not_evaluated: int = 0
    stopped: str | None = None
    summary: str = ""

    @property
    def report_path(self) -> Path:
        return self.run_dir / "report.md"

    @property
    def complete(self) -> bool:
        """Every item was measured: no failed item, none left out."""
        return self.failed == 0 and self.not_evaluated == 0

    @property
    def system_failures(self) -> str | None:
        """Set when most outputs of the system under test were cut off or unreadable."""
        return ((self.metrics.get("run") or {}).get("system_outputs") or {}).get("warning")


class RunLocked(ConfigError):
    """Another process is writing the run folder."""


def data_digest(data: str | Path, options: dict[str, Any] | None = None) -> str:
    """SHA-256 of the data's content (a file, or every file under a folder), and of any
    file or folder an option names (a predictions file), so edited data is a new run."""
    digest = hashlib.sha256()
    paths = [Path(data)]
    for value in (options or {}).values():
        if isinstance(value, str) and len(value) < 4096:
            candidate = Path(value).expanduser()
            try:
                if candidate.exists():
                    paths.append(candidate)
            except OSError:
                continue
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            digest.update(str(path.relative_to(root) if root.is_dir() else path.name).encode() + b"\0")
            if path.is_file():
                with path.open("rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(chunk)
            digest.update(b"\0")
    return digest.hexdigest()


def _fingerprint(benchmark: str, data: str, config: RunConfig, digest: str) -> str:
    """Run id from what determines results: benchmark, data (path and content), models,
    agents, options."""
    relevant = config.model_dump(exclude={*EXECUTION_ONLY, "data", "benchmark"})
    blob = json.dumps(
        {"benchmark": benchmark, "data": str(Path(data).resolve()), "data_sha256": digest, "config": relevant},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def resolved_config(
    benchmark: str, data: str, config: RunConfig, digest: str | None = None, context: Any = None
) -> dict[str, Any]:
    """The config as run: every default filled in. It holds env-var names, never keys."""
    out = config.model_dump(mode="json")
    out.update(benchmark=benchmark, data=str(Path(data).resolve()))
    if digest is not None:
        out["data_sha256"] = digest
    out["context"] = (context or config.context()).model_dump(mode="json")
    return out


def _comparable(resolved: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in resolved.items() if k not in EXECUTION_ONLY}
    if isinstance(out.get("context"), dict):
        out["context"] = {k: v for k, v in out["context"].items() if k not in CONTEXT_EXECUTION_ONLY}
    return out


def read_results(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The latest line per item id; a torn last line (crash mid-write) is ignored.

    Any other line that is not a result row stops with a message naming the file and
    line: guessing around it could count an item twice or lose one.
    """
    from dialeval.data.io import DataError

    path = Path(run_dir) / RESULTS
    latest: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return latest
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        torn = number == len(lines)  # no newline after it: a write that never finished
        try:
            row = json.loads(line.decode("utf-8"))
            if not isinstance(row, dict) or not isinstance(row.get("id"), str) or "status" not in row:
                raise ValueError("not a result row (needs 'id' and 'status')")
        except (ValueError, UnicodeDecodeError) as err:
            if torn:
                continue
            raise DataError(
                path, f"{err}; fix or delete that line, or start over with --fresh", line=number
            ) from None
        latest[row["id"]] = row
    return latest


def _repair_tail(path: Path) -> None:
    """Drop an unterminated last line so new lines never glue onto a torn one."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        data = path.read_bytes()
        fh.truncate(data.rfind(b"\n") + 1)


class RunLock:
    """An exclusive ``flock`` on ``<run>/.lock`` while a process writes the run folder:
    two processes on one folder would pay for every call twice and mix their lines."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunLocked(
                f"run folder {self.path.parent} is in use by another dialeval process (pid {holder}); "
                "wait for it to finish, or use another --run-id"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        import fcntl

        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


class ResultsWriter:
    """Appends one JSON line per item with a single ``os.write``.

    One write call per line means a killed process leaves at most one torn last line,
    which :func:`read_results` ignores and :func:`_repair_tail` removes.
    """

    def __init__(self, path: Path):
        _repair_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        from dialeval.secrets import scrub

        data = (scrub(json.dumps(row, ensure_ascii=False, default=str)) + "\n").encode("utf-8")
        os.write(self._fd, data)

    def close(self) -> None:
        os.close(self._fd)


def _causes(calls: list[CallRecord]) -> list[dict[str, Any]]:
    """What made an item fail: one entry per errored call (type, URL, model, message)."""
    return [
        {
            "error": (c.error or "error").split(":", 1)[0],
            "endpoint": c.endpoint,
            "model": c.model,
            "agent": c.agent,
            "message": c.error,
        }
        for c in calls
        if c.status == "error"
    ]


async def _evaluate_item(bench: Benchmark, graph: Any, item: Any, context: Any, options: dict[str, Any], on_call: Any) -> dict[str, Any]:
    """One item through the graph. ``failed`` when the graph raised or any agent call
    ended ``error``; the partial record is kept then, for the report, but never scored."""
    from dialeval.secrets import scrub

    ledger = Ledger(on_add=on_call)
    token = current_ledger.set(ledger)
    started = time.perf_counter()
    row: dict[str, Any]
    try:
        state = await graph.ainvoke(bench.to_input(item, options), context=context, config={"recursion_limit": 10_000})
        record = bench.to_record(item, state)
        causes = _causes(ledger.calls)
        if causes:
            first = causes[0]
            row = {
                "id": item.id,
                "status": "failed",
                "error": f"{len(causes)} model call(s) failed; first: {first['message']} ({first['model']})",
                "causes": causes,
                "result": record,
            }
        else:
            row = {"id": item.id, "status": "ok", "result": record}
    except Exception as err:  # recorded, counted in the report; the run goes on
        causes = _causes(ledger.calls)
        row = {
            "id": item.id,
            "status": "failed",
            "error": scrub(f"{type(err).__name__}: {err}"),
            "causes": causes or [{"error": type(err).__name__, "endpoint": None, "model": None, "agent": None,
                                  "message": scrub(f"{type(err).__name__}: {err}")}],
            "traceback": scrub(traceback.format_exc(limit=6)),
        }
    finally:
        current_ledger.reset(token)
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["usage"] = [c.__dict__ for c in ledger.calls]
    return row


def failure_summary(rows: list[dict[str, Any]], total: int) -> str:
    """``3 of 10 items failed: 3 x APIConnectionError at URL (model)``: one line."""
    failed = [r for r in rows if r.get("status") != "ok"]
    if not failed:
        return ""
    counts: Counter[str] = Counter()
    for row in failed:
        seen = set()
        for cause in row.get("causes") or [{"error": (row.get("error") or "error").split(":", 1)[0]}]:
            where = f" at {cause['endpoint']}" if cause.get("endpoint") else ""
            model = f" ({cause['model']})" if cause.get("model") else ""
            seen.add(f"{cause.get('error')}{where}{model}")
        counts.update(seen)
    causes = ", ".join(f"{n} x {what}" for what, n in counts.most_common(3))
    more = f", and {len(counts) - 3} other causes" if len(counts) > 3 else ""
    return f"{len(failed)} of {total} items failed: {causes}{more}"


def check_setup(bench: Benchmark, config: RunConfig) -> None:
    """Config mistakes stop before the first call, naming the file, the field and the
    valid choices: role names, agent names and template files for this benchmark."""
    from dialeval.agents.base import AGENTS
    from dialeval.plugins import is_import_path
    from dialeval.agents.templates import TemplateError, load_template

    src = config.source
    model_roles = bench.model_roles or tuple(bench.roles)
    for role in config.models:
        if role not in model_roles:
            raise ConfigError(
                f"{src}: field 'models.{role}': {bench.name} has no model role {role!r}; valid: {', '.join(model_roles)}"
            )
    for role, name in config.agents.items():
        if role not in bench.roles:
            raise ConfigError(
                f"{src}: field 'agents.{role}': {bench.name} has no agent role {role!r}; valid: {', '.join(bench.roles)}"
            )
        if is_import_path(name):
            continue  # a user's own factory: imported (and checked) when the config was read
        default = AGENTS.get(bench.roles[role])
        choices = sorted(
            n for n, e in AGENTS.items() if default is not None and (e.benchmark, e.role) == (default.benchmark, default.role)
        )
        entry = AGENTS.get(name)
        # an agent of this benchmark may stand in for another role (MDSEval's checklist for
        # its pointwise judge); one of another benchmark, or a typo, may not
        if name not in choices and (entry is None or default is None or entry.benchmark != default.benchmark):
            raise ConfigError(f"{src}: field 'agents.{role}': no agent named {name!r} for {role}; valid: {', '.join(choices)}")
    template_keys = bench.template_keys or tuple(bench.roles)
    for key, ref in config.templates.items():
        if key not in template_keys:
            raise ConfigError(
                f"{src}: field 'templates.{key}': {bench.name} has no template {key!r}; valid: {', '.join(template_keys)}"
            )
        try:
            load_template(ref)
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
    fields.update({f"models.{role}": m for role, m in context.models.items()})
    return fields


def start_preflight(bench: Benchmark, context: Any) -> list[tuple[str, Future[None]]]:
    """Start the cheap check of every configured model this benchmark will use, each in
    a daemon thread: the round trips overlap loading the data and building the graph,
    and a check nobody waits for (a config mistake found meanwhile) never holds the
    process. :func:`await_preflight` collects them before the first item."""
    from dialeval.models.client import get_client, preflight

    seen: set[str] = set()
    checks: list[tuple[str, Future[None]]] = []
    for name, settings in used_models(bench, context).items():
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


def warm_clients(bench: Benchmark, context: Any) -> None:
    """Build the API models' chat clients (the first one imports the SDK) during set-up,
    while preflight checks are in flight, rather than inside the first item. A failure
    is left to the items, which record it as they always do."""
    from dialeval.models.client import API_BACKENDS, get_client

    for settings in used_models(bench, context).values():
        client = get_client(settings)
        if client.backend in API_BACKENDS:
            try:
                client.model  # noqa: B018  (built and kept for this event loop)
            except Exception:
                pass


def _load_items(bench: Benchmark, data: str, config: RunConfig) -> list[Any]:
    from dialeval.data.io import DataError

    try:
        items = bench.load(Path(data), config.options)
    except UnicodeDecodeError as err:
        raise DataError(data, f"not UTF-8 text (byte offset {err.start}: {err.reason})") from None
    except ConfigError as err:  # a mistyped option names the config file it sits in
        if config.source != "config" and str(err).startswith(f"{bench.name} option "):
            raise ConfigError(f"{config.source}: {err}") from None
        raise
    if not items:
        raise DataError(data, "holds no items to evaluate")
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{data}: item ids are not unique")
    return items[: config.limit] if config.limit else items


def _prepare_folder(run_dir: Path, resolved: dict[str, Any], fresh: bool) -> None:
    """Write ``config.json``; an existing folder must hold the same setup (``fresh``
    starts over, keeping the old results aside)."""
    config_path = run_dir / "config.json"
    results = run_dir / RESULTS
    if fresh:
        if results.exists():
            results.rename(run_dir / f"results.{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    elif config_path.exists():
        try:
            before = json.loads(config_path.read_text(encoding="utf-8"))
            if not isinstance(before, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as err:
            raise ConfigError(
                f"{config_path}: not a readable run config ({err}); use --fresh to start this run over"
            ) from None
        if _comparable(before) != _comparable(resolved):
            raise ConfigError(
                f"run {run_dir.name} exists with a different configuration or data ({config_path}); "
                "use another --run-id so results of two setups never mix, or --fresh to start over"
            )
    config_path.write_text(json.dumps(resolved, indent=2))


@contextmanager
def _removed_if_never_started(run_dir: Path, created: bool) -> Iterator[None]:
    """A run stopped before its first result (no key, API unreachable at preflight) leaves
    no folder behind, so the viewer and ``dialeval report`` never take it for a run."""
    try:
        yield
    except BaseException:
        results = run_dir / RESULTS
        if created and not (results.exists() and results.stat().st_size):
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


async def run_async(
    benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True
) -> RunResult:
    """Evaluate ``data`` with ``benchmark`` as configured; resume if the run exists."""
    from dialeval.models.client import CircuitBreaker, current_breaker, current_limits, request_slots
    from dialeval.report.writer import finish_run

    config = config or RunConfig()
    data = str(data)
    bench = get_benchmark(benchmark)
    items = _load_items(bench, data, config)
    digest = data_digest(data, config.options)
    run_id = config.run_id or f"{benchmark}-{_fingerprint(benchmark, data, config, digest)}"
    run_dir = Path(config.output_dir) / run_id
    context = config.context()
    checks: list[tuple[str, Future[None]]] = []
    if config.preflight and (config.fresh or not (run_dir / RESULTS).exists()):
        checks = start_preflight(bench, context)  # a new run has items to send: check while the graph builds
    graph = bench.graph()  # also registers the benchmark's agents, which check_setup needs
    check_setup(bench, config)

    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    resolved = resolved_config(benchmark, data, config, digest, context)
    with _removed_if_never_started(run_dir, created), RunLock(run_dir):
        _prepare_folder(run_dir, resolved, config.fresh)
        done = read_results(run_dir)
        todo = [item for item in items if done.get(item.id, {}).get("status") != "ok"]
        context = context.model_copy(update={"run_dir": str(run_dir)})
        if todo:
            if config.preflight and not checks:
                checks = start_preflight(bench, context)
            warm_clients(bench, context)  # while the checks are in flight
            await await_preflight(checks, config)

        concurrency = config.effective_concurrency()
        slots = asyncio.Semaphore(concurrency)
        breaker = CircuitBreaker(config.max_consecutive_errors)
        tokens = (request_slots.set(asyncio.Semaphore(concurrency)), current_breaker.set(breaker))
        writer = ResultsWriter(run_dir / RESULTS)
        bar = None
        if progress and todo:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"{benchmark} {run_id}", unit="item")
        live: Counter[str] = Counter()
        usd = 0.0
        unpriced = False

        def show() -> None:
            if bar is not None:
                cost = "unknown" if unpriced else f"{usd:.4f}"
                limits = current_limits()  # requests allowed in flight now (adapts to 429s)
                bar.set_postfix(
                    failed=live["failed"],
                    errors=live["errors"],
                    tokens=live["tokens"],
                    usd=cost,
                    **({"limit": max(limits.values())} if limits else {}),
                    refresh=True,
                )

        def on_call(call: CallRecord) -> None:
            if call.status == "error":
                live["errors"] += 1
                show()

        async def one(item: Any) -> None:
            nonlocal usd, unpriced
            async with slots:
                if breaker.message is not None:  # stopped: leave the item for the next run
                    live["skipped"] += 1
                    return
                row = await _evaluate_item(bench, graph, item, context, config.options, on_call)
            writer.append(row)
            done[item.id] = row
            item_totals = summarize_calls(row["usage"])
            live["tokens"] += int(item_totals["input_tokens"] + item_totals["output_tokens"])
            usd += item_totals["cost_usd"]
            unpriced = unpriced or bool(item_totals["unpriced_calls"])
            live["failed"] += row["status"] != "ok"
            show()
            if bar is not None:
                bar.update(1)

        try:
            with call_bar(enabled=bar is not None):  # moves per model call: a turn, a question
                await asyncio.gather(*(one(item) for item in todo))
        finally:
            writer.close()
            current_breaker.reset(tokens[1])
            request_slots.reset(tokens[0])
            if bar is not None:
                bar.close()

        rows = [done[item.id] for item in items if item.id in done]
        not_evaluated = len(items) - len(rows)
        stopped = breaker.message if len(rows) < len(items) else None
        metrics = finish_run(run_dir, bench, rows, resolved, expected=len(items), stopped=stopped)
    records = [r["result"] for r in rows if r["status"] == "ok"]
    failed = sum(1 for r in rows if r["status"] != "ok")
    summary = failure_summary(rows, len(items))
    if breaker.message and not_evaluated:
        summary = f"run stopped, {not_evaluated} of {len(items)} items not evaluated: {breaker.message}" + (
            f"; {summary}" if summary else ""
        )
    return RunResult(
        run_dir=run_dir,
        metrics=metrics,
        records=records,
        failed=failed,
        not_evaluated=not_evaluated,
        stopped=breaker.message if not_evaluated else None,
        summary=summary,
    )


def run(benchmark: str, data: str | Path, config: RunConfig | None = None, *, progress: bool = True) -> RunResult:
    """Synchronous wrapper of :func:`run_async`."""
    return asyncio.run(run_async(benchmark, data, config, progress=progress))
