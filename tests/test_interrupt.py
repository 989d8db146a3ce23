"""Stopping a run: Ctrl-C ends it at once with one line and keeps what finished; a
tripped circuit breaker cancels the calls still waiting on a dead server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from dialeval.models.prompt_store import load_prompts
from dialeval.run.folder import results_by_id
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'
PATIENCE = 20.0  # generous: the machine is busy; an interrupted run takes well under a second


pytestmark = pytest.mark.usefixtures("ctrl_c_reaches_children")  # the CLI's children get Ctrl-C as from a terminal


def _wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.05)


ONE_AT_A_TIME = ("--run-id", "mine", "--concurrency", "1")


def _cli(server: OpenAIStub, out: Path, *extra: str) -> tuple[list[str], dict[str, str]]:
    """The CLI's `run answers` on the demo items against ``server``, and its environment."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return [sys.executable, "-m", "dialeval.cli", "run", "answers", "--data", str(ANSWERS), *extra,
            "--model", "openai-compatible:judge", "--base-url", server.base_url,
            "--output-dir", str(out), "--no-progress", "--no-cache"], env


def _ctrl_c_when(ready: Callable[[], bool], server: OpenAIStub, out: Path, *extra: str) -> tuple[int, str]:
    """Run the CLI against ``server``, press Ctrl-C once ``ready()``: exit code and stderr."""
    command, env = _cli(server, out, *extra)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        _wait_for(ready)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=PATIENCE)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, err


def _interrupted(tmp_path: Path, respond, requests: int, *extra: str) -> tuple[int, str]:
    """Run the CLI against ``respond``, press Ctrl-C once ``requests`` arrived: exit code and stderr."""
    with OpenAIStub(respond=respond) as server:
        return _ctrl_c_when(lambda: len(server.requests) == requests, server, tmp_path, *extra)


def test_ctrl_c_stops_at_once_keeps_the_folder_and_says_how_to_resume(tmp_path):
    release = threading.Event()

    def slow_after_two(body: dict) -> str:
        if body["messages"][-1]["content"].count("chain"):
            release.wait(60)  # the third item's judge never answers in time
        return GRADE

    try:
        code, err = _interrupted(tmp_path, slow_after_two, 3, "--concurrency", "1")
    finally:
        release.set()
    assert code == 130
    [line] = err.strip().splitlines()  # one line, no traceback
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert line == (f"dialeval: interrupted: 2 of 3 items done (2 in this session), kept in {run_dir}; "
                    "re-run the same command to resume")
    assert sorted(results_by_id(run_dir)) == ["kitchen-1", "kitchen-2"]
    # the two answered prompts are in the store
    assert sorted(p.name for p in run_dir.iterdir()) == [".lock", "config.json", "prompts.sqlite", "results.jsonl"]
    assert len(load_prompts(run_dir)) == 2


def _stopped_after(server: OpenAIStub, out: Path, answered: int, *extra: str) -> int:
    """The CLI run against ``server``, one item at a time, answering ``answered`` requests
    and holding the next, until Ctrl-C: its exit code."""
    release, seen = threading.Event(), []

    def respond(body: dict) -> str:
        seen.append(body)
        if len(seen) > answered:
            release.wait(60)
        return GRADE

    server.respond = respond
    try:
        code, _ = _ctrl_c_when(lambda: len(seen) > answered, server, out, *ONE_AT_A_TIME, *extra)
    finally:
        release.set()
    return code


def test_a_fresh_session_stopped_early_sets_the_earlier_report_aside_with_its_results(tmp_path):
    run_dir = tmp_path / "mine"
    with OpenAIStub(respond=lambda body: GRADE) as server:
        command, env = _cli(server, tmp_path, *ONE_AT_A_TIME)
        assert subprocess.run(command, capture_output=True, env=env, timeout=120).returncode == 0
        assert _stopped_after(server, tmp_path, 1, "--fresh") == 130
    assert len(results_by_id(run_dir)) == 1
    assert not any((run_dir / name).exists() for name in ("metrics.json", "usage.json", "report.md", "plots"))
    [earlier_metrics] = run_dir.glob("metrics.*.json")
    stamp = earlier_metrics.name.split(".")[1]
    assert json.loads(earlier_metrics.read_text())["run"]["items"] == 3
    assert len((run_dir / f"results.{stamp}.jsonl").read_text().splitlines()) == 3
    assert (run_dir / f"report.{stamp}.md").is_file() and (run_dir / f"usage.{stamp}.json").is_file()


