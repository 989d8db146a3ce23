"""A loaded local model and how it generates: messages to prompts, batches, stop rules.

:class:`LocalEngine` holds one tokenizer + model and generates a batch at a time on its
own worker thread; :class:`_Batcher` gathers concurrent requests for a few milliseconds
into batches of up to ``batch_size`` (see :mod:`dialeval.models.local_models`).
Loading lives in :mod:`dialeval.models.local_loading`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

from langchain_core.messages import BaseMessage

BATCH_WAIT_SECONDS = 0.02  # a batch of a local model takes seconds: waiting a little more for company is cheap

class LocalModelError(RuntimeError):
    """A local model that cannot be found or loaded; the message names the spec."""


# ---------------------------------------------------------------- messages -> text


def _image_text(block: dict[str, Any]) -> str:
    for holder in (block, block.get("image_url"), block.get("metadata")):
        if isinstance(holder, dict):
            for key in ("caption", "alt_text", "text"):
                if isinstance(holder.get(key), str) and holder[key].strip():
                    return f"[image: {holder[key].strip()}]"
    return "[image omitted]"


def content_text(content: str | list[Any]) -> str:
    """A message's content as plain text; image blocks become their caption (see module doc)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") in ("image_url", "image", "input_image"):
            parts.append(_image_text(block))
    return "\n".join(p for p in parts if p)


_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def split_prefill(messages: Sequence[BaseMessage]) -> tuple[Sequence[BaseMessage], str]:
    """A trailing AI message is the start of the answer to continue (a "prefill")."""
    if messages and messages[-1].type == "ai":
        return messages[:-1], content_text(messages[-1].content)
    return messages, ""


