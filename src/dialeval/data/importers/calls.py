"""Model calls into conversations: which calls belong together, and the history they
rebuild without repeating what each call re-sent.

Grouping (said in the import's output, "grouped N calls into M conversations by ..."):

1. calls that name a conversation (``gen_ai.conversation.id``, a LangSmith thread, a
   Langfuse session) are grouped by it;
2. the others are grouped by trace and parent span: calls made under one span (an agent
   run) are one conversation;
3. then the time-and-prefix rule: a group whose first call's input begins with the whole
   history of a conversation that ended before it (same system prompt) continues that
   conversation (the longest such history wins; on a tie the earlier). A chat API is
   stateless, so a conversation's next call re-sends all of it: calls in separate traces
   with no id, or under successive spans of one trace (a graph's model node), are joined
   this way; two agents of one trace, each with its own history, stay apart.

Merging (:class:`History`): each call's messages are laid over the history by their
longest common prefix, so a re-sent history is never added twice; a call that sends only
its newest messages overlaps the history's tail instead. A call that fits neither way is
added after the history with a warning naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dialeval.data.importers.common import ImportLog, Message, message, record


@dataclass
class Call:
    """One model call as an importer read it."""

    owner: str  # its id in the source (span, run, observation): scores go back to it
    trace: str
    time: Any  # sortable start time
    index: int  # the file record it came from (ties and messages)
    inputs: list[Message]
    outputs: list[Message]
    conversation: str | None = None  # an explicit conversation, thread or session id
    tools: list[Message] = field(default_factory=list)
    parent: str = ""  # the span or run it was made under ("" at a trace's root)


def _prefix(a: list[Message], b: list[Message]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def _subsequence(small: list[Message], big: list[Message]) -> bool:
    it = iter(big)
    return all(any(m == x for x in it) for m in small)


class History:
    """A conversation rebuilt from its model calls in time order, with the call that produced
    each message (None for the inputs: user messages, tool results)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.owners: list[str | None] = []
        self.system: list[str] = []
        self.tools: list[Message] = []
        self.warnings: list[str] = []

    def add(self, inputs: list[Message], outputs: list[Message], owner: str, tools: list[Message] | None = None) -> None:
        for message_ in inputs:
            if message_.get("role") == "system" and message_.get("content") not in self.system:
                self.system.append(message_.get("content") or "")
        names = {t["function"]["name"] for t in self.tools}
        self.tools += [t for t in tools or [] if t["function"]["name"] not in names]
        call = [m for m in inputs if m.get("role") != "system"] + outputs
        shared = _prefix(self.messages, call)
        if shared in (len(self.messages), len(call)):
            start = shared  # the history re-sent (and grown), or this call re-logged
        else:
            tail = next((k for k in range(min(len(self.messages), len(call)), 0, -1) if self.messages[-k:] == call[:k]), 0)
            if tail or _subsequence(call, self.messages):
                start = tail if tail else len(call)  # only the newest messages sent; or nothing new
            else:
                self.warnings.append(f"call {owner}: its input differs from the conversation so far at message {shared + 1}; "
                                     f"its messages from there were added after the conversation (check it by hand)")
                start = shared
        new = call[start:]
        produced = min(len(outputs), len(new))
        self.messages += new
        self.owners += [None] * (len(new) - produced) + [owner] * produced

    def all_messages(self) -> list[Message]:
        system = [message("system", "\n".join(s for s in self.system if s))] if any(self.system) else []
        return system + self.messages

    def history(self) -> tuple[tuple[str, ...], list[Message]]:
        return tuple(self.system), self.messages

    def turn_ids(self) -> dict[int, str]:
        """Each assistant turn's source id: the call that produced its last message (the reply shown)."""
        out: dict[int, str] = {}
        for turn, indices in assistant_turns(self.messages).items():
            owner = self.owners[indices[-1]]
            if owner is not None:
                out[turn] = owner
        return out


def assistant_turns(messages: list[Message]) -> dict[int, list[int]]:
    """Turn number -> indices of its assistant messages, numbered as the dialogue loader
    numbers turns (a reply after tool results continues its turn)."""
    out: dict[int, list[int]] = {}
    turn = 0
    open_turn = False
    for index, message_ in enumerate(messages):
        role = message_.get("role")
        if role == "user":
            turn, open_turn = turn + 1, False
        elif role == "assistant":
            if not open_turn:
                turn += 1
            out.setdefault(turn, []).append(index)
            open_turn = bool(message_.get("tool_calls")) or (open_turn and not message_.get("content"))
        elif role == "tool":
            open_turn = True
    return out


def _system(call: Call) -> tuple[str, ...]:
    return tuple(m.get("content") or "" for m in call.inputs if m.get("role") == "system")


def _rest(call: Call) -> list[Message]:
    return [m for m in call.inputs if m.get("role") != "system"]


def group(calls: list[Call]) -> tuple[list[tuple[str, list[Call]]], str]:
    """Conversations (id, calls in time order) and the sentence that says how they were grouped."""
    ordered = sorted(calls, key=lambda c: (c.time, c.index))
    named: dict[str, list[Call]] = {}
    spans: dict[tuple[str, str], list[Call]] = {}
    for call in ordered:
        if call.conversation:
            named.setdefault(call.conversation, []).append(call)
        else:
            spans.setdefault((call.trace, call.parent), []).append(call)
    chains: list[tuple[str, list[Call], History]] = []
    joined = 0
    for (trace, parent), members in spans.items():  # in order of their first call
        first = members[0]
        best = None
        for chain in chains:
            system, messages = chain[2].history()
            ended = chain[1][-1].time
            if system == _system(first) and messages and ended <= first.time and _rest(first)[: len(messages)] == messages:
                if best is None or len(messages) > len(best[2].messages):
                    best = chain
        if best is None:
            used = {chain[0] for chain in chains}
            ident = trace if trace not in used else f"{trace}/{parent or len(chains)}"
            best = (ident, [], History())
            chains.append(best)
        else:
            joined += 1
        for call in members:
            best[1].append(call)
            best[2].add(call.inputs, call.outputs, call.owner)
    out = list(named.items()) + [(key, members) for key, members, _ in chains]
    ways = [f"{len(named)} by conversation id"] if named else []
    if chains:
        ways.append(f"{len(chains)} by trace and parent span" + (
            f" ({joined} groups joined to an earlier conversation whose whole history their first call re-sent: "
            "the time-and-prefix rule)" if joined else ""))
    return out, f"grouped {len(calls)} calls into {len(out)} conversations: {', '.join(ways)}"


def build(calls: list[Call], fmt: str, log: ImportLog, extra: Any = None) -> list[dict[str, Any]]:
    """Dialogue records of the calls, grouped and merged; ``extra(key, calls)`` adds source ids."""
    groups, note = group(calls)
    log.notes.append(note)
    out = []
    for key, members in groups:
        history = History()
        for call in members:
            history.add(call.inputs, call.outputs, call.owner, call.tools)
        log.warnings += [f"conversation {key!r}: {w}" for w in history.warnings]
        source = {"call_traces": {c.owner: c.trace for c in members}, **(extra(key, members) if extra else {})}
        out.append(record(key, history.all_messages(), fmt, conversation_ids=[c.trace for c in members],
                          turn_ids=history.turn_ids(), tools=history.tools, extra=source))
    return out
