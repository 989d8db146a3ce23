"""Batch rounds: every item's graph runs until it waits on model calls, then the waiting
calls go to the provider as one batch per model, and the graphs go on with the answers.

Why rounds and not items x stages: a graph decides its next call from its last answer,
so the only calls that can go together are those every item is waiting on at the same
moment. The runner tells :class:`BatchRounds` when an item starts and ends; a batched
model's call (:data:`dialeval.models.batch_queue.batch_queue`) waits here. When every
running item waits, the round is flushed: the calls are grouped by model, de-duplicated
by their cache key, split at the provider's limits, written to the run folder
(:mod:`dialeval.run.batch_state`) *before* they are submitted, submitted, polled until
final and collected. A protocol of depth d takes about d rounds. Failed or expired
lines go into the next round, at most ``retries`` more times, then the call raises as a
failed live call would. Dry-run models answer at once, so a dry run counts rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from dialeval.models import calls as call_steps  # estimate, submit, collect: the client's public steps, as a live call takes them
from dialeval.models.batch_queue import QueuedCall
from dialeval.models.client import ModelClient
from dialeval.run.batch_state import Answer, BatchState, Chunk, read_rounds

if TYPE_CHECKING:
    from dialeval.models.batch.providers import BatchProvider
    from dialeval.models.client_view import ClientView
    from dialeval.models.generation import Generation

MAX_TURNS = 10_000  # event-loop turns every other task gets before a round is flushed
NO_WAIT_EXIT = 75  # EX_TEMPFAIL: batches are submitted, come back later

_item: contextvars.ContextVar[str | None] = contextvars.ContextVar("dialeval_batch_item", default=None)


class BatchesPending(Exception):
    """``--no-wait``: the round's batches are submitted; re-running the same command collects them."""


class BatchLineFailed(RuntimeError):
    """A batch line that came back failed or expired too often: the call fails as a live one would."""


class BatchLineExpired(BatchLineFailed):
    """A batch line the provider never answered within the batch's window, every time it went."""


@dataclass
class _Waiting:
    """One distinct call of one model in the current round, and every caller waiting on it."""

    client: ModelClient
    call: QueuedCall
    key: str
    futures: list[tuple[str | None, asyncio.Future[Generation]]] = field(default_factory=list)
    attempts: int = 0
    last_error: str = ""


def _default_provider(client: ModelClient) -> BatchProvider:
    from dialeval.models.batch.providers import batch_provider

    return batch_provider(client)


