"""``--workers N``: a run's items shared among processes, with one process's semantics.

Results, usage and the report are those of one process; a breaker that opens in one
worker stops them all; a worker killed with ``kill -9`` loses nothing finished and the
re-run does only what is left; a parent killed leaves no worker behind; the run
folder's lock refuses a second run while workers run.
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
from typing import Any
from typing import Callable

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.config import ConfigError, ModelSettings, RunConfig
from dialeval.errors import RunLocked
from dialeval.models.prompt_store import load_prompts
from dialeval.run.folder import results_by_id
from dialeval.run.runner import run
from dialeval.run.workers import ITEMS_PER_WORKER, choose_workers, cores
from dialeval.testing.openai_server import OpenAIStub, last_user_text
from tests.helpers import http_config

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
PATIENCE = 60.0  # generous: the machine is busy


def _data(tmp_path: Path, n: int) -> Path:
    """``n`` answers items, each with its own question (so its own prompt and cache entry)."""
    rows = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(
        json.dumps({**rows[i % 3], "id": f"item-{i}", "question": f"{rows[i % 3]['question']} (question {i})"}) + "\n"
        for i in range(n)
    ))
    return path


def _question(body: dict) -> str:
    """Which item a request judges: its ``(question i)`` marker."""
    text = last_user_text(body)
    return text[text.index("(question "):].split(")", 1)[0] + ")"


def _grade(body: dict) -> str:
    """A verdict that depends on the item only, so every worker count scores alike."""
    number = int(_question(body).split()[1].rstrip(")"))
    return json.dumps({"rationale": f"item {number}", "score": number % 5 + 1})


def _answer_then_hold(answered: int) -> tuple[Callable[[dict], str], threading.Event]:
    """A stub answer that grades the first ``answered`` requests at once and holds every
    later one until the event is set: the run stops in a known state."""
    release = threading.Event()
    arrived = [0]
    lock = threading.Lock()

    def respond(body: dict) -> str:
        with lock:
            arrived[0] += 1
            held = arrived[0] > answered
        if held:
            release.wait(PATIENCE)
        return _grade(body)

    return respond, release


def _wait_for(condition, seconds: float = PATIENCE) -> None:
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


def _cli(server: OpenAIStub, data: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dialeval.cli", "run", "answers", "--data", str(data),
            "--model", "openai-compatible:judge", "--base-url", server.base_url, "--output-dir", str(out),
            "--run-id", "shared", "--no-progress", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + str(ROOT)}


RUN_TIME = {"provenance", "latency_s", "latency_mean_s", "latency_p95_s"}  # when and how fast, not what was measured


def _measured(path: Path) -> Any:
    """A run file without its run-time fields (start and end times, latencies)."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in RUN_TIME}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(path.read_text()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork()")
def test_two_workers_record_the_same_metrics_usage_and_rows_as_one(tmp_path):
    data = _data(tmp_path, 24)
    outcomes = {}
    with OpenAIStub(respond=_grade) as server:
        for workers in (1, 2):
            config = http_config(tmp_path / f"w{workers}", {"spec": "openai-compatible:judge", "base_url": server.base_url},
                                 concurrency=4, workers=workers)
            result = run("answers", data, config, progress=False)
            assert result.complete
            outcomes[workers] = result
    one, two = (outcomes[w].run_dir for w in (1, 2))
    assert _measured(one / "metrics.json") == _measured(two / "metrics.json")
    assert _measured(one / "usage.json") == _measured(two / "usage.json")
    rows = {w: results_by_id(outcomes[w].run_dir) for w in (1, 2)}
    assert sorted(rows[1]) == sorted(rows[2]) and len(rows[2]) == 24
    assert all(rows[1][i]["result"] == rows[2][i]["result"] for i in rows[1])
    assert len(server.completions) == 48  # every item judged once per run
    assert one.name == two.name  # the worker count is not part of the run's identity


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork()")
def test_a_breaker_that_opens_in_one_worker_stops_every_worker(tmp_path):
    data = _data(tmp_path, 8)
    release = threading.Event()
    answered = []

    def hang(body: dict) -> str:  # the server died with these requests in flight
        release.wait(PATIENCE)
        answered.append(body)
        return _grade(body)

    # three requests hang (in both workers: four are sent at once), the fourth is refused
    with OpenAIStub(respond=hang, failures=[200] * 3 + [401] * 20) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url, "timeout": 120},
                             concurrency=4, workers=2, max_consecutive_errors=1)
        try:
            result = run("answers", data, config, progress=False)
            answered_by_then = len(answered)
        finally:
            release.set()
    assert answered_by_then == 0  # both workers' hanging calls were cancelled, not waited for
    assert result.failed == 1 and result.not_evaluated == 7
    assert result.summary.startswith("run stopped, 7 of 8 items not evaluated: stopped after 1 consecutive authentication errors")
    assert json.loads((result.run_dir / "metrics.json").read_text())["run"]["stopped"].startswith("stopped after 1")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the workers through /proc")
