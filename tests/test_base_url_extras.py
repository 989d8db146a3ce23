"""A base_url may carry HTTP basic-auth credentials and a query string: both reach the
server on every request (retries after a 429 included), and neither is ever written."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.backends.http import PreflightError
from dialeval.models.client import ModelClient
from dialeval.endpoint import EndpointError, redacted, split_base_url
from dialeval.report.viewer import write_site
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import keys_only

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'
PASSWORD, QUERY_KEY = "pw-secret-7731", "qk-secret-5521"
BASIC = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    keys_only(monkeypatch, "sk-unrelated-openai-key-1234", "sk-ant-test-key-5678")


def with_extras(url: str) -> str:
    """``url`` with basic-auth credentials and a query (an API version and a key) added."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://alice:{PASSWORD}@{rest}?api-version=2024-06-01&key={QUERY_KEY}"


def test_a_base_url_is_split_into_what_the_sdks_take():
    parts = split_base_url("https://alice:p%40ss@host:8443/pfx/v1?api-version=2024-06-01&key=k1")
    assert parts.url == "https://host:8443/pfx/v1"
    assert parts.sdk_args() == {
        "base_url": "https://host:8443/pfx/v1",
        "default_query": {"api-version": "2024-06-01", "key": "k1"},
        "default_headers": {"Authorization": "Basic " + base64.b64encode(b"alice:p@ss").decode()},
    }
    assert parts.with_path("/models") == "https://host:8443/pfx/v1/models?api-version=2024-06-01&key=k1"
    assert split_base_url("http://localhost:8000/v1").sdk_args() == {"base_url": "http://localhost:8000/v1"}
    assert redacted("https://alice:p%40ss@host/v1?api-version=2024&key=k1") == "https://***@host/v1?api-version=***&key=***"
    with pytest.raises(EndpointError, match="fragment"):
        split_base_url("http://host/v1#part")


def test_credentials_and_query_reach_every_request_and_no_file(tmp_path, capsys):
    with OpenAIStub(respond=lambda body: GRADE, failures=[429]) as server:
        url = with_extras(server.base_url)
        config = RunConfig(
            model=ModelSettings(spec="openai-compatible:judge", base_url=url, max_retries=2),
            output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "cache" / "c.sqlite"), concurrency=1,
        )
        result = run("answers", DATA, config, progress=True)
    assert result.failed == 0 and server.statuses == [429, 200, 200, 200]  # the retry after the 429 went through
    assert all(p.startswith("/v1/chat/completions?") and f"key={QUERY_KEY}" in p for p in server.paths)
    assert {h["authorization"] for h in server.request_headers} == {BASIC}  # basic auth, no clash with the key header
    assert server.gets == [f"/v1/models?api-version=2024-06-01&key={QUERY_KEY}"]  # the preflight asked the same way
    write_site(tmp_path / "runs")  # the viewer's pages too
    captured = capsys.readouterr()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"config.json", "limits.json", "report.md", "usage.json", "results.jsonl"} <= {p.name for p in written}
    assert any(p.suffix == ".html" for p in written)
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        for secret in (PASSWORD, QUERY_KEY, BASIC.split()[1]):
            assert secret not in text, (path, secret)
    assert PASSWORD not in captured.out + captured.err and QUERY_KEY not in captured.out + captured.err
    config_text = (result.run_dir / "config.json").read_text()
    assert "/v1?api-version=***&key=***" in config_text


def test_a_password_rotated_resumes_the_same_run(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        first = run("answers", DATA, RunConfig(
            model=ModelSettings(spec="openai-compatible:judge", base_url=with_extras(server.base_url), max_retries=0),
            output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "c.sqlite"),
        ), progress=False)
        rotated = with_extras(server.base_url).replace(PASSWORD, "pw-rotated-0001")
        second = run("answers", DATA, RunConfig(
            model=ModelSettings(spec="openai-compatible:judge", base_url=rotated, max_retries=0),
            output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "c.sqlite"),
        ), progress=False)
    assert first.run_dir == second.run_dir and len(server.requests) == 3


@pytest.mark.parametrize(
    ("spec", "url", "said"),
    [
        ("anthropic:claude-haiku-4-5", "http://127.0.0.1:9/?beta=1", "a query string"),
        ("anthropic:claude-haiku-4-5", "http://alice:pw@127.0.0.1:9", "would replace the key"),
        ("openai:gpt-4o-mini", "http://alice:pw@127.0.0.1:9/v1", "carries user:password"),
    ],  # a '#fragment' stops earlier, when the config is read (tests/test_malformed_base_url.py)
)
def test_what_cannot_be_sent_is_refused_before_any_call(spec, url, said):
    client = ModelClient(ModelSettings(spec=spec, base_url=url))
    with pytest.raises(PreflightError, match=said) as caught:
        client.impl.requirements()
    assert "pw@" not in str(caught.value) and "beta=1" not in str(caught.value)
