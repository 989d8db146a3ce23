"""OpenAI calls that skip LangChain's run machinery must be indistinguishable from ``ainvoke``:
the same request body, the same message back, and LangChain's path whenever a callback
(LangSmith, LangGraph Studio, a user's handler) would record the call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage

from dialeval.protocols.answers.judge import AnswerGrade
from dialeval.config import EvalContext, ModelSettings
from dialeval.protocols.answers.graph import build_graph
from dialeval.models.client import _response_format, build_chat_model, error_kind
from dialeval.models.backends.openai import direct_call, unobserved
from dialeval.testing.openai_server import OpenAIStub
from dialeval.models.usage import Ledger, current_ledger
from tests.helpers import then_closed

MESSAGES = [SystemMessage("Grade the answer."), HumanMessage("Question: 2+2? Answer: 4")]
STRUCTURED = {"response_format": _response_format(AnswerGrade)}


class Recorder(AsyncCallbackHandler):
    """Records chat model runs, as a tracer or Studio's stream handler would see them."""

    def __init__(self) -> None:
        self.prompts: list[list[Any]] = []

    async def on_chat_model_start(self, serialized: Any, messages: list[list[Any]], **kwargs: Any) -> None:
        self.prompts.append(messages[0])


def _same_message(direct: Any, invoked: Any) -> None:
    assert direct.content == invoked.content
    assert direct.usage_metadata == invoked.usage_metadata
    assert direct.tool_calls == invoked.tool_calls
    meta = {k: v for k, v in direct.response_metadata.items() if k != "id"}  # the server numbers its answers
    assert meta == {k: v for k, v in invoked.response_metadata.items() if k != "id"}


@pytest.mark.parametrize(
    ("kwargs", "reply"),
    [
        (STRUCTURED, '{"rationale": "right", "score": 5}'),
        (STRUCTURED, ('{"rationale": "cut', "length")),  # parse() raises here; the message says "length"
        ({}, ("Four is right.", "stop")),
    ],
)
def test_the_direct_call_sends_and_returns_what_ainvoke_does(kwargs, reply):
    with OpenAIStub(respond=lambda body: reply, prompt_cache=True) as server:
        model = build_chat_model(ModelSettings(spec="openai-compatible:judge", base_url=server.base_url))

        async def both() -> tuple[Any, Any]:
            direct = await direct_call(model, MESSAGES, kwargs)
            try:
                invoked = await model.bind(**kwargs).ainvoke(MESSAGES)
            except Exception as err:  # the SDK's parse() refuses a cut-off structured answer
                invoked = err
            return direct, invoked

        direct, invoked = asyncio.run(then_closed(model, both()))
    assert direct is not None and server.requests[0] == server.requests[1]
    if isinstance(invoked, Exception):
        assert type(invoked).__name__ == "LengthFinishReasonError"
        assert direct.response_metadata["finish_reason"] == "length"
        assert direct.usage_metadata["output_tokens"] == invoked.completion.usage.completion_tokens
    else:
        _same_message(direct, invoked)


def test_a_watched_call_goes_through_langchain_so_traces_stay_whole(tmp_path):
    recorder = Recorder()
    with OpenAIStub(respond=lambda body: '{"rationale": "right", "score": 5}') as server:
        settings = ModelSettings(spec="openai-compatible:judge", base_url=server.base_url)
        context = EvalContext(default_model=settings, cache_path=None, run_dir=str(tmp_path))
        item = {"id": "q1", "question": "2+2?", "reference": "4", "answer": "4"}

        async def graph_run(callbacks: list[Any]) -> dict[str, Any]:
            token = current_ledger.set(Ledger())
            try:
                return await build_graph().ainvoke(item, context=context, config={"callbacks": callbacks})
            finally:
                current_ledger.reset(token)

        watched = asyncio.run(graph_run([recorder]))
        unwatched = asyncio.run(graph_run([]))
    assert len(recorder.prompts) == 1 and "2+2?" in recorder.prompts[0][-1].content  # the LLM run is in the trace
    assert server.requests[0] == server.requests[1]
    assert watched["grade"]["value"] == unwatched["grade"]["value"] == {"rationale": "right", "score": 5}


