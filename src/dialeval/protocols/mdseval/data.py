"""MDSEval records: one image-sharing dialogue, its candidate summaries and human scores.

A record is exactly one entry of ``MDSEval_annotations.json``. The raw dialogue turns and
images are not part of that file; a user who has them passes the merged dialogues file
(the annotations records with a ``dialogue`` list of turns added, as the authors' merge
script writes it) and the image folder. Without them, the file's ``dialogue_statements``
and ``image_statements`` stand in for dialogue and image, and :func:`judge_input` says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dialeval.data.images import resolve_local_image
from dialeval.data.io import DataError, read_records, validate_all

FaithLabel = Literal["true", "false-text", "false-image", "false-both"]
FAITH_LABELS: tuple[str, ...] = ("true", "false-text", "false-image", "false-both")
# aspect -> (low, high) of its scale; balance is the 1-7 bipolar scale
SCALES: dict[str, tuple[int, int]] = {
    "coherence": (1, 5),
    "conciseness": (1, 5),
    "coverage-image": (1, 5),
    "coverage-text": (1, 5),
    "coverage-overall": (1, 5),
    "balance": (1, 7),
    "progression": (1, 5),
}
ASPECTS: tuple[str, ...] = tuple(SCALES)
SHORT: dict[str, str] = {
    "coherence": "COH",
    "conciseness": "CON",
    "coverage-image": "COV-I",
    "coverage-text": "COV-T",
    "coverage-overall": "COV-O",
    "balance": "BAL",
    "progression": "PROG",
}
JudgeInput = Literal["turns+images", "turns+image-statements", "statements+images", "statements"]


class ImageInfo(BaseModel):
    """One shared image: where it came from and the statements that describe it."""

    model_config = ConfigDict(extra="allow")

    image_statements: list[str] = Field(default_factory=list)
    image_path: str | None = None
    image_url: str | None = None
    image_id: str | None = None
    local_path: str | None = Field(default=None, description="resolved file in the image folder (set by the loader)")


class CandidateSummary(BaseModel):
    model_config = ConfigDict(extra="allow")

    summary: str = Field(min_length=1)
    summary_sentence_lvl: list[str] = Field(min_length=1)
    model_anonymous: str = ""


class HumanAnnotation(BaseModel):
    """The 2-3 annotators' scores of one summary; lists are per annotator, unaligned across aspects."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    coherence: list[int] = Field(default_factory=list)
    conciseness: list[int] = Field(default_factory=list)
    coverage_image: list[int] = Field(default_factory=list, alias="coverage-image")
    coverage_text: list[int] = Field(default_factory=list, alias="coverage-text")
    coverage_overall: list[int] = Field(default_factory=list, alias="coverage-overall")
    balance: list[int] = Field(default_factory=list)
    progression: list[int] = Field(default_factory=list)
    consistency: list[int] = Field(default_factory=list)
    faithfulness_sentence: dict[str, list[FaithLabel]] = Field(default_factory=dict, alias="faithfulness-sentence")

    def scores(self, aspect: str) -> list[int]:
        return getattr(self, aspect.replace("-", "_"))

    @model_validator(mode="after")
    def _in_scale(self) -> HumanAnnotation:
        for aspect, (low, high) in SCALES.items():
            bad = [s for s in self.scores(aspect) if not low <= s <= high]
            if bad:
                raise ValueError(f"{aspect} scores {bad} outside {low}-{high}")
        return self


class Turn(BaseModel):
    """One turn of the merged dialogue; ``shared_images`` is the index of the image shared here."""

    model_config = ConfigDict(extra="allow")

    utterance: str = ""
    speaker: Any = None
    speaker_id: Any = None
    shared_images: int | None = None


class MdsDialogue(BaseModel):
    """One MDSEval item."""

    model_config = ConfigDict(extra="allow")

    dialogue_id: str = Field(min_length=1)
    images: list[ImageInfo]  # required: a record without images would only fail once judged
    dialogue_statements: list[str] = Field(default_factory=list)
    pseudo_summary: str = ""
    summary_list: list[CandidateSummary] = Field(min_length=1)
    human_annotations: list[HumanAnnotation] = Field(default_factory=list)
    dialogue: list[Turn] | None = None
    # how human sentence labels are read (option faithfulness_votes); set by the loader
    votes_rule: Literal["tiebreak", "majority"] = Field(default="tiebreak", exclude=True)

    @property
    def id(self) -> str:
        return self.dialogue_id

    @field_validator("images")
    @classmethod
    def _some_image(cls, images: list[ImageInfo]) -> list[ImageInfo]:
        if not images:
            raise ValueError("an image-sharing dialogue needs at least one image")
        return images

    @model_validator(mode="after")
    def _consistent(self) -> MdsDialogue:
        if self.human_annotations and len(self.human_annotations) != len(self.summary_list):
            raise ValueError(
                f"{len(self.human_annotations)} human_annotations for {len(self.summary_list)} summaries"
            )
        for index, (summary, human) in enumerate(zip(self.summary_list, self.human_annotations)):
            n = len(summary.summary_sentence_lvl)
            keys = set(human.faithfulness_sentence)
            if keys and keys != {str(i) for i in range(1, n + 1)}:
                raise ValueError(
                    f"human_annotations.{index}.faithfulness-sentence has sentences {sorted(keys, key=int)} "
                    f"but summary {index} has {n} sentences"
                )
        if self.dialogue is not None:
            for t_index, turn in enumerate(self.dialogue):
                if turn.shared_images is not None and not 0 <= turn.shared_images < len(self.images):
                    raise ValueError(f"dialogue.{t_index}.shared_images = {turn.shared_images}: no such image")
        return self

    @property
    def has_images(self) -> bool:
        return all(image.local_path for image in self.images)

    def judge_input(self) -> JudgeInput:
        """What the judges see: real turns/images where given, statements standing in otherwise."""
        turns = "turns" if self.dialogue else "statements"
        if self.has_images:
            return f"{turns}+images"  # type: ignore[return-value]
        return "turns+image-statements" if self.dialogue else "statements"


