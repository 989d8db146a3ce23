"""KGDS samples (the official ``KGDS.json`` format) and system predictions.

A sample holds the shared background knowledge (numbered news paragraphs), the
discussion grounded in it, and the expert annotations the evaluation compares against:
gold background-supporting paragraphs (BSP), clear atomic opinions (CAO, clarified
references kept between ``**``), and atomic facts of supporting (``BSPAF``) and
non-supporting (``BNPAF``) paragraphs. Only facts of ``type`` 1 in BSPAF (key facts) and
``type`` 0 in BNPAF (non-supporting facts) are scored; the other types (non-key,
repeated, masked conflicting facts) are kept but never verified.

Items are identified by their 0-based position in the file (``"0"``, ``"1"``...).

Predictions format (JSON array or JSONL), one record per sample, pattern and round::

    {"sample": 0, "pattern": "ebs", "background": [1, 3], "opinion": "Person1 ..."}
    {"sample": 0, "pattern": "abs", "background": "The Knicks beat ...", "opinion": "..."}

``sample`` is the 0-based index in the data file; ``pattern`` is ``ebs`` (background =
list of paragraph indices, ``"<Paragraph_3>"``-style labels accepted) or ``abs``
(background = text); ``opinion`` may be ``null`` to score the background alone;
``round`` (default 0) numbers self-reflection rounds when a system has several.
A sample with no record for a pattern and round that the file has for other samples is
scored as a failed summary (zeros), as a generated summary that failed would be.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dialeval.data.io import DataError, read_records, validate_all, validate_record

KEY_FACT = 1  # BSPAF type of a key background-supporting atomic fact
NONSUPPORTING_FACT = 0  # BNPAF type of a background-nonsupporting atomic fact
Pattern = Literal["ebs", "abs"]
_INDEX = re.compile(r"-?\d+")


class Paragraph(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paragraph_index: int = Field(ge=1)
    paragraph_text: str = Field(min_length=1)


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    participant: str = Field(min_length=1)
    utterance: str = Field(min_length=1)


class AtomicFact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    atomic_fact: str = Field(min_length=1)
    type: int


class ParagraphFacts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paragraph_index: int = Field(ge=1)
    atomic_facts: list[AtomicFact]


class KgdsSample(BaseModel):
    """One official KGDS sample; ``BSPAF``/``BNPAF`` may be absent in user data."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    SBK: list[Paragraph] = Field(min_length=1)
    KGD: list[Turn] = Field(min_length=1)
    BSP: list[Paragraph] = Field(min_length=1)
    CAO: list[str] = Field(default_factory=list)
    BSPAF: list[ParagraphFacts] | None = None
    BNPAF: list[ParagraphFacts] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> KgdsSample:
        indices = [p.paragraph_index for p in self.SBK]
        if len(set(indices)) != len(indices):
            raise ValueError("SBK paragraph indices are not unique")
        known = set(indices)
        for name in ("BSP", "BSPAF", "BNPAF"):
            for p in getattr(self, name) or []:
                if p.paragraph_index not in known:
                    raise ValueError(f"{name} names paragraph {p.paragraph_index}, which is not in SBK")
        return self

    # -- views the agents and metrics use ------------------------------------------------

    @property
    def paragraph_indices(self) -> list[int]:
        return [p.paragraph_index for p in self.SBK]

    @property
    def supporting(self) -> set[int]:
        return {p.paragraph_index for p in self.BSP}

    @property
    def nonsupporting(self) -> set[int]:
        return set(self.paragraph_indices) - self.supporting

    def scored_facts(self) -> list[ScoredFact]:
        """Key facts of supporting paragraphs and facts of non-supporting ones, in paragraph order."""
        out: list[ScoredFact] = []
        kinds: tuple[Literal["key", "nonsupporting"], ...] = ("key", "nonsupporting")
        for group, kind, wanted in zip((self.BSPAF, self.BNPAF), kinds, (KEY_FACT, NONSUPPORTING_FACT)):
            for p in group or []:
                for position, fact in enumerate(p.atomic_facts):
                    if fact.type == wanted:
                        out.append(ScoredFact(paragraph=p.paragraph_index, position=position, kind=kind, text=fact.atomic_fact))
        return sorted(out, key=lambda f: (f.paragraph, f.position))

    def paragraphs_without_facts(self) -> list[int]:
        """Paragraphs whose atomic facts are not given (user data): candidates for decomposition."""
        have = {p.paragraph_index for p in (self.BSPAF or []) + (self.BNPAF or [])}
        return [i for i in self.paragraph_indices if i not in have]


