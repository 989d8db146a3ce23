"""Schemas as strict as their checkers: whatever a model that follows an agent's schema
answers, its parser and meaning check accept. Answers are drawn at random (seeded) from
every agent's schema in the package: each judge's own, and the narrowed schema each call
sends with the checker that call applies (labels, ranges, pictures, numbered facts)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
from typing import Any, Callable

import pytest
from pydantic import BaseModel

import dialeval
from dialeval.agents.judge import Judge
from dialeval.agents.parsing import parse_answer
from tests.schema_draws import draw

DRAWS = 150


def every_judge() -> dict[str, Judge[Any]]:
    """Every judge declared anywhere in the package (modules imported, globals scanned)."""
    found: dict[str, Judge[Any]] = {}
    for module in pkgutil.walk_packages(dialeval.__path__, "dialeval."):
        if module.name.endswith("__main__"):
            continue
        for value in vars(importlib.import_module(module.name)).values():
            for judge in value.values() if isinstance(value, dict) else [value]:
                if isinstance(judge, Judge):
                    found[f"{judge.name}/{judge.schema.__name__}"] = judge
    return found


def refusals(schema: dict[str, Any], model: type[BaseModel], check: Callable[[Any], str | None] | None, seed: str) -> list[str]:
    """The drawn answers the parser or the checker refuses (with the reason)."""
    rng = random.Random(seed)
    out = []
    for _ in range(DRAWS):
        answer = json.dumps(draw(schema, rng))
        try:
            value = parse_answer(answer, model)
            problem = check(value) if check else None
        except Exception as err:  # noqa: BLE001  (the parser's refusal, whatever its type)
            problem = f"{type(err).__name__}: {err}"
        if problem:
            out.append(f"{answer} -> {problem}")
    return out


JUDGES = every_judge()


def test_the_scan_finds_the_agents_of_every_benchmark():
    benchmarks = {judge.benchmark for judge in JUDGES.values()}
    assert {"answers", "dialogue", "kgds", "mdseval", "mmdu", "mmrc", "simulation", "vdact"} <= benchmarks
    assert len(JUDGES) >= 35


@pytest.mark.parametrize("name", sorted(JUDGES))
def test_every_judges_own_schema_is_accepted_by_its_parser(name):
    judge = JUDGES[name]
    assert refusals(judge.schema.model_json_schema(), judge.schema, judge.validate, name) == []


def narrowed_cases() -> list[tuple[str, dict[str, Any], type[BaseModel], Callable[[Any], str | None]]]:
    """(case, the schema a call sends, its answer model, the checker that call applies)."""
    from dialeval.agents.schemas import numbered
    from dialeval.agents.simulated_user import SimulatedTurn, checker, json_schema
    from dialeval.protocols.dialogue import verdict
    from dialeval.protocols.dialogue.grounding import Verification, one_per_fact
    from dialeval.conversation.rubric import Criterion
    from dialeval.protocols.kgds.fact_verifier import FactVerdicts, check_numbers, numbered_verdicts
    from dialeval.protocols.mdseval.checklist import ChecklistScore
    from dialeval.protocols.mdseval.common import ASPECT_NAMES
    from dialeval.protocols.mdseval.pointwise import AspectScore, in_scale, score_schema
    from dialeval.protocols.mmrc.helpers import ExtractedItems, items_schema, matches_in_range

    cases = []
    for images in (0, 1, 3):
        for can_stop in (True, False):
            cases.append((f"simulated user, {images} pictures, can stop {can_stop}", json_schema(images, can_stop), SimulatedTurn,
                          checker(images, can_stop)))
    from dialeval.agents.simulation_auditor import ConversationAudit, conversation_schema, turn_checker

    for turns in ([1], [1, 3, 5], [2, 4]):
        cases.append((f"conversation audit of turns {turns}", conversation_schema(turns), ConversationAudit, turn_checker(turns)))
    for scale in (["yes", "no"], [True, False], [1, 5], [0, 3], ["good", "fair", "poor"], ["Yes", "Partly", "No"]):
        criterion = Criterion.model_validate({"name": "c", "description": "d", "scale": scale})
        cases.append((f"dialogue verdict on {scale}", verdict.json_schema(criterion), verdict.Verdict, verdict.checker(criterion)))
    for n in (1, 2, 5):
        cases.append((f"dialogue fact verifier, {n} facts", numbered(Verification, "verdicts", "fact", n), Verification, one_per_fact(n)))
        cases.append((f"kgds fact verifier, {n} facts", numbered_verdicts(n), FactVerdicts, check_numbers(n)))
        cases.append((f"mmrc item extractor, {n} references", items_schema(n), ExtractedItems, matches_in_range(n)))
    for aspect in ASPECT_NAMES:
        for model in (AspectScore, ChecklistScore):
            cases.append((f"mdseval {model.__name__} on {aspect}", score_schema(model, aspect), model, in_scale(aspect)))
    return cases


CASES = narrowed_cases()


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_every_narrowed_schema_is_accepted_by_the_checker_of_its_call(case):
    _, schema, model, check = next(c for c in CASES if c[0] == case)
    assert refusals(schema, model, check, case) == []


def test_the_narrowed_schemas_say_what_the_checkers_refuse():
    from dialeval.agents.simulated_user import json_schema

    opening = json_schema(0, can_stop=False)["properties"]
    assert opening["image"] == {"anyOf": [{"type": "null"}]} and opening["stop"] == {"anyOf": [{"type": "null"}]}
    later = json_schema(2)["properties"]
    assert later["image"]["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": 2}
    assert later["stop"]["anyOf"][0]["enum"] == ["goal_reached", "gave_up", "bot_unusable"]


def test_an_api_model_is_sent_the_narrowed_schema_of_each_call(tmp_path, monkeypatch):
    """OpenAI's response format carries the call's schema, not the answer model's looser one:
    the opening simulated turn cannot stop, a scenario without pictures names none, a yes/no
    criterion's verdict is one of its labels."""
    from dialeval.evaluation import run
    from dialeval.testing.openai_server import OpenAIStub, prompt_of
    from tests.dialogue_helpers import fake_embed
    from tests.helpers import http_config
    from tests.simulation_helpers import models, suite

    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    with OpenAIStub(respond=models) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": "tests.simulation_helpers:reply"})
        run("simulation", str(suite(tmp_path)), config, progress=False)
        bodies = server.completions
    schemas = [(prompt_of(b), b["response_format"]["json_schema"]["schema"]["properties"]) for b in bodies]
    simulator = [s for p, s in schemas if "You play a person" in p]
    assert simulator[0]["stop"] == {"anyOf": [{"type": "null"}]} and simulator[1]["stop"]["anyOf"][0]["enum"][0] == "goal_reached"
    assert all(s["image"] == {"anyOf": [{"type": "null"}]} for s in simulator)
    [judged] = [s for p, s in schemas if "refund_given" in p and "You play a person" not in p and "You check" not in p]
    assert judged["verdict"] == {"type": "string", "enum": ["yes", "no"]}


