"""Schema-constrained decoding for local models: the answer follows its JSON schema token by token.

Why: a small local model asked for JSON often writes prose, a wrong label or a score out
of range, and its answer is lost as ``unparsed``. With the schema compiled to a grammar
(xgrammar, the engine vLLM and SGLang use), every generated token is masked to those
that keep the answer a valid prefix of the schema: enum labels, integer ranges
(``minimum``/``maximum``), array lengths (``minItems``/``maxItems``), required keys in
order, no extra keys, compact JSON (no free whitespace for a model to ramble in). A free
text field can still run to the token limit; that answer is ``truncated``, never
unreadable.

xgrammar is optional: without it, local models fall back to the JSON prefill (see
:mod:`dialeval.models.client`). It is installed with ``--no-deps`` by the Makefile, since its
declared ``triton`` dependency (about 1 GB) only serves GPU kernels; on CPU xgrammar
masks logits with its own kernel.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import threading
from typing import Any

XGRAMMAR = "xgrammar"
# free-text fields in which a judge explains itself; bounded by ``rationale_chars``
REASONING_FIELDS = frozenset({"rationale", "explanation", "reason", "reasoning", "justification"})


@functools.cache
def available() -> bool:
    """Whether xgrammar can be imported (checked once, without importing it)."""
    return importlib.util.find_spec(XGRAMMAR) is not None


def bound_free_text(schema: dict[str, Any], chars: int) -> dict[str, Any]:
    """``schema`` with the room for free text a tiny model loops in taken away: every
    string field named in :data:`REASONING_FIELDS` (at any depth) gets ``maxLength:
    chars`` unless it sets a tighter bound, and an object that lists its properties
    takes no extra keys (``additionalProperties: false``).

    Why: a tiny model asked to explain itself first often repeats a phrase until the
    token limit, or keeps inventing keys after the scores it was asked for, and the
    answer is cut off. Under the grammar the string closes at ``chars`` characters and the
    object after its last listed key, and the answer stays valid JSON, so the verdict is
    read. Only local decoding sees this schema: API requests, prompts and their hashes
    are unchanged, and readers ignore extra keys anyway."""
    import copy

    out = copy.deepcopy(schema)
    _bound(out, chars)
    return out


def _bound(node: Any, chars: int) -> None:
    if isinstance(node, list):
        for value in node:
            _bound(value, chars)
        return
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict) and properties and node.get("type", "object") == "object":
        node["additionalProperties"] = False
        for name, field in properties.items():
            if name in REASONING_FIELDS and isinstance(field, dict) and field.get("type") == "string":
                field["maxLength"] = min(chars, field.get("maxLength", chars))
    for value in node.values():
        _bound(value, chars)


def schema_text(schema: dict[str, Any] | str) -> str:
    """A JSON schema as a canonical string: the key that compiled grammars are cached under."""
    return schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)


class GrammarCache:
    """Compiles JSON schemas for one tokenizer, once per schema (compiling takes milliseconds)."""

    def __init__(self, tokenizer: Any, vocab_size: int, stop_ids: set[int]):
        import xgrammar as xgr

        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=sorted(stop_ids))
        self.vocab_size = vocab_size
        self._compiler = xgr.GrammarCompiler(info, max_threads=1)
        self._compiled: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, schema: str) -> Any:
        with self._lock:
            if schema not in self._compiled:
                # compact separators and no free whitespace: nothing for a small model to loop on
                self._compiled[schema] = self._compiler.compile_json_schema(
                    schema, any_whitespace=False, strict_mode=True
                )
            return self._compiled[schema]


def start_matcher(grammar: Any, prefill: str) -> Any | None:
    """A matcher positioned after ``prefill`` (answer text already written), or ``None``
    when the prefill does not fit the grammar."""
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(grammar)
    return matcher if not prefill or matcher.accept_string(prefill) else None


class SchemaConstraint:
    """A transformers logits processor with one grammar matcher per constrained row of a batch.

    Rows without a grammar (free-text answers generated in the same batch) are left
    alone. ``prefills[i]`` is answer text already in row i's prompt: its matcher starts
    after it. Use one instance per ``generate()`` call.
    """

    def __init__(self, grammars: list[Any | None], prefills: list[str], vocab_size: int):
        import xgrammar as xgr

        self._xgr = xgr
        self.matchers: dict[int, Any] = {}
        for i, (grammar, prefill) in enumerate(zip(grammars, prefills)):
            if grammar is None:
                continue
            self.matchers[i] = start_matcher(grammar, prefill)
            if self.matchers[i] is None:
                raise ValueError(f"the answer's start {prefill!r} does not fit its JSON schema")
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self.vocab_size = vocab_size
        self._started = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._started:  # the token chosen at the previous step
            last = input_ids[:, -1].tolist()
            for i, matcher in self.matchers.items():
                if not matcher.is_terminated():
                    matcher.accept_token(last[i])
        self._started = True
        active = [i for i, m in self.matchers.items() if not m.is_terminated()]
        if not active:
            return scores
        for i in active:
            self.matchers[i].fill_next_token_bitmask(self.bitmask, i)
        device = scores.device
        masked = scores if device.type in ("cpu", "cuda") else scores.to("cpu")
        self._xgr.apply_token_bitmask_inplace(
            masked, self.bitmask.to(masked.device), vocab_size=self.vocab_size, indices=active
        )
        return masked.to(device)
