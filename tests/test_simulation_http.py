"""The simulation benchmark end to end over HTTP: the simulated user, auditor and judge on
the OpenAI-compatible test server, the bot under test behind every kind of adapter."""

from __future__ import annotations

import json

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.evaluation import run
from dialeval.testing.bot_server import BotStub
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config
from tests.simulation_helpers import GOOD_BOT, REFUND, http_reply, models, suite, user_says


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


def simulate(tmp_path, server, bot, data, **options):
    config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                         options={"bot": bot, **options})
    return run("simulation", str(data), config, progress=False)


def test_a_scripted_user_gets_a_refund_from_an_http_bot(tmp_path):
    with OpenAIStub(respond=models) as server, BotStub(script=GOOD_BOT) as bot:
        result = simulate(tmp_path, server, {"url": bot.url, "body": {"history": "$messages", "session": "$session_id"}}, suite(tmp_path))
        sent = bot.requests
        simulator = [prompt_of(b) for b in server.completions if "You play a person" in prompt_of(b)]

    [record] = result.records
    assert record["outcome"] == "success" and record["stop_reason"] == "checks_passed"
    assert [t["role"] for t in record["turns"]] == ["user", "assistant", "user", "assistant"]
    assert record["turns"][2]["text"] == "It is A123."  # the hidden fact, once the bot asked
    # the notes the simulated user kept at its first turn come back in its later prompts (from the Chroma store)
    assert record["turns"][0]["notes_change"]["added"] == ["persona/name"]
    assert len(simulator) == 2 and "(no notes yet)" in simulator[0] and "- persona/name: Dana" in simulator[1]
    assert sent[1]["session"] == "sim-refund#1" and [m["role"] for m in sent[1]["history"]] == ["user", "assistant", "user"]
    # each simulated turn passed the code checks as it was written; the model reviewed the conversation once at the end
    assert [(a["turn"], a["status"], a["findings"]) for a in record["audits"]] == [(1, "code", []), (3, "code", []), (None, "ok", [])]
    assert record["audits"][2]["turns"] == [1, 3] and record["audits"][2]["call"]["agent"] == "simulation.conversation_auditor"
    assert result.metrics["audited_turns"] == 2  # turns 1 and 3, each read by the code checks and the conversation audit
    assert record["criteria"] == [{"criterion": "refund_given", "verdict": "yes", "status": "ok", "passed": True}]
    assert result.metrics["suite"]["1"]["pass_hat_k"] == 1.0 and result.metrics["bot_failures"] == 0
    # the conversation is written in the dialogue format, which the dialogue benchmark reads as it is
    written = result.run_dir / "conversations.jsonl"
    [conversation] = get_benchmark("dialogue").load(written, {})
    assert [t.role for t in conversation.turns] == ["user", "assistant", "user", "assistant"]
    assert "RMA-123456" in conversation.turns[3].text
    assert "Bot failures: 0" in (result.run_dir / "report.md").read_text(encoding="utf-8")


def test_a_simulator_breaking_its_persona_is_the_simulators_failure(tmp_path):
    def breaks_persona(number, conversation):
        return {"message": "As an AI language model, I do not own a blender.", "stop": None, "notes": {}}

    with OpenAIStub(respond=lambda body: models(body, breaks_persona)) as server, BotStub(script=GOOD_BOT) as bot:
        result = simulate(tmp_path, server, {"url": bot.url}, suite(tmp_path))
        bot_calls = len(bot.requests)

    [record] = result.records
    assert record["outcome"] == "simulator_failure" and record["stop_reason"] == "audit_failure"
    assert record["audits"][0]["findings"] == [{"rule": "persona", "evidence": "As an AI"}]
    assert bot_calls == 0 and record["criteria"][0]["status"] == "not_judged"  # never sent, never judged
    assert result.metrics["simulator_failures"] == 1 and result.metrics["bot_failures"] == 0
    assert result.metrics["suite"]["1"]["tasks"] == 0 and result.metrics["suite"]["1"]["short"] == 1  # left out of pass^k
    assert result.failed == 0