def chat_turns(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """LangChain messages -> ``[{"role", "content"}]`` for a tokenizer's chat template."""
    turns = []
    for m in messages:
        role = _ROLES.get(m.type) or getattr(m, "role", None) or "user"
        turns.append({"role": role, "content": content_text(m.content)})
    return turns


# ---------------------------------------------------------------- the loaded model


@dataclass
class Output:
    """One generated answer with its real token counts."""

    text: str
    finish_reason: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class Request:
    """One prompt to answer: its rendered text, the answer's start already in it, its schema."""

    prompt: Any  # the rendered prompt (text; a vision engine's prompts carry images too)
    prefill: str = ""  # answer text the prompt already ends with (it is part of the answer)
    schema: str | None = None  # the JSON schema the answer must follow, as canonical text


@dataclass
class LocalEngine:
    """A loaded tokenizer + model; generates one batch at a time on its own worker thread."""

    source: str
    tokenizer: Any
    model: Any
    load_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)  # one generation at a time
    _executor_lock: threading.Lock = field(default_factory=threading.Lock)
    _executor: ThreadPoolExecutor | None = None
    batch_sizes: deque[int] = field(default_factory=lambda: deque(maxlen=1000))  # recent, for tests and benchmarks
    _batchers: dict[tuple[int, float], _Batcher] = field(default_factory=dict)

    def batcher(self, batch_size: int, temperature: float) -> _Batcher:
        """The batch queue shared by every chat model over this engine with these settings:
        roles with different answer caps (a judge, the model under test) still share batches."""
        with self._executor_lock:
            key = (batch_size, temperature)
            if key not in self._batchers:
                self._batchers[key] = _Batcher(self, batch_size, temperature)
            return self._batchers[key]

    @property
    def executor(self) -> ThreadPoolExecutor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dialeval-local")
            return self._executor

    @property
    def eos_ids(self) -> set[int]:
        eos = self.model.generation_config.eos_token_id
        ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return ids

    def request(self, messages: Sequence[BaseMessage], prefill: str, schema: str | None) -> Request:
        """What to generate for ``messages`` (the answer continues ``prefill``)."""
        return Request(self.prompt(messages) + prefill, prefill, schema)

    def prompt(self, messages: Sequence[BaseMessage]) -> str:
        turns = chat_turns(messages)
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
        # Base models without a template: a plain transcript ending where the answer goes.
        return "".join(f"{t['role']}: {t['content']}\n" for t in turns) + "assistant:"

    @functools.cached_property
    def vocab_size(self) -> int:
        """The width of the model's logits (may exceed the tokenizer's, for padding)."""
        head = self.model.get_output_embeddings()
        if head is not None and getattr(head, "weight", None) is not None:
            return int(head.weight.shape[0])
        config = getattr(self.model.config, "text_config", None) or self.model.config
        return int(config.vocab_size)

    @functools.cached_property
    def grammars(self) -> Any:
        """Compiled JSON-schema grammars for this tokenizer (see :mod:`dialeval.models.local_grammar`)."""
        from dialeval.models.local_grammar import GrammarCache

        return GrammarCache(self.tokenizer, self.vocab_size, self.eos_ids)

    def prompt_tokens(self, request: Request) -> int:
        return len(self.tokenizer(request.prompt, add_special_tokens=False)["input_ids"])

    def encode(self, requests: list[Request]) -> Any:
        """The batch's model inputs, left-padded (generation continues at the right edge)."""
        return self.tokenizer(
            [r.prompt for r in requests], return_tensors="pt", padding=True, add_special_tokens=False
        )

    def generate(
        self, requests: list[Request], *, max_new_tokens: int | Sequence[int], temperature: float
    ) -> list[Output | Exception]:
        """Generate ``requests`` together, each up to its ``max_new_tokens`` (one for all, or
        one per request); a request too long for the model or with a prefill its schema
        rejects fails alone."""
        import torch

        caps = [max_new_tokens] * len(requests) if isinstance(max_new_tokens, int) else list(max_new_tokens)
        config = getattr(self.model.config, "text_config", None) or self.model.config
        limit = getattr(config, "max_position_embeddings", None)
        results: list[Output | Exception | None] = [None] * len(requests)
        ready: list[int] = []
        for i, request in enumerate(requests):
            n = self.prompt_tokens(request)
            if limit and n + caps[i] > limit:
                results[i] = LocalModelError(
                    f"{self.source}: prompt of {n} tokens + {caps[i]} new tokens exceeds the context of {limit}"
                )
            elif request.schema is not None and not self._fits(request):
                results[i] = LocalModelError(
                    f"{self.source}: the answer's start {request.prefill!r} does not fit its JSON schema"
                )
            else:
                ready.append(i)
        if ready:
            with self._lock, torch.inference_mode():
                outputs = self._generate_batch([requests[i] for i in ready], [caps[i] for i in ready], temperature)
            for i, out in zip(ready, outputs):
                results[i] = out
        return results  # type: ignore[return-value]

    def _fits(self, request: Request) -> bool:
        from dialeval.models.local_grammar import start_matcher

        return start_matcher(self.grammars.get(request.schema), request.prefill) is not None

    def _generate_batch(self, requests: list[Request], caps: list[int], temperature: float) -> list[Output]:
        from transformers import LogitsProcessorList, StoppingCriteriaList

        self.batch_sizes.append(len(requests))
        enc = self.encode(requests).to(self.model.device)
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": temperature}
            if temperature > 0
            else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        )
        start = enc["input_ids"].shape[1]
        # unconstrained answers that continue an opened JSON object end where it closes
        json_open = [r.schema is None and r.prefill.lstrip().startswith("{") for r in requests]
        closer = JsonObjectEnd(self.tokenizer, start, json_open)
        criteria: list[Any] = [closer] if any(json_open) else []
        if len(set(caps)) > 1:
            criteria.append(RowLimit(start, caps))
        processors = None
        if any(r.schema is not None for r in requests):
            from dialeval.models.local_grammar import SchemaConstraint

            grammars = [self.grammars.get(r.schema) if r.schema is not None else None for r in requests]
            processors = LogitsProcessorList([SchemaConstraint(grammars, [r.prefill for r in requests], self.vocab_size)])
        pad = self.tokenizer.pad_token_id
        generated = self.model.generate(
            **enc,
            max_new_tokens=max(caps),
            pad_token_id=pad,
            use_cache=True,
            stopping_criteria=StoppingCriteriaList(criteria) if criteria else None,
            logits_processor=processors,
            **sampling,
        )
        eos = self.eos_ids
        outputs = []
        for i, (row, mask) in enumerate(zip(generated[:, start:].tolist(), enc["attention_mask"])):
            row, max_new_tokens = row[: caps[i]], caps[i]  # a row stopped at its own cap is padded after it
            if closer.closed_at[i] is not None:  # the JSON answer is complete: nothing after it counts
                tokens, finish, end = row[: closer.closed_at[i]], "stop", None
            else:
                end = next((j for j, tok in enumerate(row) if tok in eos), None)
                if end is None:
                    tokens, finish = row, "length" if len(row) >= max_new_tokens else "stop"
                else:
                    tokens, finish = row[:end], "stop"
            outputs.append(
                Output(
                    text=self.tokenizer.decode(tokens, skip_special_tokens=True),
                    finish_reason=finish,
                    input_tokens=int(mask.sum()),
                    output_tokens=len(tokens) + (end is not None),
                )
            )
        return outputs


