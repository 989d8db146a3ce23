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
from dialeval.agents.simulation_auditor import TurnAudit, rule_findings, rules_text
from dialeval.config import EvalContext
from dialeval.memory.notes import NoteEntry, flatten, unflatten
from dialeval.models.usage import count_tokens
from dialeval.protocols.simulation import bots
from dialeval.protocols.simulation.common import SimulationOptions
from dialeval.protocols.simulation.replay import bot_turn
from dialeval.protocols.simulation.scenario import scenario_of
from dialeval.protocols.simulation.transcript import turn_line

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


def open_store(options: SimulationOptions, context: EvalContext) -> Any:
    from dialeval.memory.client import open_note_store

    return open_note_store(options.memory, context.run_dir)


async def notes_to_show(store: Any, key: str, query: str, k: int) -> list[NoteEntry]:
    entries = await asyncio.to_thread(store.entries, key)
    if len(entries) <= k:
        return entries
    return list(await asyncio.to_thread(store.search, key, query or "goal", k))


async def remember(store: Any, key: str, new: dict[str, Any], turn: int) -> dict[str, Any]:
    """Merge the simulator's new notes into its stored note; the change made."""
    entries = await asyncio.to_thread(store.entries, key)
    merged = {**flatten(unflatten(entries)), **flatten(new)}
    note = unflatten([NoteEntry(path, value, 0) for path, value in merged.items()])
    change = await asyncio.to_thread(store.update, key, note, turn)
    return change.as_dict()


@register_agent("simulation.user_simulator", role="user_simulator", benchmark="simulation")
def user_simulator():
    """Plays the scenario's user one turn at a time, keeping notes in the run's note store."""

    async def node(state: State, context: EvalContext) -> dict[str, Any]:
        options = SimulationOptions.of(context)
        scenario = scenario_of(state)
        turns = state.get("turns", [])
        number = len(turns) + 1
        if not turns and scenario.opening:
            return {"turns": [{"number": 1, "role": "user", "text": scenario.opening, "image": None, "stop": None, "scripted": True}]}
        key = f"simulator:{item_id(state)}:{seed_of(state)}"
        store = await asyncio.to_thread(open_store, options, context)
        if not any(t["role"] == "user" and not t.get("scripted") for t in turns):  # a fresh conversation: no old notes
            await asyncio.to_thread(store.clear, key)
        last_bot = next((turn_line(t) for t in reversed(turns) if t["role"] == "assistant"), "")
        notes = await notes_to_show(store, key, last_bot, options.note_top_k)
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
        answer = await SIMULATOR.ask(ctx, messages, validate=checker(len(scenario.images)), placeholder=dry_run_turn,
                                     json_schema=json_schema(len(scenario.images)))
        call = answer.call.model_dump()
        if answer.value is None:
            return {"turns": [{"number": number, "role": "user", "text": "", "unparsed": True, "call": call}]}
        said = answer.value
        change = await remember(store, key, said.notes, number) if said.notes else None
        image = scenario.images[said.image - 1].source if said.image else None
        turn = {"number": number, "role": "user", "text": said.message.strip(), "image": image, "stop": said.stop,
                "call": call, "notes_change": change}
        return {"turns": [turn]}

    return node


def audit_record(turn: State, findings: list[dict[str, Any]], status: str, rationale: str | None, call: Any) -> dict[str, Any]:
    return {"turn": turn["number"], "status": status, "findings": findings, "rationale": rationale, "call": call}


@register_agent("simulation.auditor", role="simulation_auditor", benchmark="simulation")
def auditor():
    """Checks each simulated user turn against its scenario: persona, hidden facts, no invented facts, no early stop, one turn."""

    async def node(state: State, context: EvalContext) -> dict[str, Any]:
        options = SimulationOptions.of(context)
        turn = state.get("turns", [])[-1]
        if turn["role"] != "user" or turn.get("scripted") or turn.get("unparsed") or not options.audit:
            return {}
        scenario = scenario_of(state)
        coded = [f.model_dump() for f in rule_findings(turn.get("text", ""))]
        ctx = AUDITOR.context(context)
        values = {"persona": scenario.persona, "goal": scenario.goal, "hidden_facts": facts_text(scenario.hidden_facts),
                  "rules": rules_text(), "simulated_turn": turn_line(turn)}
        earlier = state["turns"][:-1]
        messages, _, _ = fitted(
            lambda _note, conversation: ctx.template.render(**values, conversation=conversation),
            [turn_line(t) for t in earlier[-options.window_turns:]], [], options.context_budget,
        )
        answer = await AUDITOR.ask(ctx, messages)
        found = coded + ([f.model_dump() for f in answer.value.findings] if answer.value else [])
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