def test_a_bot_failing_on_its_third_turn_is_the_bots_failure(tmp_path):
    patient = {**REFUND, "id": "patient", "max_turns": 6, "success": {"checks": [{"said": "never said"}]}}
    with OpenAIStub(respond=models) as server, BotStub(script=["Hello.", "Tell me more."], fail_on={3}) as bot:
        result = simulate(tmp_path, server, {"url": bot.url}, suite(tmp_path, patient))

    [record] = result.records
    assert record["outcome"] == "bot_failure" and record["stop_reason"] == "bot_failure"
    assert record["user_turns"] == 3 and "HTTP 500" in record["bot_failure"]
    assert result.metrics["bot_failures"] == 1 and result.metrics["simulator_failures"] == 0
    assert result.metrics["suite"]["1"]["pass_hat_k"] == 0.0  # a bot failure counts against the bot
    assert result.failed == 0  # the bot's failure is not the run's


def test_an_async_callable_bot_with_tool_calls(tmp_path):
    scenario = {**REFUND, "success": {**REFUND["success"], "checks": [{"tool": "issue_refund", "args": {"order_id": "A123"}}]}}
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, "tests.simulation_helpers:refund_with_tool", suite(tmp_path, scenario))
        judge = [prompt_of(b) for b in server.completions if "name: refund_given" in prompt_of(b)]

    [record] = result.records
    assert record["outcome"] == "success" and record["stop_reason"] == "checks_passed"
    last = record["turns"][-1]
    assert [m["role"] for m in last["messages"]] == ["assistant", "tool", "assistant"]  # the whole turn is kept
    assert record["checks"] == [{"check": "called issue_refund(order_id='A123')", "passed": True}]
    # the judge reads the call and its result in the dialogue's own form
    assert "[tool call 1] issue_refund({\"order_id\": \"A123\"})" in judge[0] and "[tool result 1] RMA-654321" in judge[0]
    # the written file keeps them as OpenAI tool_calls and a tool message: the dialogue loader reads them back
    line = json.loads((result.run_dir / "conversations.jsonl").read_text(encoding="utf-8"))
    assert [m["role"] for m in line["messages"]] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    [conversation] = get_benchmark("dialogue").load(result.run_dir / "conversations.jsonl", {})
    reloaded = conversation.turns[-1]
    sent, result_message = last["messages"][0]["tool_calls"], last["messages"][1]
    assert [(c.id, c.name, c.arguments, c.result) for c in reloaded.tool_calls] == [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]), result_message["content"]) for c in sent]
    assert reloaded.text == last["messages"][2]["content"] and len(conversation.turns) == 4


@pytest.mark.parametrize("how", ["import", "langgraph.json"])
def test_a_langgraph_bot(tmp_path, how):
    if how == "import":
        bot = {"graph": "tests.simulation_helpers:BOT_GRAPH"}
    else:
        (tmp_path / "langgraph.json").write_text(json.dumps({"graphs": {"support": "./bot.py:build"}}), encoding="utf-8")
        (tmp_path / "bot.py").write_text("from tests.simulation_helpers import build_bot_graph as build\n", encoding="utf-8")
        bot = f"{tmp_path / 'langgraph.json'}:support"
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, bot, suite(tmp_path))

    [record] = result.records
    assert record["outcome"] == "success" and "RMA-123456" in record["turns"][3]["messages"][0]["content"]


def test_an_openai_compatible_bot_with_its_own_system_prompt(tmp_path):
    def respond(body):
        if body["model"] == "my-bot":
            users = [m for m in body["messages"] if m["role"] == "user"]
            return GOOD_BOT[min(len(users), 2) - 1]
        return models(body)

    with OpenAIStub(respond=respond) as server:
        bot = {"model": "my-bot", "base_url": server.base_url, "system": "You are Shop Support."}
        result = simulate(tmp_path, server, bot, suite(tmp_path))
        to_bot = [b for b in server.completions if b["model"] == "my-bot"]
        judge = [prompt_of(b) for b in server.completions if "name: refund_given" in prompt_of(b)]

    assert result.records[0]["outcome"] == "success" and "You are Shop Support." in judge[0]  # the judge sees the bot's system prompt
    assert len(to_bot) == 2 and to_bot[0]["messages"][0] == {"role": "system", "content": "You are Shop Support."}


def test_k_runs_give_pass_hat_k_and_pass_at_k(tmp_path):
    steady = {**REFUND, "id": "steady"}
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, "tests.simulation_helpers:flaky", suite(tmp_path, REFUND, steady), k=3)

    outcomes = {r["id"]: r["outcome"] for r in result.records}
    assert outcomes == {"refund#1": "success", "refund#2": "failure", "refund#3": "success",
                        "steady#1": "success", "steady#2": "success", "steady#3": "success"}
    refund = result.metrics["per_scenario"]["refund"]
    assert refund["pass_hat_k"] == {"1": 2 / 3, "2": 1 / 3, "3": 0.0} and refund["pass_at_k"]["3"] == 1.0
    assert result.metrics["per_scenario"]["steady"]["pass_hat_k"]["3"] == 1.0
    assert result.metrics["suite"]["3"]["pass_hat_k"] == 0.5 and result.metrics["suite"]["3"]["pass_at_k"] == 1.0
    assert result.metrics["suite"]["1"]["pass_hat_k_ci"] is not None


