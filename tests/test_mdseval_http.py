"""MDSEval over HTTP against the local OpenAI-compatible test server: both orders, pictures, bias."""

from __future__ import annotations

from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"


def test_the_pairwise_judge_sends_both_orders_with_pictures(tmp_path):
    def respond(body: dict) -> str:
        return '{"rationale": "the first reads better", "preferred": "A"}'

    options = {
        "evaluators": ["pairwise"],
        "aspects": ["coherence"],
        "dialogues": str(FIXTURES / "mdseval_demo_dialogues.json"),
        "image_dir": str(FIXTURES / "mdseval_images"),
    }
    with OpenAIStub(respond=respond) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=2)
        config = RunConfig(model=settings, options=options, output_dir=str(tmp_path / "runs"), cache_path=None)
        result = run("mdseval", FIXTURES / "mdseval_demo.json", config, progress=False)
        bodies = server.completions
        statuses = list(server.statuses)

    shown = []
    for body in bodies:
        text = prompt_of(body)
        a = text.split("<summary_a>", 1)[1].split("</summary_a>", 1)[0].strip()
        b = text.split("<summary_b>", 1)[1].split("</summary_b>", 1)[0].strip()
        shown.append((a, b))
        parts = [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]]
        assert [p["image_url"]["url"][:22] for p in parts if p.get("type") == "image_url"] == ["data:image/png;base64,"]
        assert "Speaker 0:" in text  # the real turns, not the statements
    assert len(shown) == 3 * 3 * 2, (statuses, result.summary, result.metrics["run"].get("failures"))  # 3 dialogues x 3 pairs x 2 orders
    assert all((b, a) in shown for a, b in shown)  # every pair was asked the other way round too

    report = (result.run_dir / "report.md").read_text()
    assert "**Judges saw:** dialogue turns + image pictures (3 dialogues)" in report
    bias = report.split("Positional bias", 1)[1]
    assert "| COH | 100.0 [100.0, 100.0] |" in bias  # always "A": the judge's share of first picks
    assert result.metrics["pairwise"]["coherence"]["consistency"] == 0.0
