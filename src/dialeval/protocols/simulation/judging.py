"""Judging a finished simulated conversation with the ``dialogue`` benchmark's graph.

DESIGN keeps every benchmark in its own folder and no benchmark imports another, so
the dialogue judge is reached through the benchmark registry (``get_benchmark``): its
compiled graph runs here as a subgraph over the conversation, with the run's models,
agents and templates and the ``judging`` options (context mode, budget, notes).
The scenario's success criteria, merged with the ``judging.rubric`` the run names, if
any, make a :class:`Rubric` the conversation carries to the judge; a copy is written under
the run's ``rubrics/`` only for ``dialeval run dialogue`` over ``conversations.jsonl``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from dialeval.config import EvalContext, parse_options
from dialeval.conversation.data import Turn
from dialeval.conversation.rubric import Rubric, built_in_text, parse_rubric
from dialeval.errors import ConfigError, DataError
from dialeval.protocols.simulation.bots import EndpointBot, parse_bot
from dialeval.protocols.simulation.common import SimulationOptions
from dialeval.protocols.simulation.environment import check_state
from dialeval.protocols.simulation.nodes import context_of, item_id, session_id
from dialeval.protocols.simulation.rules import actions_of, checks_of, criterion_passes, outcome, stop_reason
from dialeval.protocols.simulation.scenario import Scenario, scenario_of
from dialeval.protocols.simulation.transcript import dialogue_turns


def dialogue_graph() -> Any:
    """The dialogue benchmark's compiled graph, by name from the registry: built once with
    the simulation graph, whose judge node holds it (so LangGraph sees it as a subgraph)."""
    from dialeval.benchmarks import get_benchmark

    return get_benchmark("dialogue").graph()


def general_criteria(ref: str | None) -> list[dict[str, Any]]:
    """The criteria of the ``judging.rubric`` the run names: a YAML file or the dialogue
    benchmark's built-in rubric, read as data (the dialogue judge checks them)."""
    if not ref:
        return []
    import yaml

    if ref == "dialogue":
        text = built_in_text("dialogue")
    else:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise ConfigError(f"simulation option 'judging.rubric': {ref!r} is neither 'dialogue' (built-in) nor a file")
        text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    criteria = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(criteria, list):
        raise ConfigError(f"simulation option 'judging.rubric': {ref} has no 'criteria' list")
    return criteria


def rubric_of(scenario: Scenario, options: SimulationOptions) -> dict[str, Any]:
    """The rubric one scenario's conversations are judged on (a name used twice stops the run)."""
    criteria = general_criteria(options.judging.get("rubric")) + [c.rubric_entry() for c in scenario.success.criteria]
    names = [str(c.get("name")) for c in criteria if isinstance(c, dict)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"scenario {scenario.id!r}: success criterion {twice[0]!r} is also in judging.rubric; rename one")
    return {"criteria": criteria}


def rubric_name(scenario_id: str) -> str:
    """The file name of a scenario's rubric under the run's ``rubrics/``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", scenario_id) + ".yaml"


def scenario_rubric(scenario: Scenario, options: SimulationOptions) -> tuple[dict[str, Any], Rubric | None]:
    """The scenario's rubric as data (what :func:`write_rubric` writes) and as the dialogue
    judge takes it; ``None`` when there is nothing to judge."""
    rubric = rubric_of(scenario, options)
    return rubric, parse_rubric(rubric, f"for scenario {scenario.id!r}") if rubric["criteria"] else None


def write_rubric(scenario_id: str, rubric: dict[str, Any], run_dir: str | None) -> None:
    """A scenario's rubric as YAML under the run folder: the judge never reads it, but
    ``dialeval run dialogue`` over the run's ``conversations.jsonl`` does (``metadata.rubric``)."""
    if not run_dir or not rubric["criteria"]:
        return
    folder = Path(run_dir) / "rubrics"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / rubric_name(scenario_id)
    text = json.dumps(rubric, ensure_ascii=False, indent=1)  # JSON is YAML
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def judging_for(scenario: Scenario, options: SimulationOptions) -> dict[str, Any]:
    """The dialogue options a scenario's conversations are judged with: the run's ``judging``
    less its rubric (merged into the scenario's, which the conversation carries), and the
    success criteria always among the ``criteria`` judged."""
    out = {key: value for key, value in options.judging_options().items() if key != "rubric"}
    if out.get("criteria") is not None:
        out["criteria"] = list(dict.fromkeys([*out["criteria"], *(c.name for c in scenario.success.criteria)]))
    return out