class BatchRounds:
    """The batch queue of one run session (see the module doc)."""

    def __init__(
        self,
        run_dir: str | Path,
        *,
        wait: bool = True,
        poll_seconds: float = 30.0,
        retries: int = 2,
        reuse_answers: bool = True,
        say: Callable[[str], None] = lambda line: None,
        on_stop: Callable[[], None] = lambda: None,
        provider_for: Callable[[ModelClient], BatchProvider] = _default_provider,
    ):
        self.run_dir = Path(run_dir)
        self.state = BatchState.load(run_dir)
        self.wait, self.poll_seconds, self.retries = wait, poll_seconds, retries
        self.reuse_answers = reuse_answers  # False with --fresh: collected answers are not read again
        self.say, self.on_stop, self.provider_for = say, on_stop, provider_for
        self.rounds = 0  # rounds of this session (polling an earlier session's batches included)
        self._round_base = max((c.round for c in self.state.chunks.values()), default=0)
        self._before: dict[str, Any] = read_rounds(run_dir) or {}
        self.batches = 0  # batches submitted in this session
        self.lines = 0  # lines submitted in this session
        self.pending_message: str | None = None  # set by --no-wait once the round is submitted
        self.models: dict[str, ModelClient] = {}
        self._providers: dict[str, BatchProvider] = {}
        self._checked: set[str] = set()  # models whose unconfirmed chunks were looked up
        self._pending: dict[tuple[str, str], _Waiting] = {}
        self._running = 0
        self._waiting: Counter[str | None] = Counter()
        self._driver: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def track(self, item_id: str) -> AsyncIterator[None]:
        """Around one item's graph: a round starts once every tracked item waits here."""
        self._running += 1
        token = _item.set(item_id)
        try:
            yield
        finally:
            _item.reset(token)
            self._running -= 1
            self._check()

    async def ask(self, client: ClientView, call: QueuedCall) -> Generation:
        """Answer one batched call: from an answer already collected into the run folder,
        else from the next round."""
        if not isinstance(client, ModelClient):  # the queue sees the client through a Protocol (models/client_view.py)
            raise TypeError(f"a batch round takes a ModelClient's calls, not {type(client).__name__}")
        key = call_steps.key_of(client, call)
        self.models.setdefault(client.label, client)
        answer = self.state.answers.get(key) if self.reuse_answers and not client.is_dry_run else None
        if answer is not None and answer.response is not None:
            return call_steps.collect(client, call, answer.response)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Generation] = loop.create_future()
        waiting = self._pending.setdefault((client.label, key), _Waiting(client, call, key))
        item = _item.get()
        waiting.futures.append((item, future))
        self._waiting[item] += 1
        self._check()
        return await future

    # -- when to flush -------------------------------------------------------------------

    def _quiescent(self) -> bool:
        """Every running item waits on a batched call (and some call waits)."""
        if not self._pending:
            return False
        items = {item for item, n in self._waiting.items() if n > 0}
        return len(items) >= self._running

    def _check(self) -> None:
        if self._pending and (self._driver is None or self._driver.done()) and self.pending_message is None:
            self._driver = asyncio.ensure_future(self._drive())
            self._driver.add_done_callback(self._driver_ended)

    def _driver_ended(self, driver: asyncio.Task[None]) -> None:
        """A bug in the rounds fails the waiting calls loudly instead of leaving them waiting forever."""
        if driver.cancelled() or driver.exception() is None:
            return
        err = driver.exception()
        assert err is not None
        calls, self._pending = self._pending, {}
        for waiting in calls.values():
            self._fail(waiting, err)

    async def _let_others_run(self) -> None:
        """Let every runnable task run first: an item whose one branch waits here may have
        another branch (a parallel graph node, a gathered call) still on its way to a call.
        asyncio shows no public sign of an idle loop, so this gives it ``MAX_TURNS`` turns
        (a tenth of a second; a round then waits minutes for its batch)."""
        for _ in range(MAX_TURNS):
            await asyncio.sleep(0)

    async def _drive(self) -> None:
        while True:
            await self._let_others_run()
            if not self._quiescent():
                return
            calls, self._pending = self._pending, {}
            try:
                await self._round(list(calls.values()))
            except BatchesPending as stop:
                self.pending_message = str(stop)
                self.on_stop()
                return
            except Exception as err:  # a refused upload, a dead server: every call of the round fails
                for name, waiting in calls.items():
                    self._pending.pop(name, None)
                    self._fail(waiting, err)

    # -- one round -------------------------------------------------------------------------

    async def _round(self, calls: list[_Waiting]) -> None:
        self.rounds += 1
        by_model: dict[str, list[_Waiting]] = {}
        for waiting in calls:
            by_model.setdefault(waiting.client.label, []).append(waiting)
        watched: list[tuple[str, Chunk]] = []
        for label, group in by_model.items():
            client = group[0].client
            if client.is_dry_run:  # each caller billed: real answers seldom repeat a prompt as placeholders do
                for waiting in group:
                    self._resolve(waiting, call_steps.estimate(waiting.client, waiting.call, batched=True), bill_each=True)
                continue
            watched += await self._submit(label, client, group)
        if not watched:
            return
        finals = await self._poll(watched)
        by_key = {(w.client.label, w.key): w for w in calls}
        for label, chunk in watched:
            answers = await self._collect(label, chunk, finals[chunk.chunk_id])
            for answer in answers:
                asked = by_key.get((label, answer.key))
                if asked is not None:
                    self._settle(asked, answer)

    async def _submit(self, label: str, client: ModelClient, group: list[_Waiting]) -> list[tuple[str, Chunk]]:
        """Send what no batch holds yet; return every chunk this round must wait for."""
        provider = self._provider(label, client)
        await self._confirm(label, provider)
        watched: dict[str, Chunk] = {}
        fresh: list[_Waiting] = []
        for waiting in group:
            chunk = self.state.open_chunk_of(label, waiting.key)
            if chunk is not None:  # submitted by an earlier session: poll it, never send it again
                watched[chunk.chunk_id] = chunk
            else:
                fresh.append(waiting)
        if not fresh:
            return [(label, chunk) for chunk in watched.values()]
        from dialeval.models.batch import split_lines

        # each call's own client: roles may share a spec with other settings (the system's temperature)
        lines = [call_steps.submit(w.client, w.call, w.key) for w in fresh]
        for part in split_lines(lines, provider.max_lines, provider.max_bytes):
            keys = {line.custom_id: line.custom_id for line in part}  # a call's key is its custom id
            chunk = self.state.submitting(self.state.next_chunk_id(), label, self._round_base + self.rounds, keys)
            batch_id = await provider.submit(part, self._metadata(chunk))
            self.state.submitted(chunk, batch_id)
            self.batches += 1
            self.lines += len(part)
            self.say(f"batch {batch_id} ({label}): {len(part)} request(s) submitted, round {self._round_base + self.rounds}")
            watched[chunk.chunk_id] = chunk
        return [(label, chunk) for chunk in watched.values()]

    def _metadata(self, chunk: Chunk) -> dict[str, str]:
        """What finds a chunk again at the provider when its batch id was never written."""
        return {"dialeval_run": self.run_dir.name, "dialeval_chunk": chunk.chunk_id}

    async def _confirm(self, label: str, provider: BatchProvider) -> None:
        """Chunks written as ``submitting`` without a batch id: ask the provider whether they
        arrived (OpenAI's metadata); otherwise they never did, and their lines may go again."""
        if label in self._checked:
            return
        self._checked.add(label)
        for chunk in self.state.unconfirmed(label):
            batch_id = await provider.find(self._metadata(chunk), list(chunk.lines), chunk.at)  # issue 33: ids too
            if batch_id is not None:
                self.state.submitted(chunk, batch_id)
            else:
                self.state.abandoned(chunk)

    def _provider(self, label: str, client: ModelClient) -> BatchProvider:
        if label not in self._providers:
            self._providers[label] = self.provider_for(client)
        return self._providers[label]

    async def _poll(self, watched: list[tuple[str, Chunk]]) -> dict[str, str]:
        """Wait until every chunk's batch is final, saying each one's state when it changes."""
        finals: dict[str, str] = {}
        shown: dict[str, str] = {}
        while len(finals) < len(watched):
            for label, chunk in watched:
                if chunk.chunk_id in finals or chunk.batch_id is None:
                    continue
                status = await self._providers[label].status(chunk.batch_id)
                line = f"{status.state} {status.succeeded + status.failed}/{status.total} done, {status.failed} failed"
                if shown.get(chunk.chunk_id) != line:
                    shown[chunk.chunk_id] = line
                    self.say(f"batch {chunk.batch_id} ({label}): {line}")
                if status.final:
                    finals[chunk.chunk_id] = status.state
            if len(finals) < len(watched):
                if not self.wait:
                    raise BatchesPending(
                        f"dialeval: {len(watched) - len(finals)} batch(es) still running ({self.lines} request(s) "
                        f"submitted now), kept in {self.run_dir}; re-run the same command to collect them and go on"
                    )
                await asyncio.sleep(self.poll_seconds)
        return finals

    async def _collect(self, label: str, chunk: Chunk, final: str) -> list[Answer]:
        """Every line's outcome, written to the run folder before anyone is answered."""
        assert chunk.batch_id is not None
        results = await self._providers[label].results(chunk.batch_id)
        got = {r.custom_id: r for r in results}
        answers = []
        for custom_id, key in chunk.lines.items():
            result = got.get(custom_id)
            if result is None:
                answers.append(Answer(key, label, "expired" if final == "expired" else "failed", None, f"no result line ({final})"))
            else:
                answers.append(Answer(key, label, result.outcome, result.response, result.error))
        self.state.collected(chunk, final, answers)
        return answers

    # -- answering the callers -----------------------------------------------------------

    def _settle(self, waiting: _Waiting, answer: Answer) -> None:
        if answer.outcome == "ok" and answer.response is not None:
            try:
                generation = call_steps.collect(waiting.client, waiting.call, answer.response)
            except Exception as err:  # an answer our code cannot read fails the call, as a live one would
                self._fail(waiting, err)
                return
            self._resolve(waiting, generation)
            return
        waiting.attempts += 1
        waiting.last_error = f"batch line {answer.outcome}: {answer.error or 'no answer'}"
        if waiting.attempts <= self.retries:  # into the next round
            self._pending[(waiting.client.label, waiting.key)] = waiting
            return
        error = BatchLineExpired if answer.outcome == "expired" else BatchLineFailed  # issue 33: say "expired"
        self._fail(waiting, error(f"{waiting.last_error} (after {waiting.attempts} batch attempts)"))

    def _resolve(self, waiting: _Waiting, generation: Generation, bill_each: bool = False) -> None:
        """The first caller gets the call billed; the same call asked again in the round is free
        (``bill_each``: a dry run bills every caller, as a live run would)."""
        again = generation if bill_each else dataclasses.replace(generation, cached=True, cost=0.0, uncached_cost=0.0)
        for n, (item, future) in enumerate(waiting.futures):
            if not future.done():
                self._waiting[item] -= 1
                future.set_result(generation if n == 0 else again)

    def _fail(self, waiting: _Waiting, err: BaseException) -> None:
        for item, future in waiting.futures:
            if not future.done():
                self._waiting[item] -= 1
                future.set_exception(err)

    async def finish(self) -> dict[str, Any] | None:
        """Stop the round driver, close the providers' connections and write ``rounds.json``
        for the report (which models ran as batches, at what rate, in how many rounds);
        ``None`` when nothing was batched."""
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()
        for provider in self._providers.values():
            with contextlib.suppress(Exception):  # a connection already gone changes nothing on disk
                await provider.close()
        models = dict(self._before.get("models") or {})
        for label, client in self.models.items():
            models[label] = {"dry_run": client.is_dry_run, "rate": batch_rate_note(client)}
        if not models:
            return None
        submitted = {c.round for c in self.state.chunks.values() if c.batch_id is not None}
        estimated = all(m["dry_run"] for m in models.values())
        summary = {
            "models": models,
            "rounds": max(len(submitted), self.rounds if estimated else 0),
            "batches": sum(1 for c in self.state.chunks.values() if c.batch_id is not None),
            "estimated": estimated,
        }
        self.state.save_rounds(summary)
        return summary


def batch_rate_note(client: ModelClient) -> str:
    """Where a batched model's rate comes from, as the report says it."""
    price = client.batch_price
    if price is None:
        return "no price known"
    return price.source or "the configured price"


def batch_rounds_for(models: dict[str, Any], run_dir: Path, **options: Any) -> BatchRounds | None:
    """The run's batch queue when any model it uses has ``batch: true``, else ``None``."""
    if not any(getattr(settings, "batch", False) for settings in models.values()):
        return None
    return BatchRounds(run_dir, **options)