def test_a_simulated_user_that_stops_before_the_bot_has_spoken_is_asked_again():
    from dialeval.agents.simulated_user import SimulatedTurn, checker

    assert checker(0, can_stop=False)(SimulatedTurn(message="Bye.", stop="gave_up")).startswith("'stop' is set before the chatbot")
    assert checker(0, can_stop=True)(SimulatedTurn(message="Bye.", stop="gave_up")) is None
    assert checker(0)(SimulatedTurn(message="Here.", image=1)) == "'image' 1 is not one of the scenario's pictures (none)"


def test_an_anthropic_model_gets_the_narrowed_schema_as_its_forced_tool(tmp_path, monkeypatch):
    from dialeval.evaluation import run
    from dialeval.testing.openai_server import OpenAIStub
    from tests.dialogue_helpers import fake_embed
    from tests.helpers import http_config
    from tests.simulation_helpers import models, suite

    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with OpenAIStub(respond=models) as server:
        config = http_config(tmp_path, {"spec": "anthropic:claude-stub", "base_url": server.root_url},
                             options={"bot": "tests.simulation_helpers:reply"})
        run("simulation", str(suite(tmp_path)), config, progress=False)
        tools = [b["tools"][0] for b in server.completions]
    # (the scripted answers route by prompt text, which Anthropic's system blocks hide from them: only the request is checked)
    assert tools[0]["name"] == "SimulatedTurn" and tools[0]["input_schema"]["properties"]["stop"] == {"anyOf": [{"type": "null"}]}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("spec", ["openai-compatible:stub", "anthropic:claude-stub"])
def test_a_batch_run_sends_the_narrowed_schemas_the_live_run_sends(tmp_path, monkeypatch, spec):
    """``batch: true``: each batch line carries the call's narrowed schema (the opening turn
    cannot stop, no picture without pictures), as the live request does, for both providers."""
    from dialeval.evaluation import run
    from dialeval.testing.openai_server import OpenAIStub
    from tests.dialogue_helpers import fake_embed
    from tests.helpers import http_config
    from tests.simulation_helpers import models, suite

    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    anthropic = spec.startswith("anthropic:")
    with OpenAIStub(respond=models) as server:
        config = http_config(tmp_path, {"spec": spec, "batch": True, "base_url": server.root_url if anthropic else server.base_url},
                             options={"bot": "tests.simulation_helpers:reply"})
        run("simulation", str(suite(tmp_path)), config, progress=False, batch_poll=0.01)
        lines, live = list(server.batch_lines), list(server.completions)
    assert live == [] and lines
    first = lines[0]["tools"][0]["input_schema"] if anthropic else lines[0]["response_format"]["json_schema"]["schema"]
    assert first["properties"]["stop"] == {"anyOf": [{"type": "null"}]}  # the opening turn, as live
    assert first["properties"]["image"] == {"anyOf": [{"type": "null"}]}
