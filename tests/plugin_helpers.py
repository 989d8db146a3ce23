"""An installed plugin package for tests: a module and a dist-info folder with its entry point."""

from __future__ import annotations

from pathlib import Path


def install_plugin(site: Path, module: str, source: str, entry: str) -> None:
    """``module`` (``source``) in ``site`` with a ``dialeval.plugins`` entry point ``entry``;
    the caller puts ``site`` on ``sys.path`` and resets the entry points around its use."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[dialeval.plugins]\n{entry} = {module}\n", encoding="utf-8")
