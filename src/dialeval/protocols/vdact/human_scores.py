"""VDAct's human ratings of turns (1-3 per annotator), the reference a judge is compared with."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.data.io import DataError, read_records, validate_record


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
