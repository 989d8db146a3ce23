"""The pages of a runs folder: its index, each comparison's page, and the refresh of what a
request to the viewer's server asks for (the server imports this, never the package).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from dialeval.report.viewer.render import render
from dialeval.report.viewer.site import VIEW, mark, refresh_run, stamp, stderr_warn, up_to_date


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def write_comparison(folder: str | Path) -> Path:
    """The page of one ``dialeval compare`` folder, linking to the pages of its runs and, from
    each disagreement, to a side-by-side page of the two runs on that unit."""
    import os

    from dialeval.report.viewer.pairs import write_pairs

    folder = Path(folder)
    result = _read_json(folder / "compare.json")
    links = {
        r.get("label"): os.path.relpath(Path(r["path"]).resolve() / VIEW / "index.html", (folder / VIEW).resolve())
        for r in result.get("runs", [])
        if r.get("path")
    }
    pairs = write_pairs(folder, result)
    return render("compare.html", folder / VIEW / "index.html", result=result, name=folder.name, links=links, pairs=pairs)


def _refresh_comparison(folder: Path) -> dict[str, Any]:
    current = stamp(folder)
    if not up_to_date(folder, current):
        write_comparison(folder)
        mark(folder, current)
    result = _read_json(folder / "compare.json")
    return {"name": folder.name, "benchmark": result.get("benchmark"), "runs": [r.get("label") for r in result.get("runs", [])],
            "href": f"{folder.name}/{VIEW}/index.html"}


def write_site(runs_dir: str | Path = "runs", warn: Callable[[str], None] | None = None, wait: bool = True) -> Path:
    """Pages for every run and comparison under ``runs_dir`` (rewritten only where the run
    changed); returns the index page.

    A run with an unreadable file is skipped with one line through ``warn`` (stderr by
    default) naming the file, so one broken run never hides the others. ``wait=False`` (the
    server): a run whose pages are out of date is rewritten in the background and listed
    with its last line meanwhile."""
    warn = warn or stderr_warn
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise FileNotFoundError(f"{runs_dir} is not a folder of runs")
    runs, comparisons, skipped = [], [], []
    for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (folder / "config.json").exists():
            if (folder / "results.jsonl").exists():  # else a run that never started: not a run to show
                line = refresh_run(folder, warn, wait)
                if line and line.get("skipped"):
                    skipped.append(line)
                elif line:
                    runs.append(line)
        elif (folder / "compare.json").exists():
            comparisons.append(_refresh_comparison(folder))
    running = any(r.get("running") for r in runs)
    return render("index.html", runs_dir / "index.html", runs=runs, comparisons=comparisons, skipped=skipped,
                  root=str(runs_dir), running=running)


def refresh(root: Path, path: str) -> None:
    """Bring the pages a request asks for up to date: the index (every run), or one run's or
    comparison's pages (``/<folder>/view/...``). Anything else is left to the server's rules."""
    parts = [p for p in path.split("/") if p]
    if parts in ([], ["index.html"]):
        write_site(root, wait=False)  # issue 33: served at once, whatever rewrite runs
        return
    if len(parts) < 2 or parts[1] != VIEW or parts[0].startswith("."):
        return
    folder = (root / parts[0]).resolve()
    if folder.parent != root.resolve() or not folder.is_dir():
        return
    if (folder / "config.json").exists() and (folder / "results.jsonl").exists():
        refresh_run(folder, stderr_warn, wait=False)  # issue 33: a big run's pages already there are sent at once
    elif (folder / "compare.json").exists():
        _refresh_comparison(folder)
