"""The bot under test behind one contract (``dialeval.bots.load(spec)``: an async callable over
OpenAI messages), its registry of kinds, the idempotency key each kind receives, and the
errors it gives before and during a run."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from dialeval import bots
from dialeval.cli import main
from dialeval.errors import ConfigError
from dialeval.testing.bot_server import BotStub
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import fake_embed
from tests.ledger_bots import SEEN
from tests.simulation_helpers import REFUND, models, suite

HELLO = [{"role": "user", "content": "Hello?"}]


def test_the_registry_knows_four_kinds_told_apart_by_their_key():
    bots.parse("tests.ledger_bots:keyed")  # registers the built-in kinds
    built_in = {k: kind.spec.__name__ for k, kind in bots.KINDS.items() if kind.spec.__module__ == "dialeval.bots.specs"}
    assert built_in == {"callable": "CallableBot", "graph": "GraphBot", "model": "EndpointBot", "url": "HttpBot"}
    assert isinstance(bots.parse({"url": "http://127.0.0.1:1/chat"}), bots.HttpBot)
    with pytest.raises(ConfigError, match="exactly one of"):
        bots.parse({"url": "http://x", "callable": "a:b"})


@pytest.mark.parametrize("spec", ["tests.ledger_bots:keyed", {"graph": "tests.ledger_bots:KEYED_GRAPH"}])
def test_callables_and_graphs_that_accept_it_get_the_turn_id(spec):
    SEEN.clear()
    bot = bots.load(spec)
    reply = asyncio.run(bot(HELLO, "s1", turn_id="dialeval-abc"))
    assert reply[0]["role"] == "assistant" and SEEN == ["dialeval-abc"]


def test_http_and_openai_compatible_bots_get_the_idempotency_key_header():
    def respond(body: dict[str, Any]) -> str:
        return "Hi."

    async def both(http_url: str, base_url: str) -> None:
        from dialeval.models.client import close_clients

        await bots.load({"url": http_url})(HELLO, "s1", turn_id="dialeval-k1")
        await bots.load({"model": "b", "base_url": base_url})(HELLO, "s1", turn_id="dialeval-k2")
        await close_clients()  # the endpoint's HTTP pool, in the loop that opened it

    with BotStub(script=["Hi."]) as http_bot, OpenAIStub(respond=respond) as endpoint:
        asyncio.run(both(http_bot.url, endpoint.base_url))
        headers = http_bot.headers[0], endpoint.request_headers[0]

    assert headers[0]["idempotency-key"] == "dialeval-k1" and headers[1]["idempotency-key"] == "dialeval-k2"


def test_a_bot_with_credentials_in_its_url_and_an_api_key_env_is_refused_before_any_call(tmp_path, capsys):
    with OpenAIStub(respond=models) as server, BotStub(script=["Hi."]) as bot:
        url = bot.url.replace("http://", "http://shopuser:shoppass-81@")
        code = main(["run", "simulation", "--data", str(suite(tmp_path)), "--model", "openai-compatible:stub",
                     "--base-url", server.base_url, "--option", f'bot={{"url": "{url}", "api_key_env": "BOT_KEY"}}',
                     "--output-dir", str(tmp_path / "runs"), "--no-progress"])
        calls = len(server.requests) + len(bot.requests)

    err = capsys.readouterr().err
    assert code == 2 and calls == 0 and not (tmp_path / "runs").exists()
    assert "carries user:password" in err and "http://***@127.0.0.1" in err and "shoppass-81" not in err


def closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])  # closed again: nothing listens there


def test_an_http_bot_that_cannot_be_reached_names_its_url_redacted(tmp_path, monkeypatch):
    from dialeval.evaluation import run
    from tests.helpers import http_config

    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    port = closed_port()
    url = f"http://shopuser:shoppass-82@127.0.0.1:{port}/chat?token=tok-secret-83"
    with OpenAIStub(respond=models) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, options={"bot": {"url": url}})
        result = run("simulation", str(suite(tmp_path, {**REFUND, "opening": "Hi, my blender is broken."})), config, progress=False)

    failure = result.records[0]["bot_failure"]
    assert failure.startswith(f"BotError: cannot reach http://***@127.0.0.1:{port}/chat?token=***: ConnectError")
    assert "shoppass-82" not in (result.run_dir / "results.jsonl").read_text()


def endpoint_turn(base_url: str) -> dict[str, Any]:
    """One turn of an OpenAI-compatible bot at ``base_url``, as the run records it."""
    async def turn() -> dict[str, Any]:
        from dialeval.models.client import close_clients

        record = await bots.load({"model": "my-bot", "base_url": base_url, "timeout": 30}).turn(HELLO, "s1", "dialeval-k3")
        await close_clients()  # the endpoint's HTTP pool, in the loop that opened it
        return record

    return asyncio.run(turn())


def test_an_openai_compatible_bot_nobody_listens_on_names_its_url_redacted_and_the_refusal(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unrelated-key-4411")
    port = closed_port()
    failure = endpoint_turn(f"http://shopuser:shoppass-84@127.0.0.1:{port}/v1?token=tok-secret-85")["failure"]

    assert failure.startswith(f"BotError: cannot reach http://***@127.0.0.1:{port}/v1?token=***: ")
    assert "ConnectionRefusedError" in failure  # the cause, not only the SDK's "Request timed out."
    assert "shoppass-84" not in failure and "tok-secret-85" not in failure


def test_an_openai_compatible_bot_answering_401_names_its_url_and_the_status(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unrelated-key-4411")
    with OpenAIStub(respond=lambda body: "Hi.", failures=[401]) as endpoint:
        failure = endpoint_turn(endpoint.base_url + "?token=tok-secret-86")["failure"]
        statuses = endpoint.statuses

    assert statuses == [401]  # asked once: a 401 is not retried
    assert failure.startswith(f"BotError: HTTP 401 from {endpoint.base_url}?token=***: ")
    assert "tok-secret-86" not in failure


def test_the_journal_survives_a_torn_line_and_a_new_process_and_fresh_runs_get_new_keys(tmp_path):
    from dialeval.bots.journal import JOURNAL, Journal

    journal = Journal.of(tmp_path)
    key = journal.key("c1", 0, 2)
    journal.sent("c1", 0, 2, key, since_turns=0, since_audits=0, turns=[{"number": 1, "role": "user", "text": "Hi"}], audits=[])
    journal.replied("c1", key, {"number": 2, "role": "assistant", "messages": [{"role": "assistant", "content": "Hello \ud800"}]})
    journal.sent("c1", 0, 4, journal.key("c1", 0, 4), since_turns=2, since_audits=0, turns=[], audits=[])
    with open(tmp_path / JOURNAL, "ab") as fh:
        fh.write(b'{"event": "reply", "conversation": "c1", "key": "dialev')  # killed mid-write

    again = Journal(tmp_path / JOURNAL)  # what a new process reads
    first, second = again.entries("c1")
    assert first.reply is not None and first.reply["record"]["messages"][0]["content"] == "Hello \ud800"
    assert second.reply is None and second.sent["key"] == again.key("c1", 0, 4)  # sent again with the same key
    assert again.key("c1", 0, 2) == key and (tmp_path / JOURNAL).read_bytes().endswith(b"\n")
    (tmp_path / JOURNAL).rename(tmp_path / "set-aside.jsonl")  # what --fresh does
    assert Journal(tmp_path / JOURNAL).key("c1", 0, 2) != key
