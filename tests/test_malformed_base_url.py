"""A malformed URL (a role's ``base_url``, a trust candidate's, a bot's ``base_url`` or ``url``)
stops when the config is read: exit 2, one line naming the field, the URL redacted, no
traceback, and never the password or a query value it carries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from dialeval.config import ModelSettings
from dialeval.endpoint import EndpointError, checked_url, redacted
from dialeval.protocols.mdseval.common import Setup

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
SECRETS = ("secretpw", "secretq")
MALFORMED = {
    "a port that is not a number": ("http://user:secretpw@127.0.0.1:notaport/v1?key=secretq", "must be a number from 1 to 65535"),
    "an unclosed IPv6 bracket": ("http://user:secretpw@[::1/v1?key=secretq", "an IPv6 host needs both '[' and ']'"),
    "a space": ("http://user:secretpw@127.0.0.1:18001 /v1?key=secretq", "contains whitespace"),
}


def dialeval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "dialeval", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def assert_one_line_exit_2(done: subprocess.CompletedProcess[str], field: str, shown: str, reason: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    [line] = (done.stdout + done.stderr).splitlines()
    assert line.startswith("dialeval: error: ") and f"field '{field}'" in line and shown in line and reason in line
    assert "Traceback" not in line and not any(secret in line for secret in SECRETS)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("url, reason", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_base_url_on_the_command_line_stops_with_one_redacted_line(tmp_path, url, reason):
    done = dialeval("run", "answers", "--data", str(DATA), "--model", "openai-compatible:judge", "--base-url", url,
                    "--output-dir", str(tmp_path / "runs"), "--no-progress", cwd=tmp_path)

    assert_one_line_exit_2(done, "model.base_url", "http://***@", reason)
    assert "key=***" in done.stderr and not (tmp_path / "runs").exists()  # stopped before any run folder or call


@pytest.mark.timeout(120)
def test_a_malformed_url_in_a_config_a_candidate_or_a_bot_names_its_field(tmp_path):
    url, reason = MALFORMED["an unclosed IPv6 bracket"]
    config = tmp_path / "run.yaml"
    config.write_text(f"model: {{spec: 'openai-compatible:judge', base_url: '{url}'}}\n", encoding="utf-8")
    done = dialeval("run", "answers", "--data", str(DATA), "--config", str(config), "--no-progress", cwd=tmp_path)
    assert_one_line_exit_2(done, "model.base_url", "http://***@[::1/v1?key=***", reason)

    candidates = tmp_path / "candidates.yaml"
    candidates.write_text(f"candidates:\n  - model: {{spec: 'openai-compatible:judge', base_url: '{url}'}}\n", encoding="utf-8")
    done = dialeval("trust", "--candidates", str(candidates), "--data", "d.jsonl", "--labels", "l.jsonl", "--rubric", "r.yaml", cwd=tmp_path)
    assert_one_line_exit_2(done, "candidates.0.model.model.base_url", "http://***@[::1/v1?key=***", reason)

    port_url, port_reason = MALFORMED["a port that is not a number"]
    for bot, field in (({"model": "my-bot", "base_url": url}, "base_url"), ({"url": port_url}, "url")):
        done = dialeval("run", "simulation", "--data", str(DATA), "--model", "openai-compatible:judge",
                        "--base-url", "http://127.0.0.1:9/v1", "--option", f"bot={json.dumps(bot)}", cwd=tmp_path)
        assert_one_line_exit_2(done, field, "http://***@", reason if field == "base_url" else port_reason)
        assert "simulation option 'bot'" in done.stderr


def test_what_a_request_can_be_sent_to_passes_unchanged():
    for url in ("http://127.0.0.1:8000/v1", "https://alice:pw@host/v1?api-version=2024-06-01", "http://[::1]:8000/v1"):
        assert checked_url(url) == url and ModelSettings(spec="openai-compatible:x", base_url=url).base_url == url
    for url, reason in (("ftp://host/v1", "http:// or https://"), ("localhost:8000/v1", "http:// or https://"),
                        ("http:///v1", "no host"), ("http://host:70000/v1", "from 1 to 65535"),
                        ("http://host:0/v1", "from 1 to 65535"), ("http://host/v1\n", "whitespace"),
                        ("http://127.0.0.1:9/v1#frag", "fragment")):
        with pytest.raises(EndpointError, match=reason):
            checked_url(url)
        with pytest.raises(ValidationError, match=reason):
            ModelSettings(spec="openai-compatible:x", base_url=url)
        with pytest.raises(ValidationError, match=reason):  # an MDSEval generation setup's URL likewise
            Setup(model="openai-compatible:x", strategy="zeroshot", base_url=url)


def test_a_url_no_parser_accepts_is_still_written_redacted():
    assert redacted("http://user:secretpw@[::1/v1?key=secretq&v=2#frag") == "http://***@[::1/v1?key=***&v=***"
    assert redacted("http://[::1/v1") == "http://[::1/v1"


@pytest.mark.timeout(120)
def test_a_malformed_url_in_the_sdks_own_variable_stops_naming_the_variable(tmp_path, monkeypatch):
    url, reason = MALFORMED["a port that is not a number"]
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    done = dialeval("run", "answers", "--data", str(DATA), "--model", "openai-compatible:judge", "--no-preflight",
                    "--output-dir", str(tmp_path / "runs"), "--no-progress", cwd=tmp_path)

    assert_one_line_exit_2(done, "model", "$OPENAI_BASE_URL: 'http://***@127.0.0.1:notaport/v1?key=***'", reason)