def _alternatives(image_path: str) -> list[Path]:
    """Other spellings of an ``image_path`` in the image folder: without ``images/``, or by name."""
    rel = Path(image_path)
    return [Path(*rel.parts[1:]), Path(rel.name)] if len(rel.parts) > 1 else []


class DialogueTurns(BaseModel):
    """One record of the merged dialogues file: which dialogue, and its turns."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)

    dialogue_id: str
    dialogue: list[Turn]


def _read_dialogues(dpath: Path, items: list[MdsDialogue]) -> dict[str, list[Turn]]:
    """The dialogues file's turns by dialogue id; any malformed shape, a repeated id or a
    turn sharing an image the annotations record does not have stops with file/record/field."""
    images = {item.dialogue_id: len(item.images) for item in items}
    turns: dict[str, list[Turn]] = {}
    for index, record in enumerate(validate_all(DialogueTurns, read_records(dpath), dpath, id_field="dialogue_id")):
        key = record.dialogue_id
        name = f"{index} (dialogue_id={key!r})"
        if key in turns:
            raise DataError(dpath, f"duplicate dialogue_id {key!r}", record=name, field="dialogue_id")
        for t_index, turn in enumerate(record.dialogue):
            shared = turn.shared_images
            if shared is not None and key in images and not 0 <= shared < images[key]:
                raise DataError(
                    dpath, f"shares image {shared}, but the record has {images[key]} images", record=name, field=f"dialogue.{t_index}.shared_images"
                )
        turns[key] = record.dialogue
    return turns


def load_mdseval(path: str | Path, dialogues: str | Path | None = None, images: str | Path | None = None) -> list[MdsDialogue]:
    """Read the annotations file, merging dialogue turns and image files when given.

    ``dialogues`` is the merged file (records with ``dialogue_id`` and ``dialogue``);
    ``images`` is the folder the records' ``image_path`` values are relative to; each
    must name an image inside it. A dialogue or image that cannot be found, or an image
    path leaving the folder, is an error naming the file and record.
    """
    path = Path(path)
    items = validate_all(MdsDialogue, read_records(path), path, id_field="dialogue_id")
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.dialogue_id in seen:
            raise DataError(path, f"duplicate dialogue_id {item.dialogue_id!r}", record=index, field="dialogue_id")
        seen.add(item.dialogue_id)
        for i_index, image in enumerate(item.images):
            if image.local_path is not None:  # the file that is sent: only the loader may name it, after its checks
                raise DataError(
                    path, "'local_path' is set by dialeval from the image folder; name the file in 'image_path' and "
                    "give the folder with --option image_dir", index, f"images.{i_index}.local_path",
                )
    if dialogues is not None:
        dpath = Path(dialogues)
        turns = _read_dialogues(dpath, items)
        for index, item in enumerate(items):
            if item.dialogue_id not in turns:
                raise DataError(dpath, f"no dialogue for {item.dialogue_id!r}", record=f"{index} (dialogue_id={item.dialogue_id!r})", field="dialogue")
            items[index] = MdsDialogue.model_validate({**item.model_dump(by_alias=True), "dialogue": [t.model_dump() for t in turns[item.dialogue_id]]})
    if images is not None:
        folder = Path(images)
        if not folder.is_dir():
            raise DataError(folder, "image folder not found")
        for index, item in enumerate(items):
            where = f"{index} (dialogue_id={item.dialogue_id!r})"
            for i_index, image in enumerate(item.images):
                field = f"images.{i_index}.image_path"
                if not image.image_path:
                    raise DataError(path, f"no image_path to find in {folder}", where, field)
                found = resolve_local_image(image.image_path, folder, path, where, field, _alternatives(image.image_path), "image",
                                            folder_option="image_dir")
                image.local_path = str(found)
    return items
