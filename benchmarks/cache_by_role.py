"""Where a dry run's uncached input tokens go, per agent: the diagnosis behind prompt_caching.py.

Every prompt goes through two emulators: the real rule (OpenAI: prefixes of 1,024 tokens
and more, 128-token steps) and a fine one (no minimum, 16-token steps) that shows what
an earlier prompt shared at all. Per agent, the uncached tokens then split into
- new: text no earlier prompt began with (a first prompt, the new turn, a changed note);
- under 1024: shared with an earlier prompt, but less than the 1,024 tokens OpenAI needs;
- steps: shared, but past the last 128-token step.
A shared prefix that a later prompt rewrites (a turn counter or the new question placed
before the history) shows up as "new": the diagnosis is then in ``rewritten``, the
tokens of the same agent's previous prompt the next one does not begin with (items run
one at a time, so consecutive prompts of an agent belong to one item).
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any
from unittest import mock

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.prompt_cache import MIN_CACHED, STEP, PrefixCache
from dialeval.evaluation import run


def _calling_agent() -> str:
    """The agent name of the ``ask``/``ask_text`` call that sent this prompt (its ``agent`` argument)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name in ("ask", "ask_text") and isinstance(frame.f_locals.get("agent"), str):
            return frame.f_locals["agent"]
        frame = frame.f_back
    return "?"


class RecordingCache(PrefixCache):
    """The emulator, logging per prompt: agent, tokens, cached, shared at all, rewritten."""

    def __init__(self, log: list[dict[str, Any]], **kwargs: Any):
        super().__init__(**kwargs)
        self.log = log
        self.fine = PrefixCache(min_cached=0, step=16)
        self.previous: dict[str, list[int]] = {}

    def lookup_and_add(self, tokens: Any) -> int:
        hit = super().lookup_and_add(tokens)
        agent = _calling_agent()
        before = self.previous.get(agent, [])
        common = next((i for i, (a, b) in enumerate(zip(before, tokens)) if a != b), min(len(before), len(tokens)))
        self.previous[agent] = list(tokens)
        self.log.append({"agent": agent, "tokens": len(tokens), "hit": hit, "shared": self.fine.lookup_and_add(tokens),
                         "rewritten": len(before) - common})
        return hit


def measure(bench: str, data: Path, out: Path, model: str, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A dry run of ``bench`` on ``data``, items one at a time: (its usage totals, the per-prompt log)."""
    log: list[dict[str, Any]] = []
    config = RunConfig(  # a folder of its own: a run already in ``out`` would be resumed, not measured
        model=ModelSettings(spec=f"dry-run:{model}"), output_dir=tempfile.mkdtemp(dir=out), cache_path=None, preflight=False,
        options=options or {}, concurrency=1,
    )
    # a fresh client, so this run's prompts meet an empty cache and are logged (clients are process-wide)
    with mock.patch("dialeval.models.client.PrefixCache", lambda: RecordingCache(log)), mock.patch.dict("dialeval.models.client._CLIENTS", clear=True):
        result = run(bench, data, config, progress=False)
    return result.metrics["run"]["usage"], log


def by_agent(log: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per agent: requests, input, cached, and the uncached tokens split as the module doc says."""
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for entry in log:
        row = rows[entry["agent"]]
        row["requests"] += 1
        row["input"] += entry["tokens"]
        row["cached"] += entry["hit"]
        shared = max(entry["shared"], entry["hit"])
        row["new"] += entry["tokens"] - shared
        row["under_1024"] += shared if entry["hit"] == 0 else 0
        row["steps"] += shared - entry["hit"] if entry["hit"] else 0
        row["rewritten"] += entry["rewritten"]
        row["ceiling"] += entry["tokens"] // STEP * STEP if entry["tokens"] >= MIN_CACHED else 0
    return {agent: dict(row) for agent, row in sorted(rows.items())}


def print_agents(label: str, log: list[dict[str, Any]]) -> None:
    print(f"\n{label}\n")
    print("| agent | requests | input tokens | cached | new | shared, under 1024 | shared, past the last 128 step "
          "| rewritten per request | ceiling (requests >= 1,024 tokens) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for agent, r in by_agent(log).items():
        pct = lambda k: f"{100 * r[k] / r['input']:.1f}%" if r["input"] else "-"  # noqa: E731
        print(f"| {agent} | {r['requests']} | {r['input']:,} | {pct('cached')} | {pct('new')} | {pct('under_1024')} "
              f"| {pct('steps')} | {r['rewritten'] / r['requests']:.0f} | {pct('ceiling')} |")
