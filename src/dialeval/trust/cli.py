"""`dialeval trust`: the command's arguments and what it prints (registered in ``dialeval.cli``)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from dialeval.trust.probe_registry import PROBES
from dialeval.subcommands import Subcommands


def add_parser(sub: Subcommands) -> None:
    t = sub.add_parser("trust", help="judge labelled units with candidate judges: agreement, bias probes, cost, a recommendation")
    t.add_argument("--data", required=True, help="the conversations (dialogue benchmark's format)")
    t.add_argument("--labels", required=True, help="human labels (id, turn, criterion, score; several annotators allowed)")
    t.add_argument("--rubric", required=True, help="the rubric YAML (or a built-in rubric's name)")
    t.add_argument("--judge", action="append", default=[], metavar="SPEC", help="a candidate judge's model spec (repeatable)")
    t.add_argument("--candidates", metavar="FILE", help="YAML `candidates:` list of {model, context, template, name}")
    t.add_argument("--base-url", help="base URL for every --judge (openai-compatible servers)")
    t.add_argument("--option", action="append", default=[], metavar="KEY=JSON", help="dialogue option for every run, e.g. context=notes")
    t.add_argument("--tolerance", type=float, default=0.05, help="how far below the best mean alpha a candidate may be (default 0.05)")
    t.add_argument("--repeats", type=int, default=2, help="readings of each unit for the consistency probe (default 2; 1: none)")
    t.add_argument("--probes", default=",".join(PROBES), help=f"comma-separated probes to run (default: {','.join(PROBES)}; a --plugin may register more)")
    t.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import MODULE first: it registers probes of its own (docs/extending.md)")
    t.add_argument("--needle-min-replies", type=int, default=3, help="needle: conversations with at least this many replies")
    t.add_argument("--output-dir", default="trust", help="where card folders go (default: trust)")
    t.add_argument("--id", help="the card's folder name (default: derived from data, labels, rubric and candidates)")
    t.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    t.add_argument("--dry-run", action="store_true", help="price every run of the card and stop (no model is called)")
    t.add_argument("--budget", type=dollars, metavar="USD",
                   help="stop before the first call if the dry run prices the card above this (a candidate without a price "
                        "needs its price in --candidates or --max-calls)")
    t.add_argument("--max-calls", type=int, metavar="N", help="stop before the first call if the dry run counts more model calls")
    t.add_argument("--cascades", action="store_true",
                   help="also put on the card a cascade from the cheapest judge to each dearer one (plain and calibrated) and a jury of all")
    t.add_argument("--corpus", action="store_true",
                   help="then judge every conversation of --data with the recommended judge: prediction-powered means")
    from dialeval.trust.labelling.server import add_parser as add_label

    add_label(sub)  # `dialeval label`: the labels a card reads


def dollars(text: str) -> float:
    """A budget: a finite amount, 0 or more (``nan`` or ``inf`` would bound nothing)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of dollars") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite amount of dollars, 0 or more")
    return value


def command(args: argparse.Namespace, options: dict[str, object]) -> int:
    """Build the card; exit 1 when some items failed (the card says which; a re-run retries).
    ``dialeval label`` comes here too (the two commands are registered together)."""
    if args.command == "label":
        from dialeval.trust.labelling.server import command as label

        return label(args)
    from dialeval.errors import ConfigError
    from dialeval.trust.build import TrustSettings, build
    from dialeval.trust.candidates import candidates_of

    from dialeval.plugins import load_plugins
    from dialeval.trust.probe_catalog import all_probes

    load_plugins(args.plugin)  # modules that register probes of their own
    probes = tuple(p.strip() for p in args.probes.split(",") if p.strip())
    unknown = [p for p in probes if p not in all_probes()]
    if unknown:
        raise ConfigError(f"--probes: unknown probe {unknown[0]!r}; choose from {', '.join(all_probes())}")
    if args.repeats < 1:
        raise ConfigError("--repeats: at least 1 (the first reading)")
    settings = TrustSettings(
        data=Path(args.data), labels=Path(args.labels), rubric=args.rubric,
        candidates=candidates_of(args.judge, args.candidates, args.base_url), tolerance=args.tolerance,
        repeats=args.repeats, probes=probes, options=dict(options), output_dir=Path(args.output_dir), card_id=args.id,
        needle_min_replies=args.needle_min_replies, dry_run=args.dry_run, corpus=args.corpus, budget=args.budget,
        max_calls=args.max_calls, cascades=args.cascades,
    )
    if args.no_cache:
        settings.cache_path = None
    card = build(settings, say=lambda line: print(line, file=sys.stderr))
    folder = Path(card["folder"])
    if args.dry_run:
        print(f"Dry run: the card's runs would cost about ${card['estimate']['cost_usd']:.4f} "
              f"({', '.join(f'{k}: ${v:.4f}' for k, v in card['estimate']['per_candidate'].items())}); nothing was sent.")
        return 0
    print((folder / "card.md").read_text(encoding="utf-8") + f"\nWritten to {folder}")
    if not card["complete"]:
        print("dialeval: some items failed; run the same command again to retry them", file=sys.stderr)
        return 1
    return 0


def card_runs(paths: list[str]) -> list[str | Path]:
    """``dialeval compare`` given a card folder: its candidates' base runs (the same
    labelled units, one run per judge); other paths pass as they are."""
    import json

    out: list[str | Path] = []
    for path in paths:
        card = Path(path) / "card.json"
        if card.is_file():
            # by name under the card's folder: the recorded paths may be relative to another directory
            out += [Path(path) / "runs" / Path(c["runs"]["base"]).name for c in json.loads(card.read_text(encoding="utf-8"))["candidates"]]
        else:
            out.append(path)
    return out
