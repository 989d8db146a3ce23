"""`dialeval view`: web pages over run folders: a results browser and every call behind a score.

Pages are written next to the data they show (``<run>/view/``, ``<compare>/view/``,
and ``index.html`` in the runs folder), so they open as files or through the small
built-in server, which rewrites a run's pages when the run changed. Every model or data
string goes through Jinja2's autoescaping (the item table's script sets text, never
markup) and Markdown is rendered with raw HTML disabled: a judge answer cannot inject markup.
"""

from __future__ import annotations

from dialeval.report.viewer.index import refresh, write_comparison, write_site
from dialeval.report.viewer.item_page import STATUSES
from dialeval.report.viewer.server import make_server, serve, servable
from dialeval.report.viewer.site import VIEW, run_overview, write_run

__all__ = ["STATUSES", "VIEW", "make_server", "refresh", "run_overview", "serve", "servable", "write_comparison",
           "write_run", "write_site"]
