"""VDAct prediction files, the dialogues built from them and the judge's one-shot example.

A prediction file is one system's answers on the test split: records ``{id, dial_id,
turn_num, question, ref_answer, gen_answer}``. Turns are grouped into dialogues in turn
order; the scenario id (first 5 digits of the dialogue id) selects the video summary,
read from the released zip files or an extracted folder (:mod:`.summaries`; human scores:
:mod:`.human_scores`). An example file (the session
judge's one-shot dialogue) uses the same records plus the verdict of each turn.
"""

from __future__ import annotations

from dialeval.agents.templates import prompt_file

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.data.io import DataError, read_records, validate_all
from dialeval.protocols.vdact.human_scores import load_human_scores
from dialeval.protocols.vdact.summaries import SummaryKind, SummarySource, explicit_summaries, find_summaries

SCENARIO_DIGITS = 5


class PredictionTurn(BaseModel):
    """One answered question of one dialogue, as released in the prediction files."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    dial_id: str = Field(min_length=SCENARIO_DIGITS)
    turn_num: int = Field(ge=1)
    question: str
    ref_answer: str
    gen_answer: str | None = Field(default=None, description="missing or empty: the system gave no answer")

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
    candidate: str = Field(description="the system's answer; empty when it gave none")
    human: list[int] | None = None


class ExampleTurn(BaseModel):
    """One turn of the one-shot example: an answered question and the verdict a grader gave."""

    question: str
    reference: str
    candidate: str
    rationale: str = Field(min_length=1)
    rating: int = Field(ge=1, le=3)


class JudgeExample(BaseModel):
    """The worked example dialogue of the VDEval judges, with where it came from."""

    source: str = Field(description="'<file>#<dial_id> (sha256 <digest of its turns>)', or 'built-in' for dialeval's hand-written example")
    summary: str | None = None
    turns: list[ExampleTurn] = Field(min_length=1)


class ExampleRecord(PredictionTurn):
    """A record of an example file: a prediction record plus the grader's verdict."""

    gen_answer: str = Field(min_length=1)
    rationale: str = Field(min_length=1)
    rating: int = Field(ge=1, le=3)


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
    example: JudgeExample | None = Field(default=None, description="the one-shot example dialogue the user pointed to")

    def prediction_records(self) -> list[dict[str, Any]]:
        """The dialogue back in the prediction-file format: the graph's input."""
        return [
            {"id": t.id, "dial_id": self.dial_id, "turn_num": t.turn_num, "question": t.question,
             "ref_answer": t.reference, "gen_answer": t.candidate}
            for t in self.turns
        ]


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
    example_path: str | Path | None = None,
    example_dialogue: str | None = None,
) -> list[Dialogue]:
    """Dialogue items of every prediction file at ``data``, with summaries attached.

    With ``example_path``, the one-shot example dialogue is read once (its summary from
    the same source as the items') and attached to every item.
    """
    data = Path(data)
    if not data.exists():
        raise DataError(data, "file not found")
    source = find_summaries(summary, kg_dir, summary_path, data)
    humans = load_human_scores(human_scores) if human_scores else {}
    example = load_example(example_path, example_dialogue, source) if example_path else None
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
                            candidate=t.gen_answer or "",
                            human=humans.get((preds.system, t.id)) or humans.get((None, t.id)),
                        )
                        for t in turns
                    ],
                    source_dialogues=len(dialogues),
                    source_turns=len(preds.turns),
                    example=example,
                )
            )
    return items


# ---------------------------------------------------------------- the one-shot example

BUILTIN_EXAMPLE = "builtin_example.json"


