"""`dialeval gate RUN [--baseline RUN] --rules GATES.yaml [--junit FILE] [--summary FILE]`.

Exit 0 when every rule passes, 1 when one fails, 2 on bad input (no run, unknown
figure, unreadable rules); the CLI maps :class:`GateError` to 2 like its other input errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import Any

from dialeval.gate.rules import GateError, load_rules  # light: the parser is built on every `dialeval` call
from dialeval.subcommands import Subcommands


def add_parser(sub: Subcommands) -> None:
    """Register ``gate`` on the CLI's sub-parsers."""
    g = sub.add_parser("gate", help="fail CI on thresholds and real regressions against a baseline run (exit 0/1/2)")
    g.add_argument("run", metavar="RUN", help="the run folder to gate")
    g.add_argument("--baseline", metavar="RUN", help="the baseline run folder, for regression rules")
    g.add_argument("--rules", required=True, metavar="GATES.yaml", help="the rules file (a 'rules:' list)")
    g.add_argument("--junit", metavar="FILE", help="write JUnit XML, one test case per rule")
    g.add_argument("--summary", metavar="FILE", help="append a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    g.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="stop_when_decided=true: also say after how many units (seeded order) each regression was decided")


def read_gate_run(path: str | Path, what: str) -> Any:
    """A run folder for the gate; a path that is not one is bad input (exit 2)."""
    from dialeval.report.results import read_run

    path = Path(path)
    if not (path / "config.json").exists():
        raise GateError(f"{what} {path} is not a run folder (no config.json)")
    return read_run(path)


def gate_options(pairs: list[str]) -> dict[str, bool]:
    options: dict[str, bool] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key != "stop_when_decided" or value.lower() not in ("true", "false", "1", "0"):
            raise GateError(f"--option {pair!r}: the gate takes stop_when_decided=true|false")
        options[key] = value.lower() in ("true", "1")
    return options


def run_gate_command(args: argparse.Namespace) -> int:
    """Evaluate, print one line per rule, write the JUnit and summary files; the exit code."""
    from dialeval.gate.evaluate import evaluate_gate
    from dialeval.gate.junit import write_junit
    from dialeval.gate.summary import summary_markdown

    options = gate_options(args.option)
    rules = load_rules(args.rules)
    run = read_gate_run(args.run, "run")
    baseline = read_gate_run(args.baseline, "baseline") if args.baseline else None
    result = evaluate_gate(rules, run, baseline, sequential=options.get("stop_when_decided", False))
    for outcome in result.outcomes:
        print(f"{'PASS' if outcome.passed else 'FAIL'}  {outcome.rule}: {outcome.message}")
    if args.junit:
        write_junit(result, args.junit)
    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as out:
            out.write(summary_markdown(result))
    failed = sum(1 for o in result.outcomes if not o.passed)
    print(f"gate {'passed' if not failed else 'failed'}: {len(result.outcomes) - failed} of {len(result.outcomes)} rules passed")
    return result.exit_code
