"""A batch line asks exactly what the live call asks, and its answer becomes the same message.

The live call goes to the test server; the batch body for the same arguments must equal
the body the server received, for OpenAI and Anthropic, with and without a schema. The
server's answer to that body, read back through :func:`response_message`, must give the
message the live path returned (content or tool call, usage, finish reason).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from dialeval.config import ModelSettings
from dialeval.models.batch import bodies
from dialeval.models.batch.bodies import request_body, response_message, sent_messages
from dialeval.models.batch.providers import BatchUnsupported
from dialeval.models.client import ModelClient
from dialeval.protocols.answers.judge import AnswerGrade
from dialeval.testing.openai_server import OpenAIStub
from tests.batch_helpers import stub_client, test_keys  # noqa: F401  (test_keys: an autouse fixture)

MESSAGES = [SystemMessage("Grade the answer from 1 to 5."), HumanMessage("Question: 2+2? Answer: 4")]
GRADE = {"rationale": "right", "score": 5}
# long enough for the providers' prompt caches (they start at 1,024 tokens)
LONG = [SystemMessage("Grade the answer from 1 to 5. " + "Be fair and brief. " * 400), MESSAGES[1]]


def _respond(body: dict[str, Any]) -> Any:
    if body.get("tools"):  # Anthropic's structured output: one forced tool call
        return "", "tool_use", GRADE
    return '{"rationale": "right", "score": 5}'


def _client(spec: str, server: OpenAIStub) -> ModelClient:
    return stub_client(spec, server, max_tokens=300, temperature=0.0)


async def _live(client: ModelClient, schema: Any) -> Any:
    """The live path's own request: the message it returns."""
    sent = sent_messages(client, MESSAGES, schema)
    return await client.impl.send(client.model, sent, schema, None, client.injected)


def _same(batch: Any, live: Any) -> None:
    assert batch.content == live.content
    assert batch.tool_calls == live.tool_calls
    assert batch.usage_metadata == live.usage_metadata
    strip = lambda meta: {k: v for k, v in meta.items() if k not in ("id", "created")}  # noqa: E731
    assert strip(batch.response_metadata) == strip(live.response_metadata)


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "openai-compatible:llama3", "anthropic:claude-haiku-4-5"])
@pytest.mark.parametrize("schema", [AnswerGrade, None])
async def test_batch_body_and_answer_equal_the_live_call(spec, schema):
    with OpenAIStub(respond=_respond) as server:
        client = _client(spec, server)
        live = await _live(client, schema)
        sent = server.requests[-1]
        assert request_body(client, MESSAGES, schema) == sent
        # the same body answered as a batch line, read back as the live path reads its answer
        answer = server.answer(sent, spec.startswith("anthropic:"), 99)
        _same(response_message(client, answer, schema), live)
    if schema is not None and spec.startswith("anthropic:"):
        assert sent["tool_choice"] == {"type": "tool", "name": "AnswerGrade"}
        assert sent["system"][-1]["cache_control"] == {"type": "ephemeral"}  # the live path's cache mark
    elif schema is not None:
        assert sent["response_format"]["json_schema"]["name"] == "AnswerGrade"


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
async def test_builders_of_our_own_match_langchain_for_text_prompts(spec, monkeypatch):
    """When LangChain's private builders are gone, the fallback asks and reads the same."""
    with OpenAIStub(respond=_respond, prompt_cache=True) as server:
        client = _client(spec, server)
        expected = request_body(client, LONG, None)
        answer = server.answer(expected, spec.startswith("anthropic:"), 1)
        answer = server.answer(expected, spec.startswith("anthropic:"), 2)  # the second time from the prompt cache
        langchain_message = response_message(client, answer, None)
        model = bodies.payload_model(client)
        for name in ("_get_request_payload", "_create_chat_result", "_format_output"):
            monkeypatch.setattr(type(model), name, None, raising=False)
        assert request_body(client, LONG, None) == expected
        ours = response_message(client, answer, None)
    assert ours.content == langchain_message.content
    assert ours.usage_metadata["input_tokens"] == langchain_message.usage_metadata["input_tokens"]
    assert ours.usage_metadata["output_tokens"] == langchain_message.usage_metadata["output_tokens"]
    cached = ours.usage_metadata["input_token_details"]["cache_read"]
    assert cached == langchain_message.usage_metadata["input_token_details"]["cache_read"]
    assert cached > 1000  # the second answer came from the prompt cache


def test_other_backends_have_no_batch_body():
    client = ModelClient(ModelSettings(spec="dry-run"))
    with pytest.raises(BatchUnsupported, match="openai, openai-compatible or anthropic"):
        request_body(client, MESSAGES, None)