def load_example(path: str | Path, dial_id: str | None, summaries: SummarySource | None) -> JudgeExample:
    """The example dialogue ``dial_id`` of an example file, its turns in order.

    The file holds prediction records (``id, dial_id, turn_num, question, ref_answer,
    gen_answer``) with the grader's ``rationale`` and ``rating`` (1-3) for each turn, e.g. a
    training-split VDAct dialogue with candidate answers and verdicts written by the
    user. ``dial_id`` may be left out when the file holds one dialogue. The summary comes
    from ``summaries`` (the run's own kind) by the dialogue's scenario; none without it.
    """
    path = Path(path)
    records = validate_all(ExampleRecord, read_records(path), path, id_field="id")
    dialogues = group_dialogues(records)  # type: ignore[arg-type]
    if dial_id is None:
        if len(dialogues) != 1:
            raise DataError(path, f"holds {len(dialogues)} dialogues: name one with option example_dialogue")
        dial_id = next(iter(dialogues))
    dial_id = str(dial_id)
    if dial_id not in dialogues:
        raise DataError(path, f"no dialogue {dial_id!r} (the file has {len(dialogues)})", field="dial_id")
    turns = dialogues[dial_id]
    numbers = [t.turn_num for t in turns]
    if len(set(numbers)) != len(numbers):
        raise DataError(path, f"dialogue {dial_id} repeats a turn number", record=dial_id, field="turn_num")
    import hashlib

    turns_json = "\n".join(t.model_dump_json() for t in turns)
    digest = hashlib.sha256(turns_json.encode("utf-8")).hexdigest()[:12]
    return JudgeExample(
        source=f"{path}#{dial_id} (sha256 {digest})",  # an edited example is a different example
        summary=summaries.get(scenario_of(dial_id)) if summaries else None,
        turns=[
            ExampleTurn(question=t.question, reference=t.ref_answer, candidate=t.gen_answer or "",
                        rationale=t.rationale, rating=t.rating)  # type: ignore[attr-defined]
            for t in turns
        ],
    )


def builtin_example(with_summary: bool) -> JudgeExample:
    """dialeval's hand-written example dialogue (used when the user points to none)."""
    import json

    raw = json.loads(prompt_file(f"vdact/{BUILTIN_EXAMPLE}").read_text(encoding="utf-8"))
    example = JudgeExample.model_validate({**raw, "source": "built-in"})
    return example if with_summary else example.model_copy(update={"summary": None})


# ---------------------------------------------------------------- graph input


def dialogue_input(
    records: list[Any],
    *,
    summary: str | None,
    summary_kind: SummaryKind,
    kg_dir: str | Path | None = None,
    summary_path: str | Path | None = None,
    where: str = "graph input",
) -> dict[str, Any]:
    """One dialogue's prediction records (the data file's own format) -> the graph's dialogue.

    The summary is the one given, else looked up in ``kg_dir``/``summary_path`` by the
    dialogue's scenario; a run with ``summary_kind='none'`` has none. Bad records stop
    with the record and field named.
    """
    if not isinstance(records, list) or not records:
        raise DataError(where, "'records' must be a non-empty list of prediction records "
                        "({id, dial_id, turn_num, question, ref_answer, gen_answer})", field="records")
    turns = validate_all(PredictionTurn, records, f"{where}: records", id_field="id")
    dialogues = group_dialogues(turns)
    if len(dialogues) != 1:
        raise DataError(where, f"records hold {len(dialogues)} dialogues ({', '.join(dialogues)}); give one", field="dial_id")
    dial_id, ordered = next(iter(dialogues.items()))
    if len({t.turn_num for t in ordered}) != len(ordered):
        raise DataError(where, f"dialogue {dial_id} repeats a turn number", field="turn_num")
    text: str | None = None
    if summary_kind != "none":
        if summary:
            text = summary
        elif kg_dir is None and summary_path is None:
            raise DataError(where, f"the run uses {summary_kind} summaries: give 'summary' in the input, "
                            "or set option kg_dir or summary_path, or option summary='none'", field="summary")
        else:
            source = explicit_summaries(summary_kind, kg_dir, summary_path)
            text = source.get(scenario_of(dial_id)) if source else None
    return {
        "dial_id": dial_id,
        "summary": text,
        "turns": [
            {"id": t.id, "turn_num": t.turn_num, "question": t.question, "reference": t.ref_answer,
             "candidate": t.gen_answer or ""}
            for t in ordered
        ],
    }