def check_judging(scenarios: list[Scenario], options: SimulationOptions, suite: Path) -> None:
    """Stop before the first call when the dialogue judge would refuse a scenario's rubric or
    the ``judging`` options: each is checked by the dialogue benchmark's options model and the
    :class:`Rubric` it takes."""
    from dialeval.benchmarks import get_benchmark

    model = get_benchmark("dialogue").options_model
    assert model is not None  # the dialogue benchmark declares its options
    for index, scenario in enumerate(scenarios):
        rubric = rubric_of(scenario, options)
        if not rubric["criteria"]:
            continue
        try:
            judged = parse_rubric(rubric, f"for scenario {scenario.id!r}")
            chosen = getattr(parse_options(model, judging_for(scenario, options), "dialogue"), "criteria", None)
            names = [c.name for c in judged.criteria]
            unknown = next((name for name in chosen or [] if name not in names), None)
            if unknown is not None:
                raise ConfigError(f"dialogue option 'criteria': {unknown!r} is not a criterion of the rubric {judged.source} ({', '.join(names)})")
        except ConfigError as err:
            raise DataError(suite, f"the dialogue judge refuses it: {err}", record=f"{index} (id={scenario.id!r})",
                            field="success.criteria (or option judging)") from None


async def judge_conversation(dialogue: Any, context: EvalContext, scenario: Scenario, conversation_id: str,
                             turns: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``dialogue`` graph's output over the conversation (empty when there is nothing to judge)."""
    options = SimulationOptions.of(context)
    data, rubric = scenario_rubric(scenario, options)
    shown = [Turn.model_validate(turn) for turn in dialogue_turns(turns)]  # typed: the dialogue judge's own turn model
    if rubric is None or not any(t.role == "assistant" for t in shown):
        return {}
    write_rubric(scenario.id, data, context.run_dir)
    judged = context.model_copy(update={"options": judging_for(scenario, options)})
    spec = parse_bot(options.bot) if options.bot is not None else None
    system = spec.system if isinstance(spec, EndpointBot) else ""  # the bot's own system prompt, where the run knows it
    conversation = {"id": conversation_id, "system": system, "turns": shown, "metadata": {"scenario": scenario.id, "rubric": rubric}}
    return dict(await dialogue.ainvoke(conversation, context=judged))


def judge_node(dialogue: Any) -> Callable[[dict[str, Any], Any], Awaitable[dict[str, Any]]]:
    """The simulation's ``judge`` node over the compiled ``dialogue`` graph: the node holds it
    as a closure variable, which is how LangGraph finds a subgraph called from a node (its
    nodes show in Studio and ``get_graph(xray=True)``, its steps stream with ``subgraphs=True``)."""

    async def judge(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
        """Record why it stopped, judge the conversation (unless the simulator failed) and decide the outcome."""
        context = context_of(runtime)
        scenario = scenario_of(state)
        turns, audits = state.get("turns", []), state.get("audits", [])
        reason = stop_reason(scenario, turns, audits) or "max_turns"
        checks = checks_of(scenario, turns)
        actions = actions_of(scenario.success.actions, turns)
        judged: dict[str, Any] = {}
        final_state = None
        if outcome(reason, checks, [], audits) != "simulator_failure":
            judged = await judge_conversation(dialogue, context, scenario, item_id(state), turns)
            if scenario.success.state and not context.default_model.parsed.is_dry_run:  # a dry run never called the bot
                final_state = await check_state(scenario.success.state, session_id(state))
        criteria = criterion_passes(scenario, judged.get("conversation_units", []))
        return {"stop_reason": reason, "checks": checks, "actions": actions, "final_state": final_state, "criteria": criteria,
                "judged": judged, "outcome": outcome(reason, checks, criteria, audits, actions, final_state)}

    return judge
