"""Side-by-side pages of two runs on one unit, one per disagreement of a ``dialeval compare``
folder: both judges' scores, rationales and (for conversation benchmarks) the turns."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dialeval.report.results import ItemResult, RunData
from dialeval.report.viewer.render import Clipper, render
from dialeval.report.viewer.site import VIEW, conversation_view, data_items, item_data, read_scored
from dialeval.report.viewer.thumbs import Thumbnails, image_roots

RATIONALE = 600  # characters of each call's parsed answer shown on a side-by-side page


def unit_index(run: RunData) -> dict[str, tuple[int, ItemResult]]:
    """Unit id (as compare names it, with or without the system's name) -> (item number, item)."""
    out: dict[str, tuple[int, ItemResult]] = {}
    for number, item in enumerate(run.items, start=1):
        for units in item.scores.values():
            for unit in units:
                out.setdefault(unit, (number, item))
                if item.system:
                    out.setdefault(f"{item.system}/{unit}", (number, item))
    return out


class Side:
    """One run of the comparison, read once, with what its half of a pair page needs."""

    def __init__(self, run: RunData, pages: Path):
        self.run = run
        self.units = unit_index(run)
        self.view_of = conversation_view(run.benchmark)
        self.items = data_items(run.config)
        self.thumbs = Thumbnails(image_roots(run.config), run.path / VIEW / "thumbs")
        self.thumb_dir = os.path.relpath((run.path / VIEW / "thumbs").resolve(), pages.resolve())
        self.item_dir = os.path.relpath((run.path / VIEW / "items").resolve(), pages.resolve())

    def thumb(self, source: str) -> str | None:
        name = self.thumbs(source)
        return f"{self.thumb_dir}/{name}" if name else None

    def half(self, label: str, unit: str, dimension: str) -> dict[str, Any]:
        found = self.units.get(unit)
        if found is None:
            return {"label": label, "missing": True}
        number, item = found
        calls = [{"agent": c.get("agent"), "status": c.get("status"), "value": c.get("value") if c.get("status") == "ok" else c.get("raw")}
                 for c in item.calls if c.get("role") not in ("responder", "summarizer")][:20]
        view = self.view_of(item.detail, self.items.get(item.id)) if self.view_of and item.detail else None
        bare = unit.split("/", 1)[1] if item.system and unit.startswith(f"{item.system}/") else unit
        return {"label": label, "missing": False, "item": item, "href": f"{self.item_dir}/{number:05d}.html",
                "score": item.scores.get(dimension, {}).get(bare), "scores": item.scores, "calls": calls,
                "conversation": view, "thumb": self.thumb, "data": None if view else item_data(self.items.get(item.id))}


def write_pairs(folder: Path, result: dict[str, Any]) -> dict[tuple[int, int], str]:
    """The side-by-side pages of every disagreement; (comparison, disagreement) -> page address."""
    from dialeval.data.io import DataError
    pages = folder / VIEW / "pairs"
    sides: dict[str, Side] = {}
    for r in result.get("runs", []):
        try:
            sides[r["label"]] = Side(read_scored(Path(r["path"])), pages)
        except (KeyError, OSError, DataError):
            continue  # a run folder moved or deleted since the comparison: no pages for it
    links: dict[tuple[int, int], str] = {}
    for ci, c in enumerate(result.get("comparisons", [])):
        a, b = sides.get(c.get("a")), sides.get(c.get("b"))
        if a is None or b is None:
            continue
        for di, d in enumerate(c.get("disagreements") or []):
            name = f"pairs/{ci + 1:03d}-{di + 1:02d}.html"
            page = folder / VIEW / name
            clip = Clipper(page, {"run": folder.name, "item": d["unit"]})
            halves = [a.half(c["a"], d["unit"], c["dimension"]), b.half(c["b"], d["unit"], c["dimension"])]
            render("pair.html", page, name=folder.name, unit=d["unit"], comparison=c, disagreement=d, halves=halves,
                   clip=clip, limit=RATIONALE)
            links[(ci, di)] = name
    return links
