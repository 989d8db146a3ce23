"""A run's first requests may leave while the OpenAI SDK imports (``models/head_start.py``);
what the run records and scores is the same as without: the same bodies reach the server,
``results.jsonl`` (timings aside) and ``metrics.json`` are equal, and a head-start request
the server refuses is sent again through the SDK, which ends the item as it would have."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dialeval.testing.openai_server import OpenAIStub, last_user_text

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

# the `dialeval` program in a process of its own; "sdk-first" imports the SDK before the
# run starts, as any process that has used it already would: no head start is taken then
PROBE = """
import sys
if sys.argv[1] == "sdk-first":
    import openai  # noqa: F401
if sys.argv[1] == "slow-sdk":  # the SDK takes SLOW_IMPORT seconds more to import in the head start's thread
    import threading, time
    class Slow:
        def find_spec(self, name, path=None, target=None):
            if name == "openai" and threading.current_thread() is not threading.main_thread():
                time.sleep(%s)
            return None
    sys.meta_path.insert(0, Slow())
from dialeval.cli import main
sys.exit(main(sys.argv[2:]))
"""
SLOW_IMPORT = 8.0  # far longer than a request to the local stub takes, even on a busy machine
PROBE = PROBE % SLOW_IMPORT
TIMINGS = {"seconds", "latency_s"}  # an item's, a call's
CLOCK = {"first_started", "started", "finished"}  # the run's provenance


def grade(body: dict[str, Any]) -> str:
    """A verdict that depends on the prompt, so a mixed-up answer would show."""
    text = last_user_text(body)
    return json.dumps({"rationale": f"read {len(text)} characters", "score": 1 + len(text) % 5})


def write_items(folder: Path, n: int) -> Path:
    path = folder / "answers.jsonl"
    rows = [{"id": f"q{i}", "question": f"What is {i} + {i}?", "reference": str(2 * i), "answer": str(2 * i + i % 3),
             "system": "s1" if i % 2 else "s2", "question_id": f"q{i // 2}"} for i in range(n)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_cli(mode: str, data: Path, server: OpenAIStub, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_") and "proxy" not in k.lower()}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), str(ROOT), os.environ.get("PYTHONPATH")]))
    argv = ["run", "answers", "--data", str(data), "--model", "openai-compatible:judge", "--base-url", server.base_url,
            "--output-dir", str(out), "--no-cache", "--no-progress", *extra]  # fmt: skip
    return subprocess.run([sys.executable, "-c", PROBE, mode, *argv], env=env, capture_output=True, text=True, timeout=300)


def untimed(value: Any) -> Any:
    """``value`` without its timing fields, at any depth."""
    return json.loads(json.dumps(value), object_hook=lambda fields: {k: v for k, v in fields.items() if k not in TIMINGS})


def run_files(out: Path) -> tuple[list[Any], Any]:
    (run_dir,) = out.iterdir()
    rows = sorted((json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()), key=lambda r: r["id"])
    metrics = untimed(json.loads((run_dir / "metrics.json").read_text()))
    provenance = metrics["run"]["provenance"]
    assert CLOCK <= set(provenance)
    metrics["run"]["provenance"] = {k: v for k, v in provenance.items() if k not in CLOCK}
    return untimed(rows), metrics


def by_sdk(headers: dict[str, str]) -> bool:
    """The SDK's client names itself in every request; the head start sends only what matters."""
    return "x-stainless-lang" in headers


def test_a_run_records_and_scores_the_same_with_and_without_the_head_start(tmp_path):
    data = write_items(tmp_path, 12)
    with OpenAIStub(respond=grade) as server:
        quick = run_cli("plain", data, server, tmp_path / "quick")
        quick_bodies, quick_headers = list(server.requests), list(server.request_headers)
        server.requests.clear()
        server.request_headers.clear()
        usual = run_cli("sdk-first", data, server, tmp_path / "usual")
        usual_bodies, usual_headers = list(server.requests), list(server.request_headers)
    assert quick.returncode == 0 and usual.returncode == 0, quick.stderr[-2000:] + usual.stderr[-2000:]
    assert not any(by_sdk(h) for h in quick_headers)  # every request of this small run left before the SDK was there
    assert all(by_sdk(h) for h in usual_headers)
    assert all(h["authorization"] == "Bearer not-needed" and h["content-type"] == "application/json" for h in quick_headers)
    key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731  (items run concurrently: compare as sets)
    assert len(quick_bodies) == len(usual_bodies) == 12
    assert sorted(map(key, quick_bodies)) == sorted(map(key, usual_bodies))
    assert run_files(tmp_path / "quick") == run_files(tmp_path / "usual")


