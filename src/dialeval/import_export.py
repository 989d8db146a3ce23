"""`dialeval import FORMAT PATH -o chats.jsonl` and `dialeval export RUN --to FORMAT -o FILE`:
conversations in from tracing systems and datasets, scores back out to them.

Both write a temporary file beside the output and rename it on success, so a failed
import or export leaves no half-written file; an import checks each conversation alone
(``--skip-bad`` keeps the good ones and lists the others), and an export never writes
inside the run folder it reads.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Callable

from dialeval.errors import ConfigError, DataError

EXPORTS = ("langsmith", "langfuse", "csv", "parquet")


def add_commands(sub: Any) -> None:
    from dialeval.data.importers import importer_names

    formats = importer_names(plugins=False)  # installed packages' formats load when named (see --plugin)
    i = sub.add_parser("import", help="convert traces or a dataset into a dialogue data file",
                       epilog="formats:\n" + "\n".join(f"  {k:<10} {v}" for k, v in formats.items()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    i.add_argument("format", help=f"{', '.join(formats)}, or a format a plugin registers")
    i.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import MODULE first: it registers its own formats (docs/extending.md)")
    i.add_argument("path", help="the exported file (or a saved dataset folder)")
    i.add_argument("-o", "--output", required=True, help="the dialogue JSONL file to write")
    i.add_argument("--columns", help='hf: JSON mapping dialogue field -> column, e.g. \'{"id": "conv_id"}\'')
    i.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="hf: format=hermes|toolace|glaive|xlam|sharegpt|openai, columns='{...}'")
    i.add_argument("--skip-bad", action="store_true", help="keep the good conversations and list the bad ones (file, record, reason)")
    e = sub.add_parser("export", help="a run's scores as LangSmith feedback, Langfuse scores, CSV or parquet")
    e.add_argument("run_dir")
    e.add_argument("--to", required=True, choices=EXPORTS)
    e.add_argument("-o", "--output", required=True)


def run_command(args: argparse.Namespace) -> int:
    if args.command == "import":
        return _import(args)
    return _export(args)


def write_atomic(out: Path, write: Callable[[Path], object]) -> None:
    """``write(temporary path)`` then rename it to ``out``: no half-written file on failure."""
    handle, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent if str(out.parent) else ".")
    os.close(handle)
    try:
        write(Path(name))
        os.replace(name, out)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def _import_options(args: argparse.Namespace) -> dict[str, Any]:
    from dialeval.option_pairs import option_pairs

    options = option_pairs(args.option)
    if args.columns:
        try:
            options["columns"] = json.loads(args.columns)
        except json.JSONDecodeError:
            raise ConfigError(f"--columns {args.columns!r}: expected a JSON object, e.g. '{{\"id\": \"conv_id\"}}'") from None
    unknown = sorted(set(options) - {"columns", "format"})
    if unknown:
        raise ConfigError(f"--option {unknown[0]}: import takes format= and columns=")
    if "format" in options and args.format != "hf":
        raise ConfigError("--option format= names a dataset shape of `dialeval import hf`")
    return options


def _import(args: argparse.Namespace) -> int:
    from dialeval.data.importers import ImportLog, import_file
    from dialeval.conversation.data import check_record

    from dialeval.plugins import load_plugins

    load_plugins(args.plugin)
    out = Path(args.output)
    if not out.parent.is_dir():
        raise ConfigError(f"{out}: its folder {out.parent} does not exist")
    log = ImportLog(skip_bad=args.skip_bad)
    records, _ = import_file(args.format, args.path, _import_options(args), log)
    kept, seen = [], set()
    for index, raw in enumerate(records):
        name = f"{index} (conversation {raw.get('id')!r} imported as {args.format})"
        conversation = log.attempt(args.path, name, partial(check_record, args.path, name, raw))
        if conversation is None:
            continue
        if conversation.id in seen:
            log.reject(DataError(args.path, f"duplicate id {conversation.id!r}", record=name, field="id"))
            continue
        seen.add(conversation.id)
        kept.append((raw, conversation))
    for line in log.notes:
        print(f"{args.path}: {line}")
    for line in log.warnings:
        print(f"dialeval: warning: {line}", file=sys.stderr)
    for err in log.bad:
        print(f"dialeval: skipped: {err}", file=sys.stderr)
    if not kept:
        raise DataError(args.path, "no conversation to write" + (f" ({len(log.bad)} bad records skipped)" if log.bad else ""))
    from dialeval.jsonsafe import dumps
    from dialeval.secrets import scrub

    lines = "".join(scrub(dumps(r)) + "\n" for r, _ in kept)  # a lone surrogate escaped; keys a trace quoted stay out
    write_atomic(out, lambda tmp: tmp.write_text(lines, encoding="utf-8"))
    conversations = [c for _, c in kept]
    turns = sum(len(c.turns) for c in conversations)
    calls = sum(len(c.tool_calls()) for c in conversations)
    empty = sum(1 for c in conversations for t in c.turns if t.role == "assistant" and not t.text and not t.tool_calls and not t.images)
    print(f"Wrote {out}: {len(conversations)} conversations, {turns} turns, {calls} tool calls"
          + (f", {empty} empty replies" if empty else "") + (f"; {len(log.bad)} bad records skipped" if log.bad else ""))
    return 0


def _export(args: argparse.Namespace) -> int:
    from dialeval import read_run
    from dialeval.data import exporters

    run = read_run(args.run_dir)
    if run.benchmark not in ("dialogue", "simulation"):
        raise ConfigError(f"{args.run_dir}: export reads dialogue and simulation runs, this one is {run.benchmark!r}")
    out, folder = Path(args.output), Path(args.run_dir).resolve()
    if out.resolve() == folder or folder in out.resolve().parents:
        raise ConfigError(f"{out}: inside the run folder {args.run_dir}, whose files are the run's own; write it elsewhere")
    name = Path(args.run_dir).name
    if args.to in ("csv", "parquet"):
        frame = exporters.table(run.records)
        if args.to == "csv":
            write_atomic(out, lambda tmp: frame.to_csv(tmp, index=False))
        else:
            from importlib.util import find_spec

            if find_spec("pyarrow") is None:
                raise DataError(out, "parquet needs the pyarrow package (pip install pyarrow), or use --to csv")
            write_atomic(out, lambda tmp: frame.to_parquet(tmp, index=False))
        print(f"Wrote {out}: {len(frame)} units")
        return 0
    if run.benchmark == "simulation":
        raise ConfigError(f"{args.run_dir}: a simulation run's conversations were made by the run, so they have no "
                          f"{args.to} ids to key scores by; use --to csv or parquet")
    formats = sorted({str(((r.get("metadata") or {}).get("source") or {}).get("format", "dialogue")) for r in run.records})
    if args.to not in formats:
        raise ConfigError(f"{args.run_dir}: its conversations were read from {', '.join(formats) or 'no data'}, "
                          f"so they have no {args.to} ids to key scores by; use --to csv or parquet")
    rows, skipped = (exporters.langsmith_feedback if args.to == "langsmith" else exporters.langfuse_scores)(run.records, name)
    write_atomic(out, lambda tmp: tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"))
    print(f"Wrote {out}: {len(rows)} {'feedback' if args.to == 'langsmith' else 'score'} records"
          + (f"; {skipped} units left out (no score, or no source id to key them)" if skipped else ""))
    return 0
