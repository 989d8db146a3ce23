"""A bot under test books orders: each turn reaches it at most once. Three `kill -9` at
different phases of a simulation run (the simulated user in flight between bot turns, a
bot call in flight, the judge in flight after the bot turns), each followed by a resume, call no finished
turn again, send the turn cut in flight once more with its idempotency key (counted), and
end with the results of a run never interrupted. Over HTTP and with a Python callable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from dialeval.evaluation import run
from dialeval.run.folder import results_by_id
from dialeval.testing.bot_server import BotStub
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config
from tests.simulation_helpers import REFUND, http_reply, models, suite

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = (REFUND, {**REFUND, "id": "other"})
SIMULATOR, JUDGE = "You play a person", "name: refund_given"


class Gate:
    """Holds the first request that matches, once armed: ``reached`` tells the test it is in flight."""

    def __init__(self) -> None:
        self.match: Callable[[Any], bool] | None = None
        self.reached = threading.Event()
        self.release = threading.Event()

    def arm(self, match: Callable[[Any], bool]) -> None:
        self.match, self.reached, self.release = match, threading.Event(), threading.Event()

    def __call__(self, request: Any) -> None:
        if self.match is not None and self.match(request):
            self.match = None
            self.reached.set()
            self.release.wait(60)


def _wait(condition: Callable[[], bool], seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.05)


def _command(server: OpenAIStub, data: Path, out: Path, bot: Any) -> list[str]:
    return [sys.executable, "-m", "dialeval.cli", "run", "simulation", "--data", str(data), "--model", "openai-compatible:stub",
            "--base-url", server.base_url, "--option", f"bot={json.dumps(bot)}", "--output-dir", str(out),
            "--run-id", "sim", "--no-progress", "--no-cache", "--concurrency", "1"]  # refund, then other


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "DIALEVAL_TEST_LEDGER": str(tmp_path / "ledger.jsonl"), "DIALEVAL_TEST_HOLD": str(tmp_path / "hold")}


def _kill_when(command: list[str], env: dict[str, str], reached: Callable[[], bool]) -> None:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        _wait(lambda: reached() or process.poll() is not None)
        assert process.poll() is None, f"the run ended before the kill: {process.stderr.read().decode()[-2000:]}"  # type: ignore[union-attr]
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()


def _outcome(row: dict[str, Any]) -> dict[str, Any]:
    """What a conversation came to, without timings or call records."""
    record = row["result"]
    turns = [(t["role"], t.get("text"), [m.get("content") for m in t.get("messages", [])], t.get("failure")) for t in record["turns"]]
    verdicts = [(c["criterion"], c["verdict"]) for c in record["criteria"]]
    return {"status": row["status"], "outcome": record["outcome"], "stop": record["stop_reason"], "turns": turns,
            "checks": record["checks"], "verdicts": verdicts}


class Kind:
    """One kind of bot under test: its spec, its calls as (session, turn, key), and a hold on one turn."""

    def __init__(self, kind: str, tmp_path: Path):
        self.kind, self.tmp_path, self.gate = kind, tmp_path, Gate()
        self.stub: BotStub | None = None
        if kind == "http":
            def respond(body: dict[str, Any]) -> dict[str, Any]:
                self.gate((body["session_id"], sum(1 for m in body["messages"] if m["role"] == "user")))
                return http_reply(body)

            self.stub = BotStub(respond).__enter__()

    @property
    def spec(self) -> Any:
        return {"url": self.stub.url} if self.stub else "tests.ledger_bots:booking"

    def calls(self) -> list[tuple[str, int, str | None]]:
        if self.stub is not None:
            return [(body["session_id"], sum(1 for m in body["messages"] if m["role"] == "user"), headers.get("idempotency-key"))
                    for body, headers in zip(self.stub.requests, self.stub.headers)]
        ledger = self.tmp_path / "ledger.jsonl"
        lines = ledger.read_text(encoding="utf-8").splitlines() if ledger.exists() else []
        return [(c["session"], c["turn"], c["key"]) for c in map(json.loads, lines)]

    def hold(self, session: str, turn: int) -> Callable[[], bool]:
        if self.stub is not None:
            self.gate.arm(lambda request: request == (session, turn))
            return self.gate.reached.is_set
        (self.tmp_path / "hold").write_text(f"{session}:{turn}", encoding="utf-8")
        return lambda: (session, turn) in [c[:2] for c in self.calls()]

    def let_go(self) -> None:
        self.gate.release.set()
        (self.tmp_path / "hold").unlink(missing_ok=True)

    def close(self) -> None:
        if self.stub is not None:
            self.stub.__exit__(None, None, None)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["http", "callable"])
def test_three_kills_and_resumes_call_no_finished_turn_again(tmp_path, monkeypatch, kind):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    model_gate = Gate()

    def respond(body: dict[str, Any]) -> str:
        model_gate(prompt_of(body))
        return models(body)

    data = suite(tmp_path, *SCENARIOS)
    with OpenAIStub(respond=respond) as server:
        # the run never interrupted, for comparison (in this process: quicker)
        plain = Kind(kind, tmp_path / "plain")
        (tmp_path / "plain").mkdir()
        for name, value in _env(tmp_path / "plain").items():
            monkeypatch.setenv(name, value)
        config = http_config(tmp_path / "plain", {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": plain.spec}, run_id="sim", concurrency=1)
        config.cache_path = None  # as the command line's --no-cache
        run("simulation", str(data), config, progress=False)
        plain_calls = plain.calls()
        plain.close()

        bot = Kind(kind, tmp_path)
        command, env, out = _command(server, data, tmp_path / "runs", bot.spec), _env(tmp_path), tmp_path / "runs"
        try:
            # 1. killed while the simulated user answers refund's first bot turn
            model_gate.arm(lambda prompt: SIMULATOR in prompt and "message number 2" in prompt)
            _kill_when(command, env, lambda: model_gate.reached.is_set())
            model_gate.release.set()
            # 2. killed while the bot answers refund's second turn: that call is in flight
            _kill_when(command, env, bot.hold("sim-refund", 2))
            bot.let_go()
            # 3. killed while the judge judges refund, after its bot turns
            model_gate.arm(lambda prompt: JUDGE in prompt)
            _kill_when(command, env, lambda: model_gate.reached.is_set())
            model_gate.release.set()
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
            calls = bot.calls()
        finally:
            bot.let_go()
            bot.close()

    assert done.returncode == 0, done.stderr[-3000:]
    # every finished turn was called once; the one in flight at the first kill twice, with one key
    counts = Counter((session, turn) for session, turn, _ in calls)
    assert counts == Counter({("sim-refund", 1): 1, ("sim-refund", 2): 2, ("sim-other", 1): 1, ("sim-other", 2): 1})
    assert Counter((session, turn) for session, turn, _ in plain_calls) == Counter(dict.fromkeys(counts, 1))
    [first, again] = [key for session, turn, key in calls if (session, turn) == ("sim-refund", 2)]
    assert first and first == again and first.startswith("dialeval-")
    assert len({key for *_, key in calls}) == 4  # one key per turn
    # the same results as the run never interrupted, the re-sent turn counted
    rows, plain_rows = results_by_id(out / "sim"), results_by_id(tmp_path / "plain" / "runs" / "sim")
    assert {i: _outcome(r) for i, r in rows.items()} == {i: _outcome(r) for i, r in plain_rows.items()}
    assert rows["refund"]["result"]["outcome"] == "success"
    assert rows["refund"]["result"]["resent_after_interruption"] == 1 and rows["other"]["result"]["resent_after_interruption"] == 0
    metrics = json.loads((out / "sim" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["resent_after_interruption"] == 1
    assert "sent again after an interruption (with their idempotency key): 1" in (out / "sim" / "report.md").read_text(encoding="utf-8")


def test_retrying_an_item_that_failed_on_its_judge_calls_no_bot_turn_again(tmp_path, monkeypatch):
    from dialeval.config import ModelSettings

    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    with OpenAIStub(respond=models) as server, OpenAIStub(respond=models) as judge, BotStub(http_reply) as bot:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": {"url": bot.url}}, run_id="sim")
        config.models = {"judge": ModelSettings(spec="openai-compatible:stub", base_url=judge.base_url, max_retries=0)}
        judge.failures = [400] * 20  # the judge refuses: the item fails, and a re-run retries it
        first = run("simulation", str(suite(tmp_path)), config, progress=False)
        calls = len(bot.requests)
        judge.failures = []
        again = run("simulation", str(suite(tmp_path)), config, progress=False)

    assert first.failed == 1 and calls == 2
    assert again.failed == 0 and again.records[0]["outcome"] == "success" and len(bot.requests) == calls
