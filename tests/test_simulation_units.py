"""Scenario files, the bot option, the stop rule and pass^k, without a model; a dry run and pictures end to end."""

from __future__ import annotations

import base64
import io
import itertools
import json
from pathlib import Path

import pytest
from PIL import Image

from dialeval.benchmarks import get_benchmark
from dialeval.cli import main
from dialeval.config import ModelSettings, RunConfig
from dialeval.errors import ConfigError, DataError
from dialeval.metrics.passk import pass_at_k, pass_hat_k, suite_pass_k
from dialeval.conversation.data import Conversation
from dialeval.report.cautions import judge_warnings
from dialeval.protocols.simulation.bots import CallableBot, EndpointBot, GraphBot, HttpBot, dig, fill, parse_bot, reply_messages
from dialeval.protocols.simulation.rules import stop_reason
from dialeval.protocols.simulation.scenario import load_scenarios
from dialeval.protocols.simulation.transcript import dialogue_record, dialogue_turns
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config
from tests.simulation_helpers import REFUND, models, suite, user_says


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


def png(colour: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (2, 2), colour).save(out, format="PNG")
    return out.getvalue()


def test_an_unknown_field_stops_naming_file_record_and_field(tmp_path):
    path = suite(tmp_path, REFUND, {**REFUND, "id": "second", "hidden_fact": {"a": "b"}})
    with pytest.raises(DataError) as err:
        load_scenarios(path)
    assert str(path) in str(err.value) and "record 2" in str(err.value) and "field 'hidden_fact'" in str(err.value)


@pytest.mark.parametrize("success, field", [
    ({}, "success"),
    ({"checks": [{"said": "x", "pattern": "y"}]}, "success.checks.0"),
    ({"checks": [{"pattern": "(unclosed"}]}, "success.checks.0"),
    ({"criteria": [{"name": "ok", "description": "d", "level": "turn"}]}, "success.criteria.0.level"),
])
def test_a_bad_success_block_is_named(tmp_path, success, field):
    with pytest.raises(DataError, match=f"field '{field}'"):
        load_scenarios(suite(tmp_path, {**REFUND, "success": success}))


def test_images_are_files_inside_the_data_folder_or_data_urls(tmp_path):
    (tmp_path / "box.png").write_bytes(png())
    url = "data:image/png;base64," + base64.b64encode(png("blue")).decode()
    [scenario] = load_scenarios(suite(tmp_path, {**REFUND, "images": ["box.png", url]}))
    assert scenario.images[0].source == str((tmp_path / "box.png").resolve()) and scenario.images[1].source == url
    with pytest.raises(DataError, match="field 'images.0'.*not found"):
        load_scenarios(suite(tmp_path, {**REFUND, "images": ["missing.png"]}))


def test_a_json_lines_suite_reads_like_the_yaml_one(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(REFUND) + "\n", encoding="utf-8")
    assert load_scenarios(path) == load_scenarios(suite(tmp_path))


def test_the_bot_option_names_its_kind_by_its_keys():
    assert parse_bot("mybot:reply") == CallableBot(callable="mybot:reply")
    assert isinstance(parse_bot({"model": "m", "base_url": "http://x/v1"}), EndpointBot)
    assert isinstance(parse_bot({"url": "http://x/chat"}), HttpBot)
    assert isinstance(parse_bot("agents/langgraph.json:support"), GraphBot)
    with pytest.raises(ConfigError, match="exactly one of"):
        parse_bot({"model": "m", "url": "http://x"})
    with pytest.raises(ConfigError, match="base_url"):
        parse_bot({"model": "m"})
    with pytest.raises(ConfigError, match="api_key_env"):  # options go to the run folder: no keys in them
        parse_bot({"url": "http://x/chat", "headers": {"Authorization": "Bearer sk-123"}})
    with pytest.raises(ConfigError, match="needs the bot under test"):
        get_benchmark("simulation").load(Path("unused.yaml"), {})


