"""Conversations and rubrics in the formats users have; bad input is named precisely."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from dialeval.data.io import DataError
from dialeval.errors import ConfigError
from dialeval.protocols.dialogue.loading import options_of
from dialeval.conversation.data import load_conversations
from dialeval.conversation.rubric import load_rubric, parse_rubric
from tests.dialogue_helpers import write_jsonl

ISSUE_RUBRIC = """
criteria:
  - name: consistency
    level: turn                # every assistant turn
    description: Does the reply agree with everything the user said earlier?
    scale: [1, 5]              # an integer range
  - name: resolved
    level: conversation
    description: By the end, did the assistant give the user what they asked for?
    scale: [yes, no]           # or any list of labels
"""


def png_bytes() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(out, format="PNG")
    return out.getvalue()


def test_openai_messages_with_images_and_references(tmp_path):
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "lamp.png").write_bytes(png_bytes())
    inline = "data:image/png;base64," + base64.b64encode(png_bytes()).decode()
    record = {
        "id": 7,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image_url", "image_url": {"url": "pics/lamp.png"}},
                                         {"type": "image_url", "image_url": {"url": inline}}]},
            {"role": "assistant", "content": "A red square.", "reference": "A small red image."},
        ],
        "grounding": "Both images are red squares.",
        "metadata": {"system": "v2"},
        "summary": "The user asked about two pictures.",
    }
    [conv] = load_conversations(write_jsonl(tmp_path / "chat.jsonl", [record]))

    assert conv.id == "7" and conv.system == "Be brief." and conv.grounding == ["Both images are red squares."]
    user, reply = conv.turns
    assert (user.number, user.role, user.text) == (1, "user", "What is this?")
    assert user.images[0].source == str((tmp_path / "pics" / "lamp.png").resolve()) and user.images[1].source == inline
    assert (reply.number, reply.reference, conv.summary) == (2, "A small red image.", "The user asked about two pictures.")


def test_sharegpt_in_a_json_array(tmp_path):
    path = tmp_path / "share.json"
    path.write_text(json.dumps([{"id": "a", "conversations": [
        {"from": "system", "value": "You help with lamps."},
        {"from": "human", "value": "It flickers."},
        {"from": "gpt", "value": "Tighten the bulb."},
    ]}]), encoding="utf-8")
    [conv] = load_conversations(path)
    assert conv.system == "You help with lamps." and [t.role for t in conv.turns] == ["user", "assistant"]


@pytest.mark.parametrize(
    "record, where",
    [
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "field 'id'"),
        ({"id": "x", "messages": [{"role": "bot", "content": "hi"}]}, "field 'messages.0.role'"),
        ({"id": "x", "messages": [{"role": "user", "content": "hi"}]}, "no assistant message"),
        ({"id": "x", "conversations": [{"from": "alien", "value": "hi"}]}, "field 'conversations.0.from'"),
        ({"id": "x", "messages": [{"role": "assistant", "content": [{"type": "audio"}]}]}, "field 'messages.0.content.0'"),
        ({"id": "x", "messages": [{"role": "assistant", "content": "ok"}], "grounding": [3]}, "field 'grounding'"),
        ({"id": "x", "messages": [{"role": "assistant", "content": "ok"}], "score": 3}, "field 'score'"),
        ({"id": "x", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "../outside.png"}}]}, {"role": "assistant", "content": "ok"}]},
         "field 'messages.0.content.0.image_url'"),
        ({"id": "x", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:text/plain;base64,aGk="}}]}, {"role": "assistant", "content": "ok"}]},
         "must be a base64 image"),
    ],
)
def test_bad_records_stop_with_file_record_and_field(tmp_path, record, where):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"id": "fine", "messages": [{"role": "assistant", "content": "ok"}]}, record])
    with pytest.raises(DataError) as err:
        load_conversations(path)
    assert str(path) in str(err.value) and "record 2 (line 2)" in str(err.value) and where in str(err.value)


def test_duplicate_ids_are_refused(tmp_path):
    one = {"id": "same", "messages": [{"role": "assistant", "content": "ok"}]}
    with pytest.raises(DataError, match="duplicate id 'same'"):
        load_conversations(write_jsonl(tmp_path / "dup.jsonl", [one, one]))


def test_the_rubric_shape_scripts_rely_on(tmp_path):
    path = tmp_path / "rubric.yaml"
    path.write_text(ISSUE_RUBRIC, encoding="utf-8")
    rubric = load_rubric(str(path))

    consistency, resolved = rubric.criteria
    assert (consistency.level, consistency.scale.low, consistency.scale.high) == ("turn", 1, 5)
    assert (resolved.level, resolved.scale.labels) == ("conversation", ("yes", "no"))  # YAML's booleans read back as words
    assert resolved.scale.read("Yes") == "yes" and resolved.scale.score("yes") == 2.0 and consistency.scale.read(6) is None


def test_the_built_in_rubric_covers_the_common_cases():
    names = {c.name: c for c in load_rubric("dialogue").criteria}
    assert set(names) == {"relevance", "consistency", "faithfulness", "helpfulness", "system_prompt_adherence",
                          "refusal", "goal_completion"}
    assert names["faithfulness"].needs == ["grounding"] and names["goal_completion"].level == "conversation"


@pytest.mark.parametrize(
    "criteria, message",
    [
        ([{"name": "tone", "description": "Polite?", "scale": [5, 1]}], "criterion 0 ('tone'), field 'scale': an integer range goes from low to high"),
        ([{"name": "tone", "description": "Polite?", "scale": [1, 5], "level": "paragraph"}], "criterion 0 ('tone'), field 'level'"),
        ([{"name": "tone", "scale": [1, 5]}], "field 'description'"),
        ([{"name": "a", "description": "x", "scale": ["ok"]}], "at least two labels"),
        ([{"name": "a", "description": "x", "scale": [1, 5]}, {"name": "a", "description": "y", "scale": [1, 5]}], "criterion 'a', field 'name': used twice"),
    ],
)
def test_rubric_errors_name_the_file_criterion_and_field(criteria, message):
    with pytest.raises(ConfigError) as err:
        parse_rubric({"criteria": criteria}, "my.yaml")
    assert "rubric my.yaml" in str(err.value) and message in str(err.value)


def test_options_are_checked_before_any_call():
    with pytest.raises(ConfigError, match="option 'context'"):
        options_of({"context": "everything"})
    with pytest.raises(ConfigError, match="'tone' is not a criterion"):
        options_of({"criteria": ["tone"]})
    with pytest.raises(ConfigError, match="neither a built-in rubric"):
        options_of({"rubric": "no-such-rubric.yaml"})
