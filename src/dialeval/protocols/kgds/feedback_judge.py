"""EBS feedback judgement (paper Section 6.1, Appendix D.5).

In the summarizer's own conversation, after its structured-prompt answer, the
summarizer compares its extractive background summary with the experts' one and says
which fits the definition better. Only EBS that differ from the gold one are judged;
the gold win rate measures how far the annotation is accepted as ground truth. The
summarizer judges with its own generation settings (the paper's, unless configured).
With predictions from a file there is no conversation to continue: nothing is judged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from dialeval.agents.judge import Judge
from dialeval.protocols.kgds.common import PLACEHOLDER_REASONING, load_messages, options_of, system_model
from dialeval.config import EvalContext

TEMPLATE = "kgds/feedback_judge"


class FeedbackJudgement(BaseModel):
    """The paper's order: the conclusion, then the reasoning (Figure 16)."""

    better: Literal["A", "B"]
    reasoning: str = Field(min_length=1)

    @field_validator("better", mode="before")
    @classmethod
    def _letter(cls, value: Any) -> Any:
        text = str(value).strip().upper()
        for letter in ("A", "B"):
            if text in (letter, f"SUMMARY {letter}", f"EBS_{letter}", f"EBS {letter}"):
                return letter
        return value


JUDGE = Judge(
    "kgds.feedback_judge",
    "feedback_judge",
    "kgds",
    TEMPLATE,
    FeedbackJudgement,
    placeholder=lambda: FeedbackJudgement(better="B", reasoning=PLACEHOLDER_REASONING),
)


def paragraph_list(indices: list[int]) -> str:
    return ", ".join(f"paragraph {i}" for i in sorted(indices)) or "(no paragraph)"


def judgement_entry(summary: dict[str, Any], answer: Any) -> dict[str, Any]:
    winner = None if answer.value is None else ("gold" if answer.value.better == "B" else "system")
    return {"round": 0, "winner": winner, "system": summary["background"], "status": answer.call.status, "call": answer.call.model_dump()}


def needs_judgement(summary: dict[str, Any], gold: set[int]) -> bool:
    """A round-0 EBS the summarizer wrote itself, readable and different from the gold one."""
    return (
        summary["pattern"] == "ebs"
        and summary["round"] == 0
        and summary.get("status") == "ok"
        and bool(summary.get("messages"))
        and set(summary["background"]) != gold
    )


def skip_reason(summary: dict[str, Any], gold: set[int]) -> str:
    """Why an EBS is not judged: it equals gold, came from a file, or the system failed."""
    status = summary.get("status")
    if status in ("ok", "given") and set(summary.get("background") or []) == gold:
        return "same as gold"
    if status == "given":
        return "given: no conversation to continue"
    return "system failed"


@JUDGE.register
def feedback_judge():
    """Has the summarizer say whether its EBS or the experts' fits the definition better."""

    async def node(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        if not options_of(state).feedback_judge:
            return {}
        gold = {p["paragraph_index"] for p in state["sample"]["BSP"]}
        out = []
        for summary in state.get("summaries", []):
            if summary["pattern"] != "ebs" or summary["round"] != 0:
                continue
            if not needs_judgement(summary, gold):
                out.append({"round": 0, "winner": None, "skipped": skip_reason(summary, gold)})
                continue
            answer = await JUDGE.verdict(
                context,
                {"system_paragraphs": paragraph_list(summary["background"]), "gold_paragraphs": paragraph_list(sorted(gold))},
                before=load_messages(summary["messages"]),
                model=system_model(context, JUDGE.role),
            )
            out.append(judgement_entry(summary, answer))
        return {"feedback": out}

    return node
