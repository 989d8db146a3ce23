"""``--processes N``: a run's items shared among worker processes, with one process's results.

Results, usage and the report equal one process's; a breaker that opens in one worker
stops them all; a worker killed with ``kill -9`` loses nothing finished and the re-run
does only what is left, ending equal to a run never interrupted; the run's own process
killed leaves no worker behind; the run folder's lock refuses a second run meanwhile.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from dialeval.config import ConfigError, ModelSettings, RunConfig
from dialeval.errors import RunLocked
from dialeval.evaluation import run
from dialeval.run.folder import results_by_id
from dialeval.testing.openai_server import OpenAIStub, last_user_text
from tests.helpers import http_config

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
PATIENCE = 60.0  # generous: the machine is busy
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork()")
needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the workers through /proc")


def answers_data(tmp_path: Path, n: int) -> Path:
    """``n`` answers items, each with its own question (so its own prompt and cache entry)."""
    rows = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(
        json.dumps({**rows[i % 3], "id": f"item-{i}", "question": f"{rows[i % 3]['question']} (question {i})"}) + "\n"
        for i in range(n)
    ))
    return path


def question(body: dict[str, Any]) -> str:
    """Which item a request judges: its ``(question i)`` marker."""
    text = last_user_text(body)
    return text[text.index("(question "):].split(")", 1)[0] + ")"


def grade(body: dict[str, Any]) -> str:
    """A verdict that depends on the item only, so every process count scores alike."""
    number = int(question(body).split()[1].rstrip(")"))
    return json.dumps({"rationale": f"item {number}", "score": number % 5 + 1})


def _answer_then_hold(answered: int) -> tuple[Callable[[dict[str, Any]], str], threading.Event]:
    """Grades the first ``answered`` requests at once and holds every later one until the
    event is set: the run stops in a known state."""
    release = threading.Event()
    arrived = [0]
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> str:
        with lock:
            arrived[0] += 1
            held = arrived[0] > answered
        if held:
            release.wait(PATIENCE)
        return grade(body)

    return respond, release


def _wait_for(condition: Callable[[], bool], seconds: float = PATIENCE) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.05)


def _running(process: subprocess.Popen[str]) -> bool:
    """True while ``process`` runs; its output as the failure when it ended early."""
    if process.poll() is not None:
        out, err = process.communicate()
        raise AssertionError(f"the run ended early with {process.returncode}: {out}\n{err}")
    return True


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _cli(server: OpenAIStub, data: Path, out: Path, run_id: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dialeval.cli", "run", "answers", "--data", str(data),
            "--model", "openai-compatible:judge", "--base-url", server.base_url, "--output-dir", str(out),
            "--run-id", run_id, "--no-progress", *extra]


def _env() -> dict[str, str]:
    # PYTHONFAULTHANDLER: a process that does not end in time is made to print every thread's stack
    return {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + str(ROOT), "PYTHONFAULTHANDLER": "1"}


def _communicate_or_show_stacks(process: subprocess.Popen) -> tuple[str, str]:
    """The process's output once it ends; one still running after PATIENCE fails the test with
    the stack of each of its threads (SIGABRT makes the fault handler print them), so a hang
    seen once on a busy machine says where it hung."""
    try:
        return process.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        _, err = process.communicate(timeout=PATIENCE)
        pytest.fail(f"still running {PATIENCE:g} s after Ctrl-C; its threads:\n{err[-6000:]}")


RUN_TIME = {"provenance", "latency_s", "latency_mean_s", "latency_p95_s", "seconds"}  # when and how fast, not what


def measured(value: Any) -> Any:
    """A run file's content without its run-time fields (times, latencies)."""
    if isinstance(value, dict):
        return {k: measured(v) for k, v in value.items() if k not in RUN_TIME}
    if isinstance(value, list):
        return [measured(v) for v in value]
    return value


def run_files(run_dir: Path) -> dict[str, Any]:
    """What a run measured: its rows by id (in id order), metrics.json and usage.json."""
    rows = results_by_id(run_dir)
    return {
        "rows": measured([rows[i] for i in sorted(rows)]),
        "metrics": measured(json.loads((run_dir / "metrics.json").read_text())),
        "usage": measured(json.loads((run_dir / "usage.json").read_text())),
    }


def _config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(f"cache_path: {tmp_path / 'cache.sqlite'}\nparse_retries: 0\n")
    return path