class RowLimit:
    """Stops each row of a batch at its own answer cap (``caps[i]`` new tokens)."""

    def __init__(self, start: int, caps: list[int]):
        self.start = start
        self.caps = caps

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        generated = input_ids.shape[1] - self.start
        return torch.tensor([generated >= cap for cap in self.caps], dtype=torch.bool, device=input_ids.device)


class JsonObjectEnd:
    """Stops each answer that continues an opened JSON object once that object closes.

    Tracks brace depth outside strings token by token; ``closed_at[i]`` is the number of
    generated tokens of row i up to and including the closing brace (``None`` if open).
    """

    def __init__(self, tokenizer: Any, start: int, rows: list[bool]):
        self.tokenizer = tokenizer
        self.start = start
        self.active = list(rows)
        self.state = [(1, False, False) for _ in rows]  # depth, inside a string, escaped
        self.closed_at: list[int | None] = [None] * len(rows)

    def _feed(self, i: int, text: str) -> bool:
        depth, in_string, escaped = self.state[i]
        for ch in text:
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return True
        self.state[i] = (depth, in_string, escaped)
        return False

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        generated = input_ids.shape[1] - self.start
        for i in range(input_ids.shape[0]):
            if self.closed_at[i] is not None:
                done[i] = True
            elif self.active[i] and generated > 0:
                if self._feed(i, self.tokenizer.decode(input_ids[i, -1:], skip_special_tokens=True)):
                    self.closed_at[i] = generated
                    done[i] = True
        return done


# ---------------------------------------------------------------- batching


@dataclass
class _Pending:
    request: Request
    max_new_tokens: int
    future: asyncio.Future


@dataclass
class _LoopQueue:
    """Requests waiting on one event loop; at most one batch of them runs at a time."""

    pending: list[_Pending] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    busy: bool = False
    task: asyncio.Task | None = None  # the running batch; referenced so it is not garbage-collected


class _Batcher:
    """Gathers concurrent requests into batches and runs them on the engine's thread."""

    def __init__(self, engine: LocalEngine, batch_size: int, temperature: float):
        self.engine = engine
        self.batch_size = batch_size
        self.temperature = temperature
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = weakref.WeakKeyDictionary()

    async def submit(self, request: Request, max_new_tokens: int) -> Output:
        loop = asyncio.get_running_loop()
        queue = self._queues.setdefault(loop, _LoopQueue())
        future = loop.create_future()
        queue.pending.append(_Pending(request, max_new_tokens, future))
        if not queue.busy:
            if len(queue.pending) >= self.batch_size:
                self._start(loop, queue)
            elif queue.timer is None:
                queue.timer = loop.call_later(BATCH_WAIT_SECONDS, self._start, loop, queue)
        return await future

    def _start(self, loop: asyncio.AbstractEventLoop, queue: _LoopQueue) -> None:
        if queue.timer is not None:
            queue.timer.cancel()
            queue.timer = None
        queue.pending = [p for p in queue.pending if not p.future.done()]  # drop cancelled callers
        if queue.busy or not queue.pending:
            return
        batch, queue.pending = queue.pending[: self.batch_size], queue.pending[self.batch_size :]
        queue.busy = True
        queue.task = loop.create_task(self._run(loop, queue, batch))

    async def _run(self, loop: asyncio.AbstractEventLoop, queue: _LoopQueue, batch: list[_Pending]) -> None:
        try:
            call = functools.partial(
                self.engine.generate,
                [p.request for p in batch],
                max_new_tokens=[p.max_new_tokens for p in batch],
                temperature=self.temperature,
            )
            results: list[Any] = await loop.run_in_executor(self.engine.executor, call)
        except Exception as err:  # the whole batch failed (e.g. out of memory)
            results = [err] * len(batch)
        finally:
            queue.busy = False
        for pending, result in zip(batch, results):
            if pending.future.done():
                continue
            if isinstance(result, Exception):
                pending.future.set_exception(result)
            else:
                pending.future.set_result(result)
        if queue.pending:  # these waited while the batch ran: go now
            self._start(loop, queue)
