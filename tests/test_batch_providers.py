"""Provider batch APIs over HTTP against the test server: submit, poll, collect.

Each case runs for OpenAI, an OpenAI-compatible server and Anthropic through the
official SDKs, exactly as a run would: a delay of a few polls, lines that fail, a batch
that expires with lines unanswered, a cancelled batch, and (OpenAI) finding a batch
again by its metadata. No batch line is ever a live chat request.
"""

from __future__ import annotations

from typing import Any

import pytest

from dialeval.config import ModelSettings
from dialeval.models.batch import BatchLine, BatchUnsupported, batch_provider, split_lines
from dialeval.models.batch.providers import BatchProvider
from dialeval.models.client import ModelClient
from dialeval.testing.openai_server import OpenAIStub
from tests.batch_helpers import stub_client, test_keys  # noqa: F401  (test_keys: an autouse fixture)

SPECS = ["openai:gpt-4o-mini", "openai-compatible:llama3", "anthropic:claude-haiku-4-5"]


def _provider(spec: str, server: OpenAIStub) -> BatchProvider:
    return batch_provider(stub_client(spec, server))


def _lines(spec: str, questions: list[str]) -> list[BatchLine]:
    def body(q: str) -> dict[str, Any]:
        return {"model": spec.partition(":")[2], "max_tokens": 50, "messages": [{"role": "user", "content": q}]}

    return [BatchLine(f"item-{n}", body(q)) for n, q in enumerate(questions)]


def _text(response: dict[str, Any]) -> str:
    if "choices" in response:
        return response["choices"][0]["message"]["content"]
    return "".join(block["text"] for block in response["content"])


def _echo(body: dict[str, Any]) -> str:
    return "answer to " + body["messages"][-1]["content"]


@pytest.mark.parametrize("spec", SPECS)
async def test_a_batch_is_answered_after_a_few_polls_without_any_live_request(spec):
    with OpenAIStub(respond=_echo) as server:
        server.batch_api.polls = 3
        provider = _provider(spec, server)
        batch_id = await provider.submit(_lines(spec, ["q0", "q1", "q2", "q3"]), {"dialeval_run": "r1", "round": "1"})
        states = [await provider.status(batch_id) for _ in range(3)]
        results = {r.custom_id: r for r in await provider.results(batch_id)}
    assert [s.state for s in states] == ["in_progress", "in_progress", "ended"]
    assert states[0].succeeded < states[1].succeeded < states[2].succeeded == states[2].total == 4
    assert {cid: (r.outcome, _text(r.response or {})) for cid, r in results.items()} == {
        f"item-{n}": ("ok", f"answer to q{n}") for n in range(4)
    }
    assert server.requests == [] and len(server.batch_lines) == 4 and len(server.batches) == 1


@pytest.mark.parametrize("spec", SPECS)
async def test_failed_lines_come_back_failed_with_the_providers_error(spec):
    with OpenAIStub(respond=_echo) as server:
        server.batch_api.fail = lambda body: body["messages"][-1]["content"] == "bad"
        provider = _provider(spec, server)
        batch_id = await provider.submit(_lines(spec, ["good", "bad", "good too"]), {})
        status = await provider.status(batch_id)
        results = {r.custom_id: r for r in await provider.results(batch_id)}
    assert (status.state, status.succeeded, status.failed) == ("ended", 2, 1)
    assert results["item-1"].outcome == "failed" and results["item-1"].response is None
    assert "told to fail" in (results["item-1"].error or "")
    assert results["item-0"].outcome == results["item-2"].outcome == "ok"


@pytest.mark.parametrize("spec", SPECS)
async def test_an_expired_batch_returns_its_unanswered_lines_as_expired(spec):
    with OpenAIStub(respond=_echo) as server:
        server.batch_api.expire = lambda body: body["messages"][-1]["content"].startswith("slow")
        provider = _provider(spec, server)
        batch_id = await provider.submit(_lines(spec, ["slow one", "quick", "slow two"]), {})
        status = await provider.status(batch_id)
        results = {r.custom_id: r.outcome for r in await provider.results(batch_id)}
    assert status.state == "expired"
    assert results == {"item-0": "expired", "item-1": "ok", "item-2": "expired"}


