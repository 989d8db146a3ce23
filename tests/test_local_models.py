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

from dialeval import local_models
from dialeval.config import EvalContext, ModelSettings
from dialeval.local_models import LocalChatModel, LocalEngine, LocalModelError, Output, chat_turns, content_text
from dialeval.models import build_chat_model
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

    def generate(self, prompts, *, max_new_tokens, temperature, json_open=None):
        self.batch_sizes.append(len(prompts))
        self.threads = getattr(self, "threads", set()) | {threading.current_thread().name}
        return [
            LocalModelError("too long") if "boom" in p else Output(p.upper(), "stop", len(p), len(p))
            for p in prompts
        ]


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> EchoEngine:
    engine = EchoEngine(source="echo", tokenizer=None, model=None)
    monkeypatch.setitem(local_models._ENGINES, "echo", engine)
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
