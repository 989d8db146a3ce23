"""dialeval's own CPU per judge call on VDAct's released file, without the HTTP transport.

The workers benchmark (``workers.py``) times VDAct's session judge against the stub
server; there the HTTP library's connection pool and the stub's timing move the CPU per
call from run to run. This script replaces the one function that puts a request on the
wire (``openai_direct.send_body``) by an instant in-process answer built as the stub
builds it, so what is left is dialeval's own work per call (graph, prompt, cache key,
prompt store, parsing, records) and LangGraph's; ``answers`` runs the same way for
comparison. ``--profile`` adds CPU per call by package and dialeval module (cProfile's
own cost inflates every figure about twofold, the split stays readable).

With ``--bodies FILE`` the request bodies sent are written as JSON (one list), so two
versions of dialeval can be compared on what they send.

Usage: PYTHONPATH=$PWD/src:$PWD/benchmarks python benchmarks/vdact_cpu.py [--limit 450]
       [--repeats 3] [--skip answers] [--profile] [--bodies FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import json
import os
import pstats
import tempfile
import time
from pathlib import Path
from typing import Any

from workers import VDACT  # beside this file
from runner_overhead import write_items

STUB_URL = "http://127.0.0.1:9/v1"  # never reached: the transport is replaced


def fake_transport(bodies: list[dict[str, Any]]) -> None:
    """Answer every chat completion at once, as the benchmarks' stub would (a VDAct rating,
    else the answers judge's JSON), recording each body."""
    from dialeval.models import openai_direct
    from dialeval.testing.openai_server import prompt_of

    count = 0

    async def send_body(client: Any, body: dict[str, Any]) -> dict[str, Any]:
        nonlocal count
        count += 1
        bodies.append(body)
        await asyncio.sleep(0)  # a real request gives the event loop to the other items
        prompt = prompt_of(body)
        text = "Seems right. So rating=2" if "rating" in prompt else '{"rationale": "fine", "score": 4}'
        answer = {
            "id": f"chatcmpl-{count}", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": max(1, len(text) // 4),
                      "total_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0}},
        }
        return dict(openai_direct._dumped(answer, openai_direct._completion_type()))

    from dialeval.models.backends import openai as backend

    openai_direct.send_body = backend.send_body = send_body  # type: ignore[assignment]


def one_run(benchmark: str, data: Path, out: Path, limit: int | None, options: dict[str, Any]) -> tuple[float, int]:
    """(CPU seconds of ``run()``, calls) for one run in a fresh folder."""
    from dialeval.config import ModelSettings, RunConfig
    from dialeval.run.runner import run

    config = RunConfig(model=ModelSettings(spec="openai-compatible:stub", base_url=STUB_URL), output_dir=str(out),
                       concurrency=64, workers=1, cache_path=None, options=options, limit=limit, preflight=False)
    cpu = time.process_time()
    result = run(benchmark, data, config, progress=False)
    cpu = time.process_time() - cpu
    assert result.complete, result
    return cpu, int(result.metrics["run"]["usage"]["calls"])


def by_module(profile: cProfile.Profile, calls: int) -> None:
    """Own CPU (cProfile's tottime) per call, grouped by package, and by module inside dialeval."""
    spent: collections.Counter[str] = collections.Counter()
    for (path, _, _), (_, _, own, _, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if "site-packages/" in path:
            key = path.split("site-packages/")[1].split("/")[0]
        elif "/dialeval/" in path:
            key = "dialeval/" + path.split("/dialeval/")[1]
        elif path.startswith(("~", "<")):
            key = "(built-in functions)"
        else:
            key = "stdlib " + path.rsplit("/", 1)[-1]
        spent[key] += own
    print(f"    profiled: {1000 * sum(spent.values()) / calls:.2f} ms per call in all")
    for key, own in spent.most_common(25):
        print(f"    {1000 * own / calls:7.3f} ms  {key}")


def measure(label: str, benchmark: str, data: Path, tmp: Path, args: argparse.Namespace, options: dict[str, Any]) -> None:
    one_run(benchmark, data, tmp / f"{label}-warm", 2, options)  # imports, templates, first-call work
    figures = []
    for n in range(args.repeats):
        cpu, calls = one_run(benchmark, data, tmp / f"{label}-{n}", args.limit, options)
        figures.append(1000 * cpu / calls)
    print(f"  {label:<28} {calls} calls  CPU {min(figures):.2f} ms/call (min of {args.repeats}; all "
          f"{', '.join(f'{f:.2f}' for f in figures)})  load {os.getloadavg()[0]:.1f}", flush=True)
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        _, calls = one_run(benchmark, data, tmp / f"{label}-profiled", args.limit, options)
        profile.disable()
        by_module(profile, calls)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="VDAct dialogues / answers items (default: all 450 / 4,524)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", default="", help="answers and/or vdact, comma-separated")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--bodies", help="write the request bodies VDAct's run sent here (JSON)")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    bodies: list[dict[str, Any]] = []
    fake_transport(bodies)
    with tempfile.TemporaryDirectory() as tmp:
        if "vdact" not in skip:
            if not VDACT.exists():
                print(f"VDAct: skipped, {VDACT} is absent (set DIALEVAL_SHARED)")
            else:
                measure("vdact session judge", "vdact", VDACT, Path(tmp), args, {"judge": "session"})
                if args.bodies:
                    bodies.clear()
                    one_run("vdact", VDACT, Path(tmp) / "bodies", args.limit, {"judge": "session"})
                    Path(args.bodies).write_text(json.dumps(bodies))
        if "answers" not in skip:
            items = write_items(Path(tmp), args.limit * 10 if args.limit else 4524)
            measure("answers", "answers", items, Path(tmp), args, {})


if __name__ == "__main__":
    main()
