"""Whatever a bot does, the run ends, with a report: a bot that sleeps an hour is abandoned
at its time-out and the process exits; SystemExit and KeyboardInterrupt raised by a bot are
its failures; what it prints stays off the run's stdout; any text it returns (a lone
surrogate, a NUL, bytes that are not UTF-8, 10 MB) is kept, written and cut in prompts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dialeval.evaluation import run
from dialeval.run.folder import results_by_id
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config
from tests.simulation_helpers import REFUND, models, suite

ROOT = Path(__file__).resolve().parents[1]
ONE_TURN = {**REFUND, "opening": "Hi, my blender arrived broken and I would like a refund.", "max_turns": 1}


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


def simulate(tmp_path, server, bot, scenario=ONE_TURN):
    config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, options={"bot": bot})
    return run("simulation", str(suite(tmp_path, scenario)), config, progress=False)


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("bot", [
    {"callable": "tests.ledger_bots:sleeps_an_hour", "timeout": 3},
    {"callable": "tests.ledger_bots:blocks_its_loop", "timeout": 3},
    {"graph": "tests.ledger_bots:SLEEPY_GRAPH", "timeout": 3},
], ids=["sync-callable", "async-blocking", "sync-graph-node"])
def test_a_bot_sleeping_an_hour_ends_its_run_at_its_timeout(tmp_path, bot):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with OpenAIStub(respond=models) as server:
        command = [sys.executable, "-m", "dialeval.cli", "run", "simulation", "--data", str(suite(tmp_path, ONE_TURN)),
                   "--model", "openai-compatible:stub", "--base-url", server.base_url, "--option", f"bot={json.dumps(bot)}",
                   "--output-dir", str(tmp_path / "runs"), "--run-id", "sleepy", "--no-progress", "--no-cache"]
        started = time.monotonic()
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=150)
        wall = time.monotonic() - started

    assert done.returncode == 0, done.stderr[-3000:]  # the bot's failure is not the run's
    [row] = results_by_id(tmp_path / "runs" / "sleepy").values()
    assert row["result"]["outcome"] == "bot_failure" and row["result"]["bot_failure"].startswith("time-out")
    assert row["seconds"] < 30  # the conversation ended at the bot's time-out, not the bot's hour
    assert (tmp_path / "runs" / "sleepy" / "report.md").exists() and wall < 150  # and the process exited


@pytest.mark.parametrize("bot, reason", [
    ("tests.ledger_bots:exits", "SystemExit: 3"),
    ("tests.ledger_bots:interrupts", "KeyboardInterrupt"),
])
def test_a_bot_raising_systemexit_or_keyboardinterrupt_fails_its_turn_not_the_run(tmp_path, bot, reason):
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, bot)

    [record] = result.records
    assert record["outcome"] == "bot_failure" and record["bot_failure"] == reason
    assert result.failed == 0 and "Bot failures: 1" in (result.run_dir / "report.md").read_text(encoding="utf-8")


def test_what_a_bot_prints_is_kept_with_its_turn_off_the_runs_stdout(tmp_path, capsys):
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, "tests.ledger_bots:prints", REFUND)

    assert "the bot was here" not in capsys.readouterr().out
    bot_turns = [t for t in result.records[0]["turns"] if t["role"] == "assistant"]
    assert bot_turns and all(t["printed"] == "debug: the bot was here\n" for t in bot_turns)
    assert result.records[0]["outcome"] == "success"


@pytest.mark.parametrize("bot, kept", [
    ("tests.ledger_bots:surrogate", "Refund RMA-123456 \ud800 issued."),
    ("tests.ledger_bots:nul", "Refund\x00 RMA-123456 issued."),
    ("tests.ledger_bots:undecodable", "Refund RMA-123456 \udcff\udcfe issued."),
])
def test_any_text_a_bot_returns_is_kept_written_and_shown(tmp_path, bot, kept):
    from dialeval.report.viewer import write_site

    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, bot)

    [row] = results_by_id(result.run_dir).values()  # read back from results.jsonl
    assert row["result"]["turns"][1]["messages"][0]["content"] == kept and row["result"]["outcome"] == "success"
    assert (result.run_dir / "report.md").exists()
    [line] = (result.run_dir / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["messages"][1]["content"] == kept
    index = write_site(tmp_path / "runs")
    pages = "".join(p.read_text(encoding="utf-8") for p in index.parent.rglob("*.html"))
    assert "Refund" in pages and "RMA-123456" in pages and " issued." in pages


def test_a_10_mb_reply_is_kept_whole_and_cut_with_a_marker_for_the_judge(tmp_path):
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, "tests.ledger_bots:huge")
        judged = [prompt_of(b) for b in server.completions if "name: refund_given" in prompt_of(b)]

    [row] = results_by_id(result.run_dir).values()
    assert len(row["result"]["turns"][1]["messages"][0]["content"]) == 10_000_026  # whole in results.jsonl
    assert row["result"]["outcome"] == "success" and (result.run_dir / "report.md").exists()
    [prompt] = judged
    assert "more characters of this turn are not shown]" in prompt and len(prompt) < 40_000


def test_an_openai_compatible_bot_answering_a_lone_surrogate_is_kept_and_judged(tmp_path):
    def respond(body):
        return "Refund RMA-123456 \ud800 issued." if body["model"] == "my-bot" else models(body)

    with OpenAIStub(respond=respond) as server:
        result = simulate(tmp_path, server, {"model": "my-bot", "base_url": server.base_url})

    [row] = results_by_id(result.run_dir).values()
    assert row["result"]["turns"][1]["messages"][0]["content"] == "Refund RMA-123456 \ud800 issued."
    assert row["result"]["outcome"] == "success" and (result.run_dir / "report.md").exists()
