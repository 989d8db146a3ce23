"""Local vision-language models: ``hf:<folder>`` holding an image-text-to-text model.

Why: MMRC, MMDU and MDSEval judge answers about pictures; a local judge that sees the
pictures (instead of their captions) makes those protocols fully local. A folder whose
config is one transformers loads with ``AutoModelForImageTextToText`` (LLaVA, Idefics3 /
SmolVLM, Qwen2-VL, Gemma 3, ...) is loaded with its ``AutoProcessor``; image blocks of
the messages (``image_url`` with a ``data:`` URL, a ``file://`` URL or a local path) are
opened with Pillow and given to the processor as images. Nothing is downloaded: an
``http(s)`` image fails its call with a message saying so.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import unquote, urlparse

from langchain_core.messages import BaseMessage

from dialeval.models.local_models import _ROLES, LocalEngine, LocalModelError, Request, content_text


@dataclass(frozen=True)
class VisionPrompt:
    """A rendered prompt (image placeholders in place) and its images in order."""

    text: str
    images: tuple[Any, ...] = ()

    def __add__(self, prefill: str) -> VisionPrompt:
        return VisionPrompt(self.text + prefill, self.images)


def is_vision_config(config: Any) -> bool:
    """Whether transformers maps this config to an image-text-to-text model."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    return getattr(config, "model_type", None) in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES


def open_image(block: dict[str, Any]) -> Any:
    """The PIL image of an image block; local data only (see module doc)."""
    from PIL import Image

    holder: dict[str, Any] = block["image_url"] if isinstance(block.get("image_url"), dict) else block
    url = holder.get("url") or block.get("url") or block.get("path") or ""
    if isinstance(block.get("image_url"), str):
        url = block["image_url"]
    if url.startswith("data:"):
        data = base64.b64decode(url.split(",", 1)[1])
        return Image.open(io.BytesIO(data)).convert("RGB")
    parsed = urlparse(url)
    if parsed.scheme in ("http", "https"):
        raise LocalModelError(f"local models do not download images: {url}")
    path = Path(unquote(parsed.path) if parsed.scheme == "file" else url).expanduser()
    if not path.is_file():
        raise LocalModelError(f"image not found: {url!r}")
    return Image.open(path).convert("RGB")


def vision_turns(messages: Sequence[BaseMessage]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Messages -> processor chat turns with ``{"type": "image"}`` parts, and the images in order."""
    turns: list[dict[str, Any]] = []
    images: list[Any] = []
    for m in messages:
        role = _ROLES.get(m.type) or getattr(m, "role", None) or "user"
        if isinstance(m.content, str):
            turns.append({"role": role, "content": [{"type": "text", "text": m.content}]})
            continue
        parts: list[dict[str, Any]] = []
        for block in m.content:
            if isinstance(block, dict) and block.get("type") in ("image_url", "image", "input_image"):
                images.append(open_image(block))
                parts.append({"type": "image"})
            else:
                text = content_text([block])
                if text:
                    parts.append({"type": "text", "text": text})
        turns.append({"role": role, "content": parts})
    return turns, images


@dataclass
class VisionEngine(LocalEngine):
    """A loaded processor + image-text-to-text model; prompts carry their images."""

    processor: Any = field(default=None)

    def request(self, messages: Sequence[BaseMessage], prefill: str, schema: str | None) -> Request:
        turns, images = vision_turns(messages)
        text = self.processor.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
        return Request(VisionPrompt(text + prefill, tuple(images)), prefill, schema)

    def _inputs(self, prompts: list[VisionPrompt]) -> Any:
        texts = [p.text for p in prompts]
        if not any(p.images for p in prompts):
            return self.processor(text=texts, return_tensors="pt", padding=True)
        # nested per prompt when every prompt has images (Idefics3 wants that), else flat in order
        images: list[Any] = (
            [list(p.images) for p in prompts] if all(p.images for p in prompts) else [i for p in prompts for i in p.images]
        )
        return self.processor(text=texts, images=images, return_tensors="pt", padding=True)

    def prompt_tokens(self, request: Request) -> int:
        return int(self._inputs([request.prompt])["input_ids"].shape[1])

    def encode(self, requests: list[Request]) -> Any:
        return self._inputs([r.prompt for r in requests])


def load_vision(spec: str, where: str, kwargs: dict[str, Any], gpu: bool) -> VisionEngine:
    """Processor and model from ``where``: half precision spread over the GPUs when present."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(where, **kwargs)
    model = AutoModelForImageTextToText.from_pretrained(
        where, dtype=torch.float16 if gpu else torch.float32, device_map="auto" if gpu else None, **kwargs
    )
    tokenizer = processor.tokenizer
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return VisionEngine(source=spec, tokenizer=tokenizer, model=model, processor=processor)
