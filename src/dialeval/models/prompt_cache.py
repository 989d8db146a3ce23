"""How much of a prompt an API would serve from its prompt cache: an emulator.

OpenAI caches prompt prefixes automatically: a request whose first 1,024 tokens or more
match an earlier request's reuses them, counted in steps of 128 tokens. Anthropic does
the same at the breakpoints a client marks. Protocols with a growing conversation (a
session judge that sees every earlier turn) send the same prefix again and again, so a
cost estimate that ignores caching overstates the bill. This emulator follows OpenAI's
rule; the dry-run backend uses it to estimate the cached share, and the test server
uses it to report ``cached_tokens`` as the real API does.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

MIN_CACHED = 1024  # the shortest prefix OpenAI caches
STEP = 128  # cached prefixes grow in steps of this many tokens


class PrefixCache:
    """Remembers the token prefixes seen so far, at every 128-token boundary."""

    def __init__(self, *, min_cached: int = MIN_CACHED, step: int = STEP, capacity: int = 2_000_000):
        self.min_cached = min_cached
        self.step = step
        self.capacity = capacity
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def _boundaries(self, tokens: Sequence[int]) -> list[tuple[int, bytes]]:
        """(length, digest of tokens[:length]) for every cacheable prefix length."""
        out: list[tuple[int, bytes]] = []
        digest = hashlib.blake2b(digest_size=16)
        for end in range(self.step, len(tokens) + 1, self.step):
            digest.update(b"".join(t.to_bytes(4, "little") for t in tokens[end - self.step : end]))
            if end >= self.min_cached:
                out.append((end, digest.copy().digest()))
        return out

    def lookup_and_add(self, tokens: Sequence[int]) -> int:
        """Tokens of ``tokens`` a prefix cache would serve; then remember this prompt."""
        boundaries = self._boundaries(tokens)
        with self._lock:
            hit = 0
            for length, key in boundaries:
                if key not in self._seen:
                    break
                hit = length
            if len(self._seen) + len(boundaries) > self.capacity:
                self._seen.clear()  # a crude bound on memory; estimates only get more cautious
            self._seen.update(key for _, key in boundaries)
        return hit


def prompt_tokens(parts: Sequence[tuple[str, str]]) -> list[int]:
    """Token ids of a prompt given as (role, text) pairs, with cl100k as the stand-in BPE."""
    from dialeval.models.usage import encode

    tokens: list[int] = []
    for role, text in parts:
        tokens += encode(f"<|{role}|>\n{text}\n")
    return tokens


STABLE_PREFIX = "dialeval_stable_prefix"  # additional_kwargs key: where a message's reusable part ends


def mark_stable_prefix(message: Any, ends: Sequence[int]) -> Any:
    """``message`` noting where its reusable part ends, for Anthropic's breakpoints.

    A single-turn prompt can grow inside its last message (a session judge's earlier
    turns, a judge's pictures of the dialogue). ``ends`` are the boundaries of its
    stable parts, in order: character offsets into a text message, or block counts of a
    message made of blocks; the last one ends the part the next call repeats. The note
    lives in ``additional_kwargs``, which no provider receives; only
    :func:`with_cache_breakpoints` reads it, so other backends get the message unchanged.
    """
    kept = sorted({e for e in ends if e > 0})
    return message.model_copy(update={"additional_kwargs": {**message.additional_kwargs, STABLE_PREFIX: kept}}) if kept else message


def with_cache_breakpoints(messages: Sequence[Any]) -> list[Any]:
    """``messages`` with Anthropic cache breakpoints on their stable prefix.

    Anthropic reuses a cached prefix only where a client marked one. Three marks cover
    our protocols: the end of the system prompt (static instructions, shared by every
    call of an agent), the end of the message before the last one (a conversation so
    far, which the next call repeats before its new turn), and, in a message noted by
    :func:`mark_stable_prefix`, the end of its stable part, cut into blocks at every
    noted boundary so that the next call, whose stable part is longer, still finds the
    earlier boundary (Anthropic looks for hits at block boundaries only). What is new in
    every call is left unmarked, so nothing is paid for caching what is never reused.
    """
    out = [_split_marked(m, m.additional_kwargs[STABLE_PREFIX]) if m.additional_kwargs.get(STABLE_PREFIX) else m for m in messages]
    for i, message in enumerate(out):
        if message.type == "system":
            out[i] = _marked(message)
    if len([m for m in out if m.type != "system"]) >= 2 and out[-2].type != "system":
        out[-2] = _marked(out[-2])
    return out


def _split_marked(message: Any, ends: list[int]) -> Any:
    """The message as blocks cut at ``ends``, the block that closes the stable part marked."""
    content = message.content
    if isinstance(content, str):
        cuts = [0, *[e for e in ends if e < len(content)]]
        blocks: list[Any] = [{"type": "text", "text": content[a:b]} for a, b in zip(cuts, cuts[1:])]
        last = len(blocks) - 1
        blocks.append({"type": "text", "text": content[cuts[-1]:]})
    else:
        blocks = [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
        last = min(ends[-1], len(blocks)) - 1
    if last < 0:
        return message
    blocks[last] = {**blocks[last], "cache_control": {"type": "ephemeral"}}
    kwargs = {k: v for k, v in message.additional_kwargs.items() if k != STABLE_PREFIX}
    return message.model_copy(update={"content": blocks, "additional_kwargs": kwargs})


def _marked(message: Any) -> Any:
    content = message.content
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    if not blocks:
        return message
    last = blocks[-1] if isinstance(blocks[-1], dict) else {"type": "text", "text": str(blocks[-1])}
    blocks[-1] = {**last, "cache_control": {"type": "ephemeral"}}
    return message.model_copy(update={"content": blocks})
