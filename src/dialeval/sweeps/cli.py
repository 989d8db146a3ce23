"""``dialeval sweep BENCHMARK --data D --model A --model B [--config C]`` or ``dialeval sweep FILE.yaml``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

FILE_FIELDS = ("benchmark", "data", "models", "config", "rank_by", "base_url", "limit", "options", "output_dir")


def add_parser(sub: Any) -> None:
    s = sub.add_parser("sweep", help="run many models over one benchmark and rank them in one leaderboard")
    s.add_argument("benchmark", help="benchmark name, or a YAML sweep file (benchmark, data, models, config)")
    s.add_argument("--data", help="data file or folder")
    s.add_argument("--model", action="append", default=[], help="a model spec to run (repeat: one run per model)")
    s.add_argument("--config", help="YAML run config every model's run starts from")
    s.add_argument("--base-url", help="base URL for openai-compatible models (every --model)")
    s.add_argument("--limit", type=int, help="evaluate only the first N items of each run")
    s.add_argument("--option", action="append", default=[], metavar="KEY=JSON", help="benchmark option")
    s.add_argument("--output-dir", help="where run folders go (default: runs; the sweep goes to sweeps/ beside it)")
    s.add_argument("--rank-by", help="the dimension that ranks the models (default: the benchmark's first)")
    s.add_argument("--dry-run", action="store_true", help="price the whole sweep (no model is called) and stop")
    s.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def sweep_file(path: Path) -> dict[str, Any]:
    """A sweep file's fields, its paths made relative to the file's folder."""
    import yaml

    from dialeval.config import ConfigError

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: not a readable sweep file ({err})") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of fields")
    unknown = sorted(set(loaded) - set(FILE_FIELDS))
    if unknown:
        raise ConfigError(f"{path}: field {unknown[0]!r} is not a sweep field; valid: {', '.join(FILE_FIELDS)}")
    if not isinstance(loaded.get("models", []), list):
        raise ConfigError(f"{path}: field 'models' must be a list of model specs")
    for key in ("data", "config", "output_dir"):
        if isinstance(loaded.get(key), str) and not Path(loaded[key]).is_absolute():
            loaded[key] = str(path.parent / loaded[key])
    return loaded


def command(args: argparse.Namespace, options: dict[str, Any]) -> int:
    from dialeval.config import ConfigError
    from dialeval.sweeps.runs import dry_run_specs, dry_run_sweep, dry_run_text, run_sweep

    fields: dict[str, Any] = {"benchmark": args.benchmark}
    if args.benchmark.endswith((".yaml", ".yml")):
        fields = sweep_file(Path(args.benchmark))
    given = {"data": args.data, "models": args.model or None, "config": args.config, "rank_by": args.rank_by,
             "base_url": args.base_url, "limit": args.limit, "options": options or None, "output_dir": args.output_dir}
    fields.update({k: v for k, v in given.items() if v is not None})
    benchmark = fields.pop("benchmark", None)
    if not isinstance(benchmark, str) or not benchmark:
        raise ConfigError(f"{args.benchmark}: no `benchmark:` field")
    if not fields.get("data"):
        raise ConfigError("dialeval sweep: no data given (use --data or `data:` in the sweep file)")
    data, models, config = fields.pop("data"), fields.pop("models", []), fields.pop("config", None)
    if models and len(dry_run_specs(models, fields.get("base_url"))) == len(models):  # only dry-run specs: price them
        args.dry_run = True
    if args.dry_run:
        fields.pop("rank_by", None)
        print(dry_run_text(dry_run_sweep(benchmark, data, models, config, progress=not args.no_progress, **fields)))
        return 0
    result = run_sweep(benchmark, data, models, config, progress=not args.no_progress, **fields,
                       on_run=lambda model, run: print(f"dialeval: {model}: {run.run_dir}"
                                                       + ("" if run.complete else f" ({run.summary})"), file=sys.stderr))
    print((result.sweep_dir / "leaderboard.md").read_text(encoding="utf-8") + f"\nWritten to {result.sweep_dir}")
    if not result.complete:
        print("dialeval: some runs are incomplete; re-run the same command to retry their failed items", file=sys.stderr)
        return 1
    return 0
