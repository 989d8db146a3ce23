"""Options of the `vdact` benchmark and the facts of its judges (dimensions, labels, rules
for unreadable replies), read by the graph, the agents and the registration alike."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dialeval.config import parse_options as config_options
from dialeval.metrics.intervals import SEED
from dialeval.metrics.text import SPICE_ENV

NO_ANSWER_STATUS = "no_answer"  # as recorded by dialeval.protocols.vdact.common

JudgeKind = Literal["session", "turn", "lave", "video_chatgpt", "llm_acc", "llm_rel"]
TAKES_SUMMARY = ("session", "turn")  # the VDEval judges; LAVE and Video-ChatGPT's judge see the turn only

# agent -> its score dimensions, the first being the headline one
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "vdact.session_judge": ("rating",),
    "vdact.turn_judge": ("rating",),
    "vdact.lave_judge": ("rating",),
    "vdact.video_chatgpt": ("LLM-Acc", "LLM-Rel"),
    "vdact.llm_acc": ("LLM-Acc",),
    "vdact.llm_rel": ("LLM-Rel",),
}
# agent -> (score given to an unreadable reply, where the rule comes from): the authors' released scoring
UNREADABLE_RULES: dict[str, tuple[int, str]] = {
    "vdact.session_judge": (1, "VDEval's released scoring (VDEval/calc_score.py) rates a reply without a readable 'So rating=' 1"),
    "vdact.turn_judge": (1, "VDEval's released scoring (VDEval/calc_score.py) rates a reply without a readable 'So rating=' 1"),
    "vdact.lave_judge": (2, "LAVE's released scoring (lave_ft5.py) rates an unexpected output 2"),
}
EXAMPLE_JUDGES = ("vdact.session_judge", "vdact.turn_judge")
LABELS = {"vdact.session_judge": "VDEval", "vdact.turn_judge": "VDEval (turn-based)", "vdact.lave_judge": "LAVE"}


class VdactOptions(BaseModel):
    """Options of the `vdact` benchmark (``--option key=value`` or ``options:`` in a config)."""

    model_config = ConfigDict(extra="forbid")

    judge: JudgeKind = Field(default="session", description="llm_acc and llm_rel name the video_chatgpt judge, which gives both")
    summary: Literal["none", "template", "refined"] | None = Field(
        default=None, description="video summary in the prompt; default refined for the session judge, none otherwise"
    )
    kg_dir: str | None = Field(default=None, description="folder with the summary zips or folders (default <data>/../kg)")
    summary_path: str | None = Field(default=None, description="one summary zip or folder, overriding kg_dir")
    example_path: str | None = Field(default=None, description="file with the one-shot example dialogue of the VDEval judges")
    example_dialogue: str | None = Field(default=None, description="dial_id of the example in example_path (needed when it holds several)")
    human_scores: str | None = Field(default=None, description="JSON/JSONL file of human 1-3 scores per turn")
    permutations: int = Field(default=10_000, ge=1)
    seed: int = SEED  # the one resampler's seed (metrics/intervals.py)
    spice_jar: str | None = Field(default=None, description=f"spice-1.0.jar with CoreNLP in lib/ (else env {SPICE_ENV})")
    bertscore_model: str | None = Field(default=None, description="local model folder for BERTScore")
    bertscore_layers: int | None = None
    bartscore_model: str | None = Field(default=None, description="local BART model folder for BARTScore")
    baseline_runs: list[str] = Field(
        default_factory=list, description="folders of other vdact runs (e.g. LAVE, Video-ChatGPT) whose scores join the human-agreement comparison"
    )

    @model_validator(mode="after")
    def _summary_fits_judge(self) -> VdactOptions:
        if self.judge not in TAKES_SUMMARY and self.summary not in (None, "none"):
            raise ValueError(f"judge {self.judge} takes no video summary (only session and turn do): drop option summary")
        return self

    @property
    def summary_kind(self) -> str:
        if self.summary is not None:
            return self.summary
        return "refined" if self.judge == "session" else "none"


def parse_options(options: dict[str, Any]) -> VdactOptions:
    return config_options(VdactOptions, options, "vdact")
