"""The local backends: message conversion, request batching, and the bundled smollm2 model.

Tests marked ``slow`` load the real SmolLM2-135M (once per process) and generate a few
short answers; they run in CI too.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from dialeval.models import local_loading, local_models
from dialeval.config import EvalContext, ModelSettings
from dialeval.models.local_models import LocalChatModel, LocalEngine, LocalModelError, Output, chat_turns, content_text
from dialeval.models.client import build_chat_model
from dialeval.testing.scripted import prompt_text

# ---------------------------------------------------------------- messages


def test_chat_turns_map_langchain_roles_to_template_roles():
    turns = chat_turns([SystemMessage("Be brief."), HumanMessage("Hi"), AIMessage("Hello!"), HumanMessage("Bye")])
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user"]
    assert turns[2]["content"] == "Hello!"


def test_image_blocks_become_their_caption_or_a_marker():
    content = [
        {"type": "text", "text": "Compare the two pictures."},
        {"type": "image_url", "image_url": {"url": "file:///a.png"}, "caption": "a red kite over a beach"},
        {"type": "image", "url": "https://example.org/b.png"},
    ]
    assert content_text(content) == (
        "Compare the two pictures.\n[image: a red kite over a beach]\n[image omitted]"
    )


# ---------------------------------------------------------------- batching (no model)


class EchoEngine(LocalEngine):
    """Answers each prompt with its upper-cased text; remembers batches and threads."""

    def prompt(self, messages):
        return prompt_text(messages)

    def generate(self, requests, *, max_new_tokens, temperature):
        self.batch_sizes.append(len(requests))
        self.threads = getattr(self, "threads", set()) | {threading.current_thread().name}
        return [
            LocalModelError("too long") if "boom" in r.prompt else Output(r.prompt.upper(), "stop", len(r.prompt), len(r.prompt))
            for r in requests
        ]


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> EchoEngine:
    engine = EchoEngine(source="echo", tokenizer=None, model=None)
    monkeypatch.setitem(local_loading._ENGINES, "echo", engine)
    return engine


async def test_concurrent_calls_are_generated_together_off_the_event_loop(echo):
    model = LocalChatModel.load(source="echo", batch_size=3)
    answers = await asyncio.gather(*(model.ainvoke([HumanMessage(f"q{i}")]) for i in range(7)))
    assert [a.content for a in answers] == [f"Q{i}" for i in range(7)]
    assert sum(echo.batch_sizes) == 7 and max(echo.batch_sizes) == 3 and len(echo.batch_sizes) == 3
    assert threading.current_thread().name not in echo.threads
    assert answers[0].response_metadata["finish_reason"] == "stop"
    assert answers[0].usage_metadata == {"input_tokens": 2, "output_tokens": 2, "total_tokens": 4}


async def test_abatch_and_agenerate_use_the_same_batches(echo):
    model = LocalChatModel.load(source="echo", batch_size=8)
    await model.abatch([[HumanMessage(f"a{i}")] for i in range(5)])
    result = await model.agenerate([[HumanMessage(f"b{i}")] for i in range(4)])
    assert list(echo.batch_sizes) == [5, 4]
    assert [g[0].text for g in result.generations] == ["B0", "B1", "B2", "B3"]


async def test_a_failing_prompt_fails_alone(echo):
    model = LocalChatModel.load(source="echo", batch_size=4)
    ok, bad = await asyncio.gather(
        model.ainvoke([HumanMessage("fine")]), model.ainvoke([HumanMessage("boom")]), return_exceptions=True
    )
    assert ok.content == "FINE"
    assert isinstance(bad, LocalModelError)
    assert list(echo.batch_sizes) == [2]


def test_stop_strings_cut_the_answer(echo):
    model = LocalChatModel.load(source="echo")
    assert model.invoke([HumanMessage("one. two")], stop=["."]).content == "ONE"


# ---------------------------------------------------------------- hf: errors (offline, no model)


def test_hf_spec_with_a_missing_path_names_the_spec():
    with pytest.raises(LocalModelError, match=r"hf:/nonexistent/model-dir.*no such file or folder"):
        build_chat_model(ModelSettings(spec="hf:/nonexistent/model-dir"))


def test_hf_spec_with_a_hub_id_not_on_disk_is_not_downloaded():
    with pytest.raises(LocalModelError, match=r"hf:nobody-here/no-such-model.*not in the local Hugging Face cache"):
        build_chat_model(ModelSettings(spec="hf:nobody-here/no-such-model"))


# ---------------------------------------------------------------- the real bundled model


def smollm2(max_tokens: int) -> LocalChatModel:
    return build_chat_model(ModelSettings(spec="smollm2", max_tokens=max_tokens))


@pytest.mark.slow
def test_smollm2_answers_a_question_with_real_token_counts():
    answer = smollm2(24).invoke([HumanMessage("What is the capital of France? Answer in one short sentence.")])
    assert "Paris" in answer.content
    assert answer.response_metadata["finish_reason"] == "stop"
    assert answer.usage_metadata["input_tokens"] > 10
    assert 0 < answer.usage_metadata["output_tokens"] <= 24


@pytest.mark.slow
def test_smollm2_flags_an_answer_cut_at_the_token_limit():
    answer = smollm2(8).invoke([HumanMessage("Write a long story about a dragon who learns to bake.")])
    assert answer.response_metadata["finish_reason"] == "length"
    assert answer.usage_metadata["output_tokens"] == 8


@pytest.mark.slow
async def test_smollm2_batch_of_four_matches_one_at_a_time():
    model = smollm2(16)
    questions = [
        "Name a fruit that is yellow.",
        "What is two plus three?",
        "Say hello in French and explain the word in one sentence.",
        "Which planet do we live on?",
    ]
    alone = [model.invoke([HumanMessage(q)]).content for q in questions]
    model.engine.batch_sizes.clear()
    together = await asyncio.gather(*(model.ainvoke([HumanMessage(q)]) for q in questions))
    assert list(model.engine.batch_sizes) == [4]
    assert [a.content for a in together] == alone


class Capital(BaseModel):
    city: str


@pytest.mark.slow
async def test_an_agent_call_on_smollm2_is_parsed_or_honestly_unparsed():
    from dialeval.agents.base import AgentContext, ask

    context = EvalContext(default_model=ModelSettings(spec="smollm2", max_tokens=32), cache_path=None, parse_retries=0)
    ctx = AgentContext.for_role(context, "judge", "answers/answer_judge")
    prompt = [HumanMessage('What is the capital of Italy? Reply with only JSON like {"city": "..."}.')]
    answer = await ask(ctx, "capital_test", prompt, Capital)
    if answer.call.status == "ok":
        assert answer.value is not None and answer.value.city.strip()
    else:
        assert answer.call.status in ("unparsed", "truncated")
        assert answer.value is None and answer.call.raw and answer.call.reason


# ---------------------------------------------------------------- schema-constrained decoding (tiny random model)

from typing import Literal  # noqa: E402

from pydantic import Field  # noqa: E402

from dialeval.agents.base import schema_with  # noqa: E402
from tests.tiny_models import build_causal_lm, build_vision_lm  # noqa: E402


class Label(BaseModel):
    verdict: Literal["knowable", "unknowable"]


class Score(BaseModel):
    score: int = Field(ge=0, le=5)


class Facts(BaseModel):
    facts: list[Label]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> LocalChatModel:
    folder = build_causal_lm(tmp_path_factory.mktemp("tiny-lm"))
    return LocalChatModel.load(source=str(folder), max_new_tokens=120, batch_size=8)


def test_a_random_model_writes_noise_without_a_schema(tiny_lm):
    text = tiny_lm.invoke([HumanMessage("Is it knowable?")]).content
    with pytest.raises(ValueError):
        Label.model_validate_json(text)


def test_an_enum_label_is_one_of_the_schema_labels(tiny_lm):
    answer = tiny_lm.invoke([HumanMessage("Is it knowable?")], json_schema=Label.model_json_schema())
    assert Label.model_validate_json(answer.content).verdict in ("knowable", "unknowable")
    assert answer.response_metadata["finish_reason"] == "stop"


def test_an_integer_stays_in_its_range(tiny_lm):
    for question in ("Rate it.", "Rate it from 0 to 5.", "Score?"):
        answer = tiny_lm.invoke([HumanMessage(question)], json_schema=Score.model_json_schema())
        assert 0 <= Score.model_validate_json(answer.content).score <= 5


def test_an_array_has_the_length_the_call_asks_for(tiny_lm):
    schema = schema_with(Facts, facts={"minItems": 3, "maxItems": 3})
    answer = tiny_lm.invoke([HumanMessage("Judge three facts.")], json_schema=schema)
    assert len(Facts.model_validate_json(answer.content).facts) == 3


def test_the_fact_verifier_schema_numbers_each_verdict():
    from dialeval.protocols.kgds.fact_verifier import FactVerdicts, numbered_verdicts

    schema = numbered_verdicts(2)
    assert schema["properties"]["verdicts"]["minItems"] == schema["properties"]["verdicts"]["maxItems"] == 2
    assert [item["properties"]["fact"] for item in schema["properties"]["verdicts"]["prefixItems"]] == [
        {"const": 1},
        {"const": 2},
    ]
    assert FactVerdicts.model_json_schema()["properties"]["verdicts"].get("minItems") is None  # the model is untouched


async def test_a_batch_mixes_schemas_and_free_text(tiny_lm):
    tiny_lm.engine.batch_sizes.clear()
    label, score, free = await asyncio.gather(
        tiny_lm.ainvoke([HumanMessage("a")], json_schema=Label.model_json_schema()),
        tiny_lm.ainvoke([HumanMessage("b")], json_schema=Score.model_json_schema()),
        tiny_lm.ainvoke([HumanMessage("c")]),
    )
    assert list(tiny_lm.engine.batch_sizes) == [3]
    Label.model_validate_json(label.content)
    Score.model_validate_json(score.content)
    assert free.content and not free.content.startswith("{")


def test_a_prefill_that_breaks_the_schema_fails_alone(tiny_lm):
    with pytest.raises(LocalModelError, match="does not fit its JSON schema"):
        tiny_lm.invoke([HumanMessage("x"), AIMessage('{"nope":')], json_schema=Score.model_json_schema())


async def test_an_agent_call_on_a_random_local_model_is_always_readable(tiny_lm, tmp_path):
    from dialeval.agents.base import AgentContext, ask
    from dialeval.models.client import LOCAL_DECODING, register_client

    settings = ModelSettings(spec=f"hf:{tiny_lm.source}", max_tokens=120)
    register_client(settings, tiny_lm)
    context = EvalContext(default_model=settings, cache_path=str(tmp_path / "cache.sqlite"), parse_retries=0)
    ctx = AgentContext.for_role(context, "judge", "answers/answer_judge")
    assert ctx.client.cache_parts([HumanMessage("q")], Score)["local_decoding"][0] == LOCAL_DECODING["grammar"]
    answers = [await ask(ctx, "score_test", [HumanMessage(f"Rate answer {i}.")], Score) for i in range(4)]
    assert [a.call.status for a in answers] == ["ok"] * 4
    assert all(0 <= a.value.score <= 5 for a in answers)


# ---------------------------------------------------------------- a local vision-language model


def _png_data_url(colour: str) -> str:
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> LocalChatModel:
    folder = build_vision_lm(tmp_path_factory.mktemp("tiny-vlm"))
    return LocalChatModel.load(source=str(folder), max_new_tokens=40)


def test_a_vision_folder_loads_a_vision_model_that_takes_images_as_images(tiny_vlm):
    from dialeval.models.local_vision import VisionEngine, vision_turns

    assert isinstance(tiny_vlm.engine, VisionEngine)
    message = HumanMessage(
        [{"type": "text", "text": "Which colour?"}, {"type": "image_url", "image_url": {"url": _png_data_url("red")}}]
    )
    turns, images = vision_turns([message])
    assert turns[0]["content"][1] == {"type": "image"} and images[0].size == (40, 30)
    with_image = tiny_vlm.invoke([message], json_schema=Score.model_json_schema())
    without = tiny_vlm.invoke([HumanMessage("Which colour?")])
    Score.model_validate_json(with_image.content)
    # the image reaches the model as image tokens, not as a caption
    assert with_image.usage_metadata["input_tokens"] > without.usage_metadata["input_tokens"] + 2


async def test_a_vision_batch_mixes_prompts_with_and_without_images(tiny_vlm):
    image = {"type": "image_url", "image_url": {"url": _png_data_url("blue")}}
    tiny_vlm.engine.batch_sizes.clear()
    answers = await asyncio.gather(
        tiny_vlm.ainvoke([HumanMessage([{"type": "text", "text": "a"}, image])]),
        tiny_vlm.ainvoke([HumanMessage("b")]),
    )
    assert list(tiny_vlm.engine.batch_sizes) == [2] and all(a.response_metadata["finish_reason"] for a in answers)


def test_a_local_model_does_not_download_images(tiny_vlm):
    message = HumanMessage([{"type": "image_url", "image_url": {"url": "https://example.org/cat.png"}}])
    with pytest.raises(LocalModelError, match="do not download images"):
        tiny_vlm.invoke([message])


def test_mmrc_sends_image_blocks_to_a_local_vision_model_and_lines_to_a_text_one(tiny_vlm, tiny_lm):
    from types import SimpleNamespace

    from dialeval.protocols.mmrc.common import accepts_images
    from dialeval.models.client import register_client

    vision = register_client(ModelSettings(spec=f"hf:{tiny_vlm.source}"), tiny_vlm)
    text = register_client(ModelSettings(spec=f"hf:{tiny_lm.source}"), tiny_lm)
    assert accepts_images(SimpleNamespace(client=vision), "auto")
    assert not accepts_images(SimpleNamespace(client=text), "auto")
    # before any model is loaded, the folder's config decides
    assert local_models.is_vision_source(tiny_vlm.source) and not local_models.is_vision_source(tiny_lm.source)
    assert not local_models.is_vision_source("/nonexistent/folder")


def test_without_xgrammar_the_json_answer_is_started_and_cached_apart(tiny_lm, monkeypatch):
    from dialeval.models import local_grammar
    from dialeval.models.client import LOCAL_DECODING, ModelClient

    client = ModelClient(ModelSettings(spec=f"hf:{tiny_lm.source}"), tiny_lm)
    question = [HumanMessage("Rate it.")]
    assert client._prefilled(question, Score) == question  # the grammar writes the JSON itself
    constrained = client.cache_parts(question, Score)["local_decoding"]
    monkeypatch.setattr(local_grammar, "available", lambda: False)
    assert client._prefilled(question, Score)[-1].content == '{"score":'
    assert client.cache_parts(question, Score)["local_decoding"] == LOCAL_DECODING["prefill"]
    assert constrained[0] == LOCAL_DECODING["grammar"]
    assert constrained[1]["properties"]["score"] == {"maximum": 5, "minimum": 0, "title": "Score", "type": "integer"}


def test_a_local_note_taker_writes_a_short_note_of_strings(tiny_lm):
    import json

    from dialeval.protocols.mmrc.notetaker import NEW_KEYS_PER_TURN, note_schema

    current = {"user_info": "lives in Lyon"}
    roomy = LocalChatModel.load(source=tiny_lm.source, max_new_tokens=2000)  # room for a large note
    answer = roomy.invoke([HumanMessage("Update the note.")], json_schema=note_schema(current))
    assert answer.response_metadata["finish_reason"] == "stop"
    note = json.loads(answer.content)
    assert isinstance(note, dict) and len(note) <= len(current) + NEW_KEYS_PER_TURN
    assert all(key[0].islower() and len(key) <= 40 for key in note)
    for value in note.values():
        entries = value if isinstance(value, list) else [value]
        assert len(entries) <= 5 and all(isinstance(e, str) and len(e) <= 100 for e in entries)
