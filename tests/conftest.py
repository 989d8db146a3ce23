"""Shared fixtures: where the shared benchmark data lives, and test isolation."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Iterator

import pytest

SHARED = Path(os.environ.get("DIALEVAL_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))


@pytest.fixture
def ctrl_c_reaches_children() -> Iterator[None]:
    """A suite started in the background (``make test &``, a CI step under ``nohup``) has
    SIGINT ignored, and a child started from it would ignore Ctrl-C too. While a handler is
    installed here the child starts with the default, as from a terminal."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data``; tests that need it skip cleanly when it is absent."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip("../shared/data is not available")
    return path


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture(autouse=True)
def _unchecked_models() -> None:
    """Each test's runs check their models again (a process remembers checks that passed)."""
    from dialeval.run import preflight

    preflight._preflight_passed.clear()


@pytest.fixture(autouse=True)
def _figures_rendered_where_read(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's figures are built (each benchmark's figure code runs) but not rendered to PNG,
    except in tests marked ``figures``, which read them. Rendering is about 0.1 s of CPU a
    figure: 45 s of the suite's 6.5 minutes went to PNGs no test looked at. A run then reads
    as one with ``figures: false``: no ``plots/``, no figure in ``metrics.json`` or the report.
    Fixtures wider than a test (a module's trust card) render as users' runs do."""
    if request.node.get_closest_marker("figures") is None:
        from dialeval.report import plots

        monkeypatch.setattr(plots, "draw", lambda figures, run_dir: {})


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    """A headless browser for the viewer tests: Debian's chromium through playwright, or a skip.

    Name it after the fixtures that run evaluations (``def test_x(site, browser)``): its sync
    API keeps an event loop running, and ``dialeval.run`` cannot start one inside it."""
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (make setup installs it as root through apt)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Exception as err:  # pragma: no cover - a chromium that cannot start here
            pytest.skip(f"chromium does not start: {err}")
        yield browser
        browser.close()
