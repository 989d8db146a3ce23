"""An image a data record refers to (a local file or a URL), shared by the multimodal benchmarks."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ImageRef(BaseModel):
    """An image shown in a user turn: a local path or an http(s) URL, with an optional caption.

    The caption is what text-only backends see instead of the pixels.
    """

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1)
    caption: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: object) -> object:
        return {"source": value} if isinstance(value, str) else value

    @property
    def is_url(self) -> bool:
        return self.source.startswith(("http://", "https://", "data:"))
