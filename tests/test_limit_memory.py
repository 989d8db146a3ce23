"""The learned request limit per endpoint and model: a small JSON file beside the cache."""

from __future__ import annotations

from dialeval.config import ModelSettings
from dialeval.models.client import ModelClient
from dialeval.models.limit_memory import endpoint_key, learned_limit, memory_path, remember_limit


def test_each_endpoint_and_model_has_its_own_limit(tmp_path):
    path = memory_path(str(tmp_path / "responses.sqlite"))
    remember_limit(path, endpoint_key("https://api.example.com/v1", "small"), 12)
    remember_limit(path, endpoint_key("https://api.example.com/v1/", "large"), 5)
    assert learned_limit(path, endpoint_key("https://api.example.com/v1", "small")) == 12
    assert learned_limit(path, endpoint_key("https://api.example.com/v1", "large")) == 5
    assert learned_limit(path, endpoint_key("https://other.example.com/v1", "small")) is None
    assert [p.name for p in tmp_path.iterdir()] == ["limits.json"]  # no temporary file left


def test_the_key_keeps_no_credentials_from_the_url():
    key = endpoint_key("https://user:sk-secret@llm.example.com:8443/v1?api-key=sk-other#x", "m")
    assert key == "https://llm.example.com:8443/v1 m"


def test_a_corrupt_file_reads_as_nothing_learned_and_is_replaced(tmp_path):
    path = tmp_path / "limits.json"
    for text in ("{not json", "[1, 2]", '{"https://a/v1 m": {"limit": "many"}}', '{"https://a/v1 m": {"limit": 0}}'):
        path.write_text(text)
        assert learned_limit(path, "https://a/v1 m") is None
    remember_limit(path, "https://a/v1 m", 7)
    assert learned_limit(path, "https://a/v1 m") == 7


def test_clients_of_different_endpoints_start_from_their_own_memory(tmp_path):
    cache = str(tmp_path / "responses.sqlite")
    remember_limit(memory_path(cache), endpoint_key("http://127.0.0.1:9001/v1", "judge"), 6)
    near = ModelClient(ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9001/v1", max_concurrency=32))
    far = ModelClient(ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9002/v1", max_concurrency=32))
    for client in (near, far):
        client.use_limit_memory(cache)
    assert (near.limit.current, far.limit.current) == (6, 32)


def test_a_fixed_limit_ignores_the_memory(tmp_path):
    cache = str(tmp_path / "responses.sqlite")
    remember_limit(memory_path(cache), endpoint_key("http://127.0.0.1:9001/v1", "judge"), 6)
    settings = ModelSettings(
        spec="openai-compatible:judge", base_url="http://127.0.0.1:9001/v1", max_concurrency=32, adaptive_concurrency=False
    )
    client = ModelClient(settings)
    client.use_limit_memory(cache)
    assert client.limit.current == 32
