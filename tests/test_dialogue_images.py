"""Pictures given as data: URLs: checked like files, counted as image tokens, never as text."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from langchain_core.messages import HumanMessage
from PIL import Image

from dialeval.data.images import ImageRef, image_tokens, source_label
from dialeval.data.io import DataError
from dialeval.protocols.dialogue.context import prompt_tokens
from dialeval.conversation.data import load_conversations
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import scripted_reviewer, write_jsonl
from tests.helpers import http_config

QUESTION = "Is this shelf straight, or does it lean to the left?"


def noisy_png(side: int = 300) -> bytes:
    """A PNG that does not compress (random pixels): about 270 KB at 300 x 300."""
    pixels = np.random.default_rng(0).integers(0, 256, (side, side, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def data_url(raw: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def chat(url: str) -> dict:
    return {"id": "shelf", "messages": [
        {"role": "user", "content": [{"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {"url": url}}]},
        {"role": "assistant", "content": "It leans left: one bracket sits lower."},
    ]}


@pytest.mark.parametrize("url, problem", [
    ("data:image/png;base64,!!!", "payload is not base64"),
    ("data:image/png;base64," + "A" * 400_000, "not an image Pillow can read"),
    ("data:image/png;base64," + base64.b64encode(noisy_png(8)[:40]).decode(), "not an image Pillow can read"),
])
def test_a_broken_data_url_stops_before_any_call_naming_file_record_and_field(tmp_path, url, problem):
    with pytest.raises(DataError) as err:
        load_conversations(write_jsonl(tmp_path / "chat.jsonl", [chat(url)]))
    message = str(err.value)
    assert "chat.jsonl, record 1" in message and "field 'messages.0.content.1.image_url'" in message and problem in message
    assert len(message) < 400  # the payload is not pasted into the message


def test_a_data_url_is_named_by_type_and_size_and_counted_by_its_pixels():
    url = data_url(noisy_png())
    assert source_label(url) == f"inline image/png, {len(noisy_png()) // 1024} KB"
    assert ImageRef(source=url).label == source_label(url)
    assert image_tokens(url) == 85 + 170 * 1  # 300 x 300: one 512-pixel tile
    message = HumanMessage([{"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {"url": url}}])
    assert prompt_tokens([message]) < 300


def test_the_users_words_stay_in_the_judges_prompt_beside_a_large_inline_picture(tmp_path):
    data = write_jsonl(tmp_path / "chat.jsonl", [chat(data_url(noisy_png()))])
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("criteria:\n  - name: consistency\n    description: Does the reply fit the picture?\n    scale: [1, 5]\n")
    with OpenAIStub(respond=lambda body: scripted_reviewer([HumanMessage(prompt_of(body))])) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"rubric": str(rubric), "context_budget": 4000})
        result = run("dialogue", data, config, progress=False)
        [body] = server.completions
    text = prompt_of(body)
    assert QUESTION in text and "earlier turns are not shown" not in text and "base64" not in text
    assert "inline image/png" in text
    blocks = [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"] if p.get("type") == "image_url"]
    assert len(blocks) == 1 and blocks[0]["image_url"]["url"].startswith("data:image/png;base64,")
    [unit] = result.records[0]["turn_units"]
    assert unit["status"] == "ok" and unit["context"]["prompt_tokens"] < 4000
    assert result.metrics["prompts"]["over_budget"] == 0


def test_an_image_outside_the_data_folder_names_no_option_the_benchmark_lacks(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "outside.png").write_bytes(noisy_png(4))
    with pytest.raises(DataError) as err:
        load_conversations(write_jsonl(tmp_path / "data" / "chat.jsonl", [chat("../outside.png")]))
    assert "must lie inside the data file's folder (no absolute paths" in str(err.value)
    assert "option" not in str(err.value)
