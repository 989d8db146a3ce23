"""VDAct's video summaries: the released KG summaries of each scenario, from a zip file or a folder."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Literal

from dialeval.data.io import DataError

SummaryKind = Literal["none", "template", "refined"]
SUMMARY_NAMES = {"refined": "scenario_refine_summaries", "template": "scenario_template_summaries"}


class SummarySource:
    """Scenario summaries from a zip file or a folder of ``<scenario>.txt`` files."""

    def __init__(self, location: Path):
        self.location = location
        self._texts: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._texts is None:
            texts: dict[str, str] = {}
            if self.location.is_file() and zipfile.is_zipfile(self.location):
                with zipfile.ZipFile(self.location) as archive:
                    for name in archive.namelist():
                        if name.endswith(".txt"):
                            texts[Path(name).stem] = archive.read(name).decode("utf-8").strip()
            elif self.location.is_dir():
                for file in sorted(self.location.rglob("*.txt")):
                    texts[file.stem] = file.read_text(encoding="utf-8").strip()
            else:
                raise DataError(self.location, "not a zip file or a folder of summaries")
            self._texts = texts
        return self._texts

    def get(self, scenario: str) -> str:
        text = self._load().get(scenario)
        if not text:
            raise DataError(self.location, f"no video summary for scenario {scenario}", record=scenario, field="summary")
        return text


def find_summaries(kind: SummaryKind, kg_dir: str | Path | None, summary_path: str | Path | None, data: Path) -> SummarySource | None:
    """Where the ``kind`` summaries are: an explicit path, a KG folder, else ``<data>/../kg``.

    ``<data>/../kg`` is the folder beside the predictions folder in the released layout
    (``vdact/predictions/*.json`` and ``vdact/kg/*.zip``).
    """
    if kind == "none":
        return None
    if summary_path is not None:
        return SummarySource(Path(summary_path))
    base = Path(kg_dir) if kg_dir is not None else (data if data.is_dir() else data.parent).parent / "kg"
    name = SUMMARY_NAMES[kind]
    for candidate in (base / f"{name}.zip", base / name):
        if candidate.exists():
            return SummarySource(candidate)
    raise DataError(base, f"no {kind} summaries found (looked for {name}.zip and {name}/); set option kg_dir or summary_path, or summary='none'")


def explicit_summaries(kind: SummaryKind, kg_dir: str | Path | None, summary_path: str | Path | None) -> SummarySource | None:
    """The summaries named by options alone (no data file to look beside), or ``None``."""
    if kind == "none" or (kg_dir is None and summary_path is None):
        return None
    return find_summaries(kind, kg_dir, summary_path, Path("."))
