"""`dialeval import FORMAT PATH -o chats.jsonl` and `dialeval export RUN --to FORMAT -o FILE`:
conversations in from tracing systems and datasets, scores back out to them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dialeval.errors import ConfigError, DataError

EXPORTS = ("langsmith", "langfuse", "csv", "parquet")


def add_commands(sub: Any) -> None:
    from dialeval.data.importers import FORMATS

    i = sub.add_parser("import", help="convert traces or a dataset into a dialogue data file",
                       epilog="formats:\n" + "\n".join(f"  {k:<10} {v}" for k, v in FORMATS.items()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    i.add_argument("format", choices=list(FORMATS))
    i.add_argument("path", help="the exported file (or a saved dataset folder)")
    i.add_argument("-o", "--output", required=True, help="the dialogue JSONL file to write")
    i.add_argument("--columns", help='hf: JSON mapping dialogue field -> column, e.g. \'{"id": "conv_id"}\'')
    e = sub.add_parser("export", help="a dialogue run's scores as LangSmith feedback, Langfuse scores, CSV or parquet")
    e.add_argument("run_dir")
    e.add_argument("--to", required=True, choices=EXPORTS)
    e.add_argument("-o", "--output", required=True)


def run_command(args: argparse.Namespace) -> int:
    if args.command == "import":
        return _import(args)
    return _export(args)


def _import(args: argparse.Namespace) -> int:
    from dialeval.data.importers import import_records
    from dialeval.conversation.data import read_conversations

    columns = json.loads(args.columns) if args.columns else {}
    records = import_records(args.format, args.path, {"columns": columns})
    out = Path(args.output)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    conversations = read_conversations(out)  # what was written loads as dialogue data
    turns = sum(len(c.turns) for _, c in conversations)
    calls = sum(len(c.tool_calls()) for _, c in conversations)
    print(f"Wrote {out}: {len(conversations)} conversations, {turns} turns, {calls} tool calls")
    return 0


def _export(args: argparse.Namespace) -> int:
    from dialeval import read_run
    from dialeval.data import exporters

    run = read_run(args.run_dir)
    if run.benchmark != "dialogue":
        raise ConfigError(f"{args.run_dir}: export reads dialogue runs, this one is {run.benchmark!r}")
    out, name = Path(args.output), Path(args.run_dir).name
    if args.to in ("csv", "parquet"):
        frame = exporters.table(run.records)
        if args.to == "csv":
            frame.to_csv(out, index=False)
        else:
            from importlib.util import find_spec

            if find_spec("pyarrow") is None:
                raise DataError(out, "parquet needs the pyarrow package (pip install pyarrow), or use --to csv")
            frame.to_parquet(out, index=False)
        print(f"Wrote {out}: {len(frame)} units")
        return 0
    formats = sorted({str(((r.get("metadata") or {}).get("source") or {}).get("format", "dialogue")) for r in run.records})
    if args.to not in formats:
        raise ConfigError(f"{args.run_dir}: its conversations were read from {', '.join(formats) or 'no data'}, "
                          f"so they have no {args.to} ids to key scores by; use --to csv or parquet")
    rows, skipped = (exporters.langsmith_feedback if args.to == "langsmith" else exporters.langfuse_scores)(run.records, name)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"Wrote {out}: {len(rows)} {'feedback' if args.to == 'langsmith' else 'score'} records"
          + (f"; {skipped} units left out (no score, or no source id to key them)" if skipped else ""))
    return 0
