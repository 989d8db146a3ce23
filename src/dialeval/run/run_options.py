"""The runner's own options, given among the benchmark's (``--option KEY=VALUE``, ``options:``)
and taken out of them once, when the run is prepared, into a typed model.

Why a model of their own: a benchmark's options model forbids keys it does not know, so the
runner's keys (``stop_when_decided``: see :mod:`dialeval.run.decide`) are split out before
the benchmark validates its own; validated here, an error names the option, and a typo of
either kind of key says which one was meant, as every other option error does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator

from dialeval.errors import ConfigError
from dialeval.field_errors import did_you_mean, field_message


class RunnerOptions(BaseModel):
    """What the runner does beside the benchmark: judge the units in a seeded order and stop
    once the compared systems (or the run and a baseline run) are decided."""

    model_config = ConfigDict(extra="forbid", strict=True)

    stop_when_decided: StrictBool = Field(False, description="judge units in a seeded order; stop once every pair of systems is decided")
    decision_margin: float = Field(0.0, ge=0, allow_inf_nan=False, description="a difference within this margin is no difference")
    decide_on: str | None = Field(None, description="the criterion the decision reads (default: the first scored one)")
    decide_against: str | None = Field(None, description="a baseline run folder: the run is one system, compared with it")

    @model_validator(mode="after")
    def _needs_the_switch(self) -> RunnerOptions:
        given = sorted(k for k in self.model_fields_set if k != "stop_when_decided")
        if given and not self.stop_when_decided:
            raise ValueError(f"options {', '.join(given)} need stop_when_decided=true")
        return self


RUNNER_KEYS = tuple(RunnerOptions.model_fields)


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], RunnerOptions]:
    """The benchmark's own options, and the runner's validated (:class:`ConfigError` naming
    the option otherwise)."""
    ours = {k: options[k] for k in RUNNER_KEYS if k in options}
    try:
        runner = RunnerOptions.model_validate(ours)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        said = field_message(RunnerOptions, first)
        raise ConfigError(f"option '{where}': {said}" if where else said) from None  # a rule between options names them
    return {k: v for k, v in options.items() if k not in ours}, runner


def check_option_names(options: dict[str, Any], model: type[BaseModel] | None, benchmark: str) -> None:
    """:class:`ConfigError` for a key neither the benchmark's options model nor the runner
    knows, listing both and naming the closest (``stop_when_decide`` -> ``stop_when_decided``)."""
    if model is None or model.model_config.get("extra") != "forbid":
        return
    own = list(model.model_fields)
    for key in options:
        if key not in own and key not in RUNNER_KEYS:
            theirs = f"valid: {', '.join(own)}" if own else f"{benchmark} takes no option of its own"
            raise ConfigError(f"{benchmark} option '{key}': unknown key; {theirs}; "
                              f"the runner's: {', '.join(RUNNER_KEYS)}{did_you_mean(key, [*own, *RUNNER_KEYS])}")
