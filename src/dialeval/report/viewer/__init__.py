"""`dialeval view`: static web pages over run folders, to read every call behind a score.

Pages are written next to the data they show (``<run>/view/``, ``<compare>/view/``,
and ``index.html`` in the runs folder), so they open as files or through the small
built-in server. Every model or data string goes through Jinja2's autoescaping and
Markdown is rendered with raw HTML disabled: a judge answer cannot inject markup.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

VIEW = "view"  # folder of pages inside each run folder
STATUSES = ("ok", "unparsed", "truncated", "error")


@lru_cache(maxsize=1)
def _env():
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("dialeval.report.viewer", "templates"), autoescape=select_autoescape(default=True))
    env.filters["markdown"] = _markdown
    env.filters["pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
    env.filters["money"] = lambda v: f"{float(v or 0):.4f}"
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{100 * v:.1f}%"
    env.filters["num"] = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
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
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}


def _counts(calls: list[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for c in calls:
        out[c.get("status", "error")] = out.get(c.get("status", "error"), 0) + 1
    return out


def item_calls(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Every call of an item in order: the record's AgentCalls, or for an item that failed
    before its record was made, the usage ledger (agent, model, status, tokens)."""
    result = row.get("result") or {}
    calls = result.get("calls") or row.get("calls")
    if calls:
        return list(calls)
    return [{**u, "raw": "", "cached": bool(u.get("cached"))} for u in row.get("usage", [])]


def run_overview(run_dir: Path) -> dict[str, Any]:
    """One line of the index: benchmark, models, items, failures, cost."""
    from dialeval.report.compare import run_models

    config = _read_json(run_dir / "config.json")
    metrics = _read_json(run_dir / "metrics.json")
    usage = _read_json(run_dir / "usage.json")
    info = metrics.get("run", {})
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
    from dialeval.models.prompt_store import load_prompts
    from dialeval.run.folder import read_results

    run_dir = Path(run_dir)
    out = run_dir / VIEW
    rows = read_results(run_dir)
    prompts = load_prompts(run_dir)
    overview = run_overview(run_dir)
    items = []
    for index, row in enumerate(rows, start=1):
        calls = item_calls(row)
        page = f"items/{index:05d}.html"
        items.append({"id": row["id"], "status": row.get("status"), "calls": len(calls), "counts": _counts(calls),
                      "seconds": row.get("seconds"), "href": page})
        _render(
            "item.html", out / page,
            run=overview, row=row, calls=calls, prompts=prompts, counts=_counts(calls), statuses=STATUSES,
            scores={k: v for k, v in (row.get("result") or {}).items() if k != "calls"},
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


def write_site(runs_dir: str | Path = "runs") -> Path:
    """Pages for every run and comparison under ``runs_dir``; returns the index page."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise FileNotFoundError(f"{runs_dir} is not a folder of runs")
    runs, comparisons = [], []
    for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (folder / "config.json").exists():
            if (folder / "results.jsonl").exists():  # else a run that never started: not a run to show
                write_run(folder)
                runs.append(run_overview(folder))
        elif (folder / "compare.json").exists():
            write_comparison(folder)
            result = _read_json(folder / "compare.json")
            comparisons.append({"name": folder.name, "benchmark": result.get("benchmark"),
                                "runs": [r.get("label") for r in result.get("runs", [])],
                                "href": f"{folder.name}/{VIEW}/index.html"})
    return _render("index.html", runs_dir / "index.html", runs=runs, comparisons=comparisons, root=str(runs_dir))


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