@needs_fork
@pytest.mark.timeout(240)
def test_two_processes_record_the_same_rows_metrics_and_usage_as_one(tmp_path):
    data = answers_data(tmp_path, 24)
    outcomes = {}
    with OpenAIStub(respond=grade) as server:
        for processes in (1, 2):
            config = http_config(tmp_path / f"p{processes}", {"spec": "openai-compatible:judge", "base_url": server.base_url},
                                 concurrency=4, processes=processes)
            outcomes[processes] = run("answers", data, config, progress=False)
    assert all(result.complete for result in outcomes.values())
    assert run_files(outcomes[1].run_dir) == run_files(outcomes[2].run_dir)
    assert len(server.completions) == 48  # every item judged once per run
    assert outcomes[1].run_dir.name == outcomes[2].run_dir.name  # the process count is not part of the run's identity


@needs_fork
@pytest.mark.timeout(240)
def test_a_breaker_that_opens_in_one_process_stops_every_process(tmp_path):
    data = answers_data(tmp_path, 8)
    release = threading.Event()
    answered = []

    def hang(body: dict[str, Any]) -> str:  # the server died with these requests in flight
        release.wait(PATIENCE)
        answered.append(body)
        return grade(body)

    # three requests hang (in both processes: four are sent at once), the fourth is refused
    with OpenAIStub(respond=hang, failures=[200] * 3 + [401] * 20) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url, "timeout": 120},
                             concurrency=4, processes=2, max_consecutive_errors=1)
        try:
            result = run("answers", data, config, progress=False)
            answered_by_then = len(answered)
        finally:
            release.set()
    assert answered_by_then == 0  # both processes' hanging calls were cancelled, not waited for
    assert result.failed == 1 and result.not_evaluated == 7
    assert result.summary.startswith("run stopped, 7 of 8 items not evaluated: stopped after 1 consecutive authentication errors")


@needs_proc
@pytest.mark.timeout(300)
def test_one_of_two_processes_killed_the_resumed_run_equals_an_uninterrupted_one(tmp_path):
    data = answers_data(tmp_path, 12)
    config = _config_file(tmp_path)
    respond, release = _answer_then_hold(6)
    armed = threading.Event()  # the uninterrupted run first, answered at once
    with OpenAIStub(respond=lambda body: respond(body) if armed.is_set() else grade(body)) as server:
        whole = subprocess.run(_cli(server, data, tmp_path / "runs", "whole", "--processes", "2", "--concurrency", "4",
                                    "--config", str(config), "--no-cache"), capture_output=True, text=True, env=_env(),
                               timeout=PATIENCE * 2)
        assert whole.returncode == 0, whole.stderr
        armed.set()
        base = len(server.requests)
        command = _cli(server, data, tmp_path / "runs", "cut", "--processes", "2", "--concurrency", "4", "--config", str(config))
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        run_dir = tmp_path / "runs" / "cut"
        try:  # six answered and on disk, four held (two per process)
            _wait_for(lambda: _running(process) and len(server.requests) >= base + 10 and len(results_by_id(run_dir)) == 6)
            workers = _children(process.pid)
            assert len(workers) == 2
            os.kill(workers[0], signal.SIGKILL)
            _wait_for(lambda: not _alive(workers[0]))
            release.set()
            out, err = process.communicate(timeout=PATIENCE)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
        assert process.returncode == 1, err
        first = {i for i, row in results_by_id(run_dir).items() if row["status"] == "ok"}
        left = {f"item-{i}" for i in range(12)} - first
        assert 2 <= len(left) <= 4  # its two held items, and any it had been handed next
        assert re.search(rf"process \d \(pid {workers[0]}\) was killed by signal 9; its {len(left)} unfinished items", out)
        sent_before = len(server.requests)
        again = subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=PATIENCE * 2)
        assert again.returncode == 0, again.stderr
    rerun = Counter(question(body) for body in server.requests[sent_before:])
    assert sorted(rerun) == sorted(f"(question {i.split('-')[1]})" for i in left)  # only what was left, once each
    lines = [json.loads(line)["id"] for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert sorted(lines) == sorted(f"item-{i}" for i in range(12))  # no item lost, none written twice
    assert run_files(run_dir) == run_files(tmp_path / "runs" / "whole")


@needs_proc
@pytest.mark.timeout(240)
def test_the_lock_refuses_a_second_run_and_the_run_process_killed_leaves_no_worker_and_resumes(tmp_path):
    data = answers_data(tmp_path, 8)
    release = threading.Event()
    with OpenAIStub(respond=lambda body: grade(body) if release.wait(PATIENCE) else "") as server:
        command = _cli(server, data, tmp_path / "runs", "shared", "--processes", "2", "--concurrency", "4", "--no-cache")
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        try:
            _wait_for(lambda: _running(process) and len(server.requests) >= 4)
            workers = _children(process.pid)
            assert len(workers) == 2
            second = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url=server.base_url),
                               output_dir=str(tmp_path / "runs"), run_id="shared", cache_path=None, preflight=False)
            with pytest.raises(RunLocked):
                run("answers", data, second, progress=False)
            process.kill()  # kill -9 of the run's own process
            process.communicate(timeout=PATIENCE)
            _wait_for(lambda: not any(_alive(pid) for pid in workers))
            release.set()
            again = subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=PATIENCE * 2)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert again.returncode == 0, again.stderr  # resumed: the lock went with the processes
    lines = [json.loads(line)["id"] for line in (tmp_path / "runs" / "shared" / "results.jsonl").read_text().splitlines()]
    assert sorted(lines) == sorted(f"item-{i}" for i in range(8))  # each item once


