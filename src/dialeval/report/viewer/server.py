"""The viewer's local server: it sends only generated pages and the figures they show, answers
only requests addressed to itself, and brings a run's pages up to date when they are asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from dialeval.report.viewer.index import refresh as default_refresh
from dialeval.report.viewer.site import VIEW


def servable(root: Path, target: Path) -> bool:
    """Whether the viewer's server may send ``target`` (a resolved path): the generated pages
    (``index.html``, ``<folder>/view/...``) and the plots they show (``<folder>/*.png``,
    ``<folder>/plots/*.png``) inside ``root``, never the results, prompts, configs or
    response cache beside them."""
    if not target.is_relative_to(root):
        return False
    parts = target.relative_to(root).parts
    if parts == ("index.html",):
        return True
    if len(parts) >= 3 and parts[1] == VIEW:
        return True
    if len(parts) == 3 and parts[1] == "plots":
        return parts[2].endswith(".png")
    return len(parts) == 2 and parts[1].endswith(".png")


def make_server(runs_dir: str | Path = "runs", port: int = 8765, refresh: Callable[[str], None] | None = None) -> Any:
    """A server of the pages under ``runs_dir`` on 127.0.0.1 only (port 0 picks a free one).

    It sends only what :func:`servable` allows, after resolving ``..`` and symlinks, so
    nothing outside ``runs_dir`` and no run file the pages do not show is ever readable;
    and it answers only requests addressed to ``127.0.0.1:<port>`` or ``localhost:<port>``,
    so a web page that rebinds its own domain name to 127.0.0.1 gets nothing. Before a page
    is sent, ``refresh(path)`` (default: :func:`dialeval.report.viewer.index.refresh`) rewrites it
    when its run changed, so new and running runs show without a restart.
    """
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import unquote, urlsplit

    root = Path(runs_dir).resolve()
    update = refresh or (lambda path: default_refresh(root, path))  # one rewrite per run at a time (site.rebuilding)

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
            path = unquote(urlsplit(self.path).path)
            if "\x00" in path:  # issue 33: no file has a NUL in its name (the OS would raise, not answer)
                self.send_error(404, "File not found")
                return None
            if path.endswith((".html", "/")):
                update(path)
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

        def end_headers(self) -> None:
            self.send_header("Cache-Control", "no-cache")  # pages change while a run goes on
            super().end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=str(root)))
    bound = server.server_port
    hosts = {f"127.0.0.1:{bound}", f"localhost:{bound}"} | ({"127.0.0.1", "localhost"} if bound == 80 else set())
    return server


def serve(runs_dir: str | Path = "runs", port: int = 8765) -> None:
    """Serve ``runs_dir`` until interrupted; pages of runs that change are rewritten on request."""
    with make_server(runs_dir, port) as server:
        print(f"Serving {runs_dir} at http://127.0.0.1:{server.server_address[1]}/index.html (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