def test_a_calls_latency_leaves_out_the_wait_for_the_sdk_import(tmp_path):
    """The answer came back at once; the SDK took SLOW_IMPORT seconds more to import. That
    wait is this process's start-up, which a run without a head start never timed either."""
    data = write_items(tmp_path, 2)
    with OpenAIStub(respond=grade) as server:
        done = run_cli("slow-sdk", data, server, tmp_path / "slow")
        assert done.returncode == 0, done.stderr[-2000:]
        assert not any(by_sdk(h) for h in server.request_headers)  # both left early, before the SDK was there
    (run_dir,) = (tmp_path / "slow").iterdir()
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert all(row["seconds"] >= SLOW_IMPORT for row in rows)  # the items did wait for the import
    latencies = [call["latency_s"] for row in rows for call in row["usage"]]
    assert len(latencies) == 2 and all(0 <= latency < SLOW_IMPORT for latency in latencies)


def test_a_refused_head_start_request_is_sent_again_through_the_sdk(tmp_path):
    data = write_items(tmp_path, 1)

    def refused_once(mode: str, status: int, out: str) -> tuple[Any, list[bool]]:
        server.requests.clear(), server.statuses.clear(), server.request_headers.clear()
        server.failures = [status]
        done = run_cli(mode, data, server, tmp_path / out)
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.statuses == [status, 200] and server.requests[0] == server.requests[1]
        return run_files(tmp_path / out), [by_sdk(h) for h in server.request_headers]

    with OpenAIStub(respond=grade) as server:
        for status in (500, 429):
            (rows, metrics), senders = refused_once("plain", status, f"refused-{status}")
            assert senders == [False, True]  # refused early, then sent by the SDK
            (sdk_rows, sdk_metrics), sdk_senders = refused_once("sdk-first", status, f"sdk-refused-{status}")
            assert sdk_senders == [True, True]  # the SDK refused and retried by itself
            assert rows == sdk_rows and metrics == sdk_metrics  # the retry counted as the SDK's own is
            (usage,) = rows[0]["usage"]
            assert usage["retries"] == 1 and usage["rate_limited"] == (status == 429)


def test_whatever_the_server_says_to_a_head_start_request_ends_the_item_as_without_it(tmp_path):
    """The head start's outcome is the SDK's first attempt: a 401 or 400 is not retried (the
    item fails as it would have), and a server that keeps failing gets no extra request."""
    data = write_items(tmp_path, 1)

    def served(mode: str, failures: list[int], out: str) -> tuple[int, list[int], Any, list[bool]]:
        server.requests.clear(), server.statuses.clear(), server.request_headers.clear()
        server.failures = list(failures)
        done = run_cli(mode, data, server, tmp_path / out)
        return done.returncode, list(server.statuses), run_files(tmp_path / out), [by_sdk(h) for h in server.request_headers]

    with OpenAIStub(respond=grade) as server:
        for failures in ([401], [400], [500] * 6, [429] * 6):
            name = f"{failures[0]}x{len(failures)}"
            code, statuses, files, senders = served("plain", failures, f"early-{name}")
            sdk_code, sdk_statuses, sdk_files, sdk_senders = served("sdk-first", failures, f"sdk-{name}")
            assert senders[0] is False and all(sdk_senders)  # the first request left early, or not
            assert (code, statuses) == (sdk_code, sdk_statuses), name  # the same requests, the same exit
            rows, metrics = files
            sdk_rows, sdk_metrics = sdk_files
            strip = lambda rows: json.loads(json.dumps(rows).replace(server.base_url, "<url>"))  # noqa: E731
            assert strip(rows) == strip(sdk_rows) and metrics == sdk_metrics, name
            if failures[0] in (401, 400):  # refused for good: no second request, the item failed
                assert statuses == failures and code == 1, name
            else:  # the SDK's retries, the head start's request counted as its first attempt
                assert statuses == failures[: len(statuses)] and len(statuses) < len(failures), name


def test_the_head_start_is_taken_only_where_its_request_is_certainly_the_sdks(monkeypatch):
    from dialeval.models.head_start import allowed

    for name in list(os.environ):
        if name.startswith("OPENAI_") or "proxy" in name.lower():
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert allowed("http://127.0.0.1:8000/v1", "OPENAI_API_KEY")
    assert allowed("https://api.example.test/v1", "MY_KEY")
    assert not allowed(None, "OPENAI_API_KEY")  # the SDK would pick the URL (its variable or default)
    assert not allowed("http://127.0.0.1:8000/v1?tenant=a", "OPENAI_API_KEY")
    for variable in ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_BASE_URL", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.setenv(variable, "x")
        assert not allowed("http://127.0.0.1:8000/v1", "OPENAI_API_KEY"), variable
        monkeypatch.delenv(variable)
