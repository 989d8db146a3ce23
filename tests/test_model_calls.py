"""A model call's public steps (models/calls.py) serve live calls and batches alike: the line
:func:`submit` gives is the body the live ``generate`` POSTed, :func:`collect` reads the
server's answer into the live call's ``Generation``, and a dry run's :func:`estimate` is
the one ``generate`` gives."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from dialeval.config import ModelSettings
from dialeval.models import calls
from dialeval.models.batch_queue import QueuedCall
from dialeval.models.client import ModelClient
from dialeval.protocols.answers.judge import AnswerGrade
from dialeval.testing.openai_server import OpenAIStub
from tests.batch_helpers import stub_client, test_keys  # noqa: F401  (test_keys: an autouse fixture)

MESSAGES = [SystemMessage("Grade the answer from 1 to 5."), HumanMessage("Question: 2+2? Answer: 4")]


def _respond(body):
    if body.get("tools"):  # Anthropic's structured output: one forced tool call
        return "", "tool_use", {"rationale": "right", "score": 5}
    return '{"rationale": "right", "score": 5}'


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
async def test_submit_and_collect_ask_and_read_what_the_live_call_does(spec):
    with OpenAIStub(respond=_respond) as server:
        client = stub_client(spec, server, max_tokens=300, temperature=0.0, batch=True)  # no round running: sent live
        try:
            live = await client.generate(MESSAGES, schema=AnswerGrade)
        finally:
            await client.close_loop()
        sent = server.requests[-1]
        call = QueuedCall(MESSAGES, AnswerGrade, None, None, None, None)  # as generate queues it (an API model adds no prefill)
        line = calls.submit(client, call)
        assert line.body == sent and line.custom_id == calls.key_of(client, call)
        answer = server.answer(sent, spec.startswith("anthropic:"), 0)
        read = calls.collect(client, call, answer, batched=False)
    assert (read.text, read.input_tokens, read.output_tokens, read.cost) == (live.text, live.input_tokens, live.output_tokens, live.cost)
    batched = calls.collect(client, call, answer)
    assert batched.text == live.text and batched.cost == pytest.approx(live.cost / 2)  # the providers' batch rate: half


async def test_a_dry_runs_estimate_is_what_generate_gives():
    client = ModelClient(ModelSettings(spec="dry-run:openai:gpt-4o-mini", batch=True))
    call = QueuedCall(MESSAGES, None, None, "a placeholder", None, None)
    live = await client.generate(MESSAGES, placeholder="a placeholder")
    assert calls.estimate(client, call) == live
    assert calls.estimate(client, call, batched=True).cost == pytest.approx(live.cost / 2)
