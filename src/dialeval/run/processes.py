"""``--processes N``: one run's items shared among N worker processes, each with its own event loop.

Why: one event loop spends a few milliseconds of CPU per request (the SDK's, LangChain's
and LangGraph's per-call work), so one core cannot keep 64 requests in flight to a fast
self-hosted server (vLLM, SGLang); a big run needs every core.

How: the run's own process does everything a run does before the first call (config,
data, preflight, run folder, lock), then forks the workers, which inherit the items and the
compiled graph. It hands items out on demand (up to two of a worker's shares of the request
limit at a time), is the only writer of ``results.jsonl`` (a worker sends each finished row
up its pipe) and owns the progress bar. One run folder, one lock, one response cache,
one ``metrics.json``: resume, failures, costs and the report are those of one process.

- the request limit (``concurrency``) and each API model's limits (``max_concurrency``,
  the adaptive limit it learns, ``requests_per_second``) are the run's totals, shared;
- a breaker that opens in one worker stops every worker;
- Ctrl-C kills the workers and keeps every row they sent;
- a worker killed (``kill -9``) loses nothing finished; what it held is left for the next
  run (the run ends non-zero, naming it), and the response cache has every answer it paid for;
- the run's process killed leaves no worker running: each notices its pipe closed and exits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
from collections import deque
from typing import Any, Callable

from dialeval.benchmarks import Benchmark
from dialeval.config import RunConfig
from dialeval.errors import ConfigError
from dialeval.models.usage import CallRecord
from dialeval.run.items import ItemJob, ItemRunner
from dialeval.run.preflight import used_models
from dialeval.run.tally import RunTally

# their state under the run folder (note stores, bot journals) belongs to one process
ONE_PROCESS_BENCHMARKS = ("mmrc", "dialogue", "simulation")
CALLS_EVERY = 0.25  # seconds between a worker's reports of finished calls (the call bar)


def share_of(total: int, workers: int, index: int) -> int:
    """Worker ``index``'s part of ``total`` (the parts add up to it; each at least 1)."""
    return max(1, total // workers + (1 if index < total % workers else 0))


def one_process_reason(bench: Benchmark, context: Any) -> str | None:
    """Why this run must stay in one process, or ``None``."""
    if bench.name in ONE_PROCESS_BENCHMARKS:
        return f"{bench.name} keeps state under the run folder (notes, journals) that one process writes"
    if not hasattr(os, "fork"):
        return "worker processes need fork(), which this system lacks"
    for field, settings in used_models(bench, context).items():
        if settings.batch:
            return f"'{field}' is sent through a batch API ({settings.spec}), whose batches one process collects"
        if settings.parsed.is_local:
            return f"'{field}' is a local model ({settings.spec}): every process would load its weights"
    return None


def check_processes(config: RunConfig, bench: Benchmark, context: Any) -> None:
    """Refuse, before anything is written, ``processes`` > 1 where they cannot work."""
    if config.processes <= 1:
        return
    reason = one_process_reason(bench, context)
    if reason is not None:
        raise ConfigError(f"{config.source}: field 'processes': {config.processes} processes cannot run this: {reason}; use 1")


@dataclasses.dataclass
class _Worker:
    """The run process's view of one worker: its process, its pipe, the items it holds."""

    index: int
    process: Any
    conn: Any
    share: int
    assigned: dict[str, int] = dataclasses.field(default_factory=dict)  # item id -> index in todo
    told_end: bool = False
    ended: bool = False


class WorkerPool:
    """The run process's side: fork the workers, hand out items, record their rows."""

    def __init__(self, job: ItemJob, todo: list[Any], workers: int, handlers: list[Any]):
        self.job, self.todo, self.size, self.handlers = job, todo, workers, handlers
        self.workers: list[_Worker] = []
        self._queue: deque[int] = deque(range(len(todo)))
        self.stopped: str | None = None  # a breaker's message: every worker stopped
        self.lost: list[str] = []  # workers that died holding items
        self._tally: RunTally | None = None
        self._record: Callable[[dict[str, Any]], None] = lambda row: None
        self._all_ended: asyncio.Future[None] | None = None

    def start(self) -> WorkerPool:
        import multiprocessing

        context = multiprocessing.get_context("fork")  # inherits items and graph: nothing to pickle or re-import
        pipes = [context.Pipe() for _ in range(self.size)]
        every_end = [end for pair in pipes for end in pair]
        for index, (mine, theirs) in enumerate(pipes):
            others = [end for end in every_end if end is not theirs]
            process = context.Process(
                target=_worker_main, args=(index, self.size, theirs, others, self.job, self.todo, self.handlers),
                name=f"dialeval-process-{index + 1}", daemon=True,
            )
            process.start()
            self.workers.append(_Worker(index, process, mine, share_of(self.job.concurrency, self.size, index)))
        for _, theirs in pipes:
            theirs.close()
        return self

    async def run(self, tally: RunTally, record: Callable[[dict[str, Any]], None] | None = None) -> str | None:
        """Until every worker ended, each row through ``record`` (default: the tally's);
        returns why the run stopped early (a breaker's message, or the workers that died
        holding items), else ``None``."""
        loop = asyncio.get_running_loop()
        self._tally = tally
        self._record = record or tally.record
        self._all_ended = loop.create_future()
        try:
            for worker in self.workers:
                loop.add_reader(worker.conn.fileno(), self._readable, worker)
                loop.add_reader(worker.process.sentinel, self._ended, worker)
            for worker in self.workers:
                self._hand_out(worker)
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
        if kind == "callback":
            from dialeval.run.relay import replay

            replay(self.handlers, payload)
        elif kind in ("row", "json"):
            row = payload if kind == "row" else json.loads(payload)
            worker.assigned.pop(row["id"], None)
            self._record(row)
            for each in self.workers:  # this worker, or one that was above its fair part before
                self._hand_out(each)
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
                f"process {worker.index + 1} (pid {worker.process.pid}) {how}; "
                f"its {len(worker.assigned)} unfinished items are left for the next run"
            )
        worker.assigned.clear()
        if not all(w.ended for w in self.workers):
            for each in self.workers:  # the others' fair parts grew
                self._hand_out(each)
        elif self._all_ended is not None and not self._all_ended.done():
            self._all_ended.set_result(None)


