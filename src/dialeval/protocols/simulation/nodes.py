"""The simulation's nodes: the simulated user, its auditor and the bot under test.

Each node adds one turn (or one audit) to the state; the stop rule (:mod:`rules`) reads
them. Simulator and auditor calls go through :func:`ask` (response cache, honest
``unparsed``); the bot is called through its adapter, outside the response cache and
the call ledger, since its errors are the system's failures, never the run's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dialeval.agents.base import register_agent
from dialeval.agents.judge import Judge
from dialeval.agents.responder import DRY_RUN_REPLY
from dialeval.agents.simulated_user import SimulatedTurn, checker, dry_run_turn, facts_text, images_text, json_schema
from dialeval.agents.simulation_auditor import TurnAudit, rules_text
from dialeval.agents.simulation_checks import rule_findings
from dialeval.models.prompt_cache import mark_stable_prefix
from dialeval.config import EvalContext
from dialeval.models.usage import count_tokens
from dialeval.protocols.simulation import bots
from dialeval.protocols.simulation.common import SimulationOptions
from dialeval.protocols.simulation.notes import change_of, notes_to_show
from dialeval.secrets import scrub_data
from dialeval.protocols.simulation.replay import bot_turn
from dialeval.protocols.simulation.scenario import scenario_of
from dialeval.protocols.simulation.transcript import bot_text, bot_words, turn_line

SIMULATOR = Judge("simulation.user_simulator", "user_simulator", "simulation", "simulation/user_simulator", SimulatedTurn)
AUDITOR = Judge("simulation.auditor", "simulation_auditor", "simulation", "simulation/auditor", TurnAudit,
                template_key="simulation_auditor")
State = dict[str, Any]


def context_of(runtime: Any) -> EvalContext:
    """The run context a plain graph node receives (defaults in Studio without one)."""
    context = runtime.context if runtime is not None and runtime.context is not None else EvalContext()
    return EvalContext.model_validate(context) if isinstance(context, dict) else context


def seed_of(state: State) -> str:
    """The seed the simulator's prompt carries: the trial, and the attempt once re-simulated."""
    trial, attempt = state.get("trial") or 1, state.get("attempt") or 0
    return f"{trial}.{attempt}" if attempt else str(trial)


def item_id(state: State) -> str:
    trial = state.get("trial")
    return f"{state.get('id', 'input')}#{trial}" if trial else str(state.get("id", "input"))


def session_id(state: State) -> str:
    """The session id the bot is called with (a state check reads the bot's environment by it)."""
    return f"sim-{item_id(state)}"


def user_turns(state: State) -> list[State]:
    return [t for t in state.get("turns", []) if t["role"] == "user"]


def fitted(render: Any, lines: list[str], notes: list[str], budget: int) -> tuple[Any, int, int]:
    """The prompt with as many of the latest ``lines`` and first ``notes`` as fit ``budget``
    tokens (turns dropped oldest first, then notes); returns (messages, turns shown, notes shown)."""
    n_lines, n_notes = len(lines), len(notes)
    while True:
        shown = lines[len(lines) - n_lines:] if n_lines else []
        omitted = len(lines) - n_lines
        conversation = "\n".join(([f"({omitted} earlier turns not shown)"] if omitted else []) + shown) or "(nothing yet: you open the conversation)"
        messages = render("\n".join(notes[:n_notes]) or "(no notes yet)", conversation)
        size = sum(count_tokens(str(m.content)) for m in messages)
        if size <= budget or (n_lines == 0 and n_notes == 0):
            return messages, n_lines, n_notes
        if n_lines > 1:
            n_lines -= 1
        elif n_notes:
            n_notes -= 1
        else:
            n_lines = 0


@register_agent("simulation.user_simulator", role="user_simulator", benchmark="simulation")
def user_simulator():
    """Plays the scenario's user one turn at a time, keeping notes (in Chroma once they outgrow the prompt: notes.py)."""

    async def node(state: State, context: EvalContext) -> dict[str, Any]:
        options = SimulationOptions.of(context)
        scenario = scenario_of(state)
        turns = state.get("turns", [])
        number = len(turns) + 1
        if not turns and scenario.opening:
            return {"turns": [{"number": 1, "role": "user", "text": scenario.opening, "image": None, "stop": None, "scripted": True}]}
        key = f"simulator:{item_id(state)}:{seed_of(state)}"
        last_bot = next((turn_line(t) for t in reversed(turns) if t["role"] == "assistant"), "")
        notes = await notes_to_show(options, context, key, turns, last_bot)
        ctx = SIMULATOR.context(context)
        values = {
            "persona": scenario.persona, "goal": scenario.goal, "hidden_facts": facts_text(scenario.hidden_facts),
            "images": images_text([i.caption or i.source.rsplit("/", 1)[-1] for i in scenario.images]),
            "turn": len(user_turns(state)) + 1, "max_turns": scenario.max_turns, "seed": seed_of(state),
        }
        messages, _, _ = fitted(
            lambda note, conversation: ctx.template.render(**values, notes=note, conversation=conversation),
            [turn_line(t) for t in turns[-options.window_turns:]],
            [f"- {e.key}: {e.value}" for e in notes], options.context_budget,
        )
        can_stop = any(t["role"] == "assistant" for t in turns)  # never before the bot has spoken
        answer = await SIMULATOR.ask(ctx, stable_prefix(messages, "</pictures>"), validate=checker(len(scenario.images), can_stop),
                                     placeholder=dry_run_turn, json_schema=json_schema(len(scenario.images), can_stop))
        call = answer.call.model_dump()
        if answer.value is None:
            return {"turns": [{"number": number, "role": "user", "text": "", "unparsed": True, "call": call}]}
        said = answer.value
        kept = scrub_data(said.notes)  # a model's answer, written to the run folder
        image = scenario.images[said.image - 1].source if said.image else None
        turn = {"number": number, "role": "user", "text": said.message.strip(), "image": image, "stop": said.stop,
                "call": call, "notes": kept, "notes_change": change_of(turns, kept, number)}
        return {"turns": [turn]}

    return node


