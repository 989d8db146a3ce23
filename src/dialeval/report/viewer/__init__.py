"""`dialeval view`: static web pages over run folders, to read every call behind a score.

Pages are written next to the data they show (``<run>/view/``, ``<compare>/view/``,
and ``index.html`` in the runs folder), so they open as files or through the small
built-in server. Every model or data string goes through Jinja2's autoescaping and
Markdown is rendered with raw HTML disabled: a judge answer cannot inject markup.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialeval.report.tables import num, pct

if TYPE_CHECKING:
    from dialeval.report.results import RunData

VIEW = "view"  # folder of pages inside each run folder
STATUSES = ("ok", "unparsed", "truncated", "error")


@lru_cache(maxsize=1)
def _env():
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("dialeval.report.viewer", "templates"), autoescape=select_autoescape(default=True))
    env.filters["markdown"] = _markdown
    env.filters["pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
    env.filters["money"] = lambda v: f"{float(v or 0):.4f}"
    env.filters["pct"] = pct
    env.filters["num"] = lambda v, d=3: num(v, d)
    return env


def _markdown(text: str) -> Any:
    """Markdown to HTML with raw HTML escaped (markdown-it's ``html`` option off)."""
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    return Markup(MarkdownIt("commonmark", {"html": False}).enable("table").render(text or ""))


def _render(template: str, path: Path, **values: Any) -> Path:
    """Write one page; API keys (in prompts, answers or data) are scrubbed like every run artifact."""
    from dialeval.secrets import scrub

    path.parent.mkdir(parents=True, exist_ok=True)
    from dialeval.jsonsafe import replace_surrogates  # a reply's lone surrogate shows as U+FFFD

    path.write_text(scrub(replace_surrogates(_env().get_template(template).render(**values))), encoding="utf-8")
    return path


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _counts(calls: list[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for c in calls:
        out[c.get("status", "error")] = out.get(c.get("status", "error"), 0) + 1
    return out


def run_overview(run: RunData) -> dict[str, Any]:
    """One line of the index: benchmark, models, items, failures, cost."""
    from dialeval.report.compare import run_models

    run_dir, config, usage = run.path, run.config, run.usage
    info = run.metrics.get("run", {})
    per_agent = usage.get("per_agent", {})
    return {
        "name": run_dir.name,
        "benchmark": config.get("benchmark", "?"),
        "models": run_models(config),
        "item_count": info.get("items", 0),
        "finished": info.get("finished", 0),
        "failed": info.get("failed", 0),
        "unparsed": sum(a.get("unparsed", 0) for a in per_agent.values()),
        "truncated": sum(a.get("truncated", 0) for a in per_agent.values()),
        "errors": sum(a.get("error", 0) for a in per_agent.values()),
        "cost": usage.get("total", {}).get("cost_usd", 0.0),
        "dry_run": bool(info.get("dry_run")),
        "href": f"{run_dir.name}/{VIEW}/index.html",
    }


def write_run(run_dir: str | Path) -> Path:
    """The pages of one run: its report, plots and items, one page per item."""
    from dialeval.report.results import read_run

    return _write_run(read_run(run_dir, scores=False))


def _write_run(run: RunData) -> Path:
    from dialeval.models.prompt_store import load_prompts

    run_dir, rows = run.path, run.items
    out = run_dir / VIEW
    prompts = load_prompts(run_dir)
    overview = run_overview(run)
    view_of = _conversation_view(overview["benchmark"])
    items = []
    for index, row in enumerate(rows, start=1):
        calls = row.calls
        page = f"items/{index:05d}.html"
        items.append({"id": row.id, "status": row.status, "calls": len(calls), "counts": _counts(calls),
                      "seconds": row.seconds, "href": page})
        _render(
            "item.html", out / page,
            run=overview, row=row, calls=calls, prompts=prompts, counts=_counts(calls), statuses=STATUSES,
            scores={k: v for k, v in row.detail.items() if k != "calls"},
            conversation=view_of(row.detail) if view_of and row.detail else None,
            previous=f"{index - 1:05d}.html" if index > 1 else None,
            next=f"{index + 1:05d}.html" if index < len(rows) else None,
        )
    report = run_dir / "report.md"
    plots = sorted(p.name for p in run_dir.glob("*.png"))
    return _render(
        "run.html", out / "index.html",
        run=overview, items=items, plots=plots, statuses=STATUSES,
        report=report.read_text(encoding="utf-8") if report.exists() else "_No report.md yet._",
    )


def _conversation_view(name: str) -> Callable[[dict[str, Any]], Any] | None:
    """The benchmark's turn-by-turn view of a record, if it has one (through the registry,
    so the viewer never imports a benchmark package itself)."""
    from dialeval.benchmarks import get_benchmark

    try:
        return get_benchmark(name).conversation_view
    except (KeyError, ImportError):  # a plugin benchmark not installed here: its pages show the raw record
        return None


def write_comparison(folder: str | Path) -> Path:
    """The page of one ``dialeval compare`` folder, linking to the pages of its runs."""
    import os

    folder = Path(folder)
    result = _read_json(folder / "compare.json")
    links = {
        r.get("label"): os.path.relpath(Path(r["path"]).resolve() / VIEW / "index.html", (folder / VIEW).resolve())
        for r in result.get("runs", [])
        if r.get("path")
    }
    return _render("compare.html", folder / VIEW / "index.html", result=result, name=folder.name, links=links)


def write_site(runs_dir: str | Path = "runs", warn: Callable[[str], None] | None = None) -> Path:
    """Pages for every run and comparison under ``runs_dir``; returns the index page.

    A run with an unreadable file is skipped with one line through ``warn`` (stderr by
    default) naming the file, so one broken run never hides the others."""
    from dialeval.data.io import DataError
    from dialeval.report.results import read_run

    warn = warn or (lambda message: print(message, file=sys.stderr))
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise FileNotFoundError(f"{runs_dir} is not a folder of runs")
    runs, comparisons, skipped = [], [], []
    for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (folder / "config.json").exists():
            if (folder / "results.jsonl").exists():  # else a run that never started: not a run to show
                try:
                    run = read_run(folder, scores=False)
                    _write_run(run)
                    runs.append(run_overview(run))
                except DataError as err:
                    warn(f"dialeval view: skipped run {folder.name}: {err}")
                    skipped.append({"name": folder.name, "reason": str(err)})
        elif (folder / "compare.json").exists():
            write_comparison(folder)
            result = _read_json(folder / "compare.json")
            comparisons.append({"name": folder.name, "benchmark": result.get("benchmark"),
                                "runs": [r.get("label") for r in result.get("runs", [])],
                                "href": f"{folder.name}/{VIEW}/index.html"})
    return _render("index.html", runs_dir / "index.html", runs=runs, comparisons=comparisons, skipped=skipped, root=str(runs_dir))


def servable(root: Path, target: Path) -> bool:
    """Whether the viewer's server may send ``target`` (a resolved path): the generated pages
    (``index.html``, ``<folder>/view/...``) and the plots they show (``<folder>/*.png``)
    inside ``root``, never the results, prompts, configs or response cache beside them."""
    if not target.is_relative_to(root):
        return False
    parts = target.relative_to(root).parts
    if parts == ("index.html",):
        return True
    if len(parts) >= 3 and parts[1] == VIEW:
        return True
    return len(parts) == 2 and parts[1].endswith(".png")


def make_server(runs_dir: str | Path = "runs", port: int = 8765) -> Any:
    """A server of the pages under ``runs_dir`` on 127.0.0.1 only (port 0 picks a free one).

    It sends only what :func:`servable` allows, after resolving ``..`` and symlinks, so
    nothing outside ``runs_dir`` and no run file the pages do not show is ever readable;
    and it answers only requests addressed to ``127.0.0.1:<port>`` or ``localhost:<port>``,
    so a web page that rebinds its own domain name to 127.0.0.1 gets nothing.
    """
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlsplit

    root = Path(runs_dir).resolve()

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # one line per request is noise here
            pass

        def send_head(self) -> Any:
            host = (self.headers.get("Host") or "").strip().lower()
            if not host:
                self.send_error(400, "a Host header is required")
                return None
            if host not in hosts:
                self.send_error(421, f"this server answers only to {' or '.join(sorted(hosts))}")
                return None
            return super().send_head()

        def translate_path(self, path: str) -> str:
            """The resolved file to send, or "" (a 404) for anything the viewer does not serve."""
            local = Path(super().translate_path(path))  # inside root, '..' segments dropped
            resolved = local.resolve()
            if local.is_dir() and resolved.is_relative_to(root):
                if not urlsplit(path).path.endswith("/"):
                    return str(resolved)  # the handler redirects to the address with a slash
                resolved = (local / "index.html").resolve()
            return str(resolved) if servable(root, resolved) and resolved.is_file() else ""

    server = ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=str(root)))
    bound = server.server_port
    hosts = {f"127.0.0.1:{bound}", f"localhost:{bound}"} | ({"127.0.0.1", "localhost"} if bound == 80 else set())
    return server


def serve(runs_dir: str | Path = "runs", port: int = 8765) -> None:
    """Serve ``runs_dir`` until interrupted (the pages are static files)."""
    with make_server(runs_dir, port) as server:
        print(f"Serving {runs_dir} at http://127.0.0.1:{server.server_address[1]}/index.html (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
