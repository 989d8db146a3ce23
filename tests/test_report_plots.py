"""Report figures: what each benchmark draws, on which axes, under which file names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from dialeval.benchmarks import get_benchmark
from dialeval.config import ModelSettings, RunConfig
from dialeval.figures import Bars, Histogram, Radar, Scatter, scale_of
from dialeval.report.compare_plots import agreement_plots
from dialeval.report.plots import DPI, HEIGHT_IN, WIDTH_IN, draw, score_histograms
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.test_runner import DATA

pytestmark = pytest.mark.figures  # these tests read the PNGs (elsewhere the suite renders none: conftest.py)

GOLDEN = Path(__file__).parent / "golden"
FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
SIZE = (int(WIDTH_IN * DPI), int(HEIGHT_IN * DPI))


def _answers_records() -> list[dict]:
    return [{"id": f"a{i}", "system": "bot-a", "score": s} for i, s in enumerate([3, 3, 4])] + [
        {"id": f"b{i}", "system": "bot-b", "score": s} for i, s in enumerate([5, 2])
    ] + [{"id": "b9", "system": "bot-b", "score": None}]


def test_a_histogram_per_dimension_splits_systems_and_spans_the_whole_scale(tmp_path):
    [hist] = score_histograms(_answers_records(), get_benchmark("answers").score_dimensions, {})
    assert hist.name == "score-hist-score-1-5"
    assert hist.scale == (1.0, 5.0)  # from the name "score (1-5)", though no 1 was given
    assert hist.series == {"bot-a": [3.0, 3.0, 4.0], "bot-b": [5.0, 2.0]}  # the unreadable score is not a value

    written = draw([hist], tmp_path)
    assert written == {"score (1-5): scores given": "plots/score-hist-score-1-5.png"}
    with Image.open(tmp_path / "plots" / "score-hist-score-1-5.png") as png:
        assert png.size == SIZE


def test_the_same_figures_are_the_same_bytes(tmp_path):
    figures = [
        Histogram("h", "h", {"x": [1.0, 2.0, 2.0]}, (1, 3)),
        Bars("b", "b", "mean", ["p", "q"], {"x": [1.5, None]}, {"x": [(1.0, 2.0), None]}, (1, 3)),
        Scatter("s", "s", "human", "judge", {"x": [(1.0, 2.0), (1.0, 2.0), (3.0, 3.0)]}, (1, 3)),
    ]
    draw(figures, tmp_path / "one")
    draw(figures, tmp_path / "two")
    for name in ("h", "b", "s"):
        first = (tmp_path / "one" / "plots" / f"{name}.png").read_bytes()
        assert first == (tmp_path / "two" / "plots" / f"{name}.png").read_bytes()
        assert b"Software" not in first and b"matplotlib" not in first  # no version, no date


def test_scales_come_from_the_benchmark_the_name_or_the_values():
    mdseval = get_benchmark("mdseval").scales
    assert scale_of("pointwise balance", mdseval, [3.0]) == (1.0, 7.0)  # an aspect's scale by its last word
    assert scale_of("rating", get_benchmark("vdact").scales, [2.0]) == (1, 3)
    assert scale_of("fact knowable (0/1)", {}, [1.0]) == (0.0, 1.0)
    assert scale_of("politeness", {}, [2.0, 4.0]) == (2.0, 4.0)
    assert scale_of("politeness", {}, []) is None


def test_a_vdact_run_draws_question_types_with_intervals_and_judge_against_humans(tmp_path):
    data = tmp_path / "predictions"
    data.mkdir()
    (data / "demo-bot.json").write_text((FIXTURES / "vdact_demo" / "predictions" / "demo-bot.json").read_text())
    ratings = iter([1, 2, 3, 3, 2] * 20)
    with OpenAIStub(respond=lambda body: f"Reasonable. So rating={next(ratings)}") as server:
        model = ModelSettings(spec="openai-compatible:judge", base_url=server.base_url)
        config = RunConfig(model=model, output_dir=str(tmp_path / "runs"), cache_path=None, concurrency=1, options={
            "summary": "none", "human_scores": str(FIXTURES / "vdact_demo" / "human_scores.jsonl")})
        result = run("vdact", data, config, progress=False)
    figures = result.metrics["run"]["figures"]
    assert sorted(figures.values()) == ["plots/judge-vs-human-rating.png", "plots/question-types-rating.png",
                                        "plots/score-hist-rating.png"]
    report = result.report_path.read_text()
    for title, path in figures.items():
        assert f"![{title}]({path})" in report.split("## Figures", 1)[1]
        assert (result.run_dir / path).stat().st_size > 5_000

    bench = get_benchmark("vdact")
    bars, scatter = bench.figures(result.records, result.metrics, {})
    assert isinstance(bars, Bars) and bars.categories == list(result.metrics["systems"]["demo-bot"]["question_types"])
    assert bars.ylim == (1, 3)
    for mean, interval in zip(bars.series["demo-bot"], bars.intervals["demo-bot"]):
        assert mean is None or 1 <= mean <= 3
        if interval is not None:
            assert interval[0] <= mean <= interval[1]
    assert isinstance(scatter, Scatter) and scatter.scale == (1, 3)
    assert len(scatter.points["demo-bot"]) == result.metrics["systems"]["demo-bot"]["human"]["rating"]["rated_turns"]


def test_kgds_draws_its_error_types_and_mmdu_its_dimensions_from_their_metrics(tmp_path):
    kgds = json.loads((GOLDEN / "kgds.metrics.json").read_text())
    [errors] = get_benchmark("kgds").figures([], kgds, {})
    assert errors.name == "error-types" and errors.categories == ["OM", "IRIC", "IRU", "OSD", "OFI"]
    assert errors.series["EBS round 0"] == [0.0, 0.0, 1.0, 0.0, 0.0]

    mmdu = json.loads((GOLDEN / "mmdu.metrics.json").read_text())
    [dims] = get_benchmark("mmdu").figures([], mmdu, {})
    assert dims.categories[-1] == "Overall Score" and dims.series == {"mmdu_demo_predictions": [28.5] * 7}
    assert dims.ylim == (0, 100)
    assert set(draw([errors, dims], tmp_path).values()) == {"plots/error-types.png", "plots/dimension-scores.png"}


def test_mdseval_sets_each_judge_score_against_the_human_mean_of_its_summary():
    record = {"human": {"means": {"coherence": [4.5, 2.0]}},
              "scores": [{"evaluator": "pointwise", "aspect": "coherence", "summary": 0, "score": 5},
                         {"evaluator": "pointwise", "aspect": "coherence", "summary": 1, "score": None},
                         {"evaluator": "checklist", "aspect": "coherence", "summary": 1, "score": 1}]}
    [scatter] = get_benchmark("mdseval").figures([record], {}, {})
    assert scatter.name == "judge-vs-human-coherence" and scatter.scale == (1.0, 5.0)
    assert scatter.points == {"pointwise": [(4.5, 5.0)], "checklist": [(2.0, 1.0)]}


def _dark_pixels(path: Path) -> int:
    import numpy as np

    with Image.open(path) as png:
        rgb = np.asarray(png.convert("RGB")).astype(int)
    return int(((rgb[..., 2] > 80) & (rgb[..., 0] < 60) & (rgb[..., 1] < 90)).sum())


def test_compare_draws_one_repeated_value_as_a_dark_cell_on_the_whole_scale(tmp_path):
    one_value = {"dimension": "pointwise balance", "a": "run-a", "b": "run-b", "n": 4, "scale": "integer",
                 "pairs": [[f"u{i}", 3, 3] for i in range(4)]}
    written = agreement_plots(tmp_path, [one_value], get_benchmark("mdseval").scales)
    assert written == {"pointwise balance: run-a vs run-b": "agreement-pointwise-balance.png"}
    assert _dark_pixels(tmp_path / "agreement-pointwise-balance.png") > 500  # the cell holding all four units


def test_a_dry_run_draws_no_figures(tmp_path):
    config = RunConfig(model=ModelSettings(spec="dry-run"), output_dir=str(tmp_path / "runs"), cache_path=None)
    result = run("answers", DATA, config, progress=False)
    assert result.metrics["run"]["figures"] == {}
    assert not (result.run_dir / "plots").exists()
    assert "## Figures" not in result.report_path.read_text()


def test_no_figures_draws_none_keeps_the_run_id_and_a_later_report_draws_none_either(tmp_path, capsys):
    """``--no-figures`` (``figures: false``): a run read by a program, such as a trust card's
    runs, spends no CPU on PNGs. Not part of the run's identity: the same command with the
    flag resumes the same folder."""
    from dialeval.cli import main

    with OpenAIStub(respond=lambda body: '{"rationale": "fine", "score": 4}') as server:
        argv = ["run", "answers", "--data", str(DATA), "--model", "openai-compatible:judge", "--base-url", server.base_url,
                "--output-dir", str(tmp_path / "runs"), "--no-cache", "--no-progress"]
        assert main([*argv, "--no-figures"]) == 0
        [folder] = (tmp_path / "runs").iterdir()
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics["run"]["figures"] == {} and metrics["systems"]["demo-bot"]["scored"] == 3
        assert not (folder / "plots").exists() and "## Figures" not in (folder / "report.md").read_text()
        assert json.loads((folder / "config.json").read_text())["figures"] is False

        assert main(["report", str(folder)]) == 0  # the run's own setting, read back from config.json
        assert not (folder / "plots").exists()

        assert main(argv) == 0  # without the flag: the same run id, and this time the histogram
        assert [p.name for p in (tmp_path / "runs").iterdir()] == [folder.name]
        assert sorted(p.name for p in (folder / "plots").iterdir()) == ["score-hist-score-1-5.png"]
        assert len(server.requests) == 3  # the second run judged nothing again
    capsys.readouterr()


@pytest.mark.parametrize("benchmark", ["answers", "kgds", "vdact", "mmrc", "mmdu", "mdseval", "dialogue"])
def test_every_benchmark_declares_figures_it_can_build_from_its_golden_metrics(benchmark, tmp_path):
    """And draws them: the rest of the suite builds its runs' figures but renders none."""
    bench = get_benchmark(benchmark)
    metrics = json.loads((GOLDEN / f"{benchmark}.metrics.json").read_text())
    figures = bench.figures([], metrics, {}) if bench.figures else []
    assert all(isinstance(f, (Bars, Scatter, Histogram, Radar)) and f.name for f in figures)
    written = draw(figures, tmp_path)
    assert len(written) == len(figures)
    for path in written.values():
        with Image.open(tmp_path / path) as png:
            assert png.size[0] >= SIZE[0] and png.size[1] >= SIZE[1]


def test_dialogue_sets_the_judge_against_the_human_labels_it_was_given(tmp_path):
    labels = tmp_path / "human.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "trip", "turn": 2, "criterion": "relevance", "score": 5},
        {"id": "lamp", "turn": 2, "criterion": "relevance", "score": 3},
    ]))
    records = [{"id": "trip", "turn_units": [{"criterion": "relevance", "turn": 2, "score": 4},
                                             {"criterion": "relevance", "turn": 4, "score": 2}]},
               {"id": "lamp", "turn_units": [{"criterion": "relevance", "turn": 2, "score": None}]}]
    bench = get_benchmark("dialogue")
    assert not [f for f in bench.figures(records, {}, {}) if isinstance(f, Scatter)]  # no human labels, no scatter
    [scatter] = [f for f in bench.figures(records, {}, {"human_scores": str(labels)}) if isinstance(f, Scatter)]
    assert scatter.name == "judge-vs-human-relevance" and scatter.points == {"judge": [(5, 4)]}  # units both scored
