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
    from dialeval.usage import encode

    tokens: list[int] = []
    for role, text in parts:
        tokens += encode(f"<|{role}|>\n{text}\n")
    return tokens


def with_cache_breakpoints(messages: Sequence[Any]) -> list[Any]:
    """``messages`` with Anthropic cache breakpoints on their stable prefix.

    Anthropic reuses a cached prefix only where a client marked one. Two marks cover
    our protocols: the end of the system prompt (static instructions, shared by every
    call of an agent), and the end of the message before the last one (a conversation
    so far, which the next call repeats before its new turn). The last message, new in
    every call, is left unmarked, so nothing is paid for caching what is never reused.
    """
    out = list(messages)
    for i, message in enumerate(out):
        if message.type == "system":
            out[i] = _marked(message)
    if len([m for m in out if m.type != "system"]) >= 2 and out[-2].type != "system":
        out[-2] = _marked(out[-2])
    return out


def _marked(message: Any) -> Any:
    content = message.content
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    if not blocks:
        return message
    last = blocks[-1] if isinstance(blocks[-1], dict) else {"type": "text", "text": str(blocks[-1])}
    blocks[-1] = {**last, "cache_control": {"type": "ephemeral"}}
    return message.model_copy(update={"content": blocks})
