"""A batch line asks exactly what the live call asks, and its answer is read as the live one.

The live call goes to the test server; the batch body for the same arguments, built from
the providers' published API references, must equal the body the server received (JSON,
headers aside), for OpenAI and Anthropic, with and without a schema, with images, earlier
turns and prompt-cache marks. The server's answer to that body, read back through
:func:`response_message`, must give the ``Generation`` the live path gave (text, finish
reason, tokens, cached tokens, cost).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from dialeval.config import ModelSettings
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


# a conversation as the protocols send one: images, an earlier answer, two user turns in a row
CONVERSATION = [
    SystemMessage("Grade the answer from 1 to 5."),
    HumanMessage([{"type": "text", "text": "What is in the picture?"},
                  {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                  {"type": "image_url", "image_url": {"url": "https://example.org/cat.jpg"}}]),
    AIMessage("A cat."),
    HumanMessage("Question: 2+2? Answer: 4"),
    HumanMessage("Grade it."),
]


async def _live(client: ModelClient, messages: list, schema: Any, json_schema: dict[str, Any] | None = None) -> Any:
    """The live path's own request: the ``Generation`` it gives."""
    sent = sent_messages(client, messages, schema)
    try:
        message = await client.impl.send(client.model, sent, schema, json_schema)
    finally:
        await client.close_loop()  # this event loop's HTTP pool
    return client.answer_of(message, sent, None, None)


def _same(client: ModelClient, sent: list, batch: Any, live: Any) -> None:
    assert client.answer_of(batch, sent, None, None) == live


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "openai-compatible:llama3", "anthropic:claude-haiku-4-5"])
@pytest.mark.parametrize("schema", [AnswerGrade, None])
async def test_batch_body_and_answer_equal_the_live_call(spec, schema):
    with OpenAIStub(respond=_respond) as server:
        client = _client(spec, server)
        live = await _live(client, MESSAGES, schema)
        sent = server.requests[-1]
        assert request_body(client, MESSAGES, schema) == sent
        # the same body answered as a batch line, read back as the live path reads its answer
        answer = server.answer(sent, spec.startswith("anthropic:"), 99)
        _same(client, sent_messages(client, MESSAGES, schema), response_message(client, answer, schema), live)
    if schema is not None and spec.startswith("anthropic:"):
        assert sent["tool_choice"] == {"type": "tool", "name": "AnswerGrade"}
        assert sent["system"][-1]["cache_control"] == {"type": "ephemeral"}  # the live path's cache mark
    elif schema is not None:
        assert sent["response_format"]["json_schema"]["name"] == "AnswerGrade"


def _narrowed() -> dict[str, tuple[Any, dict[str, Any], dict[str, Any]]]:
    """Calls that narrow their schema, as the agents make them: (answer model, the call's schema, an answer)."""
    from dialeval.agents.simulated_user import SimulatedTurn, json_schema
    from dialeval.conversation.rubric import Criterion
    from dialeval.protocols.dialogue import verdict

    yes_no = Criterion.model_validate({"name": "refund_given", "description": "d", "scale": ["yes", "no"]})
    return {
        "opening turn": (SimulatedTurn, json_schema(0, can_stop=False), {"message": "Hi, I want a refund.", "stop": None}),
        "turn with pictures": (SimulatedTurn, json_schema(2), {"message": "Here it is.", "image": 2, "stop": None}),
        "yes/no verdict": (verdict.Verdict, verdict.json_schema(yes_no), {"rationale": "it was", "verdict": "yes"}),
    }


NARROWED = _narrowed()


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "openai-compatible:llama3", "anthropic:claude-haiku-4-5"])
@pytest.mark.parametrize("case", sorted(NARROWED))
async def test_a_narrowed_schema_goes_in_the_batch_line_as_in_the_live_call(spec, case):
    """A call that knows more than its answer model (labels, picture range, no stop before the
    bot spoke) sends that schema live; its batch line must send the same, not the looser one."""
    schema, narrowed, answer_value = NARROWED[case]
    import json

    def respond(body: dict[str, Any]) -> Any:
        return ("", "tool_use", answer_value) if body.get("tools") else json.dumps(answer_value)

    with OpenAIStub(respond=respond) as server:
        client = _client(spec, server)
        live = await _live(client, MESSAGES, schema, narrowed)
        sent = server.requests[-1]
        assert request_body(client, MESSAGES, schema, narrowed) == sent
        answer = server.answer(sent, spec.startswith("anthropic:"), 99)
        _same(client, sent_messages(client, MESSAGES, schema), response_message(client, answer, schema), live)
    carried = sent["tools"][0]["input_schema"] if spec.startswith("anthropic:") else sent["response_format"]["json_schema"]["schema"]
    assert carried == narrowed != schema.model_json_schema()


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5", "openai:o3-mini", "openai:gpt-5-mini"])
@pytest.mark.parametrize("messages", [CONVERSATION, LONG], ids=["conversation", "long"])
async def test_a_conversation_with_images_and_cache_marks_is_asked_as_live(spec, messages):
    with OpenAIStub(respond=_respond, prompt_cache=True) as server:
        client = _client(spec, server)
        live = [await _live(client, messages, None) for _ in range(2)]  # the second from the prompt cache
        sent = server.requests[-1]
        assert request_body(client, messages, None) == sent
        answer = server.answer(sent, spec.startswith("anthropic:"), 3)  # from the prompt cache too
        _same(client, sent_messages(client, messages, None), response_message(client, answer, None), live[1])
    if messages is LONG:
        assert live[1].cached_input_tokens > 1000


def test_other_backends_have_no_batch_body():
    client = ModelClient(ModelSettings(spec="dry-run"))
    with pytest.raises(BatchUnsupported, match="openai, openai-compatible or anthropic"):
        request_body(client, MESSAGES, None)