@pytest.mark.parametrize("spec", SPECS)
async def test_a_cancelled_batch_keeps_what_was_answered_and_reports_the_rest_cancelled(spec):
    with OpenAIStub(respond=_echo) as server:
        server.batch_api.polls = 2  # half the lines are answered at the first poll
        provider = _provider(spec, server)
        batch_id = await provider.submit(_lines(spec, ["a", "b", "c", "d"]), {})
        first = await provider.status(batch_id)
        await provider.cancel(batch_id)
        final = await provider.status(batch_id)
        results = {r.custom_id: r.outcome for r in await provider.results(batch_id)}
    assert first.state == "in_progress" and final.state == "cancelled"
    assert results == {"item-0": "ok", "item-1": "ok", "item-2": "cancelled", "item-3": "cancelled"}


@pytest.mark.parametrize("spec", SPECS[:2])
async def test_openai_finds_a_submitted_batch_again_by_its_metadata(spec):
    with OpenAIStub(respond=_echo) as server:
        provider = _provider(spec, server)
        first = await provider.submit(_lines(spec, ["q"]), {"dialeval_run": "r1", "round": "1"})
        second = await provider.submit(_lines(spec, ["q"]), {"dialeval_run": "r1", "round": "2"})
        assert await provider.find({"dialeval_run": "r1", "round": "1"}) == first
        assert await provider.find({"dialeval_run": "r1", "round": "2"}) == second
        assert await provider.find({"dialeval_run": "other"}) is None
    assert server.batches[0].metadata == {"dialeval_run": "r1", "round": "1"}


async def test_anthropic_batches_cannot_be_found_by_metadata():
    with OpenAIStub(respond=_echo) as server:
        provider = _provider("anthropic:claude-haiku-4-5", server)
        await provider.submit(_lines("anthropic:claude-haiku-4-5", ["q"]), {"dialeval_run": "r1"})
        assert await provider.find({"dialeval_run": "r1"}) is None


async def test_anthropic_refuses_a_custom_id_it_would_reject_before_sending():
    with OpenAIStub(respond=_echo) as server:
        provider = _provider("anthropic:claude-haiku-4-5", server)
        with pytest.raises(ValueError, match="custom_id 'item 1'"):
            await provider.submit([BatchLine("item 1", {"model": "m", "max_tokens": 5, "messages": []})], {})
    assert server.batches == []


async def test_a_server_without_a_batch_api_is_named_in_a_clear_error():
    with OpenAIStub(respond=_echo) as server:
        server.batch_api.enabled = False
        provider = _provider("openai-compatible:llama3", server)
        with pytest.raises(BatchUnsupported, match=r"has no batch API \(POST /files answered 404\)"):
            await provider.submit(_lines("openai-compatible:llama3", ["q"]), {})
        await provider.close()


def test_batches_need_an_api_backend():
    with pytest.raises(BatchUnsupported, match="openai, openai-compatible or anthropic"):
        batch_provider(ModelClient(ModelSettings(spec="dry-run")))


def test_lines_are_split_at_the_count_and_size_limits():
    lines = _lines("openai:m", [f"question {n}" for n in range(7)])
    assert [len(b) for b in split_lines(lines, max_lines=3, max_bytes=10**6)] == [3, 3, 1]
    size = 2 * 200  # two lines of about 150 bytes each fit, a third does not
    assert [len(b) for b in split_lines(lines, max_lines=100, max_bytes=size)] == [2, 2, 2, 1]


@pytest.mark.parametrize("spec", SPECS)
async def test_a_batch_refused_as_a_whole_says_why(spec):
    """OpenAI fails an invalid batch after submission; Anthropic refuses the request."""
    with OpenAIStub(respond=_echo) as server:
        server.batch_api.reject = "max_tokens is too large"
        provider = _provider(spec, server)
        if spec.startswith("anthropic:"):
            import anthropic

            with pytest.raises(anthropic.BadRequestError, match="max_tokens is too large"):
                await provider.submit(_lines(spec, ["q"]), {})
            return
        batch_id = await provider.submit(_lines(spec, ["q0", "q1"]), {})
        status = await provider.status(batch_id)
        results = await provider.results(batch_id)
    assert status.state == "failed" and server.batch_lines == []
    assert [(r.outcome, "max_tokens is too large" in (r.error or "")) for r in results] == [("failed", True)] * 2


async def test_openai_metadata_it_cannot_hold_stops_before_anything_is_sent():
    with OpenAIStub(respond=_echo) as server:
        provider = _provider("openai:gpt-4o-mini", server)
        with pytest.raises(ValueError, match="at most 16 pairs"):
            await provider.submit(_lines("openai:gpt-4o-mini", ["q"]), {f"k{n}": "v" for n in range(17)})
    assert server.batch_api.files == {} and server.batches == []