def _worker_main(index: int, size: int, conn: Any, others: list[Any], job: ItemJob, todo: list[Any],
                 handlers: list[Any]) -> None:
    """A worker process: its own event loop over the items the run's process sends."""
    for end in others:  # the run process's ends and the other workers': EOF must mean "the run's process is gone"
        end.close()
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the run's process handles it
    except ValueError:  # not the main thread
        pass
    _share_model_limits(job, size, index)
    job = dataclasses.replace(job, concurrency=share_of(job.concurrency, size, index))
    asyncio.run(_work(conn, job, todo, handlers))
    from dialeval.models.prompt_store import close

    close(job.context.run_dir)  # this worker's prompts into the run's store (a forked process skips atexit)
    if os.environ.get("LANGSMITH_TRACING") or os.environ.get("LANGCHAIN_TRACING_V2"):
        from langchain_core.tracers.langchain import wait_for_all_tracers

        wait_for_all_tracers()  # the runs this worker traced reach LangSmith before it exits
    conn.close()


def _gone() -> None:
    """The run's process is gone (killed): nobody is left to record rows; stop at once
    (the response cache keeps every answer paid for)."""
    os._exit(1)


async def _work(conn: Any, job: ItemJob, todo: list[Any], handlers: list[Any]) -> None:
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

    if handlers:
        from dialeval.run.relay import relays

        job = dataclasses.replace(job, graph=job.graph.with_config(callbacks=relays(handlers, send)))
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
    """Each API model's request limit and request rate become this worker's share of them;
    a limit learned by an earlier run (``limits.json``) is shared too, and what this worker
    learns is kept as the whole run's (its share times the workers)."""
    from dialeval.models.backends import backend_for
    from dialeval.models.client import get_client
    from dialeval.models.concurrency import AdaptiveLimit
    from dialeval.models.limit_memory import endpoint_key, learned_limit, memory_path, remember_limit

    cache_path = job.context.cache_path
    for settings in used_models(job.bench, job.context).values():
        client = get_client(settings)
        if not client.is_api:
            continue
        if settings.requests_per_second and not client.injected:
            client.impl = backend_for(client.spec, settings.model_copy(update={"requests_per_second": settings.requests_per_second / size}))
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
