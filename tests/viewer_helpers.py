"""Serving a runs folder to the browser tests: the viewer's own server on a free port of 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dialeval.report.viewer import make_server


@contextmanager
def serving(runs: Path) -> Iterator[str]:
    """The base address (``http://127.0.0.1:PORT``) while the server runs; it stops on exit."""
    with running(make_server(runs, port=0)) as base:
        yield base


@contextmanager
def running(httpd: Any) -> Iterator[str]:
    """Serve ``httpd`` (bound to 127.0.0.1) in a thread: its base address, until exit."""
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
