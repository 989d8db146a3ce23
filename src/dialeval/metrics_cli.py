"""`dialeval metrics` (model-free metrics of prediction files) and `dialeval list` (what is
registered): the commands that call no model, registered on the CLI by ``dialeval.cli``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, NoReturn

from dialeval.subcommands import Subcommands


def add_metrics_parser(sub: Subcommands) -> None:
    m = sub.add_parser(
        "metrics",
        help="model-free metrics of prediction files (e.g. BLEU, ROUGE-L, METEOR)",
        description="Model-free metrics: no model is called.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    m.add_argument("tool", metavar="TOOL", help="one of the tools below (a benchmark, or benchmark-tool such as mdseval-agreement)")
    m.add_argument("--predictions", nargs="+", help="prediction files, or run folders for mmdu")
    m.add_argument("--data", nargs="+", help="the benchmark's data file(s)")
    m.add_argument("--option", action="append", default=[], metavar="KEY=JSON")
    m.set_defaults(usage_error=m.error)  # usage mistakes found later print this command's usage line


# `dialeval metrics` tools: (name, arguments, what it prints). Kept here, not read from the
# registry, so that `--help` answers without importing every benchmark; a test checks
# that each name is a registered tool.
METRICS_TOOLS: tuple[tuple[str, str, str], ...] = (
    ("vdact", "--predictions FILE...", "BLEU, ROUGE-L, METEOR (+ SPICE, BERTScore, BARTScore when available) per system"),
    ("kgds", "--predictions FILE... --data KGDS.json", "BSP recall, precision and F1 of extractive background summaries"),
    ("mdseval-agreement", "--data FILE...", "agreement between the human annotators, per aspect"),
    ("mdseval-meki", "--data FILE", "MEKI (multimodal exclusive key information) per dialogue"),
    ("mdseval-select", "--data candidates.jsonl", "the most diverse summary-generation setups of a candidate pool"),
    ("mmdu", "--predictions RUN_DIR RUN_DIR...", "judge-vs-judge agreement of runs that judged the same answers"),
)


def _epilog() -> str:
    width = max(len(name) for name, _, _ in METRICS_TOOLS)
    lines = ["tools:"]
    for name, arguments, what in METRICS_TOOLS:
        lines += [f"  {name:<{width}}  {what}", f"  {'':<{width}}  dialeval metrics {name} {arguments}"]
    return "\n".join(lines)


def list_command() -> int:
    """`dialeval list`: what is registered, read from the registries."""
    from dialeval.benchmarks import available, get_benchmark
    from dialeval.models.client import BACKENDS

    print("Benchmarks:")
    names = available()
    for name in names:
        bench = get_benchmark(name)
        print(f"  {name:<12} {bench.title}")
    print("\nAgents (role -> name):")
    from dialeval.agents.base import AGENTS  # filled by the benchmarks' packages, imported above

    entries = sorted(AGENTS.values(), key=lambda e: (e.benchmark, e.role, e.name))
    where = max((len(f"[{e.benchmark}] {e.role}") for e in entries), default=0)  # columns as wide as their longest
    named = max((len(e.name) for e in entries), default=0)
    for entry in entries:
        print(f"  {f'[{entry.benchmark}] {entry.role}':<{where}} {entry.name:<{named}} {entry.summary}")
    print("\nModel roles (the keys of `models:` in a config; docs/models.md):")
    for name in names:
        bench = get_benchmark(name)
        print(f"  {f'[{name}]':<14} {', '.join(bench.model_roles or tuple(bench.roles)) or '(none: no model is called)'}")
    print("\nModel backends:")
    for backend, text in BACKENDS.items():
        print(f"  {backend:<18} {text}")
    return 0


def metrics_command(args: argparse.Namespace, options: dict[str, object]) -> int:
    """Usage mistakes (no such tool, no files) end as argparse's do: the usage line, exit 2."""
    from dialeval.benchmarks import KNOWN, get_benchmark

    name = args.tool
    names = [tool for tool, _, _ in METRICS_TOOLS]
    usage: Callable[[str], NoReturn] = args.usage_error
    if name not in names:
        family = [tool for tool in names if tool.startswith(f"{name}-")]
        if family:
            usage(f"{name}: choose one of its tools: {', '.join(family)} (e.g. dialeval metrics {family[0]} --data FILE)")
        usage(f"unknown tool {name!r}; choose from {', '.join(names)}")
    if name not in KNOWN:  # `mdseval-agreement`: the benchmark's tool `agreement`
        name, options["tool"] = name.split("-", 1)
    arguments = next(a for tool, a, _ in METRICS_TOOLS if tool == args.tool)
    bench = get_benchmark(name)
    assert bench.metrics_only is not None, f"{name} is listed as a metrics tool but has none"
    if "--predictions" in arguments:
        paths = args.predictions
        if args.data:  # kgds: the data file the predictions refer to
            options.setdefault("data", args.data[0] if len(args.data) == 1 else args.data)
    else:
        paths = args.data or args.predictions
    if not paths:
        usage(f"{args.tool}: give {arguments}")
    print(bench.metrics_only([Path(p) for p in paths], options))
    return 0