def test_a_handler_installed_by_context_counts_as_watching():
    from langchain_core.tracers.context import collect_runs  # like tracing_v2_enabled(), a configure hook

    model = build_chat_model(ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1"))
    assert unobserved(model)
    with collect_runs():
        assert not unobserved(model)


def test_errors_come_out_as_ainvoke_raises_them():
    with OpenAIStub(respond=lambda body: "{}", api_key="the-right-key") as server:
        settings = ModelSettings(spec="openai-compatible:judge", base_url=server.base_url, max_retries=0)
        model = build_chat_model(settings)

        async def both() -> tuple[BaseException, BaseException]:
            errors = []
            for call in (lambda: direct_call(model, MESSAGES, STRUCTURED), lambda: model.bind(**STRUCTURED).ainvoke(MESSAGES)):
                try:
                    await call()
                except Exception as err:
                    errors.append(err)
            return errors[0], errors[1]

        direct, invoked = asyncio.run(then_closed(model, both()))
    assert type(direct) is type(invoked) and error_kind(direct) == "authentication"


IMAGE = "data:image/png;base64," + "A" * 64


@pytest.mark.parametrize(
    ("messages", "kwargs"),
    [
        (MESSAGES, STRUCTURED),
        (MESSAGES, {}),
        ([HumanMessage([{"type": "text", "text": "What is shown?"}, {"type": "image_url", "image_url": {"url": IMAGE}}])], STRUCTURED),
    ],
)
def test_the_body_sent_as_it_is_equals_what_the_sdk_would_make_of_it(messages, kwargs):
    """The direct path skips ``create``'s per-request transform; for dialeval's bodies that
    transform changes nothing (a new SDK that rewrote a field would fail here)."""
    from openai._utils import async_maybe_transform
    from openai.types.chat import completion_create_params

    model = build_chat_model(ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1"))
    body = model._get_request_payload(messages, **kwargs)
    made = asyncio.run(async_maybe_transform(body, completion_create_params.CompletionCreateParamsNonStreaming))
    assert made == body


def test_an_answer_read_as_json_is_the_dict_the_sdks_typed_answer_dumps_to():
    """The direct path reads the answer as JSON instead of building the SDK's typed
    ``ChatCompletion`` and dumping it again; LangChain must see the same dict either way."""
    from openai.types.chat import ChatCompletion

    from dialeval.models.openai_direct import _dumped

    answer = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_1", "service_tier": "default", "a_field_of_tomorrow": {"x": 1},
        "choices": [
            {"index": 0, "finish_reason": "tool_calls", "logprobs": {"content": [{"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []}]},
             "message": {"role": "assistant", "content": None, "refusal": None,
                         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "grade", "arguments": "{}"}}]}},
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "Four."}},
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35,
                  "prompt_tokens_details": {"cached_tokens": 10}, "completion_tokens_details": {"reasoning_tokens": 0}},
    }
    typed = ChatCompletion.construct(**answer).model_dump(exclude={"choices": {"__all__": {"message": {"parsed"}}}}, warnings=False)
    assert _dumped(answer, ChatCompletion) == typed


def test_a_structured_answer_stopped_by_the_content_filter_raises_as_the_sdks_parse_does():
    import openai

    with OpenAIStub(respond=lambda body: ('{"rationale": "', "content_filter")) as server:
        model = build_chat_model(ModelSettings(spec="openai-compatible:judge", base_url=server.base_url))
        with pytest.raises(openai.ContentFilterFinishReasonError):
            asyncio.run(then_closed(model, direct_call(model, MESSAGES, STRUCTURED)))
