"""The simulation's side of the bot journal (:mod:`dialeval.bots.journal`): a bot turn is
called at most once per run, and a resumed or retried conversation starts from its journal.

Each ``sent`` line carries the turns and audits added since the conversation's previous
bot turn (and, on an attempt's first line, the attempts spoiled before it), so the
journal rebuilds the conversation up to its last bot call: with the reply, it goes on
from there; without one (the run died during the call), that turn is sent again with its
idempotency key and marked ``resent_after_interruption``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dialeval.bots import LoadedBot
from dialeval.bots.journal import Journal
from dialeval.config import EvalContext
from dialeval.errors import RunError
from dialeval.protocols.simulation.transcript import bot_messages

State = dict[str, Any]
RESENT = "resent_after_interruption"


@dataclass
class Restored:
    """A conversation as its journal left it."""

    update: State  # turns, audits, attempt, resimulated
    pending: bool  # its last bot turn was sent and never answered


def journal_of(context: EvalContext) -> Journal | None:
    """The run's journal (none outside a run: Studio, a graph invoked by hand)."""
    return Journal.of(context.run_dir) if context.run_dir else None


def _since(journal: Journal, conversation: str, attempt: int) -> tuple[int, int, bool]:
    """(turns, audits) of the attempt already in the journal, and whether it has a line yet."""
    mine = [e for e in journal.entries(conversation) if e.sent["attempt"] == attempt]
    if not mine:
        return 0, 0, False
    last = mine[-1].sent
    return last["since_turns"] + len(last["turns"]) + 1, last["since_audits"] + len(last["audits"]), True


async def bot_turn(context: EvalContext, state: State, conversation: str, bot: LoadedBot) -> State:
    """The bot's next turn: replayed from the journal when it was answered before, sent again
    with its key when it was cut by a crash, else sent (journaled before and after)."""
    turns = state.get("turns", [])
    number, attempt = len(turns) + 1, state.get("attempt") or 0
    messages, session = bot_messages(turns), f"sim-{conversation}"
    journal = journal_of(context)
    if journal is None:
        return {"number": number, "role": "assistant", **await bot.turn(messages, session, None)}
    entry = journal.find(conversation, attempt, number)
    if entry is not None and entry.reply is not None:
        return dict(entry.reply["record"])
    if entry is not None:
        key = entry.sent["key"]
    else:
        key = journal.key(conversation, attempt, number)
        since_turns, since_audits, started = _since(journal, conversation, attempt)
        audits = state.get("audits", [])
        journal.sent(conversation, attempt, number, key, since_turns=since_turns, since_audits=since_audits,
                     turns=turns[since_turns:], audits=audits[since_audits:],
                     **({} if started else {"resimulated": state.get("resimulated", [])}))
    record = {"number": number, "role": "assistant", **await bot.turn(messages, session, key)}
    if entry is not None:
        record[RESENT] = True
    journal.replied(conversation, key, record)
    return record


def restore(context: EvalContext, conversation: str) -> Restored | None:
    """The conversation up to its last journaled bot turn (its latest attempt); ``None`` when it never reached the bot."""
    journal = journal_of(context)
    entries = journal.entries(conversation) if journal is not None else []
    if not entries:
        return None
    attempt = max(e.sent["attempt"] for e in entries)
    mine = [e for e in entries if e.sent["attempt"] == attempt]
    turns: list[State] = []
    audits: list[State] = []
    for n, entry in enumerate(mine):
        sent = entry.sent
        if (sent["since_turns"], sent["since_audits"]) != (len(turns), len(audits)) or (entry.reply is None and n < len(mine) - 1):
            raise RunError(f"{journal.path if journal else ''}: the journal of conversation {conversation!r} has a gap at turn "
                           f"{sent['turn']}; start the run over with --fresh")
        turns += sent["turns"]
        audits += sent["audits"]
        if entry.reply is not None:
            turns.append(entry.reply["record"])
    update = {"turns": turns, "audits": audits, "attempt": attempt, "resimulated": mine[0].sent.get("resimulated", [])}
    return Restored(update, mine[-1].reply is None)


def resent_count(record: State) -> int:
    """Bot turns of a conversation (its spoiled attempts too) sent again after an interruption."""
    attempts = [record.get("turns", []), *(a.get("turns", []) for a in record.get("resimulated", []))]
    return sum(1 for turns in attempts for t in turns if t.get(RESENT))
