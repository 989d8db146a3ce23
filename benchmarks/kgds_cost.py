"""Requests and tokens per KGDS sample and pattern, from a dry run (no model is called).

    python benchmarks/kgds_cost.py [DATA] [--limit N] [--price-as gpt-4o-mini]

Runs the `kgds` protocol with the `dry-run:<price-as>` backend and prints, per pattern,
the requests and tokens a real run would send per sample, and the estimated cost of the
evaluated samples and of the whole file. Dry-run placeholders are worst-case shaped
(every opinion unknowable, the EBS never equal to gold), so the figures are upper bounds
on calls; retries after unreadable answers are not counted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict

from dialeval.config import ModelSettings, RunConfig
from dialeval.protocols.kgds.data import load_kgds
from dialeval.evaluation import run
from dialeval.run.folder import RESULTS

ABS_ONLY = ("kgds.fact_verifier", "kgds.fact_decomposer")
EBS_ONLY = ("kgds.feedback_judge",)


def pattern_of(agent: str) -> str:
    if agent.endswith(".ebs") or agent in EBS_ONLY:
        return "EBS-AOS"
    if agent.endswith(".abs") or agent in ABS_ONLY:
        return "ABS-AOS"
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default="../shared/data/kgds/KGDS.json")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--price-as", default="gpt-4o-mini")
    args = parser.parse_args()
    total_samples = len(load_kgds(args.data))
    with tempfile.TemporaryDirectory() as out:
        config = RunConfig(
            model=ModelSettings(spec=f"dry-run:{args.price_as}"), output_dir=out, cache_path=None, limit=args.limit
        )
        result = run("kgds", args.data, config, progress=False)
        rows = [json.loads(line) for line in (result.run_dir / RESULTS).read_text().splitlines() if line.strip()]
    n = len(rows)
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        for call in row["usage"]:
            s = sums[pattern_of(call["agent"])]
            s["requests"] += 1
            s["input"] += call["input_tokens"]
            s["output"] += call["output_tokens"]
            s["cost"] += call["cost"]
    print(f"dry run of {n} samples, priced as {args.price_as} (reflection_rounds=1, both patterns, feedback judge on)")
    print(f"{'pattern':<10}{'requests/sample':>17}{'input tok/sample':>18}{'output tok/sample':>19}{'USD/sample':>12}")
    for pattern, s in sorted(sums.items()):
        print(f"{pattern:<10}{s['requests'] / n:>17.1f}{s['input'] / n:>18.0f}{s['output'] / n:>19.0f}{s['cost'] / n:>12.4f}")
    cost = sum(s["cost"] for s in sums.values())
    tokens = sum(s["input"] + s["output"] for s in sums.values())
    print(f"total for {n} samples: {tokens:.0f} tokens, USD {cost:.4f}")
    print(f"estimate for all {total_samples} samples: USD {cost / n * total_samples:.2f}")


if __name__ == "__main__":
    main()
