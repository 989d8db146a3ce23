"""Images in prompts, shared by the multimodal benchmarks (MMRC, MMDU).

API backends (``openai``, ``anthropic``, ``openai-compatible``) receive an image as an
``image_url`` content block (local files as base64 data URLs; langchain-anthropic turns
them into Anthropic base64 image blocks). Text-only backends (``smollm2``, ``hf``,
``dry-run``) receive a text line instead: ``[image n: <caption> (<file name or URL>)]``.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from dialeval.agents.base import AgentContext
from dialeval.data.images import ImageRef

IMAGE_BACKENDS = frozenset({"openai", "anthropic", "openai-compatible"})


def accepts_images(ctx: AgentContext, mode: str) -> bool:
    """Whether this agent's backend gets image blocks (``mode``: auto, blocks or text)."""
    if mode == "blocks":
        return True
    if mode == "text":
        return False
    return ctx.client.backend in IMAGE_BACKENDS or ctx.client.sees_images  # local vision models too


def image_url(image: ImageRef) -> str:
    """A URL as is; a local file as a base64 data URL."""
    if image.is_url:
        return image.source
    mime = mimetypes.guess_type(image.source)[0] or "image/png"
    data = base64.b64encode(Path(image.source).read_bytes()).decode("ascii")
    return f"data:{mime};base64,{data}"


def image_line(image: ImageRef, number: int) -> str:
    """The text that stands for an image on text-only backends."""
    caption = image.caption or "no caption"
    return f"[image {number}: {caption} ({image.label})]"


def turn_content(text: str, images: list[ImageRef], first_number: int, blocks: bool) -> str | list[str | dict[str, Any]]:
    """A user message body: text plus images as blocks or as text lines; images numbered from ``first_number``."""
    if not images:
        return text
    if not blocks:
        lines = [image_line(image, first_number + i) for i, image in enumerate(images)]
        return "\n".join([text, *lines]) if text.strip() else "\n".join(lines)
    parts: list[str | dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
    for i, image in enumerate(images):
        parts.append({"type": "text", "text": f"[image {first_number + i}]"})
        parts.append({"type": "image_url", "image_url": {"url": image_url(image)}})
    return parts


def attach_images(messages: list[BaseMessage], images: list[ImageRef], first_number: int, blocks: bool) -> list[BaseMessage]:
    """Put image blocks after the text of the last (user) message of a rendered template."""
    if not blocks or not images:
        return messages
    last = messages[-1]
    return [*messages[:-1], HumanMessage(turn_content(str(last.content), images, first_number, blocks=True))]
