"""One redaction at the writers: a distinct secret planted in each surface a user gives (a
bot URL's query, a bot key from api_key_env, a role's base_url user info and query, a trust
candidate's base_url, a server echoing the Basic header in its 401, a bot echoing its request
in a 500) reaches no file of the run folder, the trust folder or the viewer's pages, and
neither stdout nor stderr: not as it is, percent-encoded, nor in base64."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dialeval.testing.bot_server import BotStub
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import write_jsonl
from tests.simulation_helpers import http_reply, models, suite

ROOT = Path(__file__).resolve().parents[1]
SECRETS = {
    "bot_query": "botquery-7f3a91", "bot_key": "botbearer-5c2e84", "judge_user": "judgeuser-0b17", "judge_password": "judgepass-9d44",
    "judge_query": "judgequery-a61c", "echo_user": "echouser-3e8f", "echo_password": "echopass-71b2",
    "trust_user": "trustuser-c4d0", "trust_password": "trustpass-2a95", "trust_query": "trustquery-e7b3",
}
PAIRS = [("judge_user", "judge_password"), ("echo_user", "echo_password"), ("trust_user", "trust_password")]


def forms() -> dict[str, str]:
    """Each secret as it is and in base64; each user:password pair as the Basic header carries it."""
    out = {}
    for name, value in SECRETS.items():
        out[name] = value
        out[f"{name} (base64)"] = base64.b64encode(value.encode()).decode().rstrip("=")
    for user, password in PAIRS:
        out[f"{user}:{password} (Basic)"] = base64.b64encode(f"{SECRETS[user]}:{SECRETS[password]}".encode()).decode()
    return out


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "dialeval.cli", *args], env=env, cwd=ROOT, capture_output=True, timeout=400)


def _with_auth(url: str, user: str, password: str, query: str = "") -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{SECRETS[user]}:{SECRETS[password]}@{rest}" + (f"?{query}" if query else "")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_secret_planted_in_each_surface_is_in_no_file_and_no_output(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "BOT_KEY": SECRETS["bot_key"]}
    chats = write_jsonl(tmp_path / "chats.jsonl", [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": f"Hello {i}."}]}
        for i in range(4)])
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": f"c{i}", "turn": 2, "criterion": "helpfulness", "score": 3 + i % 2}
                                                     for i in range(4)])
    (tmp_path / "rubric.yaml").write_text("criteria:\n  - name: helpfulness\n    description: Does the reply help?\n    scale: [1, 5]\n")
    outputs = []
    with OpenAIStub(respond=models) as server, OpenAIStub(api_key="never-this", echo_auth=True) as refusing, \
            OpenAIStub(respond=lambda body: '{"rationale": "fine", "score": 4}') as trusted, \
            BotStub(http_reply, fail_on={2}, echo=True) as bot:
        config = {
            "model": {"spec": "openai-compatible:stub", "max_retries": 0,
                      "base_url": _with_auth(server.base_url, "judge_user", "judge_password", f"key={SECRETS['judge_query']}")},
            "models": {"judge": {"spec": "openai-compatible:stub", "max_retries": 0,
                                 "base_url": _with_auth(refusing.base_url, "echo_user", "echo_password")}},
            "options": {"bot": {"url": f"{bot.url}?token={SECRETS['bot_query']}", "api_key_env": "BOT_KEY"}},
            "output_dir": str(tmp_path / "runs"), "cache_path": str(tmp_path / "runs" / "cache.sqlite"),
        }
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        ran = _cli("run", "simulation", "--data", str(suite(tmp_path)), "--config", str(tmp_path / "config.yaml"),
                   "--no-progress", "--no-preflight", env=env)
        viewed = _cli("view", str(tmp_path / "runs"), "--no-serve", env=env)
        candidate = _with_auth(trusted.base_url, "trust_user", "trust_password", f"sig={SECRETS['trust_query']}")
        trusted_run = _cli("trust", "--data", str(chats), "--labels", str(labels), "--rubric", str(tmp_path / "rubric.yaml"),
                           "--judge", "openai-compatible:j", "--base-url", candidate, "--output-dir", str(tmp_path / "trust"),
                           "--probes", "verbosity", "--repeats", "1", env=env)
        outputs = [ran, viewed, trusted_run]
        sent_to_bot = bot.headers

    # the secrets did their work: the bot got its key and the judge server its credentials
    assert sent_to_bot[0]["authorization"] == f"Bearer {SECRETS['bot_key']}"
    assert ran.returncode == 1, ran.stderr.decode()[-3000:]  # the judge's 401s fail the item: a run that is reported
    [run_dir] = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    written = {name: (run_dir / name).exists() for name in ("config.json", "results.jsonl", "metrics.json", "report.md", "bot_journal.jsonl")}
    assert all(written.values()), written
    results = (run_dir / "results.jsonl").read_text(encoding="utf-8")
    assert "HTTP 500" in results and "401" in results  # the echoes were recorded, scrubbed
    assert "***@127.0.0.1" in (run_dir / "config.json").read_text() and "token=***" in (run_dir / "config.json").read_text()
    assert (tmp_path / "trust").exists() and list((tmp_path / "trust").rglob("card.json")), trusted_run.stderr.decode()[-3000:]
    assert (tmp_path / "runs" / "index.html").exists() and list(run_dir.rglob("view/index.html"))

    files = [p for folder in (tmp_path / "runs", tmp_path / "trust") for p in folder.rglob("*") if p.is_file()]
    blobs = {str(p.relative_to(tmp_path)): p.read_bytes() for p in files}
    for n, done in enumerate(outputs):
        blobs[f"stdout of command {n}"], blobs[f"stderr of command {n}"] = done.stdout, done.stderr
    found = [(what, where) for what, value in forms().items() for where, blob in blobs.items() if value.encode() in blob]
    assert found == [], "\n".join(f"{what} in {where}" for what, where in found)
