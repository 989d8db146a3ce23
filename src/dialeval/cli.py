"""`dialeval run | report | merge | list | metrics | compare | view | gate | trust | label | sweep | scenarios | import | export`: the command line over the runner.

Imports stay light here (argparse, no torch, transformers or chromadb) so that
`dialeval --help` and `dialeval list` answer at once; a run imports what it needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dialeval.metrics_cli import add_metrics_parser, list_command, metrics_command
from dialeval.option_pairs import option_pairs
from dialeval.version import __version__


class CommandParser(argparse.ArgumentParser):
    """A command's parser (``dialeval run``, ...): an argument it does not know is refused with
    this command's usage line and the closest flag, not the top-level usage."""

    flags: tuple[str, ...] = ()  # filled as arguments are added (argparse adds -h while it is built)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        self.flags = (*self.flags, *(a for a in args if isinstance(a, str) and a.startswith("-")))
        return super().add_argument(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            from dialeval.config import did_you_mean

            flag = extra[0].split("=", 1)[0]
            self.error(f"unrecognized arguments: {' '.join(extra)}"
                       + (did_you_mean(flag, self.flags) if flag.startswith("-") else ""))
        return parsed, extra


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dialeval", description="Evaluate dialogue systems and summaries with LLM agents.")
    p.add_argument("--version", action="version", version=f"dialeval {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=CommandParser)

    r = sub.add_parser("run", help="evaluate a data file with a benchmark protocol")
    r.add_argument("benchmark", help="benchmark name (see `dialeval list`)")
    r.add_argument("--data", required=False, help="data file or folder (or `data:` in the config)")
    r.add_argument("--config", help="YAML run config")
    r.add_argument(
        "--model",
        help="default model spec for every role, e.g. openai:gpt-4o-mini, smollm2; "
        "dry-run[:<model>] replaces every role's model (no call is made) and prices it",
    )
    r.add_argument("--base-url", help="base URL for openai-compatible models")
    r.add_argument("--limit", type=int, help="evaluate only the first N items in natural id order (VDAct: N dialogue ids), the same in every data file")
    r.add_argument("--concurrency", type=int, help="items and model requests in flight")
    r.add_argument("--processes", type=int, help="worker processes sharing the items and the limits (API models; default 1)")
    r.add_argument("--shard", metavar="I/N", help="judge the I-th of N parts of the items into its own run folder (`dialeval merge` joins them)")
    r.add_argument("--run-id", help="run folder name (default: derived from benchmark, data and config)")
    r.add_argument("--output-dir", help="where run folders go (default: runs)")
    r.add_argument("--option", action="append", default=[], metavar="KEY=JSON", help="benchmark option, e.g. patterns='[\"ebs\"]'")
    r.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    r.add_argument(
        "--fresh",
        action="store_true",
        help="evaluate every item again and skip cache reads (old results.jsonl is kept aside)",
    )
    r.add_argument("--no-preflight", action="store_true", help="skip the reachability check of API models before the first item")
    r.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    r.add_argument("--no-figures", action="store_true", help="draw no PNG figures (plots/) for the report: "
                   "a run a program reads spends no time on them")
    r.add_argument("--fail-on", action="append", default=[], metavar="'FIGURE OP NUMBER'", help="exit 1 when this holds "
                   "at the end, e.g. 'unparsed.share > 0.1' (any figure a gate rule can name; docs/gate.md)")
    r.add_argument(
        "--no-wait",
        action="store_true",
        help="models with `batch: true`: submit the round's batches and exit (code 75) instead of waiting; "
        "re-run the same command to collect them",
    )

    rep = sub.add_parser("report", help="recompute metrics and report.md of a run folder")
    rep.add_argument("run_dir")

    mg = sub.add_parser("merge", help="join the shard folders of one run (run --shard i/n) into one run folder")
    mg.add_argument("runs", nargs="+", metavar="RUN", help="every shard folder of the run (1/n ... n/n)")
    mg.add_argument("--out", help="the joined run's folder (default: beside the first shard, named by the run's id)")
    mg.add_argument("--data", help="the data file, where it is not at the path the shards' config.json names")

    sub.add_parser("list", help="benchmarks, agents and model backends")

    c = sub.add_parser("compare", help="agreement between runs of one benchmark over the same items")
    c.add_argument("runs", nargs="+", metavar="RUN", help="two or more run folders (a trust card's folder: its candidates' runs)")
    c.add_argument("--out", help="output folder (default: runs/compare-<benchmark>-<hash> beside the first run)")
    c.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    c.add_argument("--human", metavar="FILE", help="human labels in the benchmark's format (dialogue: human_scores), compared as one more run")

    v = sub.add_parser("view", help="browse runs, items and every agent call as web pages")
    v.add_argument("runs_dir", nargs="?", default="runs", help="folder holding run folders (default: runs)")
    v.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default: 8765; 0 picks a free one)")
    v.add_argument("--no-serve", action="store_true", help="only write the pages (open index.html as a file)")

    add_metrics_parser(sub)
    from dialeval.import_export import add_commands
    add_commands(sub)  # import, export

    from dialeval.gate.cli import add_parser as add_gate_parser

    add_gate_parser(sub)

    from dialeval.scenarios_cli import add_parser as add_scenarios
    from dialeval.sweeps.cli import add_parser as add_sweep
    from dialeval.trust.cli import add_parser as add_trust

    add_trust(sub)  # and label
    add_sweep(sub)
    add_scenarios(sub)
    return p


def _leave_now(line: str) -> None:
    """Ctrl-C: say how to resume and exit at once. A local model mid-generation cannot be
    cancelled, and waiting for it took over a minute; every finished item is already on
    disk (one write per line), and the run folder's lock is released with the process."""
    import os

    print(line, file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(130)


def _cmd_run(args: argparse.Namespace) -> int:
    from dialeval.config import ConfigError, load_config
    from dialeval.run.batch_rounds import NO_WAIT_EXIT, BatchesPending
    from dialeval.evaluation import RunInterrupted, run, run_warnings

    model = None
    if args.model:
        model = {"spec": args.model, **({"base_url": args.base_url} if args.base_url else {})}
    overrides = dict(
        benchmark=args.benchmark,
        data=args.data,
        limit=args.limit,
        concurrency=args.concurrency,
        processes=args.processes,
        shard=args.shard,
        run_id=args.run_id,
        output_dir=args.output_dir,
        options=option_pairs(args.option) or None,
        fresh=True if args.fresh else None,
        preflight=False if args.no_preflight else None,
        figures=False if args.no_figures else None,
    )
    from dialeval.gate.cli import measured_exit, parse_rule
    fail_on = [parse_rule(text, "--fail-on") for text in args.fail_on]  # a bad expression stops before any call
    # a bare `--model dry-run` prices the roles as the config's own model would cost
    config = load_config(args.config, **overrides, model=model)
    if args.no_cache:
        config = config.model_copy(update={"cache_path": None})
    if config.data is None:
        raise ConfigError("dialeval run: no data given (use --data or `data:` in the config)")
    if args.data is None and not Path(config.data).exists():  # named by the config file, not the command
        raise ConfigError(f"{config.source}: field 'data': {config.data}: not found (give --data, or fix the path)")
    try:
        result = run(
            args.benchmark, config.data, config, progress=not args.no_progress, on_interrupt=_leave_now,
            wait=not args.no_wait,
        )
    except BatchesPending as pending:  # --no-wait: the batches run on at the provider
        print(str(pending), file=sys.stderr)
        return NO_WAIT_EXIT
    except RunInterrupted as stop:  # Ctrl-C: one line, the folder and finished items kept
        print(str(stop), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("dialeval: interrupted before the first item was sent", file=sys.stderr)
        return 130
    if result.complete and not result.evaluated_now:
        items = (result.metrics.get("run") or {}).get("items", len(result.records))
        print(f"dialeval: nothing to do: all {items} items done in {result.run_dir} (--fresh evaluates them again)", file=sys.stderr)
    print(_summary(result.run_dir))
    for warning in run_warnings(result.metrics):
        print(f"dialeval: warning: {warning}", file=sys.stderr)
    return measured_exit(result, fail_on) if result.complete else _incomplete(result.summary)


def _incomplete(summary: str, how: str = "re-run the same command") -> int:
    print(f"dialeval: {summary}; {how} to retry them")
    return 1


def _summary(run_dir: Path) -> str:
    """The report's results and cost sections, for the terminal."""
    text = (Path(run_dir) / "report.md").read_text()
    return text + f"\nRun folder: {run_dir}\n"


def main(argv: list[str] | None = None) -> int:
    """The command line; with no ``argv`` (the ``dialeval`` program itself) the process
    ends right after, so the collector's last sweep over every library object, about a
    second of exit time, is skipped (:func:`gc.freeze`); files and exit hooks still close."""
    if argv is None:
        _plain_warnings()
        from dialeval.secrets import scrub_output

        scrub_output()  # every line printed, tracebacks included, without the run's secrets (issue 45)
    code = _main(argv)
    if argv is None:
        import gc

        gc.freeze()
    return code


def _plain_warnings() -> None:
    """dialeval's own warnings (a skipped label, a system field) as one line each on stderr,
    not in Python's ``file:line: Category: message`` form; other libraries' stay as they are."""
    import warnings

    default = warnings.formatwarning

    def one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None) -> str:
        if category.__module__.startswith("dialeval") or f"{os.sep}dialeval{os.sep}" in filename:
            return f"dialeval: warning: {message}\n"
        return default(message, category, filename, lineno, line)

    warnings.formatwarning = one_line


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    if not (sys.argv[1:] if argv is None else argv):  # a bare `dialeval`: the whole help, not an error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    from dialeval.config import ConfigError
    from dialeval.data.io import DataError
    from dialeval.agents.templates import TemplateError

    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "report":
            from dialeval.report.writer import write_report

            write_report(args.run_dir)
            print(_summary(Path(args.run_dir)))
            return 0
        if args.command == "merge":
            from dialeval.evaluation import merge

            merged = merge(args.runs, args.out, args.data)
            print(_summary(merged.run_dir))
            return 0 if merged.complete else _incomplete(merged.summary, "`dialeval run` without --shard resumes this run")
        if args.command == "list":
            return list_command()
        if args.command == "metrics":
            return metrics_command(args, option_pairs(args.option))
        if args.command in ("import", "export"):
            from dialeval.import_export import run_command

            return run_command(args)
        if args.command == "compare":
            from dialeval.report.compare import compare_runs
            from dialeval.trust.cli import card_runs

            result = compare_runs(card_runs(args.runs), args.out, plots=not args.no_plots, human=args.human)
            for warning in result["warnings"]:
                print(f"dialeval: warning: {warning}", file=sys.stderr)
            print((Path(result["out_dir"]) / "compare.md").read_text() + f"\nWritten to {result['out_dir']}")
            return 0
        if args.command == "gate":
            from dialeval.gate.cli import run_gate_command

            return run_gate_command(args)
        if args.command == "sweep":
            from dialeval.sweeps.cli import command as sweep

            return sweep(args, option_pairs(args.option))
        if args.command in ("trust", "label"):
            from dialeval.trust.cli import command as trust

            return trust(args, option_pairs(getattr(args, "option", [])))
        if args.command == "scenarios":
            from dialeval.scenarios_cli import command as scenarios

            return scenarios(args)
        if args.command == "view":
            from dialeval.report.viewer import serve, write_site

            index = write_site(args.runs_dir)
            print(f"Wrote {index}")
            if not args.no_serve:
                try:
                    serve(args.runs_dir, args.port)
                except OSError as err:  # the port is taken
                    print(f"dialeval: error: cannot serve on 127.0.0.1:{args.port}: {err} (try --port 0)", file=sys.stderr)
                    return 2
            return 0
    except (ConfigError, DataError, TemplateError, KeyError, FileNotFoundError) as err:
        from dialeval.secrets import scrub

        message = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
        print(f"dialeval: error: {scrub(str(message))}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