class ScoredFact(BaseModel):
    """A fact the ABS is checked against: ``key`` (counts for recall) or ``nonsupporting``."""

    paragraph: int
    position: int  # index inside the paragraph's atomic_facts list
    kind: Literal["key", "nonsupporting"]
    text: str

    @property
    def fact_id(self) -> str:
        return f"{self.paragraph}.{self.position}"


def load_kgds(path: str | Path) -> list[KgdsSample]:
    """Samples of an official KGDS file (a JSON array), ids set to their positions."""
    raws = read_records(path)
    samples = validate_all(KgdsSample, raws, path)
    for index, sample in enumerate(samples):
        sample.id = str(index)
    return samples


def paragraph_number(value: Any) -> int:
    """``3``, ``"3"``, ``"<Paragraph_3>"``, ``"P3"`` -> 3; anything else is a ``ValueError``."""
    if isinstance(value, bool):
        raise ValueError(f"not a paragraph index: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        found = _INDEX.findall(value)
        if len(found) == 1:
            return int(found[0])
    raise ValueError(f"not a paragraph index: {value!r}")


class Prediction(BaseModel):
    """A system's summaries of one sample in one pattern (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    sample: int = Field(ge=0)
    pattern: Pattern
    background: list[int] | str
    opinion: str | None = None
    round: int = Field(default=0, ge=0)

    @field_validator("background", mode="before")
    @classmethod
    def _indices(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [paragraph_number(v) for v in value]
        return value

    @model_validator(mode="after")
    def _shape(self) -> Prediction:
        if self.pattern == "ebs" and not isinstance(self.background, list):
            raise ValueError("an ebs background is a list of paragraph indices")
        if self.pattern == "abs" and (not isinstance(self.background, str) or not self.background.strip()):
            raise ValueError("an abs background is a non-empty text")
        return self


def load_predictions(path: str | Path, samples: list[KgdsSample]) -> dict[str, list[Prediction]]:
    """Predictions grouped by item id; unknown samples and duplicates are errors."""
    raws = read_records(path)
    out: dict[str, list[Prediction]] = {}
    seen: set[tuple[int, str, int]] = set()
    for number, raw in enumerate(raws):
        pred = validate_record(Prediction, raw, path, number)
        if pred.sample >= len(samples):
            message = f"sample {pred.sample} is not in the data ({len(samples)} samples)"
            raise DataError(path, message, record=number, field="sample")
        key = (pred.sample, pred.pattern, pred.round)
        if key in seen:
            message = f"a second prediction for sample {pred.sample}, pattern {pred.pattern}, round {pred.round}"
            raise DataError(path, message, record=number)
        seen.add(key)
        out.setdefault(str(pred.sample), []).append(pred)
    return out


def missing_predictions(preds: dict[str, list[Prediction]], ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per item id, the (pattern, round) entries the file has for other samples but not
    for this one, as ``{"pattern", "round", "missing": True}`` records."""
    wanted = {(p.pattern, p.round) for ps in preds.values() for p in ps}
    out: dict[str, list[dict[str, Any]]] = {}
    for item_id in ids:
        have = {(p.pattern, p.round) for p in preds.get(item_id, [])}
        out[item_id] = [{"pattern": pat, "round": r, "missing": True} for pat, r in sorted(wanted - have)]
    return out


def prediction_summaries(predictions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Predictions (dumped :class:`Prediction`, or missing-entry records) as the graph's
    summary entries; a missing one has status ``missing`` (the system's failure)."""
    return [
        {
            "pattern": p["pattern"],
            "round": p.get("round", 0),
            "status": "missing" if p.get("missing") else "given",
            "background": p.get("background"),
            "opinion": p.get("opinion"),
            "reflection": None,
        }
        for p in predictions
    ]