def test_a_worker_killed_loses_nothing_finished_and_the_rerun_does_only_what_is_left(tmp_path):
    data = _data(tmp_path, 12)
    respond, release = _answer_then_hold(6)
    with OpenAIStub(respond=respond) as server:
        command = _cli(server, data, tmp_path / "runs", "--workers", "2", "--concurrency", "4",
                       "--config", str(_cache_config(tmp_path)))
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        run_dir = tmp_path / "runs" / "shared"
        try:  # six answered and on disk, four held (two per worker)
            _wait_for(lambda: _running(process) and len(server.requests) >= 10 and len(results_by_id(run_dir)) == 6)
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
        # its two held items, and any it had been handed next; what it finished is on disk
        assert 2 <= len(left) <= 4
        assert re.search(rf"worker \d \(pid {workers[0]}\) was killed by signal 9; its {len(left)} unfinished items", out)
        assert not list(run_dir.glob("prompts.*.journal"))  # the killed worker's prompts went into the store
        sent_before = len(server.requests)

        again = subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=PATIENCE * 2)
        assert again.returncode == 0, again.stderr
    rerun = Counter(_question(body) for body in server.requests[sent_before:])
    assert sorted(rerun) == sorted(f"(question {i.split('-')[1]})" for i in left)  # only what was left
    assert all(row["status"] == "ok" for row in results_by_id(run_dir).values()) and len(results_by_id(run_dir)) == 12


def _cache_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(f"cache_path: {tmp_path / 'cache.sqlite'}\nparse_retries: 0\n")
    return path


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the workers through /proc")
def test_the_lock_refuses_a_second_run_and_a_killed_parent_leaves_no_worker(tmp_path):
    data = _data(tmp_path, 8)
    release = threading.Event()
    with OpenAIStub(respond=lambda body: release.wait(PATIENCE) and _grade(body)) as server:
        command = _cli(server, data, tmp_path / "runs", "--workers", "2", "--concurrency", "4", "--no-cache")
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        try:
            _wait_for(lambda: len(server.requests) >= 4)
            workers = _children(process.pid)
            assert len(workers) == 2
            second = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url=server.base_url),
                               output_dir=str(tmp_path / "runs"), run_id="shared", cache_path=None, preflight=False)
            with pytest.raises(RunLocked):
                run("answers", data, second, progress=False)
            process.kill()  # kill -9 of the parent
            process.communicate(timeout=PATIENCE)
            _wait_for(lambda: not any(_alive(pid) for pid in workers))
        finally:
            release.set()
            if process.poll() is None:
                process.kill()


def test_workers_are_refused_for_a_local_model_before_anything_is_written(tmp_path):
    config = RunConfig(model=ModelSettings(spec="smollm2"), workers=2, output_dir=str(tmp_path / "runs"))
    with pytest.raises(ConfigError, match="field 'workers': 2 processes cannot run this: 'model' is a local model"):
        run("answers", ANSWERS, config, progress=False)
    assert not (tmp_path / "runs").exists()


