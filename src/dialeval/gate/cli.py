"""`dialeval gate RUN [--baseline RUN] --rules GATES.yaml [--junit FILE] [--summary FILE]`.

Exit 0 when no rule fails (an undecided rule is said, not failed, unless its
``when_undecided`` is ``fail``), 1 when one fails, 2 on bad input (no run, an unfinished or
dry run, other data, unknown figure, unreadable rules); the CLI maps :class:`GateError` to 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import Any

from dialeval.gate.rules import GateError, load_rules, parse_rule  # light: the parser is built on every `dialeval` call
from dialeval.subcommands import Subcommands


def add_parser(sub: Subcommands) -> None:
    """Register ``gate`` on the CLI's sub-parsers."""
    g = sub.add_parser("gate", help="fail CI on thresholds and real regressions against a baseline run (exit 0/1/2)")
    g.add_argument("run", metavar="RUN", help="the run folder to gate")
    g.add_argument("--baseline", metavar="RUN", help="the baseline run folder, for regression rules")
    g.add_argument("--rules", required=True, metavar="GATES.yaml", help="the rules file (a 'rules:' list)")
    g.add_argument("--junit", metavar="FILE", help="write JUnit XML, one test case per rule")
    g.add_argument("--summary", metavar="FILE", help="append a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    g.add_argument("--allow-incomplete", action="store_true",
                   help="judge a run or baseline that did not finish (every output line says so)")
    g.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import MODULE first: it registers gate figures of its own (docs/extending.md)")
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
    from dialeval.gate.judgeable import label
    from dialeval.gate.junit import write_junit
    from dialeval.gate.summary import summary_markdown

    from dialeval.plugins import load_plugins

    load_plugins(args.plugin)  # modules that register gate figures of their own
    options = gate_options(args.option)
    rules = load_rules(args.rules)
    run = read_gate_run(args.run, "run")
    baseline = read_gate_run(args.baseline, "baseline") if args.baseline else None
    result = evaluate_gate(rules, run, baseline, sequential=options.get("stop_when_decided", False),
                           allow_incomplete=args.allow_incomplete)
    said = label(result.allowed_incomplete)
    for reason in result.allowed_incomplete:
        print(said(f"dialeval gate: judged anyway: {reason}"))
    for outcome in result.outcomes:
        print(said(f"{outcome.status.upper()}  {outcome.rule}: {outcome.message}"))
    if args.junit:
        write_junit(result, args.junit)
    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as out:
            out.write(summary_markdown(result))
    print(said(verdict_line(result)))
    return result.exit_code


def verdict_line(result: Any) -> str:
    """``gate passed: 2 of 3 rules passed, 1 undecided`` (the last line, as CI logs show it)."""
    failed = sum(1 for o in result.outcomes if o.failed)
    undecided = sum(1 for o in result.outcomes if o.status == "undecided")
    passed = len(result.outcomes) - failed - undecided
    return (f"gate {'passed' if not failed else 'failed'}: {passed} of {len(result.outcomes)} rules passed"
            + (f", {undecided} undecided (not failed; when_undecided: fail makes it fail)" if undecided else ""))


def measured_exit(result: Any, fail_on: list[Any]) -> int:
    """``dialeval run``'s exit code once every item finished: 1 when no unit was measured (every
    verdict unreadable: nothing to gate) or a ``--fail-on`` condition holds, saying which; else 0."""
    from dialeval.gate.figures import did_you_mean, run_figures
    from dialeval.gate.rules import GateError
    from dialeval.report.results import read_run

    info = result.metrics.get("run") or {}
    if not info.get("dry_run") and info.get("units_measured") == 0:
        print(f"dialeval: no unit was measured: none of {info.get('items', 0)} items got a readable verdict "
              "(see Judge reliability above); nothing here can be gated")
        return 1
    if not fail_on:
        return 0
    figures = run_figures(read_run(result.run_dir))
    for rule in fail_on:
        if rule.figure not in figures:
            raise GateError(f"--fail-on {rule.name!r}: the run has no figure {rule.figure!r}{did_you_mean(rule.figure, list(figures))}")
        if rule.holds(figures[rule.figure]):
            print(f"dialeval: --fail-on {rule.name!r} holds ({rule.figure} = {figures[rule.figure]:.4g}): exit 1")
            return 1
    return 0