def test_a_rerun_with_the_same_bot_replays_the_simulated_user_from_the_cache(tmp_path):
    data = suite(tmp_path)
    with OpenAIStub(respond=models) as server, BotStub(http_reply) as bot:
        simulate(tmp_path / "first", server, {"url": bot.url}, data, **{"judging": {"context": "window"}})
        first = len(server.completions)
        config = http_config(tmp_path / "second", {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": {"url": bot.url}, "judging": {"context": "window"}})
        config.cache_path = str(tmp_path / "first" / "cache.sqlite")
        again = run("simulation", str(data), config, progress=False)

    assert first > 0 and len(server.completions) == first  # no model call the second time
    assert len(bot.requests) == 4  # the live bot was asked again
    assert again.records[0]["outcome"] == "success"
    prompts = [prompt_of(b) for b in server.completions if "You play a person" in prompt_of(b)]
    assert "It is A123." not in prompts[0] and "order number" in prompts[1]


def test_the_command_line_takes_a_callable_bot_as_a_json_string(tmp_path, capsys):
    from dialeval.cli import main

    with OpenAIStub(respond=models) as server:
        code = main(["run", "simulation", "--data", str(suite(tmp_path)), "--model", "openai-compatible:stub",
                     "--base-url", server.base_url, "--option", 'bot="tests.simulation_helpers:reply"',
                     "--output-dir", str(tmp_path / "runs"), "--no-progress", "--no-cache"])

    assert code == 0
    [line] = (next((tmp_path / "runs").iterdir()) / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["result"]["outcome"] == "success"


def test_a_spoiled_conversation_is_simulated_again_with_a_new_seed(tmp_path):
    def respond(body):
        text = prompt_of(body)
        if "You play a person" in text and "simulation run 1)" in text:  # the first attempt breaks its persona
            return json.dumps({"message": "As an AI, I have no blender.", "stop": None, "notes": {}})
        return models(body)

    with OpenAIStub(respond=respond) as server, BotStub(http_reply) as bot:
        result = simulate(tmp_path, server, {"url": bot.url}, suite(tmp_path), resimulate=1)

    [record] = result.records
    [spoiled] = record["resimulated"]
    assert spoiled["stop_reason"] == "audit_failure" and spoiled["audits"][0]["findings"][0]["rule"] == "persona"
    assert record["outcome"] == "success" and record["turns"][0]["text"].startswith("Hi, my blender")
    assert result.metrics["resimulated"] == 1 and result.metrics["simulator_failures"] == 0


def test_judging_the_conversations_again_uses_each_scenarios_own_rubric(tmp_path):
    polite = {**REFUND, "id": "polite", "success": {"criteria": [{"name": "polite", "description": "The bot was polite."}]}}
    with OpenAIStub(respond=models) as server:
        result = simulate(tmp_path, server, "tests.simulation_helpers:reply", suite(tmp_path, REFUND, polite))
        written = result.run_dir / "conversations.jsonl"
        config = http_config(tmp_path / "again", {"spec": "openai-compatible:stub", "base_url": server.base_url})
        again = run("dialogue", str(written), config, progress=False)  # no rubric option: each conversation names its own
    assert [json.loads(line)["metadata"]["rubric"] for line in written.read_text().splitlines()] == ["rubrics/refund.yaml", "rubrics/polite.yaml"]
    judged = {r["id"]: [u["criterion"] for u in r["conversation_units"] + r["turn_units"]] for r in again.records}
    assert judged == {"refund#1": ["refund_given"], "polite#1": ["polite"]}


def invents_a_fact(body):
    """The scripted models, with a conversation auditor that flags an invented fact the code cannot see."""
    text = prompt_of(body)
    if "<turns_to_check>" in text:
        return json.dumps({"rationale": "turn 3 invents a receipt", "findings": [{"turn": 3, "rule": "invented_fact", "evidence": "It is A123."}]})
    return models(body)


@pytest.mark.parametrize("audit, audit_calls", [("conversation", 1), ("turn", 2), ("off", 0)])
def test_the_audit_modes_and_their_calls(tmp_path, audit, audit_calls):
    with OpenAIStub(respond=invents_a_fact) as server:
        result = simulate(tmp_path, server, "tests.simulation_helpers:reply", suite(tmp_path), audit=audit)
        prompts = [prompt_of(b) for b in server.completions]
    [record] = result.records
    assert sum("You check a simulated user" in p for p in prompts) == audit_calls
    if audit == "conversation":  # the finding spoils the conversation: the simulator's failure, not judged
        assert record["outcome"] == "simulator_failure" and record["stop_reason"] == "audit_failure"
        assert record["audits"][-1]["findings"] == [{"rule": "invented_fact", "evidence": "It is A123.", "turn": 3}]
        assert not any("refund_given" in p and "You check" not in p and "You play" not in p for p in prompts)
    else:
        assert record["outcome"] == "success"


def test_notes_go_to_chroma_only_once_they_outgrow_the_prompt(tmp_path, monkeypatch):
    embedded: list[str] = []

    def counting_embed(texts, *args, **kwargs):
        embedded.extend(texts)
        return fake_embed(texts, *args, **kwargs)

    monkeypatch.setattr("dialeval.memory.embeddings.embed", counting_embed)

    def many_notes(number, conversation):
        said = user_says(number, conversation)
        return {**said, "notes": {"facts": {f"fact_{number}_{i}": f"value {i}" for i in range(3)}}}

    with OpenAIStub(respond=lambda body: models(body, many_notes)) as server:
        few = simulate(tmp_path / "few", server, "tests.simulation_helpers:reply", suite(tmp_path))
        assert embedded == [] and not (few.run_dir / "notes").exists()  # 6 entries fit note_top_k=12: no store at all
        many = simulate(tmp_path / "many", server, "tests.simulation_helpers:reply", suite(tmp_path), note_top_k=2)
        prompts = [prompt_of(b) for b in server.completions if "You play a person" in prompt_of(b)]
    # written once, when the second turn needed a search (the 3 entries, and the bot's last turn as the query)
    assert embedded == ["facts fact 1 0: value 0", "facts fact 1 1: value 1", "facts fact 1 2: value 2",
                        "[turn 2] Bot: Sorry to hear that! What is your order number?"] and (many.run_dir / "notes").exists()
    assert prompts[-1].count("- facts/fact_1_") == 2  # the 2 closest of 3 entries
    assert many.records[0]["turns"][0]["notes"] == {"facts": {"fact_1_0": "value 0", "fact_1_1": "value 1", "fact_1_2": "value 2"}}


def test_the_persona_goal_and_facts_block_is_a_cached_prefix_of_every_simulator_and_auditor_prompt(tmp_path, monkeypatch):
    """Anthropic caches only what a request marks: the scenario block that opens the
    simulated user's and the auditor's prompts is cut off as its own block with a breakpoint,
    the same text at every turn (so OpenAI's automatic prefix cache finds it too)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    answers = {"SimulatedTurn": {"message": "Hi, my blender arrived broken.", "stop": None},
               "TurnAudit": {"rationale": "keeps the rules", "findings": []}, "Verdict": {"rationale": "refunded", "verdict": "yes"}}

    def by_tool(body):  # Anthropic's structured answers: one forced tool, named after the answer's model
        return "", "tool_use", answers[body["tools"][0]["name"]]

    with OpenAIStub(respond=by_tool) as server:
        config = http_config(tmp_path, {"spec": "anthropic:claude-stub", "base_url": server.root_url},
                             options={"bot": "tests.simulation_helpers:reply", "audit": "turn"})
        run("simulation", str(suite(tmp_path)), config, progress=False)
        bodies = list(server.completions)

    def opening_block(body, closing):
        first = body["messages"][0]["content"]
        return first[0] if isinstance(first, list) and first[0]["text"].endswith(closing) else None

    simulator = [opening_block(b, "</pictures>") for b in bodies if "You play a person" in json.dumps(b["system"])]
    auditor = [opening_block(b, "</hidden_facts>") for b in bodies if "<simulated_turn>" in json.dumps(b)]
    for blocks in (simulator, auditor):
        assert len(blocks) >= 2 and all(b is not None for b in blocks)
        assert all(b == blocks[0] for b in blocks)  # the same block, byte for byte, at every turn
        assert blocks[0]["cache_control"] == {"type": "ephemeral"}
        assert "<persona>" in blocks[0]["text"] and "A123" in blocks[0]["text"]  # persona, goal and hidden facts inside
