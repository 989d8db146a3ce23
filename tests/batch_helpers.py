"""What the batch tests share: test keys in the environment, and a client of the test server."""

from __future__ import annotations

import pytest

from dialeval.config import ModelSettings
from dialeval.models.client import ModelClient
from dialeval.testing.openai_server import OpenAIStub


@pytest.fixture(autouse=True)
def test_keys(monkeypatch):
    """Keys the SDKs need, and no base URL from the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def stub_client(spec: str, server: OpenAIStub, **settings: object) -> ModelClient:
    """A client of ``spec`` pointed at the test server (Anthropic at its root, OpenAI at ``/v1``)."""
    url = server.root_url if spec.startswith("anthropic:") else server.base_url
    return ModelClient(ModelSettings(spec=spec, base_url=url, **settings))  # type: ignore[arg-type]
