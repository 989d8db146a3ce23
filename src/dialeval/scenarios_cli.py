"""`dialeval scenarios --from FILE`: its arguments and what it prints (registered in ``dialeval.cli``).

The suite is written by the simulation benchmark (``suite_writer``, reached through the
registry: the command line imports no protocol's internals).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    w = sub.add_parser("scenarios", help="write a simulation scenario suite from a document (a policy, a help page), to review")
    w.add_argument("--from", dest="source", required=True, metavar="FILE", help="the document (text or markdown)")
    w.add_argument("--n", type=int, default=40, help="how many scenarios (default 40)")
    w.add_argument("--model", default=None, help="model spec (default: the config's or smollm2)")
    w.add_argument("--base-url", help="base URL (openai-compatible servers)")
    w.add_argument("--config", help="YAML config file (models, cache)")
    w.add_argument("--out", default=None, help="the suite to write (default: <document>.scenarios.yaml)")
    w.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")


def command(args: argparse.Namespace) -> int:
    """`dialeval scenarios --from FILE`: the simulation benchmark writes a suite from the document."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.config import load_config

    if args.n < 1:
        print("dialeval: error: --n must be at least 1", file=sys.stderr)
        return 2
    model = {"spec": args.model, **({"base_url": args.base_url} if args.base_url else {})} if args.model else None
    config = load_config(args.config, model=model)
    if args.no_cache:
        config = config.model_copy(update={"cache_path": None})
    writer = get_benchmark("simulation").suite_writer
    assert writer is not None
    source = Path(args.source)
    out = Path(args.out) if args.out else source.with_suffix(".scenarios.yaml")
    summary = writer(source, out, args.n, config)
    print(f"Wrote {summary['written']} scenarios to {summary['out']} ({summary['calls']} calls, {summary['dropped']} dropped "
          f"as invalid or repeated; every prompt and answer in {summary['out']}.generation.json). Review them before use.")
    return 0
