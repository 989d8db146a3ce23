"""The audit's code checks: what the words of a simulated turn show without a model.

Why: a turn code can flag costs no model call and never depends on the auditor model's
reading. Each check flags only what the words make certain and leaves the rest to the
model audit: a role label or a stage direction for the bot (``one_turn``); model or
service-desk talk, talk about the simulation, the persona addressed by name (``persona``);
a hidden fact's value said when the bot's turn before asked nothing, or named other facts
only (``hidden_fact``); a number in no fact, persona, goal or earlier turn
(``invented_fact``); a stop while the bot waits for a fact the user holds (``early_stop``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dialeval.agents.simulation_auditor import Finding

# the other side's speaker labels, and the user's own (a user label after the first words is a further turn)
_BOT_LABELS = {"assistant", "bot", "agent", "ai", "support", "chatbot", "system", "operator", "representative"}
_USER_LABELS = {"user", "me", "customer", "human", "client", "caller"}
# a speaker label: at a line's start or after a sentence, a dash or a bracket; one to three words, then a colon
_LABEL = re.compile(r"(?:^|\n|(?<=[.!?)\]])\s+|\s[-\u2013\u2014]\s*)[\s\[(*]*([A-Za-z][A-Za-z']*(?: [A-Za-z][A-Za-z']*){0,2})[\])*]*\s*:(?=\s|$)")
# an aside in brackets or asterisks that narrates the bot's part
_STAGE = re.compile(r"[(\[*][^)\]*]*\b(the )?(agent|bot|assistant|support|operator|representative)\b[^)\]*]*[)\]*]", re.IGNORECASE)
# what a model or a service desk says and no person in a scenario says of themself
_MODEL_TALK = re.compile(
    r"\b(as an? (ai|language model|assistant)|i am an? (ai|language model|assistant|chatbot)|i'm an? (ai|language model|assistant|chatbot)"
    r"|how (can|may) i (help|assist) you( today)?\??$"
    r"|(glad|happy|pleased) to (help|assist)|(glad|happy) i could help|(help|assist) you (with|further|today)"
    r"|anything else (i|we) can (help|assist|do)|thank(s| you) for (contacting|choosing|calling|reaching out to) (us|our))",
    re.IGNORECASE | re.MULTILINE)
# talk about the simulation itself
_META = re.compile(r"\b(simulated|simulation|role-?play(ing|ed)?|my persona|the persona|the scenario|my instructions|pretend(ing)? to be)\b",
                   re.IGNORECASE)
_REQUEST = re.compile(r"\?|\b(tell|give|send|provide|share|confirm|need)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{3,}")
_DIGITS = re.compile(r"\d+")
_TITLES = {"mr", "mrs", "ms", "miss", "dr", "sir"}


@dataclass
class TurnContext:
    """What a simulated turn is checked against: its scenario and the conversation before it."""

    facts: dict[str, str] = field(default_factory=dict)
    bot_before: str = ""  # the bot's words in its turn just before (not its tool calls)
    scenario_text: str = ""  # persona and goal
    earlier: str = ""  # every earlier turn's text
    stop: str | None = None  # the turn's stop reason

    def names(self) -> set[str]:
        """The persona's name words (the words before its first comma that start with a capital)."""
        head = self.scenario_text.split(",", 1)[0] if "," in self.scenario_text.split("\n", 1)[0] else ""
        return {w.lower() for w in re.findall(r"\b[A-Z][a-z]{2,}\b", head)} - _TITLES

    def asked(self, key: str) -> bool:
        """Whether the bot's turn before names the fact (a word of its key)."""
        return bool(set(_WORD.findall(key.lower().replace("_", " "))) & set(_WORD.findall(self.bot_before.lower())))

    def known(self, value: str) -> bool:
        """Whether a value is no secret here: in the persona, the goal or an earlier turn."""
        return value.lower() in self.scenario_text.lower() or value.lower() in self.earlier.lower()


def one_turn(message: str, ctx: TurnContext) -> str | None:
    """A line for the other side: its speaker label anywhere, the user's own label after the
    first words (a further turn), or an aside narrating the bot. Labels of a form are no speakers."""
    labels = [(m.start(), m.group(1).lower()) for m in _LABEL.finditer(message)]
    own = _USER_LABELS | ctx.names()
    for start, label in labels:
        if label in _BOT_LABELS or (label in own and message[:start].strip()):
            return message[:200]
    stage = _STAGE.search(message)
    return stage.group(0) if stage else None


def persona(message: str, ctx: TurnContext) -> str | None:
    """Words a person in a scenario does not say: a model's or a service desk's, talk about
    the simulation, or the persona spoken to by name (the other side's voice)."""
    found = _MODEL_TALK.search(message) or _META.search(message)
    if found:
        return found.group(0)
    for name in ctx.names():
        vocative = re.search(rf"(,|\b(hi|hello|dear|thanks|thank you|welcome|bye|goodbye))\s+{name}\s*[.!?,]", message, re.IGNORECASE)
        if vocative:
            return f"{vocative.group(0)} (the persona addressed by name)"
    return None


def hidden_fact(message: str, ctx: TurnContext) -> str | None:
    """A value said unasked: the bot's turn before asked nothing, or asked for other facts by
    name. A question in words of its own (no fact named) is left to the model audit."""
    named = [key for key in ctx.facts if ctx.asked(key)]
    if _REQUEST.search(ctx.bot_before) and not named:
        return None
    for key, value in ctx.facts.items():
        text = str(value).strip()
        if len(text) < 3 or ctx.known(text) or text.lower() not in message.lower() or key in named:
            continue
        return f"{text} (the bot's turn before asked for {', '.join(named) if named else 'nothing'}, not {key})"
    return None


def _numbers(text: str) -> set[str]:
    return {str(int(d)) for d in _DIGITS.findall(text)}


def invented_fact(message: str, ctx: TurnContext) -> str | None:
    """A number of two digits or more that no fact, the persona, the goal or an earlier turn holds."""
    known = _numbers(" ".join([ctx.scenario_text, ctx.earlier, *ctx.facts.values()]))
    for token in message.split():
        new = [d for d in _DIGITS.findall(token) if len(d) >= 2 and str(int(d)) not in known]
        if new:
            return f"{token.strip('.,;:!?()')} (in no fact, nor the persona, the goal or an earlier turn)"
    return None


def early_stop(message: str, ctx: TurnContext) -> str | None:
    """A stop while the bot's turn before asks for a fact the user holds and has not given."""
    if ctx.stop not in ("goal_reached", "gave_up") or not _REQUEST.search(ctx.bot_before):
        return None
    pending = [key for key, value in ctx.facts.items() if ctx.asked(key) and str(value).lower() not in (ctx.earlier + message).lower()]
    return f"stops ({ctx.stop}) while the bot waits for {pending[0]}" if pending else None


CHECKS = {"one_turn": one_turn, "persona": persona, "hidden_fact": hidden_fact, "invented_fact": invented_fact, "early_stop": early_stop}


def rule_findings(message: str, facts: dict[str, str] | None = None, bot_before: str = "", scenario_text: str = "",
                  *, earlier: str = "", stop: str | None = None) -> list[Finding]:
    """Every rule the code checks see broken in ``message`` (see the module's docstring)."""
    ctx = TurnContext(dict(facts or {}), bot_before, scenario_text, earlier, stop)
    found = []
    for rule, check in CHECKS.items():
        evidence = check(message, ctx)
        if evidence:
            found.append(Finding(rule=rule, evidence=evidence))  # type: ignore[arg-type]  # CHECKS keys are rules
    return found