def audit_record(turn: State, findings: list[dict[str, Any]], status: str, rationale: str | None, call: Any) -> dict[str, Any]:
    """One simulated turn's audit: ``status`` ``code`` when no model was asked (code checks only)."""
    return {"turn": turn["number"], "status": status, "findings": findings, "rationale": rationale, "call": call}


def code_findings(scenario: Any, turns: list[State]) -> list[Any]:
    """The code checks of the latest simulated turn, against its scenario and the turns before it."""
    said = [t.get("text", "") if t["role"] == "user" else bot_text(t) for t in turns[:-1]]  # all the simulator saw
    bot_before = next((bot_words(t) for t in reversed(turns[:-1]) if t["role"] == "assistant"), "")
    return rule_findings(turns[-1].get("text", ""), scenario.hidden_facts, bot_before, f"{scenario.persona}\n{scenario.goal}",
                         earlier="\n".join(said), stop=turns[-1].get("stop"))


def stable_prefix(messages: list[Any], closing_tag: str) -> list[Any]:
    """The prompt with its scenario block (up to ``closing_tag``, the same at every turn of a
    conversation) noted as a cacheable prefix (Anthropic's breakpoints; OpenAI caches prefixes itself)."""
    last = messages[-1]
    end = str(last.content).find(closing_tag)
    return [*messages[:-1], mark_stable_prefix(last, [end + len(closing_tag)])] if end >= 0 and isinstance(last.content, str) else messages


@register_agent("simulation.auditor", role="simulation_auditor", benchmark="simulation")
def auditor():
    """Checks each simulated user turn against its scenario: in code first (no call when code
    flags it), then by the model when ``audit`` is ``turn`` (else once at the end, see audit.py)."""

    async def node(state: State, context: EvalContext) -> dict[str, Any]:
        options = SimulationOptions.of(context)
        turn = state.get("turns", [])[-1]
        if turn["role"] != "user" or turn.get("scripted") or turn.get("unparsed"):
            return {}
        scenario = scenario_of(state)
        coded = [f.model_dump() for f in code_findings(scenario, state["turns"])]
        if coded or options.audit != "turn":
            return {"audits": [audit_record(turn, coded, "code", None, None)]}
        ctx = AUDITOR.context(context)
        values = {"persona": scenario.persona, "goal": scenario.goal, "hidden_facts": facts_text(scenario.hidden_facts),
                  "rules": rules_text(), "simulated_turn": turn_line(turn)}
        earlier = state["turns"][:-1]
        messages, _, _ = fitted(
            lambda _note, conversation: ctx.template.render(**values, conversation=conversation),
            [turn_line(t) for t in earlier[-options.window_turns:]], [], options.context_budget,
        )
        answer = await AUDITOR.ask(ctx, stable_prefix(messages, "</hidden_facts>"))
        found = [f.model_dump() for f in answer.value.findings] if answer.value else []
        rationale = answer.value.rationale if answer.value else None
        return {"audits": [audit_record(turn, found, answer.call.status, rationale, answer.call.model_dump())]}

    return node


def bot_skips(state: State) -> bool:
    """No bot turn after a simulated turn that ends the conversation (stop, unreadable, flagged)."""
    last = state.get("turns", [])[-1]
    flagged = any(a.get("findings") and a["turn"] == last["number"] for a in state.get("audits", []))
    return last["role"] != "user" or bool(last.get("stop") or last.get("unparsed") or flagged)


async def bot_node(state: State, runtime: Any) -> dict[str, Any]:
    """The bot under test answers the conversation so far, at most once per turn (journaled:
    :mod:`replay`); whatever goes wrong is its failure."""
    context = context_of(runtime)
    if bot_skips(state):
        return {}
    turns = state.get("turns", [])
    number = len(turns) + 1
    if context.default_model.parsed.is_dry_run:  # a dry run prices the suite without calling the bot
        return {"turns": [{"number": number, "role": "assistant", "messages": [{"role": "assistant", "content": DRY_RUN_REPLY}]}]}
    bot = bots.resolve(SimulationOptions.of(context).bot)
    return {"turns": [await bot_turn(context, state, item_id(state), bot)]}
