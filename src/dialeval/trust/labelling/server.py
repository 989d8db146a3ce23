"""The labelling page's server: 127.0.0.1 only, one page, its state, and saving one conversation.

As the results viewer's server does, it answers only requests addressed to itself
(``127.0.0.1:<port>`` or ``localhost:<port>``), so a web page that rebinds its name to
127.0.0.1 gets nothing; a save must come from the page itself (same origin, JSON body).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialeval.trust.labelling.session import Session

MAX_BODY = 2_000_000  # one conversation's labels: far less


def page() -> bytes:
    return files("dialeval.trust.labelling").joinpath("page.html").read_bytes()


def make_server(session: Session, port: int = 8766) -> ThreadingHTTPServer:
    """The server (port 0 picks a free one); call ``serve_forever`` on it."""
    hosts: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _ours(self) -> bool:
            if (self.headers.get("Host") or "").strip().lower() not in hosts:
                self.send_error(421, f"this server answers only to {' or '.join(sorted(hosts))}")
                return False
            return True

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: Any) -> None:
            self._send(status, json.dumps(value, ensure_ascii=False).encode(), "application/json; charset=utf-8")

        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            if not self._ours():
                return
            if self.path in ("/", "/index.html"):
                self._send(200, page(), "text/html; charset=utf-8")
            elif self.path == "/api/state":
                self._json(200, session.state())
            else:
                self.send_error(404, "File not found")

        def do_POST(self) -> None:  # noqa: N802
            if not self._ours():
                return
            origin = self.headers.get("Origin")
            if origin is not None and origin.split("://", 1)[-1].lower() not in hosts:
                self.send_error(403, "saves come from the labelling page only")
                return
            if self.path != "/api/save" or "json" not in (self.headers.get("Content-Type") or ""):
                self.send_error(404, "File not found")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                self.send_error(413, "body too large")
                return
            try:
                body = json.loads(self.rfile.read(length))
                saved = session.save(str(body["id"]), list(body["labels"]))
            except (ValueError, KeyError, TypeError) as err:
                self._json(400, {"error": str(err)})
                return
            self._json(200, {"saved": saved, "state": session.state()})

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    bound = httpd.server_address[1]
    hosts.update({f"127.0.0.1:{bound}", f"localhost:{bound}"})
    return httpd


def command(args: Any) -> int:
    """``dialeval label``: serve the page until interrupted."""
    from pathlib import Path

    from dialeval.trust.labelling.session import Session

    session = Session(Path(args.data), args.rubric, args.annotator, Path(args.labels), args.sample, args.seed)
    httpd = make_server(session, args.port)
    state = session.state()
    print(f"Labelling {len(state['conversations'])} conversations as {args.annotator} ({len(state['done'])} done); "
          f"labels go to {args.labels}")
    print(f"Open http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops; run the same command again to resume)")
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


def add_parser(sub: Any) -> None:
    lab = sub.add_parser("label", help="label conversations on a rubric in the browser (labels for dialeval trust)")
    lab.add_argument("--data", required=True, help="the conversations (dialogue benchmark's format)")
    lab.add_argument("--rubric", required=True, help="the rubric YAML (or a built-in rubric's name)")
    lab.add_argument("--annotator", required=True, help="who labels (kept on every label)")
    lab.add_argument("--labels", default="labels.jsonl", help="the labels file, appended to (default: labels.jsonl)")
    lab.add_argument("--sample", type=int, help="label this many conversations, drawn at random (with --seed)")
    lab.add_argument("--seed", type=int, default=0, help="the draw of --sample (default 0); the same seed, the same sample")
    lab.add_argument("--port", type=int, default=8766, help="port on 127.0.0.1 (default 8766; 0: any free one)")
