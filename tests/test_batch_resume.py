"""Batch runs survive anything: ``--no-wait``, a cancelled wait, a crash between submitting
a batch and writing its id; failed and expired lines go again in the next round, a
bounded number of times. Every test counts what the test server was sent."""

from __future__ import annotations

import asyncio
import json

import pytest

from dialeval.cli import main
from dialeval.run.batch_rounds import NO_WAIT_EXIT, BatchesPending
from dialeval.run.batch_state import BATCH_DIR, EVENTS
from dialeval.evaluation import run_async
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.test_batch_runs import ANSWERS, KGDS, answer_any, batch_config, batch_model, batch_run, metrics_of


def submitted_ids(server: OpenAIStub) -> list[str]:
    return [custom_id for batch in server.batches for custom_id, _ in batch.lines]


def test_no_wait_submits_then_the_same_command_collects_and_finishes(tmp_path):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.polls = 5  # a batch is done at its fifth status request
        config = batch_config(tmp_path, batch_model(server), options={"reflection_rounds": 1})
        with pytest.raises(BatchesPending, match="re-run the same command"):
            batch_run("kgds", KGDS, config, wait=False)
        assert len(server.batches) == 1
        with pytest.raises(BatchesPending):  # still running: polled once, nothing sent again
            batch_run("kgds", KGDS, config, wait=False)
        assert len(server.batches) == 1
        result = batch_run("kgds", KGDS, config)
        ids = submitted_ids(server)
        assert server.requests == []
    assert result.complete
    assert len(ids) == len(set(ids))  # no request went into two batches
    assert metrics_of(result)["run"]["batches"]["rounds"] == len(server.batches)


def test_the_command_line_exits_75_with_no_wait_and_0_once_collected(tmp_path, capsys):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.polls = 2
        config = tmp_path / "batch.yaml"
        config.write_text(
            f"model:\n  spec: openai-compatible:stub\n  base_url: {server.base_url}\n  batch: true\n"
            f"  price_as: openai:gpt-4o-mini\ncache_path: null\noutput_dir: {tmp_path / 'runs'}\n"
        )
        argv = ["run", "answers", "--data", str(ANSWERS), "--config", str(config), "--no-progress"]
        assert main([*argv, "--no-wait"]) == NO_WAIT_EXIT
        assert "re-run the same command" in capsys.readouterr().err
        assert main(argv) == 0  # the second status request finds the batch done
        assert len(server.batches) == 1 and server.requests == []


def test_a_run_cancelled_while_it_waits_submits_nothing_twice_when_run_again(tmp_path):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.polls = 10**6  # the batch never finishes while the first run waits
        config = batch_config(tmp_path, batch_model(server))

        async def cancelled_while_waiting() -> None:
            task = asyncio.ensure_future(run_async("answers", ANSWERS, config, progress=False, batch_poll=0.01))
            while not server.batches:  # the round is at the provider
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancelled_while_waiting())
        server.batch_api.polls = 1  # the next status request finishes it
        result = batch_run("answers", ANSWERS, config)
        assert len(server.batches) == 1 and len(server.batches[0].lines) == 3
    assert result.complete and server.requests == []


def test_a_batch_whose_id_was_never_written_is_found_by_its_metadata_not_sent_again(tmp_path):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.polls = 2
        config = batch_config(tmp_path, batch_model(server))
        with pytest.raises(BatchesPending) as pending:
            batch_run("answers", ANSWERS, config, wait=False)
        # as if the process died between submitting and writing the batch id
        events = next((tmp_path / "runs").iterdir()) / BATCH_DIR / EVENTS
        kept = [line for line in events.read_text().splitlines() if json.loads(line)["event"] != "submitted"]
        events.write_text("\n".join(kept) + "\n")
        result = batch_run("answers", ANSWERS, config)
        assert len(server.batches) == 1
    assert "submitted" in str(pending.value) and result.complete


def test_a_failed_line_goes_again_in_the_next_round_then_fails_its_item(tmp_path):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.fail = lambda body: "bike chain" in prompt_of(body)
        config = batch_config(tmp_path, batch_model(server))
        result = batch_run("answers", ANSWERS, config)
        bike_lines = [b for b in server.batch_lines if "bike chain" in prompt_of(b)]
        assert len(server.batches) == 3 and len(bike_lines) == 3  # first try and two more rounds
        assert result.failed == 1 and len(result.records) == 2
        rows = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
        [failed] = [r for r in rows if r["status"] == "failed"]
        assert failed["id"] == "bike-1" and "batch line failed" in failed["error"]
        server.batch_api.fail = None  # the provider recovers: a re-run retries the failed item only
        again = batch_run("answers", ANSWERS, config)
        assert again.complete and len(server.batches) == 4 and len(server.batches[-1].lines) == 1


def first_time(marker: str):
    """A stub control that holds for the first line whose prompt holds ``marker``, never again."""
    seen: list[str] = []

    def hit(body: dict) -> bool:
        if marker in prompt_of(body) and not seen:
            seen.append(marker)
            return True
        return False

    return hit


@pytest.mark.parametrize(("control", "first_state"), [("fail", "completed"), ("expire", "expired")])
def test_a_line_that_failed_or_expired_is_answered_in_the_next_round(tmp_path, control, first_state):
    with OpenAIStub(respond=answer_any) as server:
        setattr(server.batch_api, control, first_time("bike chain"))
        result = batch_run("answers", ANSWERS, batch_config(tmp_path, batch_model(server)))
        assert [b.state for b in server.batches] == [first_state, "completed"]
        assert [len(b.lines) for b in server.batches] == [3, 1]  # only the unanswered line went again
    assert result.complete and server.requests == []


def test_kill_9_while_waiting_then_the_same_command_submits_nothing_twice(tmp_path):
    import os
    import subprocess
    import sys
    import time

    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.polls = 10**6  # never done while the first process waits
        config = tmp_path / "batch.yaml"
        config.write_text(
            f"model:\n  spec: openai-compatible:stub\n  base_url: {server.base_url}\n  batch: true\n"
            f"cache_path: null\noutput_dir: {tmp_path / 'runs'}\n"
        )
        argv = ["run", "answers", "--data", str(ANSWERS), "--config", str(config), "--no-progress"]
        waiting = subprocess.Popen([sys.executable, "-m", "dialeval.cli", *argv], env=dict(os.environ),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            while not server.batches and waiting.poll() is None:  # until the round is at the provider
                time.sleep(0.05)
        finally:
            waiting.kill()  # SIGKILL: no clean-up of any kind
            _, err = waiting.communicate()
        assert len(server.batches) == 1, err.decode()[-2000:]
        server.batch_api.polls = 1
        assert main(argv) == 0
        assert len(server.batches) == 1 and server.requests == []