def test_workers_are_refused_for_a_batch_model_before_anything_is_written(tmp_path):
    model = ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1", batch=True)
    config = RunConfig(model=model, workers=2, output_dir=str(tmp_path / "runs"), preflight=False)
    with pytest.raises(ConfigError, match="field 'workers': 2 processes cannot run this: 'model' is sent through a batch API"):
        run("answers", ANSWERS, config, progress=False)
    assert not (tmp_path / "runs").exists()


def test_the_default_is_as_many_workers_as_help():
    bench = get_benchmark("answers")
    api = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1"))
    assert choose_workers(api, bench, api.context(), 40) == 1  # a few items: one process
    assert choose_workers(api, bench, api.context(), 1_000) == 1  # one process keeps up with these
    assert choose_workers(api, bench, api.context(), 10_000) == min(cores(), 10_000 // ITEMS_PER_WORKER)
    dry = RunConfig(model=ModelSettings(spec="dry-run"))
    assert choose_workers(dry, bench, dry.context(), 10_000) == 1
    asked = api.model_copy(update={"workers": 3, "concurrency": 2})
    assert choose_workers(asked, bench, asked.context(), 10_000) == 2  # never more than the request slots


def test_the_help_and_the_config_schema_state_the_default_rule_the_run_uses(capsys):
    from dialeval.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    rule = f"one per {ITEMS_PER_WORKER:,} items left, at most one per core"
    assert rule in " ".join(capsys.readouterr().out.split())
    assert rule in " ".join((RunConfig.model_fields["workers"].description or "").split())


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the workers through /proc")
def test_ctrl_c_stops_every_worker_keeps_what_finished_and_says_how_to_resume(tmp_path):
    data = _data(tmp_path, 12)
    respond, release = _answer_then_hold(4)
    with OpenAIStub(respond=respond) as server:
        command = _cli(server, data, tmp_path / "runs", "--workers", "2", "--concurrency", "4", "--no-cache")
        # its own process group, as a terminal's foreground job: Ctrl-C reaches every process of it
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                                   start_new_session=True)
        run_dir = tmp_path / "runs" / "shared"
        try:  # four answered and on disk, four held
            _wait_for(lambda: len(server.requests) >= 8 and len(results_by_id(run_dir)) == 4)
            workers = _children(process.pid)
            assert len(workers) == 2
            os.killpg(process.pid, signal.SIGINT)
            _, err = process.communicate(timeout=PATIENCE)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130
    # what the run was given to do, then how it ended; no traceback from any process
    assert err.strip().splitlines() == [
        "dialeval: 12 items shared among 2 worker processes (--workers sets how many)",
        f"dialeval: interrupted: 4 of 12 items done (4 in this session), kept in {run_dir}; "
        "re-run the same command to resume",
    ]
    assert len(results_by_id(run_dir)) == 4
    _wait_for(lambda: not any(_alive(pid) for pid in workers))
    # the stopped workers' prompts are in the store: no journal is left for the re-run to take in
    assert sorted(p.name for p in run_dir.iterdir()) == [".lock", "config.json", "prompts.sqlite", "results.jsonl"]
    assert len(load_prompts(run_dir)) == 4  # the answered requests' (a prompt is kept with its answer)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork()")
def test_a_models_request_limit_is_the_runs_total_shared_among_workers(tmp_path):
    data = _data(tmp_path, 12)
    # answers wait until two requests are in flight (one per worker, their whole share),
    # and then take a while: a worker allowed more would have sent more meanwhile
    with OpenAIStub(respond=_grade, hold_until=2, latency=0.2) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url,
                                        "max_concurrency": 2}, workers=2)
        result = run("answers", data, config, progress=False)
    assert result.complete and len(server.completions) == 12
    assert server.peak_in_flight == 2  # never 2 per worker


def test_a_model_registered_in_this_process_keeps_the_run_in_it():
    from tests.helpers import scripted

    settings, _ = scripted(replies=[])
    config = RunConfig(model=settings)
    assert choose_workers(config, get_benchmark("answers"), config.context(), 10_000) == 1