@pytest.mark.parametrize("bot, reason", [
    ("no_such_module:reply", "No module named 'no_such_module'"),
    ("tests.simulation_helpers:no_such_function", "has no attribute 'no_such_function'"),
    ("tests.simulation_helpers:REFUND", "is not callable"),
    ("missing/langgraph.json:support", "has no graph 'support'"),
    ("{tmp}/broken.py:reply", "ZeroDivisionError"),  # a module that raises while it is imported
    ({"model": "my-bot", "base_url": "http://127.0.0.1:9/v1", "temprature": 0}, "temprature"),
])
def test_a_bot_that_cannot_be_set_up_stops_the_run_before_any_call(tmp_path, capsys, bot, reason):
    (tmp_path / "broken.py").write_text("1 / 0\n", encoding="utf-8")
    bot = bot.replace("{tmp}", str(tmp_path)) if isinstance(bot, str) else bot
    with OpenAIStub(respond=models) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, options={"bot": bot})
        with pytest.raises(ConfigError, match="option 'bot'") as raised:
            run("simulation", str(suite(tmp_path)), config, progress=False)
        assert server.completions == []  # a configuration mistake, not the bot's failure in a conversation
    assert reason in str(raised.value)
    code = main(["run", "simulation", "--data", str(suite(tmp_path)), "--model", "dry-run", "--option", f"bot={json.dumps(bot)}",
                 "--output-dir", str(tmp_path / "runs"), "--no-progress"])
    assert code == 2 and "option 'bot'" in capsys.readouterr().err and not (tmp_path / "runs").exists()


def test_http_bodies_and_replies():
    messages = [{"role": "user", "content": "hello there"}]
    body = fill({"input": "$text", "history": "$messages", "meta": {"sid": "$session_id"}}, messages, "s1")
    assert body == {"input": "hello there", "history": messages, "meta": {"sid": "s1"}}
    assert dig({"choices": [{"message": {"content": "hi"}}]}, "choices.0.message.content") == "hi"
    assert reply_messages(["one", {"content": "two"}]) == [{"role": "assistant", "content": "one"}, {"role": "assistant", "content": "two"}]
    with pytest.raises(Exception, match="empty reply"):
        reply_messages("")


def test_the_stop_rule_in_order(tmp_path):
    [scenario] = load_scenarios(suite(tmp_path))
    user = {"number": 1, "role": "user", "text": "hi"}
    bot = {"number": 2, "role": "assistant", "messages": [{"role": "assistant", "content": "Refund RMA-123456."}]}
    assert stop_reason(scenario, [user], []) is None  # the bot has not answered
    assert stop_reason(scenario, [user, bot], []) == "checks_passed"
    assert stop_reason(scenario, [{**user, "stop": "gave_up"}], []) == "user_stop"
    assert stop_reason(scenario, [user], [{"turn": 1, "findings": [{"rule": "persona"}]}]) == "audit_failure"
    assert stop_reason(scenario, [user, {**bot, "messages": [], "failure": "boom"}], []) == "bot_failure"
    plain = {**bot, "messages": [{"role": "assistant", "content": "Hm."}]}
    four = [t for n in range(4) for t in ({**user, "number": 2 * n + 1}, {**plain, "number": 2 * n + 2})]
    assert stop_reason(scenario, four[:6], []) is None and stop_reason(scenario, four, []) == "max_turns"


def test_pass_hat_k_and_pass_at_k_match_counting_every_draw():
    for n, c, k in [(5, 3, 2), (4, 4, 3), (6, 1, 1), (3, 0, 2), (3, 2, 3)]:
        outcomes = [True] * c + [False] * (n - c)
        draws = list(itertools.combinations(outcomes, k))
        assert pass_hat_k(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))
        assert pass_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
    assert pass_hat_k(2, 1, 3) is None
    suite_k = suite_pass_k([(3, 3), (3, 2), (1, 1)], 2)
    assert suite_k["tasks"] == 2 and suite_k["short"] == 1 and suite_k["pass_hat_k"] == pytest.approx((1 + 1 / 3) / 2)


