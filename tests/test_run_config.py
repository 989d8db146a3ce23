"""One configuration reaches the graphs: what a run config says is what its graph context holds."""

from __future__ import annotations

from dialeval.config import EvalContext, ModelSettings, RunConfig


def test_every_shared_field_of_the_run_config_reaches_the_graph_context():
    config = RunConfig(
        model="openai:gpt-4o-mini", models={"judge": "dry-run"}, agents={"judge": "answer_judge"},
        templates={"judge": "answers/answer_judge"}, parse_retries=5, cache_path="elsewhere.sqlite",
        options={"k": 1}, fresh=True,
    )
    context = config.context()
    shared = set(EvalContext.model_fields) & set(RunConfig.model_fields)
    assert shared >= {"models", "agents", "templates", "parse_retries", "cache_path", "options"}
    assert {name: getattr(context, name) for name in shared} == {name: getattr(config, name) for name in shared}
    assert context.default_model == ModelSettings(spec="openai:gpt-4o-mini") and context.refresh_cache is True
