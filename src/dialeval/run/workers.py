"""``--workers N``: one run's items shared among N processes, each with its own event loop.

Why: one event loop spends a few milliseconds of CPU per request, so one core cannot
keep 64 requests in flight to a fast server; big runs need every core.

How: the run's own process (the parent) does everything a run does before the first
call (config, data, preflight, run folder, lock), then forks the workers, which inherit
the items and the compiled graph. It hands items out on demand (up to twice each
worker's share of the request limit), is the only writer of ``results.jsonl`` (workers
send each finished row back through a pipe) and owns the progress bar. One run folder,
one lock, one response cache, so resume, failures, costs and the report are those of
one process:

- the request limit (``concurrency``, each model's ``max_concurrency``) is the run's
  total, divided among the workers;
- a worker's circuit breaker that opens stops every worker;
- Ctrl-C kills the workers, keeps every row they had sent and prints the resume line;
- a worker killed (``kill -9``) loses nothing finished: its unfinished items are left
  for the next run (the run goes on with the others and ends non-zero, naming it);
  answers it was paid for are in the response cache, so the re-run does not pay again;
- a parent killed leaves no worker running: each notices its pipe closed and exits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
from collections import deque
from typing import Any

from dialeval.benchmarks import Benchmark
from dialeval.config import RunConfig
from dialeval.errors import ConfigError
from dialeval.models.usage import CallRecord
from dialeval.run.items import ItemJob, ItemRunner
from dialeval.run.preflight import used_models
from dialeval.run.tally import RunTally

# below this many items per worker, starting one (a fork, its own HTTP pool, an idle
# tail while the others finish) costs more than the core it adds saves: with ~2 ms of
# CPU a request one process keeps 64 requests in flight at 200 ms, and on 2 cores 1,000
# `answers` items ran faster in one process (5.2-5.4 s) than in two (5.7-6.0 s), while
# 10,000 ran a little faster in two (34.0 s against 35.1 s; benchmarks/workers.py)
ITEMS_PER_WORKER = 2500
# their note store (Chroma, under the run folder) belongs to one process
ONE_PROCESS_BENCHMARKS = ("mmrc", "dialogue")
CALLS_EVERY = 0.25  # seconds between a worker's reports of finished calls (the call bar)


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def share_of(total: int, workers: int, index: int) -> int:
    """Worker ``index``'s part of ``total`` (the parts add up to it; each at least 1)."""
    return max(1, total // workers + (1 if index < total % workers else 0))


def one_process_reason(bench: Benchmark, context: Any) -> str | None:
    """Why this run must stay in one process, or ``None``."""
    if bench.name in ONE_PROCESS_BENCHMARKS:
        return f"{bench.name} keeps its notes in one store under the run folder, which one process writes"
    for field, settings in used_models(bench, context).items():
        if settings.batch:
            return f"'{field}' is sent through a batch API ({settings.spec}), whose batches one process collects"
        if settings.parsed.is_local:
            return f"'{field}' is a local model ({settings.spec}): every worker would load its weights"
    return None


def check_workers(config: RunConfig, bench: Benchmark, context: Any) -> None:
    """Refuse, before anything is written, ``workers`` > 1 where they cannot work."""
    asked = getattr(config, "workers", None)
    if not asked or asked <= 1:
        return
    reason = one_process_reason(bench, context)
    if reason is None and not hasattr(os, "fork"):
        reason = "worker processes need fork(), which this system lacks"
    if reason is not None:
        raise ConfigError(f"{config.source}: field 'workers': {asked} processes cannot run this: {reason}; use 1")


def choose_workers(config: RunConfig, bench: Benchmark, context: Any, todo: int) -> int:
    """The configured ``workers``, else as many as help: one per ``ITEMS_PER_WORKER``
    items left to do, at most one per core; 1 for a dry run, for a model object
    registered in this process, and wherever :func:`one_process_reason` says so. Never
    more than items or request slots."""
    most = min(todo, config.effective_concurrency())
    asked = getattr(config, "workers", None)
    if asked is not None:
        return max(1, min(asked, most))
    if context.default_model.parsed.is_dry_run or one_process_reason(bench, context) is not None:
        return 1
    if _registered_here(bench, context):
        return 1
    return max(1, min(cores(), todo // ITEMS_PER_WORKER, most))


def _registered_here(bench: Benchmark, context: Any) -> bool:
    """Whether a model object was registered in this process (``register_client``: tests,
    custom backends): what it keeps (calls seen, replies left) would stay in a worker."""
    from dialeval.models.client import get_client

    return any(get_client(settings).injected for settings in used_models(bench, context).values())


@dataclasses.dataclass
class _Worker:
    """The parent's view of one worker: its process, its pipe, the items it holds."""

    index: int
    process: Any
    conn: Any
    share: int
    assigned: dict[str, int] = dataclasses.field(default_factory=dict)  # item id -> index in todo
    told_end: bool = False
    ended: bool = False


class WorkerPool:
    """The parent's side: fork the workers, hand out items, record their rows."""

    def __init__(self, job: ItemJob, todo: list[Any], workers: int):
        self.job, self.todo, self.size = job, todo, workers
        self.workers: list[_Worker] = []
        self._queue: deque[int] = deque(range(len(todo)))
        self.stopped: str | None = None  # a breaker's message: every worker stopped
        self.lost: list[str] = []  # workers that died holding items
        self._tally: RunTally | None = None
        self._all_ended: asyncio.Future[None] | None = None

    def start(self) -> WorkerPool:
        import multiprocessing

        context = multiprocessing.get_context("fork")  # inherits items and graph: nothing to pickle or re-import
        pipes = [context.Pipe() for _ in range(self.size)]
        every_end = [end for pair in pipes for end in pair]
        for index, (mine, theirs) in enumerate(pipes):
            others = [end for end in every_end if end is not theirs]
            process = context.Process(
                target=_worker_main, args=(index, self.size, theirs, others, self.job, self.todo),
                name=f"dialeval-worker-{index + 1}", daemon=True,
            )
            process.start()
            self.workers.append(_Worker(index, process, mine, share_of(self.job.concurrency, self.size, index)))
        for _, theirs in pipes:
            theirs.close()
        return self

    async def run(self, tally: RunTally) -> str | None:
        """Until every worker ended; returns why the run stopped early (a breaker's
        message, or the workers that died holding items), else ``None``."""
        loop = asyncio.get_running_loop()
        self._tally = tally
        self._all_ended = loop.create_future()
        try:
            for worker in self.workers:
                loop.add_reader(worker.conn.fileno(), self._readable, worker)
                loop.add_reader(worker.process.sentinel, self._ended, worker)
            self._hand_out_all()
            await self._all_ended
        except BaseException:  # Ctrl-C, or a fault here: no worker outlives the run
            for worker in self.workers:
                if not worker.ended:
                    worker.process.kill()
            raise
        finally:
            for worker in self.workers:
                self._end(worker)  # rows already sent are recorded
        return self.stopped or ("; ".join(self.lost) if self.lost else None)

    def _send(self, worker: _Worker, message: tuple[str, Any]) -> None:
        try:
            worker.conn.send(message)
        except OSError:  # it died: its sentinel says so
            pass

    def _hand_out_all(self) -> None:
        for worker in self.workers:
            self._hand_out(worker)

    def _hand_out(self, worker: _Worker) -> None:
        """Keep up to two shares of items at ``worker``, topped up a share at a time, and
        never more than its fair part of what is left (a short run is split, not given
        whole to the first worker)."""
        if worker.ended or worker.told_end or self.stopped is not None or len(worker.assigned) > worker.share:
            return
        live = [w for w in self.workers if not w.ended]
        fair = -(-(len(self._queue) + sum(len(w.assigned) for w in live)) // len(live)) - len(worker.assigned)
        room = min(2 * worker.share - len(worker.assigned), fair)
        batch: list[int] = []
        while self._queue and len(batch) < room:
            index = self._queue.popleft()
            worker.assigned[self.todo[index].id] = index
            batch.append(index)
        if batch:
            self._send(worker, ("items", batch))
        if not self._queue:
            worker.told_end = True
            self._send(worker, ("end", None))

    def _readable(self, worker: _Worker) -> None:
        try:
            try:
                while not worker.ended and worker.conn.poll():
                    self._handle(worker, worker.conn.recv())
            except (EOFError, ConnectionError):
                self._end(worker)
        except Exception as err:  # a row that cannot be written (disk full) stops the run loudly
            self._fail(err)

    def _ended(self, worker: _Worker) -> None:
        try:
            self._end(worker)
        except Exception as err:
            self._fail(err)

    def _fail(self, err: Exception) -> None:
        if self._all_ended is not None and not self._all_ended.done():
            self._all_ended.set_exception(err)

    def _handle(self, worker: _Worker, message: tuple[str, Any]) -> None:
        assert self._tally is not None
        kind, payload = message
        if kind in ("row", "json"):
            row = payload if kind == "row" else json.loads(payload)
            worker.assigned.pop(row["id"], None)
            self._tally.record(row)
            self._hand_out_all()  # this worker, or one that was above its fair part before
        elif kind == "calls":
            from dialeval.models.progress import tick

            tick(payload)
        elif kind == "errors":
            self._tally.errored_calls(payload)
        elif kind == "tripped":
            self._stop(payload)

    def _stop(self, message: str) -> None:
        """One worker's breaker opened: no more items, every worker stops."""
        if self.stopped is not None:
            return
        self.stopped = message
        self._queue.clear()
        for worker in self.workers:
            if not worker.ended:
                self._send(worker, ("stop", message))

    def _end(self, worker: _Worker) -> None:
        """``worker`` exited (or its pipe closed): record what it sent, note what it held."""
        if worker.ended:
            return
        try:  # rows it sent before it ended are still in the pipe
            while worker.conn.poll():
                self._handle(worker, worker.conn.recv())
        except (EOFError, ConnectionError):
            pass
        worker.ended = True
        loop = asyncio.get_running_loop()
        loop.remove_reader(worker.conn.fileno())
        loop.remove_reader(worker.process.sentinel)
        worker.process.join(timeout=10)
        if worker.process.exitcode is None:  # its pipe broke but it lives on: it cannot report back
            worker.process.kill()
            worker.process.join()
        worker.conn.close()
        code = worker.process.exitcode
        if worker.assigned and self.stopped is None:
            how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
            self.lost.append(
                f"worker {worker.index + 1} (pid {worker.process.pid}) {how}; "
                f"its {len(worker.assigned)} unfinished items are left for the next run"
            )
        worker.assigned.clear()
        if not all(w.ended for w in self.workers):
            self._hand_out_all()  # the others' fair parts grew
        elif self._all_ended is not None and not self._all_ended.done():
            self._all_ended.set_result(None)


def _worker_main(index: int, size: int, conn: Any, others: list[Any], job: ItemJob, todo: list[Any]) -> None:
    """A worker process: its own event loop over the items the parent sends."""
    for end in others:  # the parent's ends and the other workers': EOF must mean "the parent is gone"
        end.close()
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the parent handles it
    except ValueError:  # not the main thread (CPython makes the forking thread main; others may not)
        pass
    share = share_of(job.concurrency, size, index)
    _share_model_limits(job, size, index)
    asyncio.run(_work(conn, dataclasses.replace(job, concurrency=share), todo))
    from dialeval.models.prompt_store import close_all

    close_all()  # the prompt store's WAL goes into its file, as at any process's exit
    conn.close()


def _gone() -> None:
    """The parent is gone (killed): nobody is left to record rows; stop at once (the
    response cache keeps every answer paid for)."""
    os._exit(1)


async def _work(conn: Any, job: ItemJob, todo: list[Any]) -> None:
    loop = asyncio.get_running_loop()

    def send(message: tuple[str, Any]) -> None:
        try:
            conn.send(message)
        except OSError:
            _gone()

    def on_row(row: dict[str, Any]) -> None:
        try:
            conn.send(("row", row))
        except OSError:
            _gone()
        except Exception:  # something in it does not pickle: send it as the results file will hold it
            send(("json", json.dumps(row, ensure_ascii=False, default=str)))

    def on_call(call: CallRecord) -> None:
        if call.status == "error":
            send(("errors", 1))

    calls = [0]

    def report_calls() -> None:
        if calls[0]:
            send(("calls", calls[0]))
            calls[0] = 0
        loop.call_later(CALLS_EVERY, report_calls)

    runner = ItemRunner(job, on_row, on_call, on_trip=lambda message: send(("tripped", message)))

    def readable() -> None:
        try:
            while conn.poll():
                kind, payload = conn.recv()
                if kind == "items":
                    for i in payload:
                        runner.add(todo[i])
                elif kind == "end":
                    runner.close()
                elif kind == "stop":
                    runner.halt(payload)
        except (EOFError, OSError):
            _gone()

    from dialeval.models.progress import showing

    def count(steps: int) -> None:
        calls[0] += steps

    with showing(count):  # item tasks start in the reader's context, which holds this display
        loop.add_reader(conn.fileno(), readable)
        report_calls()
        try:
            await runner.run()
        finally:
            loop.remove_reader(conn.fileno())
            from dialeval.models.client import close_clients

            await close_clients()  # this worker loop's HTTP pools
    if calls[0]:
        send(("calls", calls[0]))


def _share_model_limits(job: ItemJob, size: int, index: int) -> None:
    """Each API model's request limit becomes this worker's share of it; a limit learned
    by an earlier run (``limits.json``) is shared too, and what this worker learns is
    kept as the whole run's (its share times the workers)."""
    from dialeval.models.client import get_client
    from dialeval.models.concurrency import AdaptiveLimit
    from dialeval.models.limit_memory import endpoint_key, learned_limit, memory_path, remember_limit

    cache_path = job.context.cache_path
    for settings in used_models(job.bench, job.context).values():
        client = get_client(settings)
        if not client.is_api:
            continue
        old = client.limit
        most = share_of(old.maximum, size, index)
        client.limit = AdaptiveLimit(most, minimum=min(old.minimum, most), maximum=most, adaptive=old.adaptive)
        if not cache_path or client.injected or not client.endpoint or not old.adaptive:
            continue
        client._limit_memory = cache_path  # done here, shared: generate() must not apply the whole limit again
        path, key = memory_path(cache_path), endpoint_key(client.endpoint, client.name)
        learned = learned_limit(path, key)
        if learned is not None:
            client.limit.start_from(share_of(learned, size, index))
        client.limit.on_change = lambda value, path=path, key=key: remember_limit(path, key, value * size)