def test_a_dry_run_prices_the_suite_without_calling_the_bot(tmp_path):
    config = RunConfig(model=ModelSettings(spec="dry-run:gpt-4o-mini"), output_dir=str(tmp_path / "runs"),
                       cache_path=str(tmp_path / "cache.sqlite"), options={"bot": "tests.simulation_helpers:reply", "k": 2})
    result = run("simulation", str(suite(tmp_path)), config, progress=False)
    assert result.failed == 0 and len(result.records) == 2
    assert {r["stop_reason"] for r in result.records} == {"max_turns"} and all(r["user_turns"] == 4 for r in result.records)
    usage = json.loads((result.run_dir / "usage.json").read_text(encoding="utf-8"))
    assert usage["total"]["requests"] == 0 and usage["total"]["cost_usd"] > 0  # priced, nothing sent
    per_agent = {name: row["calls"] for name, row in usage["per_agent"].items()}
    # the default audit reviews each conversation once: user turns + 2 calls per conversation
    assert per_agent == {"simulation.user_simulator": 8, "simulation.conversation_auditor": 2, "dialogue.conversation_judge.refund_given": 2}
    report = (result.run_dir / "report.md").read_text(encoding="utf-8")  # the role table shows the judge calls made
    assert "| conversation_judge | `dialogue.conversation_judge` | `dry-run:gpt-4o-mini` |" in report


def test_unreadable_simulated_turns_are_worded_for_a_simulator_not_a_judge():
    usage = {"calls": 10, "unparsed": 3, "truncated": 0, "models": ["smollm2"]}
    simulator, judge = judge_warnings({"simulation.user_simulator": usage, "dialogue.conversation_judge.ok": usage}, set())
    assert simulator.startswith("simulator simulation.user_simulator (smollm2): 3 of 10 turns")
    assert "simulator failures" in simulator and "judge" not in simulator
    assert judge.startswith("judge dialogue.conversation_judge.ok (smollm2): 3 of 10 answers") and "its scores rest on the rest" in judge


