"""What the runner needs of the simulation benchmark: items (scenario x trial), records, metrics, artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dialeval.benchmarks import RunFacts
from dialeval.errors import ConfigError
from dialeval.protocols.simulation import metrics as sim_metrics
from dialeval.protocols.simulation.bots import describe as describe_bot
from dialeval.protocols.simulation.bots import parse_bot
from dialeval.protocols.simulation.bots import resolve as resolve_bot
from dialeval.protocols.simulation.common import SimulationOptions
from dialeval.jsonsafe import dumps
from dialeval.protocols.simulation.judging import check_judging
from dialeval.protocols.simulation.replay import resent_count
from dialeval.protocols.simulation.scenario import Scenario, load_scenarios
from dialeval.protocols.simulation.transcript import dialogue_record
from dialeval.config import parse_options

DIALOGUE_FILE = "conversations.jsonl"
JUDGE_ROLES = ("judge", "notetaker", "conversation_judge")  # the dialogue roles a simulated conversation calls (no documents, no versus)


class Trial(BaseModel):
    """One run of one scenario (``trial`` is its seed, 1..k)."""

    id: str
    scenario: Scenario
    trial: int


def options_of(options: dict[str, Any]) -> SimulationOptions:
    """The options with the bot checked and set up (imported, its graph built) before any call."""
    parsed = parse_options(SimulationOptions, options, "simulation")
    if parsed.bot is None:
        raise ConfigError("simulation needs the bot under test: --option bot='\"mybot:reply\"' or "
                          "--option bot='{\"model\": \"my-bot\", \"base_url\": \"http://127.0.0.1:8000/v1\"}' (docs/simulation.md)")
    resolve_bot(parsed.bot)
    return parsed


def load(path: Path, options: dict[str, Any]) -> list[Trial]:
    parsed = options_of(options)
    scenarios = load_scenarios(path)
    check_judging(scenarios, parsed, path)  # the dialogue judge's own checks, before any call
    k = parsed.k
    return [Trial(id=s.id if k == 1 else f"{s.id}#{t}", scenario=s, trial=t) for s in scenarios for t in range(1, k + 1)]


def to_input(item: Trial, options: dict[str, Any]) -> dict[str, Any]:
    data = item.scenario.model_dump(by_alias=True, exclude_none=True)
    return {**data, "trial": item.trial} if options.get("k", 1) != 1 else data


def to_record(item: Trial, state: dict[str, Any]) -> dict[str, Any]:
    judged = state.get("judged") or {}
    failure = next((t["failure"] for t in state.get("turns", []) if t.get("failure")), None)
    return {
        "id": item.id,
        "scenario": item.scenario.id,
        "trial": item.trial,
        "outcome": state.get("outcome"),
        "stop_reason": state.get("stop_reason"),
        "user_turns": sum(1 for t in state.get("turns", []) if t["role"] == "user"),
        "bot_failure": failure,
        "resent_after_interruption": resent_count(state),
        "checks": state.get("checks", []),
        "criteria": state.get("criteria", []),
        "audits": state.get("audits", []),
        "turns": state.get("turns", []),
        "resimulated": state.get("resimulated", []),
        "turn_units": judged.get("turn_units", []),
        "conversation_units": judged.get("conversation_units", []),
        "note_updates": judged.get("note_updates", []),
    }


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    parsed = parse_options(SimulationOptions, options, "simulation")
    bot = describe_bot(parse_bot(parsed.bot)) if parsed.bot is not None else "?"
    return sim_metrics.aggregate(records, parsed.k, bot)


def tables(metrics: dict[str, Any]) -> str:
    return sim_metrics.tables(metrics)


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """success (1/0) per valid trial, and each judged criterion's score, for ``compare``."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        if r["outcome"] in sim_metrics.VALID:
            out.setdefault("success", {})[r["id"]] = 1.0 if r["outcome"] == "success" else 0.0
        for u in r.get("conversation_units", []):
            if u.get("score") is not None:
                out.setdefault(u["criterion"], {})[r["id"]] = u["score"]
    return out


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {name: list(scores.values()) for name, scores in item_scores(records).items()}


def after_run(run_dir: Path, records: list[dict[str, Any]], metrics: dict[str, Any]) -> None:
    """The simulated conversations as a dialogue-format file, to judge again with ``dialeval run dialogue``."""
    lines = []
    for r in records:
        if r["outcome"] == "simulator_failure" or not any(t["role"] == "assistant" and not t.get("failure") for t in r["turns"]):
            continue
        meta = {"scenario": r["scenario"], "trial": r["trial"], "outcome": r["outcome"], "stop_reason": r["stop_reason"]}
        lines.append(dumps(dialogue_record(r["id"], r["turns"], meta)))  # a lone surrogate written escaped
    (run_dir / DIALOGUE_FILE).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def describe(run: RunFacts) -> str:
    bot = describe_bot(parse_bot(run.options["bot"])) if run.options.get("bot") is not None else "the bot"
    return (f"{bot} in the scenarios of `{run.data}`, driven by `{run.model('user_simulator')}`, audited by "
            f"`{run.model('simulation_auditor')}`, judged by `{run.model('judge')}`")


def dialogue_roles(mine: dict[str, Any]) -> dict[str, Any]:
    """This benchmark's role fields with the dialogue judge's keys added (its graph judges here)."""
    from dialeval.benchmarks import get_benchmark

    judge = get_benchmark("dialogue")
    used = {role: agent for role, agent in judge.roles.items() if role in JUDGE_ROLES}
    return {
        "roles": {**mine["roles"], **used},
        "model_roles": tuple(dict.fromkeys([*mine["model_roles"], *(judge.model_roles or tuple(judge.roles))])),
        "template_keys": tuple(dict.fromkeys([*mine["template_keys"], *(judge.template_keys or tuple(judge.roles))])),
        "system_roles": mine["system_roles"],
    }
