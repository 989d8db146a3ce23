"""The light OpenAI path builds what ``ChatOpenAI`` builds: the same request body (to the
byte, keys in order) and the same ``AIMessage`` from an answer, for every kind of message
and setting dialeval sends; anything else is declined before a request leaves."""

from __future__ import annotations

import asyncio
import os
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from dialeval.config import ModelSettings
from dialeval.models.backends.openai import chat_result_message, direct_call, response_format
from dialeval.models.client import ModelClient, build_chat_model
from dialeval.models.openai_body import VERIFIED, answer_message, request_body, verified
from dialeval.models.openai_direct import _completion_type, _dumped
from dialeval.protocols.answers.judge import AnswerGrade
from dialeval.testing.openai_server import OpenAIStub

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
CONVERSATIONS = {
    "system and user text": [SystemMessage("Grade the answer."), HumanMessage("Question: 2+2? Answer: 4")],
    "user text only": [HumanMessage("Say hi")],
    "image blocks": [
        SystemMessage("Describe."),
        HumanMessage([{"type": "text", "text": "Look:"}, IMAGE,
                      {"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "low"}}]),
    ],  # fmt: skip
    "a conversation continued": [
        SystemMessage("Summarize."), HumanMessage("The text."), AIMessage("A summary.", response_metadata={"finish_reason": "stop"}),
        HumanMessage("Check it again."),
    ],  # fmt: skip
    "an earlier answer with its metadata": [
        HumanMessage("Q"),
        AIMessage("A", id="chatcmpl-1", usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
                  response_metadata={"model_name": "m", "finish_reason": "stop", "token_usage": {}}),
        HumanMessage("Again"),
    ],  # fmt: skip
    "empty content": [SystemMessage(""), HumanMessage([])],
    "unicode": [HumanMessage("Grüße — 你好 \U0001f600")],
}
DECLINED = {
    "a named message": [HumanMessage("hi", name="alice")],
    "tool calls": [HumanMessage("Q"), AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])],
    "a developer role": [SystemMessage("x", additional_kwargs={"__openai_role__": "developer"}), HumanMessage("y")],
    "an Anthropic image block": [HumanMessage([{"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}])],
    "a v1 content block": [HumanMessage([{"type": "image", "url": "https://x.test/a.png"}])],
    "a text block with extras": [HumanMessage([{"type": "text", "text": "x", "extras": {"prompt_cache_breakpoint": True}}])],
}
PLAIN_NAMES = ["judge", "gpt-4o-mini", "gpt-4.1", "llama3.1:8b", "Qwen/Qwen2.5-7B-Instruct", "claude-via-proxy"]
SPECIAL_NAMES = ["o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-chat-latest", "gpt-5-pro", "codex-mini-latest", "gpt-6"]
SETTINGS = [
    {"temperature": 0.0, "max_tokens": 512},
    {"temperature": 0.7, "max_tokens": 64},
    {"temperature": 1.0, "max_tokens": 4096},
]


def _langchain_body(settings: ModelSettings, messages: list[Any], structured: bool) -> dict[str, Any]:
    model = build_chat_model(settings)
    kwargs = {"response_format": response_format(AnswerGrade)} if structured else {}
    return model._get_request_payload(messages, **kwargs)


def _light_body(settings: ModelSettings, messages: list[Any], structured: bool) -> dict[str, Any] | None:
    return request_body(
        settings.parsed.name, messages, max_tokens=settings.max_tokens, temperature=settings.temperature,
        response_format=response_format(AnswerGrade) if structured else None,
    )  # fmt: skip


def test_this_langchain_openai_release_was_compared():
    """A new release may build bodies differently: run this file against it, then add it to VERIFIED."""
    from importlib.metadata import version

    assert version("langchain-openai") in VERIFIED and verified()


@pytest.mark.parametrize("conversation", CONVERSATIONS)
@pytest.mark.parametrize("name", PLAIN_NAMES)
@pytest.mark.parametrize("structured", [False, True])
def test_the_body_is_the_one_chatopenai_builds(conversation, name, structured, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # openai: models need one to be built
    messages = CONVERSATIONS[conversation]
    for values in SETTINGS:
        for spec in (f"openai-compatible:{name}", f"openai:{name}"):
            settings = ModelSettings(spec=spec, base_url="http://127.0.0.1:9/v1", **values)
            mine = _light_body(settings, messages, structured)
            assert mine is not None
            assert json.dumps(mine) == json.dumps(_langchain_body(settings, messages, structured))  # same bytes


def test_unset_temperature_and_token_limit_are_left_out_as_chatopenai_leaves_them():
    messages = CONVERSATIONS["system and user text"]
    theirs = ChatOpenAI(model="judge", api_key="k", base_url="http://127.0.0.1:9/v1")._get_request_payload(messages)
    mine = request_body("judge", messages, max_tokens=None, temperature=None)
    assert json.dumps(mine) == json.dumps(theirs)


@pytest.mark.parametrize("conversation", DECLINED)
def test_messages_of_other_kinds_are_declined(conversation):
    assert request_body("judge", DECLINED[conversation], max_tokens=512, temperature=0.0) is None


@pytest.mark.parametrize("name", SPECIAL_NAMES)
def test_model_names_langchain_rewrites_requests_for_are_declined(name):
    assert request_body(name, CONVERSATIONS["system and user text"], max_tokens=512, temperature=0.0) is None


@pytest.mark.parametrize("variable", ["LANGSMITH_GATEWAY", "LC_OUTPUT_VERSION", "OPENAI_PROXY"])
def test_environment_that_changes_chatopenai_turns_the_light_path_off(monkeypatch, variable):
    monkeypatch.setenv(variable, "v1")
    assert request_body("judge", CONVERSATIONS["user text only"], max_tokens=512, temperature=0.0) is None


def _answer(**extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": '{"rationale": "ok", "score": 4}', **extra.pop("message", {})}
    answer = {
        "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "judge-0613",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", **extra.pop("choice", {})}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39},
        **extra,
    }  # fmt: skip
    return _dumped(answer, _completion_type())  # as send_body hands it over


ANSWERS = {
    "plain": _answer(),
    "cut off": _answer(choice={"finish_reason": "length"}),
    "no finish reason": _answer(choice={"finish_reason": None}),
    "no usage": _answer(usage=None),
    "usage details": _answer(usage={"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39,
                                    "prompt_tokens_details": {"cached_tokens": 16, "audio_tokens": 0},
                                    "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": None}}),
    "priority tier": _answer(service_tier="priority", usage={"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39,
                                                             "prompt_tokens_details": {"cached_tokens": 16}}),
    "default tier": _answer(service_tier="default"),
    "log-probs": _answer(choice={"logprobs": {"content": [{"token": "x", "logprob": -0.1, "bytes": None, "top_logprobs": []}]}}),
    "null content": _answer(message={"content": None}),
    "a name and extra keys": _answer(message={"name": "bot", "reasoning_content": "hm"}, system_fingerprint="fp_1", extra_field=1),
    "no total": _answer(usage={"prompt_tokens": 3, "completion_tokens": 2}),
    "no id": {k: v for k, v in _answer().items() if k != "id"},
}  # fmt: skip
OTHER_ANSWERS = {
    "a refusal": _answer(message={"content": None, "refusal": "I cannot."}),  # its message differs between releases
    "tool calls": _answer(message={"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
    "two choices": {**_answer(), "choices": _answer()["choices"] * 2},
    "an error": {**_answer(), "error": {"message": "overloaded"}},
    "an HTML page": "<html>502</html>",
}


@pytest.mark.parametrize("case", ANSWERS)
def test_the_answer_becomes_the_message_chatopenai_makes(case):
    model = build_chat_model(ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1"))
    mine = answer_message(json.loads(json.dumps(ANSWERS[case])), "judge")
    theirs = chat_result_message(model, json.loads(json.dumps(ANSWERS[case])))
    assert mine is not None and type(mine) is type(theirs)
    assert mine.model_dump() == theirs.model_dump()


@pytest.mark.parametrize("case", OTHER_ANSWERS)
def test_other_answers_are_left_to_chatopenai(case):
    assert answer_message(OTHER_ANSWERS[case], "judge") is None


def _client(server: OpenAIStub, **values: Any) -> ModelClient:
    return ModelClient(ModelSettings(spec="openai-compatible:judge", base_url=server.base_url, **values))


@pytest.mark.parametrize("structured", [False, True])
def test_a_light_call_sends_and_returns_what_the_chatopenai_path_does(structured):
    reply = '{"rationale": "right", "score": 5}'
    messages = CONVERSATIONS["system and user text"]
    with OpenAIStub(respond=lambda body: reply) as server:
        client = _client(server)
        schema = AnswerGrade if structured else None

        async def both() -> tuple[Any, Any]:
            light = await client.impl.light_call(client, messages, schema)
            kwargs = {"response_format": response_format(AnswerGrade)} if structured else {}
            return light, await direct_call(client.model, messages, kwargs)

        light, direct = asyncio.run(both())
    assert light is not None and server.requests[0] == server.requests[1]
    strip = lambda m: {**m.model_dump(), "response_metadata": {**m.response_metadata, "id": None}}  # noqa: E731  (numbered by the server)
    assert strip(light) == strip(direct)


def test_a_rate_limited_or_watched_call_takes_the_chatopenai_path():
    from langchain_core.tracers.context import collect_runs

    messages = CONVERSATIONS["user text only"]
    with OpenAIStub(respond=lambda body: "hi") as server:
        limited = _client(server, requests_per_second=50)
        plain = _client(server)

        async def attempts() -> list[Any]:
            out = [await limited.impl.light_call(limited, messages, None)]
            with collect_runs():
                out.append(await plain.impl.light_call(plain, messages, None))
            return out

        assert asyncio.run(attempts()) == [None, None]
        assert server.requests == []  # declined before anything was sent


# a fresh interpreter: what a plain `dialeval run` has imported when its first request leaves
FRESH = """
import json, sys
from dialeval.models.watchers import nothing_watches
print(json.dumps({"quiet": nothing_watches(), "langsmith": "langsmith" in sys.modules}))
"""


@pytest.mark.parametrize(("variable", "quiet"), [(None, True), ("LANGSMITH_TRACING", False), ("LANGCHAIN_TRACING_V2", False)])
def test_nothing_watches_a_fresh_process_unless_tracing_is_asked_for(variable, quiet):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    if variable:
        env[variable] = "true"
    out = subprocess.run([sys.executable, "-c", FRESH], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout)
    assert seen["quiet"] is quiet
    assert seen["langsmith"] is not quiet  # answered without LangSmith's client only when sure


@pytest.mark.parametrize(
    ("spec", "base_url", "env"),
    [
        ("openai-compatible:judge", "http://127.0.0.1:9/v1", {}),
        ("openai:gpt-4o-mini", None, {"OPENAI_API_KEY": "sk-a", "OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT_ID": "proj-1"}),
        ("openai:gpt-4o-mini", None, {"OPENAI_API_KEY": "sk-a", "OPENAI_API_BASE": "http://127.0.0.1:9/v2"}),
        ("openai:gpt-4o-mini", "http://127.0.0.1:9/v3", {"OPENAI_API_KEY": "sk-a", "OPENAI_ORGANIZATION": "org-2"}),
    ],
)
def test_the_light_sdk_client_is_the_one_chatopenai_holds(monkeypatch, spec, base_url, env):
    for name in list(os.environ):
        if name.startswith("OPENAI_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    client = ModelClient(ModelSettings(spec=spec, base_url=base_url, max_retries=2, timeout=30))

    async def both() -> tuple[Any, Any]:
        return client.impl.light_client(client.limit), client.model.root_async_client

    light, theirs = asyncio.run(both())
    assert light is not None
    headers = lambda sdk: {k: v if isinstance(v, str) else type(v).__name__ for k, v in sdk.default_headers.items()}  # noqa: E731  (Omit markers)
    seen = lambda sdk: (str(sdk.base_url), sdk.api_key, sdk.organization, sdk.project, sdk.max_retries, sdk.timeout,  # noqa: E731
                        headers(sdk), dict(sdk.default_query), type(sdk._client))  # fmt: skip
    assert seen(light) == seen(theirs)