def test_a_resumed_session_stopped_early_leaves_no_report_of_the_session_before(tmp_path):
    run_dir = tmp_path / "mine"
    with OpenAIStub(respond=lambda body: GRADE, failures=[200, 200, 401]) as server:  # the third item's call refused
        command, env = _cli(server, tmp_path, *ONE_AT_A_TIME)
        assert subprocess.run(command, capture_output=True, env=env, timeout=120).returncode == 1
        assert json.loads((run_dir / "metrics.json").read_text())["run"]["failed"] == 1
        assert _stopped_after(server, tmp_path, 0) == 130  # that item again, held
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "report.md").exists()


def test_ctrl_c_before_any_item_finished_keeps_the_run_folder(tmp_path):
    release = threading.Event()
    try:
        code, err = _interrupted(tmp_path, lambda body: release.wait(60) and GRADE, 3, "--run-id", "mine")
    finally:
        release.set()
    assert code == 130 and len(err.strip().splitlines()) == 1
    assert "0 of 3 items done" in err and (tmp_path / "mine" / "config.json").is_file()


def test_a_tripped_breaker_cancels_the_calls_still_waiting(tmp_path):
    data = tmp_path / "answers.jsonl"
    rows = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    # eight distinct prompts: identical ones would be sent once (single flight)
    data.write_text("".join(json.dumps({**rows[i % 3], "id": f"item-{i}", "question": f"{rows[i % 3]['question']} ({i})"}) + "\n"
                            for i in range(8)))
    release = threading.Event()
    answered = []

    def hang(body: dict) -> str:  # the server died with these requests in flight
        release.wait(30)
        answered.append(body)
        return GRADE

    # five requests hang, then the next three are refused: the breaker opens on the third
    with OpenAIStub(respond=hang, failures=[200] * 5 + [401] * 3) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url, "timeout": 120},
                             concurrency=8)
        try:
            result = run("answers", data, config, progress=False)
            answered_by_then = len(answered)
        finally:
            release.set()
    assert answered_by_then == 0  # the run ended before any hanging call was answered
    assert result.failed == 3 and result.not_evaluated == 5
    assert result.summary.startswith("run stopped, 5 of 8 items not evaluated: stopped after 3 consecutive authentication errors")


BUSY_AGENT = '''
import asyncio, pathlib, time

def busy_judge():
    """A judge stuck in a worker thread, as a local model is mid-generation."""
    async def judge(state, context):
        pathlib.Path(__file__).with_name("started").touch()
        await asyncio.to_thread(time.sleep, 120)
        return {}
    return judge
'''


def test_ctrl_c_does_not_wait_for_a_model_busy_in_a_thread(tmp_path):
    """Local models generate in threads that cannot be cancelled: Ctrl-C still ends the run
    at once, with the line saying how to resume (it used to wait over a minute)."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "busy_agent.py").write_text(BUSY_AGENT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(plugin), os.environ.get("PYTHONPATH", "")])}
    config = tmp_path / "run.yaml"
    config.write_text("agents: {judge: 'busy_agent:busy_judge'}\n")
    command = [sys.executable, "-m", "dialeval.cli", "run", "answers", "--data", str(ANSWERS), "--config", str(config),
               "--model", "dry-run", "--output-dir", str(tmp_path / "runs"), "--no-progress", "--no-cache", "--limit", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        _wait_for(lambda: (plugin / "started").exists())
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=PATIENCE)  # the thread sleeps 120 s: waiting for it would time out
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    [line] = err.strip().splitlines()
    assert line.startswith("dialeval: interrupted: 0 of 1 items done") and line.endswith("re-run the same command to resume")