def test_the_user_shows_a_picture_and_the_viewer_flags_the_audit(tmp_path, monkeypatch):
    (tmp_path / "box.png").write_bytes(png())

    def shows_the_box(number, conversation):
        said = user_says(number, conversation)
        return {**said, "image": 1} if number == 1 else said

    def bot(messages, session_id):
        first = messages[0]["content"]
        assert first[1]["image_url"]["url"].startswith("data:image/png;base64,")
        return "I see the broken box. Order number?" if len(messages) == 1 else "Refund RMA-111111 issued."

    import tests.simulation_helpers as helpers

    monkeypatch.setattr(helpers, "picture_bot", bot, raising=False)
    data = suite(tmp_path, {**REFUND, "images": ["box.png"]})
    with OpenAIStub(respond=lambda body: models(body, shows_the_box)) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": "tests.simulation_helpers:picture_bot"})
        result = run("simulation", str(data), config, progress=False)
        simulator_prompt = prompt_of(server.completions[0])

    [record] = result.records
    assert "1. box.png" in simulator_prompt and record["outcome"] == "success"
    assert record["turns"][0]["image"] == str((tmp_path / "box.png").resolve())
    line = json.loads((result.run_dir / "conversations.jsonl").read_text(encoding="utf-8"))
    assert line["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    view = get_benchmark("simulation").conversation_view(record, None)
    assert view.turns[0].images == [record["turns"][0]["image"]]
    assert [v.criterion for v in view.turns[0].verdicts] == ["audit"] and view.whole[0].verdict == "success"
    flagged = {**record, "audits": [{"turn": 1, "status": "ok", "rationale": "r", "findings": [{"rule": "persona", "evidence": "As an AI"}]}]}
    [flag] = get_benchmark("simulation").conversation_view(flagged, None).turns[0].verdicts
    assert (flag.criterion, flag.status, flag.rationale) == ("audit: persona", "flagged", "As an AI")


def test_the_dialogue_judges_own_checks_run_at_load(tmp_path):
    bad_scale = {**REFUND, "success": {"criteria": [{"name": "ok", "description": "d", "scale": [5, 1]}]}}
    with pytest.raises(DataError, match=r"record 1 \(id='refund'\).*low to high"):
        get_benchmark("simulation").load(suite(tmp_path, bad_scale), {"bot": "tests.simulation_helpers:reply"})
    with pytest.raises(DataError, match="contxt"):
        get_benchmark("simulation").load(suite(tmp_path), {"bot": "tests.simulation_helpers:reply", "judging": {"contxt": "notes"}})
    with pytest.raises(DataError, match=r"record 1 \(id='refund'\), field 'success.criteria \(or option judging\)'.*'politeness' is not a criterion"):
        get_benchmark("simulation").load(suite(tmp_path), {"bot": "tests.simulation_helpers:reply", "judging": {"criteria": ["politeness"]}})


def test_a_bot_that_does_not_answer_in_time_fails_its_conversation(tmp_path, monkeypatch):
    import time

    import tests.simulation_helpers as helpers

    monkeypatch.setattr(helpers, "slow_bot", lambda messages, session_id: time.sleep(2) or "late", raising=False)
    with OpenAIStub(respond=models) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": {"callable": "tests.simulation_helpers:slow_bot", "timeout": 0.2}})
        result = run("simulation", str(suite(tmp_path)), config, progress=False)
    [record] = result.records
    assert record["outcome"] == "bot_failure" and record["bot_failure"].startswith("time-out")


def test_the_graph_takes_one_scenario_as_studio_sends_it():
    import asyncio

    from dialeval.config import EvalContext
    from dialeval.protocols.simulation.graph import build_graph
    from dialeval.testing.scripted import prompt_text
    from tests.helpers import scripted

    settings, _ = scripted(respond=lambda messages: models({"messages": [{"role": "user", "content": prompt_text(messages)}]}))
    context = EvalContext(default_model=settings, cache_path=None, options={"bot": "tests.simulation_helpers:reply"})
    state = asyncio.run(build_graph().ainvoke(dict(REFUND), context=context))
    assert state["outcome"] == "success" and state["stop_reason"] == "checks_passed"
    assert [t["role"] for t in state["turns"]] == ["user", "assistant", "user", "assistant"]


def test_the_simulator_prompt_keeps_the_latest_turns_within_its_budget():
    from dialeval.protocols.simulation.nodes import fitted
    from langchain_core.messages import HumanMessage

    lines = [f"[turn {n}] User: message number {n} " + "word " * 40 for n in range(1, 21)]
    messages, turns, notes = fitted(lambda note, conversation: [HumanMessage(f"{note}\n{conversation}")], lines, ["- a: b"], 400)
    assert 0 < turns < 20 and notes == 1
    assert "message number 20" in messages[0].content and "message number 1 " not in messages[0].content
    assert f"({20 - turns} earlier turns not shown)" in messages[0].content


def test_a_simulated_turn_that_writes_the_bots_lines_is_flagged_without_a_model():
    from dialeval.agents.simulation_checks import rule_findings

    facts, asked = {"order_number": "A123"}, "What is your order number?"
    assert rule_findings("It is A123.", facts, asked) == []
    [finding] = rule_findings("It is A123.\nBot: Thanks, refund issued.\nUser: Great!", facts, asked)
    assert finding.rule == "one_turn"


FACTS = {"order_number": "A123", "name": "Dana", "delivery_date": "3 May"}
PERSONA = "Dana, a busy teacher\nget a refund for the blender"


@pytest.mark.parametrize("message, bot_before, rule", [
    ("As an AI language model, I have no blender.", "", "persona"),
    ("I'm an assistant, how can I help you today?", "", "persona"),
    ("Happy to help! Anything else I can do for you?", "", "persona"),  # the service desk's words
    ("I am only role-playing a customer here.", "", "persona"),  # talk about the simulation
    ("Sure thing, Dana.", "", "persona"),  # the persona spoken to by name: the other side's line
    ("Hi, my order A123 arrived broken.", "", "hidden_fact"),  # said before the bot asked anything
    ("It is A123, delivered on 3 May.", "What is your order number?", "hidden_fact"),  # asked for the order, not the date
    ("It is A123.", "[turn 2] Bot: What is your order number?", None),  # asked for: fine
    ("It is A123.", "[turn 2] Bot: Which order is it?", None),  # the fact's name, one word of it, was asked
    ("It came on 3 May.", "When did it come?", None),  # asked in words of its own: the model audit's to read
    ("It is A123. I paid 45 dollars for it.", "What is your order number?", "invented_fact"),  # a number from nowhere
    ("It is A123, the 2 of us use it.", "What is your order number?", None),  # one digit: not read as a fact
    ("It is A123. Agent: thanks!", "What is your order number?", "one_turn"),  # a label mid-sentence
    ("It is A123. (The bot checks and confirms the refund.)", "What is your order number?", "one_turn"),  # a stage direction
    ("Order: A123. Note: it came broken.", "What is your order number?", None),  # labels of a form, not speakers
    ("Hi, my blender arrived broken.", "", None),
    ("Hi, I am Dana.", "", None),  # in the persona: not hidden
])
def test_the_code_checks_of_the_audit(message, bot_before, rule):
    from dialeval.agents.simulation_checks import rule_findings

    found = rule_findings(message, FACTS, bot_before, PERSONA)
    assert [f.rule for f in found] == ([rule] if rule else [])


@pytest.mark.parametrize("earlier, stop, rule", [
    ("The refund RMA-1042 is issued.", None, None),  # a number the bot said first is no invention
    ("", "goal_reached", "early_stop"),  # stops while the bot waits for the order number
    ("", "gave_up", "early_stop"),
    ("", None, None),
])
def test_the_code_checks_read_the_turns_before(earlier, stop, rule):
    from dialeval.agents.simulation_checks import rule_findings

    message = "Fine, RMA-1042 then." if earlier else "Thanks, bye."
    bot_before = earlier or "Could you tell me the order number?"
    found = rule_findings(message, FACTS, bot_before, PERSONA, earlier=earlier, stop=stop)
    assert [f.rule for f in found] == ([rule] if rule else [])


def test_a_stop_after_a_bot_turn_that_asks_nothing_is_no_early_stop():
    from dialeval.agents.simulation_checks import rule_findings

    # the bot's words name the order, but ask nothing: the user may stop
    assert rule_findings("Thanks, bye.", FACTS, "Your order is cancelled.", PERSONA, stop="goal_reached") == []


def test_the_runs_rubric_is_judged_beside_the_success_criteria(tmp_path):
    import tests.simulation_helpers as helpers

    def judge_on_any_scale(body):
        text = prompt_of(body)
        if "answer with: an integer from 1" in text:
            return json.dumps({"rationale": "fine", "verdict": 4})
        return helpers.models(body)

    with OpenAIStub(respond=judge_on_any_scale) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": "tests.simulation_helpers:reply", "judging": {"rubric": "dialogue", "criteria": ["relevance"]}})
        result = run("simulation", str(suite(tmp_path)), config, progress=False)

    [record] = result.records
    assert {(u["criterion"], u["turn"], u["verdict"]) for u in record["turn_units"]} == {("relevance", 2, 4), ("relevance", 4, 4)}
    # the success criterion is judged though `criteria` names only the rubric's
    assert [u["criterion"] for u in record["conversation_units"]] == ["refund_given"] and record["outcome"] == "success"
    assert json.loads((result.run_dir / "rubrics" / "refund.yaml").read_text(encoding="utf-8"))["criteria"][-1]["name"] == "refund_given"


def test_a_bot_turn_is_one_dialogue_turn_in_the_file_and_for_the_judge(tmp_path):
    no_id = {"type": "function", "function": {"name": "lookup", "arguments": {"order_id": "A123"}}}
    turns = [
        {"number": 1, "role": "user", "text": "Where is my order?"},
        {"number": 2, "role": "assistant", "messages": [
            {"role": "assistant", "content": "One moment."},
            {"role": "assistant", "content": None, "tool_calls": [no_id]},
            {"role": "tool", "content": "shipped"},
            {"role": "assistant", "content": "It has shipped."},
            {"role": "assistant", "content": "Anything else?"},  # would start a new turn on its own
        ]},
    ]
    record = dialogue_record("c1", turns, {})
    assert [m["role"] for m in record["messages"]] == ["user", "assistant", "tool", "assistant"]
    [call] = record["messages"][1]["tool_calls"]
    assert call["id"] and json.loads(call["function"]["arguments"]) == {"order_id": "A123"}
    assert record["messages"][2]["tool_call_id"] == call["id"]
    path = tmp_path / "conversations.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    [reloaded] = get_benchmark("dialogue").load(path, {})
    bot = reloaded.turns[1]
    assert bot.text == "One moment.\nIt has shipped.\nAnything else?" and len(reloaded.turns) == 2
    assert [(c.name, c.arguments, c.result) for c in bot.tool_calls] == [("lookup", {"order_id": "A123"}, "shipped")]
    assert Conversation.model_validate({"id": "c1", "turns": dialogue_turns(turns)}).turns == reloaded.turns  # the judge's input


def test_a_conversation_naming_its_own_rubric_is_checked_at_load_unless_the_run_names_one(tmp_path):
    record = {"id": "c1", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
              "metadata": {"rubric": "rubrics/missing.yaml"}}
    data = tmp_path / "conversations.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    dialogue = get_benchmark("dialogue")
    with pytest.raises(DataError) as err:
        dialogue.load(data, {})
    assert "record 1 (id='c1')" in str(err.value) and "field 'metadata.rubric'" in str(err.value)
    [conversation] = dialogue.load(data, {"rubric": "dialogue"})  # the run's rubric wins: the conversation's is not read
    assert conversation.metadata["rubric"] == "rubrics/missing.yaml"


def test_the_audit_option_reads_its_old_switch_as_a_mode():
    from dialeval.protocols.simulation.common import SimulationOptions

    assert [SimulationOptions.model_validate({"audit": v}).audit for v in (True, False, "turn")] == ["conversation", "off", "turn"]
    assert SimulationOptions().audit == "conversation"
    with pytest.raises(ValueError):
        SimulationOptions.model_validate({"audit": "sometimes"})


def test_the_planted_fault_corpus_is_the_generators_and_its_clean_conversations_pass_the_code_checks():
    """benchmarks/data/planted_faults.yaml is written by its generator (never edited by hand),
    and no turn of its clean conversations is flagged by the code checks (their precision's floor)."""
    import runpy

    import yaml

    from dialeval.protocols.simulation.nodes import code_findings
    from dialeval.protocols.simulation.scenario import Scenario

    root = Path(__file__).resolve().parents[1] / "benchmarks"
    generated = runpy.run_path(str(root / "planted_faults_corpus.py"))["corpus"]()
    corpus = yaml.safe_load((root / "data" / "planted_faults.yaml").read_text(encoding="utf-8"))
    assert corpus == generated
    flagged = []
    for item in (c for c in corpus if c["fault"] is None):
        scenario = Scenario.model_validate({"id": item["id"], **item["scenario"], "success": {"checks": [{"said": "x"}]}})
        turns = [t if t["role"] == "user" else {"number": t["number"], "role": "assistant",
                                                 "messages": [{"role": "assistant", "content": t["text"]}]} for t in item["turns"]]
        flagged += [(item["id"], t["number"]) for i, t in enumerate(turns) if t["role"] == "user" and code_findings(scenario, turns[: i + 1])]
    assert len(corpus) > 60 and flagged == []


def test_the_dialogue_judge_is_a_subgraph_studio_and_the_stream_show():
    import asyncio

    from dialeval.config import EvalContext
    from dialeval.protocols.simulation.graph import build_graph
    from dialeval.testing.scripted import prompt_text
    from tests.helpers import scripted

    graph = build_graph()
    judge_nodes = {n for n in get_benchmark("dialogue").graph().get_graph().nodes if not n.startswith("__")}
    assert judge_nodes and {f"judge:{n}" for n in judge_nodes} <= set(graph.get_graph(xray=True).nodes)

    settings, _ = scripted(respond=lambda messages: models({"messages": [{"role": "user", "content": prompt_text(messages)}]}))
    context = EvalContext(default_model=settings, cache_path=None, options={"bot": "tests.simulation_helpers:reply"})

    async def steps() -> list[tuple[tuple[str, ...], str]]:
        return [(namespace, node) async for namespace, update in graph.astream(dict(REFUND), context=context, subgraphs=True)
                for node in update]

    seen = asyncio.run(steps())
    inside = [node for namespace, node in seen if namespace and namespace[0].startswith("judge:")]
    assert "judge_conversation" in inside and ((), "judge") in seen
