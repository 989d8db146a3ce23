"""VDAct prediction files, KG video summaries and human scores.

A prediction file is one system's answers on the test split: records ``{id, dial_id,
turn_num, question, ref_answer, gen_answer}``. Turns are grouped into dialogues in turn
order; the scenario id (first 5 digits of the dialogue id) selects the video summary,
read from the released zip files or an extracted folder.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.data.io import DataError, read_records, validate_all, validate_record

SummaryKind = Literal["none", "template", "refined"]
SUMMARY_NAMES = {"refined": "scenario_refine_summaries", "template": "scenario_template_summaries"}
SCENARIO_DIGITS = 5


class PredictionTurn(BaseModel):
    """One answered question of one dialogue, as released in the prediction files."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    dial_id: str = Field(min_length=SCENARIO_DIGITS)
    turn_num: int = Field(ge=1)
    question: str
    ref_answer: str
    gen_answer: str

    @field_validator("id", "dial_id", mode="before")
    @classmethod
    def _ids_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) else value


class Turn(BaseModel):
    """A turn inside a dialogue item, with the human scores when a file gives them."""

    id: str
    turn_num: int
    question: str
    reference: str
    candidate: str
    human: list[int] | None = None


class Dialogue(BaseModel):
    """One item of the `vdact` benchmark: one system's answers in one dialogue."""

    id: str
    system: str
    dial_id: str
    scenario: str
    summary: str | None
    turns: list[Turn]
    source_dialogues: int = Field(description="dialogues in the whole prediction file, for cost estimates")
    source_turns: int


@dataclass
class Predictions:
    """A loaded prediction file: its turns and what had to be dropped to read it."""

    path: Path
    system: str
    turns: list[PredictionTurn]
    notes: list[str] = field(default_factory=list)


def system_name(path: str | Path) -> str:
    """A system is named after its prediction file (``test-videollama2-8f``)."""
    return Path(path).stem


def load_predictions(path: str | Path) -> Predictions:
    """Read one prediction file; duplicate turn ids keep their first record.

    The released ``test-videollava-7b-8f.json`` repeats 19 turn ids with different
    answers; dropping the repeats (and saying so in ``notes``) keeps the file usable
    while the count of turns stays that of the test split.
    """
    path = Path(path)
    raw = read_records(path)
    turns = validate_all(PredictionTurn, raw, path, id_field="id")
    kept: dict[str, PredictionTurn] = {}
    by_position: dict[tuple[str, int], str] = {}
    conflicting = identical = 0
    for index, turn in enumerate(turns):
        if turn.id in kept:
            if kept[turn.id] == turn:
                identical += 1
            else:
                conflicting += 1
            continue
        position = (turn.dial_id, turn.turn_num)
        if position in by_position:
            raise DataError(
                path,
                f"turn {turn.turn_num} of dialogue {turn.dial_id} appears twice (ids {by_position[position]!r} and {turn.id!r})",
                record=f"{index} (id={turn.id!r})",
                field="turn_num",
            )
        by_position[position] = turn.id
        kept[turn.id] = turn
    notes = []
    if conflicting:
        notes.append(f"{conflicting} repeated turn id(s) with a different answer: the first record of each was kept")
    if identical:
        notes.append(f"{identical} exact duplicate record(s) dropped")
    return Predictions(path=path, system=system_name(path), turns=list(kept.values()), notes=notes)


def group_dialogues(turns: list[PredictionTurn]) -> dict[str, list[PredictionTurn]]:
    """Turns per dialogue id, each list in turn order; dialogues in first-seen order."""
    out: dict[str, list[PredictionTurn]] = {}
    for turn in turns:
        out.setdefault(turn.dial_id, []).append(turn)
    return {k: sorted(v, key=lambda t: t.turn_num) for k, v in out.items()}


def scenario_of(dial_id: str) -> str:
    return dial_id[:SCENARIO_DIGITS]


# ---------------------------------------------------------------- summaries


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


# ---------------------------------------------------------------- human scores


class HumanScore(BaseModel):
    """Human ratings of one turn (1 incorrect, 2 partially correct, 3 correct), one per annotator."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    system: str | None = None
    scores: list[int] = Field(min_length=1)

    @field_validator("scores", mode="before")
    @classmethod
    def _single_score(cls, value: object) -> object:
        return [value] if isinstance(value, int) else value

    @field_validator("scores")
    @classmethod
    def _in_scale(cls, values: list[int]) -> list[int]:
        for v in values:
            if not 1 <= v <= 3:
                raise ValueError(f"human score {v} is outside 1-3")
        return values


def load_human_scores(path: str | Path) -> dict[tuple[str | None, str], list[int]]:
    """``(system or None, turn id) -> scores``; a record without ``system`` applies to every system."""
    path = Path(path)
    out: dict[tuple[str | None, str], list[int]] = {}
    for index, raw in enumerate(read_records(path)):
        if isinstance(raw, dict) and "score" in raw and "scores" not in raw:
            raw = {**{k: v for k, v in raw.items() if k != "score"}, "scores": raw["score"]}
        score = validate_record(HumanScore, raw, path, f"{index} (id={raw.get('id')!r})" if isinstance(raw, dict) else index)
        key = (score.system, score.id)
        if key in out:
            raise DataError(path, f"turn {score.id!r} is scored twice", record=index, field="id")
        out[key] = score.scores
    return out


# ---------------------------------------------------------------- items


def prediction_files(data: Path) -> list[Path]:
    """One file, or every ``*.json``/``*.jsonl`` file of a folder (one system each)."""
    if data.is_dir():
        files = sorted(p for p in data.iterdir() if p.suffix in (".json", ".jsonl"))
        if not files:
            raise DataError(data, "folder holds no .json or .jsonl prediction files")
        return files
    return [data]


def load_dialogues(
    data: str | Path,
    *,
    summary: SummaryKind = "refined",
    kg_dir: str | Path | None = None,
    summary_path: str | Path | None = None,
    human_scores: str | Path | None = None,
) -> list[Dialogue]:
    """Dialogue items of every prediction file at ``data``, with summaries attached."""
    data = Path(data)
    if not data.exists():
        raise DataError(data, "file not found")
    source = find_summaries(summary, kg_dir, summary_path, data)
    humans = load_human_scores(human_scores) if human_scores else {}
    items: list[Dialogue] = []
    for file in prediction_files(data):
        preds = load_predictions(file)
        dialogues = group_dialogues(preds.turns)
        for dial_id, turns in dialogues.items():
            scenario = scenario_of(dial_id)
            items.append(
                Dialogue(
                    id=f"{preds.system}/{dial_id}",
                    system=preds.system,
                    dial_id=dial_id,
                    scenario=scenario,
                    summary=source.get(scenario) if source else None,
                    turns=[
                        Turn(
                            id=t.id,
                            turn_num=t.turn_num,
                            question=t.question,
                            reference=t.ref_answer,
                            candidate=t.gen_answer,
                            human=humans.get((preds.system, t.id)) or humans.get((None, t.id)),
                        )
                        for t in turns
                    ],
                    source_dialogues=len(dialogues),
                    source_turns=len(preds.turns),
                )
            )
    return items
