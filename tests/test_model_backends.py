"""One typed spec, one class per backend: what each backend owns (endpoint, key, price,
errors) and that each answers through its LangChain chat model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from dialeval.config import ModelSettings
from dialeval.models.backends import backend_for
from dialeval.models.backends.anthropic import AnthropicBackend
from dialeval.models.backends.base import AUTHENTICATION, CONNECTION, MISSING_MODEL, RATE_LIMIT
from dialeval.models.backends.dry_run import DryRunBackend
from dialeval.models.backends.http import PreflightError
from dialeval.models.backends.local import LocalBackend, SmolLM2Backend
from dialeval.models.backends.openai import OpenAIBackend, OpenAICompatibleBackend
from dialeval.models.client import ModelClient
from dialeval.models.dry_run import DryRunChatModel
from dialeval.models.pricing import FREE
from dialeval.spec import ModelSpec, SpecError
from dialeval.testing.openai_server import OpenAIStub

SDK_URL_VARS = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_URL")


@pytest.fixture(autouse=True)
def _no_sdk_urls(monkeypatch):
    for var in SDK_URL_VARS:
        monkeypatch.delenv(var, raising=False)


def _backend(spec: str, **settings) -> object:
    s = ModelSettings(spec=spec, **settings)
    return backend_for(s.parsed, s)


# --------------------------------------------------------------------------- the spec


@pytest.mark.parametrize(
    ("text", "backend", "name"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("anthropic:claude-haiku-4-5", "anthropic", "claude-haiku-4-5"),
        ("openai-compatible:qwen2.5:7b", "openai-compatible", "qwen2.5:7b"),  # Ollama tags keep their colon
        ("hf:/models/tiny", "hf", "/models/tiny"),
        ("smollm2", "smollm2", ""),
        (" dry-run ", "dry-run", ""),
        ("dry-run:openai:gpt-4o-mini", "dry-run", "openai:gpt-4o-mini"),
    ],
)
def test_a_spec_string_is_parsed_into_backend_and_model(text, backend, name):
    spec = ModelSpec.parse(text)
    assert (spec.backend, spec.name) == (backend, name)
    assert ModelSpec.parse(text) is spec  # parsed once per string


@pytest.mark.parametrize("text", ["gpt-4o-mini", "azure:gpt-4o", "openai:", "hf:"])
def test_a_spec_naming_no_backend_or_no_model_is_refused(text):
    with pytest.raises(SpecError):
        ModelSpec.parse(text)


def test_settings_and_clients_share_the_parsed_spec():
    settings = ModelSettings(spec="hf:/models/tiny")
    assert settings.parsed == ModelSpec("hf", "/models/tiny") and settings.parsed.is_local
    assert settings.parsed.local_source == "/models/tiny" and ModelSpec.parse("smollm2").local_source == "smollm2"
    assert ModelClient(ModelSettings(spec="dry-run")).spec.is_dry_run


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ("openai:gpt-4o-mini", OpenAIBackend),
        ("openai-compatible:judge", OpenAICompatibleBackend),
        ("anthropic:claude-haiku-4-5", AnthropicBackend),
        ("hf:/models/tiny", LocalBackend),
        ("smollm2", SmolLM2Backend),
        ("dry-run:openai:gpt-4o-mini", DryRunBackend),
    ],
)
def test_each_backend_is_one_class(spec, cls):
    assert type(_backend(spec)) is cls


# --------------------------------------------------------------------------- endpoint and key


def test_the_endpoint_is_the_config_then_the_sdk_variable_then_the_sdk_default(monkeypatch):
    assert _backend("openai:gpt-4o-mini").endpoint == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.test/v1")
    openai = _backend("openai:gpt-4o-mini")
    assert (openai.endpoint, openai.endpoint_source) == ("http://proxy.test/v1", "$OPENAI_BASE_URL")
    configured = _backend("openai:gpt-4o-mini", base_url="http://mine.test/v1")
    assert (configured.endpoint, configured.endpoint_source) == ("http://mine.test/v1", "base_url (the config or --base-url)")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude-proxy.test")
    assert _backend("anthropic:claude-haiku-4-5").endpoint == "http://claude-proxy.test"
    assert _backend("openai-compatible:judge").endpoint == "http://proxy.test/v1"
    assert _backend("smollm2").endpoint is None


def test_built_models_keep_the_sdk_variables_instead_of_a_hard_coded_url(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.test/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude-proxy.test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert str(_backend("openai:gpt-4o-mini").build().async_client._client.base_url).startswith("http://proxy.test/v1")
    assert _backend("anthropic:claude-haiku-4-5").build().anthropic_api_url == "http://claude-proxy.test"


def test_the_key_variable_is_the_configured_one_else_the_sdks(monkeypatch):
    assert _backend("openai:gpt-4o-mini").key_env == "OPENAI_API_KEY"
    assert _backend("anthropic:claude-haiku-4-5").key_env == "ANTHROPIC_API_KEY"
    assert _backend("openai-compatible:judge", api_key_env="MY_KEY").key_env == "MY_KEY"
    assert _backend("hf:/models/tiny").key_env is None


def test_preflight_names_the_missing_key_or_url(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(PreflightError, match=r"set \$OPENAI_API_KEY"):
        _backend("openai:gpt-4o-mini").preflight("openai:gpt-4o-mini")
    with pytest.raises(PreflightError, match="need base_url"):
        _backend("openai-compatible:judge").preflight("openai-compatible:judge")
    with pytest.raises(PreflightError, match="no such file or folder"):
        _backend("hf:/nonexistent/model-dir").preflight("hf:/nonexistent/model-dir")


def test_prices_come_from_the_backend():
    assert _backend("smollm2").price() == FREE
    assert _backend("openai-compatible:judge").price() is None
    assert _backend("openai:gpt-4o-mini").price() is not None
    assert _backend("dry-run:openai:gpt-4o-mini").price() == _backend("openai:gpt-4o-mini").price()
    assert _backend("dry-run").price() is None


# --------------------------------------------------------------------------- errors


class _Status(Exception):
    def __init__(self, status: int):
        super().__init__(f"HTTP {status}")
        self.status_code = status


class APIConnectionError(Exception):
    """Named as both SDKs name it."""


@pytest.mark.parametrize(
    ("spec", "err", "kind"),
    [
        ("openai:gpt-4o-mini", _Status(401), AUTHENTICATION),
        ("openai:gpt-4o-mini", APIConnectionError("refused"), CONNECTION),
        ("openai:gpt-4o-mini", _Status(404), MISSING_MODEL),
        ("openai:gpt-4o-mini", _Status(429), RATE_LIMIT),
        ("openai:gpt-4o-mini", _Status(529), None),
        ("anthropic:claude-haiku-4-5", _Status(529), RATE_LIMIT),  # Anthropic's "overloaded"
        ("openai:gpt-4o-mini", ValueError("bad JSON"), None),
    ],
)
def test_each_backend_classifies_its_errors(spec, err, kind):
    assert _backend(spec).classify(err) == kind


def test_a_missing_local_model_is_a_missing_model_error():
    from dialeval.models.local_engine import LocalModelError

    assert _backend("hf:/models/tiny").classify(LocalModelError("no such folder")) == MISSING_MODEL


# --------------------------------------------------------------------------- dry run


def test_a_dry_run_goes_through_the_dry_run_chat_model():
    client = ModelClient(ModelSettings(spec="dry-run:openai:gpt-4o-mini"))
    assert isinstance(client.model, DryRunChatModel)
    prompt = [HumanMessage("How many legs has a spider? " * 20)]
    generation = asyncio.run(client.generate(prompt, placeholder='{"score": 1}'))
    assert generation.estimated and generation.text == '{"score": 1}' and generation.cost > 0
    answer = DryRunChatModel().invoke(prompt, placeholder='{"score": 1}')  # the same model used through LangChain
    assert answer.content == generation.text
    assert answer.usage_metadata["input_tokens"] == generation.input_tokens


# --------------------------------------------------------------------------- private LangChain names


def _compatible(server: OpenAIStub) -> ModelSettings:
    return ModelSettings(spec="openai-compatible:judge", base_url=server.base_url)


def test_an_openai_model_answers_through_its_chat_model():
    with OpenAIStub(respond=lambda body: "Four.") as server:
        generation = asyncio.run(ModelClient(_compatible(server)).generate([HumanMessage("2+2?")]))
    assert generation.text == "Four." and generation.finish_reason == "stop" and len(server.requests) == 1


def test_a_429_the_anthropic_sdk_gave_up_on_halves_the_limit(monkeypatch):
    """ChatAnthropic takes no HTTP client of ours: the limit hears of the refusal the call raises."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with OpenAIStub(respond=lambda body: "Four.", failures=[429]) as server:
        client = ModelClient(ModelSettings(spec="anthropic:claude-haiku-4-5", base_url=server.root_url, max_retries=0))
        before = client.limit.current

        async def generate() -> Any:
            try:
                return await client.generate([HumanMessage("2+2?")])
            finally:
                await client.close_loop()  # as a run's end does

        with pytest.raises(Exception, match="429"):
            asyncio.run(generate())
        assert client.limit.current < before
