"""``dialeval merge RUN...``: the shard folders of one run (``--shard i/n``) joined into one run folder.

Why: a corpus split over machines by any scheduler (a Slurm array, Kubernetes jobs, Ray
tasks) must end as the run one machine would have written: the same rows in the data's
order, one ``metrics.json``, the prompts of every shard. So the shards must be the ``n``
parts of one setup: the same config, templates, endpoints, dialeval version and data
(its SHA-256); each holds only items of its own part. Anything else is refused before a
file is written. The merged folder gets the run id the unsharded run has, so
``dialeval run`` without ``--shard`` resumes it (retrying any failed item).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, get_benchmark
from dialeval.config import RunConfig
from dialeval.errors import ConfigError, RunError
from dialeval.run.folder import CONFIG, ResultsWriter, RunLock, results_by_id
from dialeval.run.identity import comparable, data_digest, prepare_folder, referenced_files, run_id, what_changed
from dialeval.run.items import limit_items, load_items, shard_items


@dataclass
class MergedRun:
    """The joined folder, for its report."""

    bench: Benchmark
    run_dir: Path
    rows: list[dict[str, Any]]  # in the data's order
    resolved: dict[str, Any]  # its config.json
    expected: int  # items of the whole run


def _config_of(folder: Path) -> dict[str, Any]:
    path = folder / CONFIG
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{folder}: not a run folder (no {CONFIG})") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not a readable run config ({err})") from None
    if not isinstance(config, dict) or not config.get("shard"):
        raise ConfigError(f"{folder}: not a shard of a run (its {CONFIG} names no shard; made with `dialeval run --shard i/n`)")
    return config


def _same(config: dict[str, Any]) -> dict[str, Any]:
    """What must be equal in every shard: the setup, not where the data file lay on each machine."""
    return {k: v for k, v in comparable(config).items() if k != "data"}


def _check_parts(folders: list[Path], configs: list[dict[str, Any]]) -> int:
    """The shards are the parts 1..n of one n, each once; returns n."""
    parts = [tuple(int(x) for x in c["shard"].split("/")) for c in configs]
    counts = {of for _, of in parts}
    if len(counts) != 1:
        raise RunError(f"the folders split the run in different numbers of parts ({', '.join(sorted(c['shard'] for c in configs))})")
    of = counts.pop()
    seen: dict[int, Path] = {}
    for folder, (index, _) in zip(folders, parts):
        if index in seen:
            raise RunError(f"{seen[index]} and {folder} are both shard {index}/{of}")
        seen[index] = folder
    missing = sorted(set(range(1, of + 1)) - set(seen))
    if missing:
        raise RunError(f"shard {', '.join(f'{i}/{of}' for i in missing)} missing: give all {of} shard folders")
    return of


def _provenance(configs: list[dict[str, Any]], folders: list[Path]) -> dict[str, Any]:
    """When the shards ran (the first start, the last end) and every code version they used."""
    from dialeval.run.provenance import code_versions

    found = [c.get("provenance") or {} for c in configs]
    versions: list[dict[str, Any]] = []
    for one in found:
        versions += [v for v in code_versions(one) if v not in versions]
    times = {key: [str(p[key]) for p in found if p.get(key)] for key in ("first_started", "started", "finished")}
    out: dict[str, Any] = {**found[0], "first_started": min(times["first_started"], default=None),
                           "started": min(times["started"], default=None),
                           "finished": max(times["finished"]) if len(times["finished"]) == len(found) else None,
                           "merged_from": [f"{c['shard']} {folder.name}" for c, folder in zip(configs, folders)]}
    out.pop("code_versions", None)
    if len(versions) > 1:
        out["code_versions"] = versions
    return out


def merge_shards(runs: list[str | Path], out: str | Path | None = None, data: str | Path | None = None) -> MergedRun:
    """Check the shard folders ``runs`` and write the run they make up (``out``: default
    beside the first shard, named by the unsharded run's id); ``data`` where the data file
    is not where the first shard's machine had it."""
    from dialeval.run.preflight import load_user_code

    folders = [Path(r) for r in runs]
    configs = [_config_of(folder) for folder in folders]
    of = _check_parts(folders, configs)
    first = configs[0]
    for folder, config in zip(folders[1:], configs[1:]):
        if _same(config) != _same(first):
            raise RunError(f"{folder} is not a shard of the same run as {folders[0]}: {what_changed(first, config)}")
    settings = RunConfig.model_validate({k: v for k, v in first.items()
                                         if k in RunConfig.model_fields and k not in ("shard", "processes", "data", "benchmark")})
    load_user_code(settings)
    bench = get_benchmark(first["benchmark"])
    data = Path(data or first["data"])
    if not data.exists():
        raise ConfigError(f"{data}: the shards' data file is not here; give it with --data")
    every = load_items(bench, str(data), settings)
    if data_digest(str(data), settings.options, referenced_files(every)) != first.get("data_sha256"):
        raise RunError(f"{data}: not the data the shards judged (its content differs); give that file with --data")
    items = limit_items(bench, every, settings.limit)
    done: dict[str, dict[str, Any]] = {}
    for folder, config in zip(folders, configs):
        index = int(config["shard"].split("/")[0])
        own = {item.id for item in shard_items(bench, items, (index, of))}
        found = results_by_id(folder)
        stray = sorted(set(found) - own)
        if stray:
            raise RunError(f"{folder}: holds items of another shard ({', '.join(stray[:3])}); it was not made by --shard {config['shard']}")
        done.update(found)
    resolved = {**first, "shard": None, "provenance": _provenance(configs, folders)}
    run_dir = Path(out) if out is not None else folders[0].parent / run_id(bench.name, resolved)
    if (run_dir / CONFIG).exists():
        raise RunError(f"{run_dir}: a run folder is there already; move it aside or give another --out")
    rows = [done[item.id] for item in items if item.id in done]
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir):
        prepare_folder(run_dir, resolved, fresh=False)
        writer = ResultsWriter(run_dir / "results.jsonl")
        try:
            for row in rows:
                writer.append(row)
        finally:
            writer.close()
        from dialeval.models.prompt_store import copy_prompts

        copy_prompts(folders, run_dir)
    resolved = json.loads((run_dir / CONFIG).read_text(encoding="utf-8"))
    return MergedRun(bench, run_dir, rows, resolved, len(items))
