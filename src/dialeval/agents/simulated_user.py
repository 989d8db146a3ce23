"""The simulated user: one turn at a time, in persona, from notes it keeps about the conversation.

Why a schema and not a magic string: the simulator says ``stop`` with a reason (goal
reached, gave up, bot unusable) in a field the stop rule reads, names the picture it
shows by number, and returns what it wants to remember (facts it revealed, what the
bot promised or asked, its persona's facts) as ``notes``, which the protocol keeps in
the run's note store so a long conversation stays consistent within a token budget.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

StopReason = Literal["goal_reached", "gave_up", "bot_unusable"]

# a user message of typical length for dry runs, so price estimates carry realistic histories
DRY_RUN_MESSAGE = (
    "Thanks. I still need this sorted out today: can you tell me exactly what happens next, what you "
    "need from me, and how long it will take before I hear back?"
)


class SimulatedTurn(BaseModel):
    """The simulated user's next turn."""

    message: str = Field(default="", description="what the user says next (empty only when stopping)")
    image: int | None = Field(default=None, description="the number of a scenario picture shown with the message")
    stop: StopReason | None = Field(default=None, description="end the conversation, and why")
    notes: dict[str, Any] = Field(
        default_factory=dict,
        description="what to remember: under revealed, bot_promised, bot_asked, persona (short values)",
    )


def checker(images: int, can_stop: bool = True) -> Any:
    """The meaning check: a message unless stopping, a picture the scenario has, and no
    stop before the bot has said anything (``can_stop`` false)."""

    def check(turn: SimulatedTurn) -> str | None:
        if turn.stop is not None and not can_stop:
            return "'stop' is set before the chatbot has said anything: open the conversation instead"
        if turn.stop is None and not turn.message.strip():
            return "'message' is empty but 'stop' is not set"
        if turn.image is not None and not 1 <= turn.image <= images:
            have = f"1 to {images}" if images else "none"
            return f"'image' {turn.image} is not one of the scenario's pictures ({have})"
        return None

    return check


def dry_run_turn() -> SimulatedTurn:
    return SimulatedTurn(message=DRY_RUN_MESSAGE)


def json_schema(images: int, can_stop: bool = True) -> dict[str, Any]:
    """The answer's shape as :func:`checker` accepts it, for models that follow a schema:
    a message with a visible character (a goodbye when stopping), a picture number only
    when the scenario has pictures, ``stop`` only once the bot has spoken."""
    image: list[dict[str, Any]] = [{"type": "integer", "minimum": 1, "maximum": images}] if images else []
    stop: list[dict[str, Any]] = [{"type": "string", "enum": list(get_args(StopReason))}] if can_stop else []
    return {
        "type": "object",
        "properties": {
            "message": {"type": "string", "minLength": 1, "maxLength": 400, "pattern": r"\S"},
            "image": {"anyOf": [*image, {"type": "null"}]},
            "stop": {"anyOf": [*stop, {"type": "null"}]},
            "notes": {"type": "object"},
        },
        "required": ["message", "stop"],
    }


def facts_text(facts: dict[str, str]) -> str:
    return "\n".join(f"- {key}: {value}" for key, value in facts.items()) or "(none)"


def images_text(names: list[str]) -> str:
    return "\n".join(f"{i + 1}. {name}" for i, name in enumerate(names)) or "(none)"
