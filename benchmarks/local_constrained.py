"""Schema-constrained decoding on the bundled SmolLM2: readable answers and speed, with and without.

Two measurements (``--part speed``, ``--part protocols`` or both):

- speed: 8 prompts generated together, once free and once under a JSON schema whose one
  string field lets every row run to the token limit (so both ways generate the same
  number of tokens); prints tokens/s each way and the slowdown.
- protocols: the KGDS demo (configs/kgds-demo.yaml on the bundled fixture) and the MMRC
  fixture (src/dialeval/fixtures/mmrc_smollm2.yaml) run "before" (no grammar: the JSON
  prefill that dialeval used until now, as when xgrammar is not installed) and "after"
  (the schema's grammar); prints, per agent, the share of answers that came back
  unparsed and truncated. Runs write to a temporary folder and bypass the response cache.

Run: ``.venv/bin/python benchmarks/local_constrained.py [--part speed|protocols|all]``.
On cores shared with other work, wall-clock figures vary; the CPU seconds are printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["rivers", "bicycles", "volcanoes", "libraries", "bees", "lighthouses", "chess", "bread"]


def speed(new_tokens: int) -> None:
    from dialeval.models.local_grammar import schema_text
    from dialeval.models.local_models import Request, load_engine

    started = time.perf_counter()
    engine = load_engine("smollm2")
    print(f"smollm2 loaded in {time.perf_counter() - started:.1f} s")
    from langchain_core.messages import HumanMessage

    prompts = [engine.prompt([HumanMessage(f"Write a long essay about {t} as JSON.")]) for t in TOPICS]
    essay = schema_text({"type": "object", "properties": {"essay": {"type": "string"}}, "required": ["essay"]})
    engine.generate([Request(prompts[0])], max_new_tokens=4, temperature=0)  # warm-up
    engine.grammars.get(essay)  # compile once, outside the timing (a few ms, cached per schema)
    rows = {}
    for label, schema in (("free", None), ("constrained", essay)):
        wall, cpu = time.perf_counter(), time.process_time()
        outputs = engine.generate([Request(p, "", schema) for p in prompts], max_new_tokens=new_tokens, temperature=0)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        tokens = sum(o.output_tokens for o in outputs)
        rows[label] = tokens / wall
        print(f"{label:12s} {tokens:5d} tokens in {wall:6.1f} s wall ({cpu:6.1f} s CPU): {tokens / wall:6.1f} tokens/s")
        if schema:
            readable = sum(1 for o in outputs if o.finish_reason == "length" or _is_json(o.text))
            print(f"{'':12s} rows that are a JSON prefix or whole JSON: {readable}/{len(outputs)}")
    print(f"slowdown under the grammar: {100 * (1 - rows['constrained'] / rows['free']):.1f}%")


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def protocols() -> None:
    import dialeval
    from dialeval.models import local_grammar

    runs = {
        "kgds": ("src/dialeval/fixtures/kgds_demo.json", "configs/kgds-demo.yaml"),
        "mmrc": ("src/dialeval/fixtures/mmrc_demo.json", "src/dialeval/fixtures/mmrc_smollm2.yaml"),
    }
    with tempfile.TemporaryDirectory() as out:
        for bench, (data, config) in runs.items():
            for label, grammar in (("before", False), ("after", True)):
                local_grammar.available.cache_clear()
                if not grammar:  # as when xgrammar is not installed: the JSON prefill
                    local_grammar.available = _never  # type: ignore[assignment]
                wall, cpu = time.perf_counter(), time.process_time()
                result = dialeval.evaluate(
                    bench, str(ROOT / data), config=str(ROOT / config), output_dir=f"{out}/{label}", cache_path=None
                )
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                local_grammar.available = _ORIGINAL
                usage = json.loads((result.run_dir / "usage.json").read_text())
                _print_shares(bench, label, usage, wall, cpu)


def _never() -> bool:
    return False


def _print_shares(bench: str, label: str, usage: dict, wall: float, cpu: float) -> None:
    total = {"calls": 0, "unparsed": 0, "truncated": 0}
    print(f"\n{bench} {label}: {wall:.0f} s wall, {cpu:.0f} s CPU")
    print(f"  {'agent':32s} calls  unparsed  truncated")
    for agent, a in usage["per_agent"].items():
        if a["calls"] and agent.split(".")[-1] not in ("reply", "answer"):  # free-text answers have no schema
            print(f"  {agent:32s} {a['calls']:5d}  {a['unparsed']:8d}  {a['truncated']:9d}")
            for key in total:
                total[key] += a[key]
    n = total["calls"] or 1
    print(
        f"  {'all structured calls':32s} {total['calls']:5d}  {100 * total['unparsed'] / n:7.1f}%  {100 * total['truncated'] / n:8.1f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["speed", "protocols", "all"], default="all")
    parser.add_argument("--new-tokens", type=int, default=64)
    args = parser.parse_args()
    if args.part in ("speed", "all"):
        speed(args.new_tokens)
    if args.part in ("protocols", "all"):
        protocols()


if __name__ == "__main__":
    from dialeval.models import local_grammar

    _ORIGINAL = local_grammar.available
    main()
