"""What the agents that play a system under test (a responder answering a conversation) share."""

from __future__ import annotations

from langchain_core.messages import BaseMessage

# A reply of typical length (about 160 tokens; the paper caps them at 256) for dry runs, so that
# token and prompt-cache estimates carry histories as long as a real model's.
DRY_RUN_REPLY = (
    "Thanks for telling me about this. From what you describe and from the picture, the main points are "
    "the ones you listed first, and the change you mentioned a moment ago replaces the earlier plan. "
    "If I put the pieces together, the simplest next step is to start with the part that needs the "
    "least preparation, check how it goes for a few days, and then adjust the timing to fit your week. "
    "Keep a short note of what works and what does not, so that you can compare the two options later. "
    "If anything in the picture looks different from what you expected, describe it and I will take it "
    "into account. I can also suggest a few alternatives that need less time, cost less, or suit the "
    "space you have, and explain the trade-offs of each one so you can choose what fits you best."
)


def with_history(rendered: list[BaseMessage], earlier: list[BaseMessage]) -> list[BaseMessage]:
    """A rendered template with the conversation inserted before its final user message."""
    return [*rendered[:-1], *earlier, rendered[-1]]