def test_processes_are_refused_for_a_local_model_before_anything_is_written(tmp_path):
    config = RunConfig(model=ModelSettings(spec="smollm2"), processes=2, output_dir=str(tmp_path / "runs"))
    with pytest.raises(ConfigError, match="field 'processes': 2 processes cannot run this: 'model' is a local model"):
        run("answers", ANSWERS, config, progress=False)
    assert not (tmp_path / "runs").exists()


def test_processes_are_refused_for_a_batch_model_before_anything_is_written(tmp_path):
    model = ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1", batch=True)
    config = RunConfig(model=model, processes=2, output_dir=str(tmp_path / "runs"), preflight=False)
    with pytest.raises(ConfigError, match="field 'processes': 2 processes cannot run this: 'model' is sent through a batch API"):
        run("answers", ANSWERS, config, progress=False)
    assert not (tmp_path / "runs").exists()


@needs_fork
@pytest.mark.timeout(240)
def test_a_models_request_limit_is_the_runs_total_shared_among_processes(tmp_path):
    data = answers_data(tmp_path, 12)
    # answers wait until two requests are in flight (one per process, its whole share), and
    # then take a while: a process allowed more would have sent more meanwhile
    with OpenAIStub(respond=grade, hold_until=2, latency=0.2) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url,
                                        "max_concurrency": 2}, processes=2)
        result = run("answers", data, config, progress=False)
    assert result.complete and len(server.completions) == 12
    assert server.peak_in_flight == 2  # never 2 per process


def test_a_relayed_event_reaches_the_handler_as_langchain_would_call_it(caplog):
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import HumanMessage

    from dialeval.run.relay import Relay, picklable, replay

    class Prompts(BaseCallbackHandler):  # a handler without on_chat_model_start: it hears the prompt as text
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def on_llm_start(self, serialized: Any, prompts: list[str], **kwargs: Any) -> None:
            self.seen.append(prompts)

    class Broken(BaseCallbackHandler):
        ignore_chain = True

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            raise RuntimeError("handler bug")

    sent: list[Any] = []
    prompts, broken = Prompts(), Broken()
    relays = [Relay(0, prompts, sent.append), Relay(1, broken, sent.append)]
    assert relays[1].ignore_chain and not relays[0].ignore_chain  # the worker's manager skips what the handler skips
    relays[0].on_chat_model_start({}, [[HumanMessage("grade this")]], run_id="r1")
    relays[1].on_llm_end("answer", run_id="r1")
    for kind, event in sent:
        assert kind == "callback"
        replay([prompts, broken], event)
    assert prompts.seen == [["Human: grade this"]]
    assert "Error in Broken.on_llm_end callback: RuntimeError('handler bug')" in caplog.text  # logged, the run goes on
    crossed = picklable({"lock": threading.Lock(), "n": 1})  # what cannot cross the pipe goes as its repr
    assert crossed["n"] == 1 and str(crossed["lock"]).startswith("<unlocked _thread.lock object")


@needs_proc
@pytest.mark.timeout(240)
@pytest.mark.usefixtures("ctrl_c_reaches_children")  # in a background CI step SIGINT is inherited ignored
def test_ctrl_c_stops_every_process_keeps_what_finished_and_says_how_to_resume(tmp_path):
    data = answers_data(tmp_path, 12)
    respond, release = _answer_then_hold(4)
    with OpenAIStub(respond=respond) as server:
        command = _cli(server, data, tmp_path / "runs", "shared", "--processes", "2", "--concurrency", "4", "--no-cache")
        # its own process group, as a terminal's foreground job: Ctrl-C reaches every process of it
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                                   start_new_session=True)
        run_dir = tmp_path / "runs" / "shared"
        try:  # four answered and on disk, four held
            _wait_for(lambda: _running(process) and len(server.requests) >= 8 and len(results_by_id(run_dir)) == 4)
            workers = _children(process.pid)
            assert len(workers) == 2
            os.killpg(process.pid, signal.SIGINT)
            _, err = _communicate_or_show_stacks(process)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130
    assert err.strip().splitlines() == [  # one line, no traceback from any process
        f"dialeval: interrupted: 4 of 12 items done (4 in this session), kept in {run_dir}; re-run the same command to resume"
    ]
    assert len(results_by_id(run_dir)) == 4
    _wait_for(lambda: not any(_alive(pid) for pid in workers))
