"""Batches leave nothing behind and say what happened: a rejected batch's uploaded file is
deleted, a line that expired every time fails its item as "expired", and an Anthropic batch
accepted but never written to the run folder (a crash) is found again by its custom ids,
not submitted twice."""

from __future__ import annotations

import json
import urllib.request

import pytest

from dialeval.config import ModelSettings
from dialeval.run.batch_rounds import BatchesPending
from dialeval.run.batch_state import BATCH_DIR, EVENTS
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.batch_helpers import test_keys  # noqa: F401  (an autouse fixture)
from tests.test_batch_runs import ANSWERS, answer_any, batch_config, batch_model, batch_run


def anthropic_batch_model(server: OpenAIStub) -> ModelSettings:
    return ModelSettings(spec="anthropic:claude-haiku-4-5", base_url=server.root_url, max_retries=0, batch=True)


def forget_submitted(tmp_path) -> None:
    """The run folder as a crash between the provider's accepting a batch and its id reaching disk leaves it."""
    events = next((tmp_path / "runs").iterdir()) / BATCH_DIR / EVENTS
    kept = [line for line in events.read_text().splitlines() if json.loads(line)["event"] != "submitted"]
    events.write_text("\n".join(kept) + "\n")


def test_a_rejected_batch_leaves_no_uploaded_file(tmp_path):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.reject = "max_tokens is too large"
        config = batch_config(tmp_path, batch_model(server))
        first = batch_run("answers", ANSWERS, config)
        again = batch_run("answers", ANSWERS, config)
        uploaded = [b.input_file_id for b in server.batches]
        left = set(server.batch_api.files)
    assert first.failed == again.failed == 3 and len(uploaded) == 6  # three rounds per run, rejected each time
    assert server.batch_api.deleted == uploaded and not left & set(uploaded)


def test_a_line_that_expired_every_time_fails_its_item_as_expired(tmp_path):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.expire = lambda body: "bike chain" in prompt_of(body)
        result = batch_run("answers", ANSWERS, batch_config(tmp_path, batch_model(server)))
    rows = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    [failed] = [r for r in rows if r["status"] == "failed"]
    assert failed["id"] == "bike-1" and "BatchLineExpired: batch line expired" in failed["error"]


@pytest.mark.parametrize("ended", [True, False], ids=["ended", "running"])
def test_an_anthropic_batch_whose_id_was_never_written_is_found_by_its_custom_ids(tmp_path, ended):
    with OpenAIStub(respond=lambda body: ("", "tool_use", {"rationale": "close", "score": 4})) as server:
        server.batch_api.polls = 2  # a batch ends at its second status request
        config = batch_config(tmp_path, anthropic_batch_model(server))
        with pytest.raises(BatchesPending):
            batch_run("answers", ANSWERS, config, wait=False)  # submitted, polled once
        forget_submitted(tmp_path)
        if ended:  # the batch finished while no process watched it
            request = urllib.request.Request(f"{server.root_url}/v1/messages/batches/{server.batches[0].id}",
                                             headers={"x-api-key": "sk-test"})
            assert json.load(urllib.request.urlopen(request))["processing_status"] == "ended"
        result = batch_run("answers", ANSWERS, config)
        assert len(server.batches) == 1 and server.requests == []  # found again, not submitted twice
    assert result.complete and result.failed == 0
