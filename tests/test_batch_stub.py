"""The test server's batch endpoints speak the providers' wire formats.

Every object the stub returns is validated against the official SDKs' own types (with
pydantic validation, which the SDKs skip when they read a response), so a test that
passes against the stub exercises the shapes a real provider sends.
"""

from __future__ import annotations

import json

import httpx
import pytest
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
from openai.types import Batch, FileObject

from dialeval.testing.openai_server import OpenAIStub

CHAT = {"model": "gpt-4o-mini", "max_tokens": 20, "messages": [{"role": "user", "content": "hello"}]}
MESSAGE = {"model": "claude-haiku-4-5", "max_tokens": 20, "messages": [{"role": "user", "content": "hello"}]}


def _request_file(n: int) -> bytes:
    rows = [{"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions", "body": CHAT} for i in range(n)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _openai_batch(http: httpx.Client, lines: int, metadata: dict[str, str] | None = None) -> Batch:
    uploaded = FileObject.model_validate(
        http.post("/files", files={"file": ("in.jsonl", _request_file(lines))}, data={"purpose": "batch"}).json()
    )
    assert (uploaded.purpose, uploaded.bytes) == ("batch", len(_request_file(lines)))
    created = http.post(
        "/batches",
        json={"input_file_id": uploaded.id, "endpoint": "/v1/chat/completions", "completion_window": "24h", "metadata": metadata},
    )
    return Batch.model_validate(created.json())


def test_openai_files_and_batches_round_trip_in_the_real_shapes():
    with OpenAIStub(respond=lambda body: "hi") as server, httpx.Client(base_url=server.base_url) as http:
        server.batch_api.polls = 2
        batch = _openai_batch(http, 3, {"run": "x"})
        assert batch.status == "in_progress" and batch.request_counts.total == 3
        first = Batch.model_validate(http.get(f"/batches/{batch.id}").json())
        done = Batch.model_validate(http.get(f"/batches/{batch.id}").json())
        listed = http.get("/batches").json()
        output = http.get(f"/files/{done.output_file_id}/content").text.splitlines()
    assert (first.status, first.request_counts.completed) == ("in_progress", 2)
    assert (done.status, done.request_counts.completed, done.error_file_id) == ("completed", 3, None)
    assert [Batch.model_validate(b).id for b in listed["data"]] == [batch.id] and listed["has_more"] is False
    rows = [json.loads(line) for line in output]
    assert [r["custom_id"] for r in rows] == ["r0", "r1", "r2"]
    assert rows[0]["response"]["status_code"] == 200 and rows[0]["response"]["body"]["object"] == "chat.completion"
    assert server.requests == [] and len(server.batches) == 1


def test_openai_error_file_holds_failed_and_expired_lines():
    with OpenAIStub(respond=lambda body: "hi") as server, httpx.Client(base_url=server.base_url) as http:
        server.batch_api.fail = lambda body: True
        failed = _openai_batch(http, 1)
        server.batch_api.fail, server.batch_api.expire = None, lambda body: True
        expired = _openai_batch(http, 1)
        failed_row = json.loads(http.get(f"/files/{failed.error_file_id}/content").text)
        expired_row = json.loads(http.get(f"/files/{expired.error_file_id}/content").text)
    assert failed.status == "completed" and failed.request_counts.failed == 1 and failed.output_file_id is None
    assert failed_row["response"]["status_code"] == 400 and failed_row["response"]["body"]["error"]["message"]
    assert expired.status == "expired" and expired_row["error"]["code"] == "batch_expired"
    assert expired_row["response"] is None


def test_anthropic_message_batches_round_trip_in_the_real_shapes():
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    with OpenAIStub(respond=lambda body: "hi") as server, httpx.Client(base_url=server.root_url, headers=headers) as http:
        server.batch_api.polls = 2
        requests = [{"custom_id": f"r{i}", "params": MESSAGE} for i in range(3)]
        created = MessageBatch.model_validate(http.post("/v1/messages/batches", json={"requests": requests}).json())
        assert created.processing_status == "in_progress" and created.results_url is None
        assert http.get(f"/v1/messages/batches/{created.id}/results").status_code == 404  # not ended yet
        cancelling = MessageBatch.model_validate(http.post(f"/v1/messages/batches/{created.id}/cancel").json())
        ended = MessageBatch.model_validate(http.get(f"/v1/messages/batches/{created.id}").json())
        assert ended.results_url is not None
        results = http.get(ended.results_url).text.splitlines()
        listed = http.get("/v1/messages/batches").json()
    assert cancelling.processing_status == "canceling" and cancelling.cancel_initiated_at is not None
    assert ended.processing_status == "ended" and ended.request_counts.canceled == 3
    assert [MessageBatchIndividualResponse.model_validate_json(r).result.type for r in results] == ["canceled"] * 3
    assert [MessageBatch.model_validate(b).id for b in listed["data"]] == [created.id]


def test_anthropic_results_carry_succeeded_and_errored_lines():
    with OpenAIStub(respond=lambda body: "hi") as server, httpx.Client(base_url=server.root_url) as http:
        server.batch_api.fail = lambda body: body["messages"][0]["content"] == "fail me"
        bad = {**MESSAGE, "messages": [{"role": "user", "content": "fail me"}]}
        requests = [{"custom_id": "ok", "params": MESSAGE}, {"custom_id": "bad", "params": bad}]
        created = MessageBatch.model_validate(http.post("/v1/messages/batches", json={"requests": requests}).json())
        lines = http.get(f"/v1/messages/batches/{created.id}/results").text.splitlines()
    results = {r.custom_id: r.result for r in map(MessageBatchIndividualResponse.model_validate_json, lines)}
    assert created.processing_status == "ended" and created.request_counts.errored == 1
    assert results["ok"].type == "succeeded" and results["ok"].message.content[0].text == "hi"
    assert results["bad"].type == "errored" and results["bad"].error.error.type == "invalid_request_error"


def test_batch_routes_demand_the_key_and_name_unknown_batches():
    with OpenAIStub(respond=lambda body: "hi", api_key="right") as server, httpx.Client(base_url=server.base_url) as http:
        refused = http.get("/batches", headers={"Authorization": "Bearer wrong"})
        missing = http.get("/batches/batch_404", headers={"Authorization": "Bearer right"})
    assert refused.status_code == 401 and missing.status_code == 404
    assert server.batches == [] and server.requests == []


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
def test_live_requests_still_go_to_the_chat_routes(path):
    body = CHAT if "chat" in path else MESSAGE
    with OpenAIStub(respond=lambda body: "hi") as server:
        response = httpx.post(server.root_url + path, json=body)
    assert response.status_code == 200 and len(server.requests) == 1 and server.batch_lines == []
