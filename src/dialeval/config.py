"""Run configuration: YAML -> pydantic, with errors that name the offending field.

Precedence is simple: command line over config file over defaults. The environment
holds secrets only (API keys are read by name, never stored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from dialeval import judge_spec
from dialeval.errors import ConfigError  # its old home: `from dialeval.config import ConfigError` keeps working
from dialeval.field_errors import describe_error, did_you_mean, field_message, unknown_key
from dialeval.judge_spec import Cascade, Composite, Ensemble
from dialeval.model_settings import ModelSettings  # its old home: `from dialeval.config import ModelSettings` keeps working
from dialeval.spec import ModelSpec

DEFAULT_CACHE = "runs/.cache/responses.sqlite"
O = TypeVar("O", bound=BaseModel)
API_CONCURRENCY = 64  # default items/requests in flight when every role uses an API model
LOCAL_CONCURRENCY = 8  # otherwise: one local batch


# a role's model: one model, or an ensemble or cascade of them (issue 49; see judge_spec)
RoleModel = Annotated[
    Union[Annotated[ModelSettings, Tag("model")], Annotated[Ensemble, Tag("ensemble")], Annotated[Cascade, Tag("cascade")]],
    Discriminator(judge_spec.kind_of),
]


def primary(model: ModelSettings | Composite) -> ModelSettings:
    """The model itself, or an ensemble's or cascade's first member (what roles that are
    not judges, such as a note-taker following the judge, use)."""
    return model.models[0] if isinstance(model, (Ensemble, Cascade)) else model


class EvalContext(BaseModel):
    """What a graph needs besides its input: models per role, agent and template choices.

    This is the LangGraph context schema of every benchmark graph, so LangGraph Studio
    can change any of it per run.
    """

    model_config = ConfigDict(extra="forbid")

    default_model: ModelSettings = Field(default_factory=lambda: ModelSettings(spec="smollm2"))
    models: dict[str, RoleModel] = Field(default_factory=dict, description="role -> model, ensemble or cascade")
    agents: dict[str, str] = Field(default_factory=dict, description="role -> registered agent name")
    templates: dict[str, str] = Field(default_factory=dict, description="role -> template name or file")
    parse_retries: int = Field(default=2, ge=0, description="corrective retries before 'unparsed'")
    cache_path: str | None = Field(default=DEFAULT_CACHE, description="SQLite response cache; null disables")
    options: dict[str, Any] = Field(default_factory=dict, description="benchmark-specific options")
    run_dir: str | None = Field(default=None, description="the run folder, set by the runner (stores such as notes live under it)")

    refresh_cache: bool = Field(default=False, description="do not read the response cache (answers are still stored)")
    # issue 48: each benchmark's options, validated once (when the run is prepared, or by the
    # first node of a Studio invocation) and read typed by every node after: model -> (dict, typed)
    _typed: dict[type[BaseModel], tuple[dict[str, Any], BaseModel]] = PrivateAttr(default_factory=dict)

    def options_as(self, model: type[O], benchmark: str) -> O:
        """``options`` as ``model``, validated on the first call and carried after (a copy
        with other options, as a subgraph's, validates its own once)."""
        held = self._typed.get(model)
        if held is not None and held[0] is self.options:
            return held[1]  # type: ignore[return-value]  # stored under its own model
        typed = parse_options(model, self.options, benchmark)
        self._typed = {**self._typed, model: (self.options, typed)}  # a copy's cache is its own from here
        return typed

    @model_validator(mode="after")
    def _dry_run_everywhere(self) -> EvalContext:
        """A dry-run default replaces every role's backend: a dry run never calls a model.
        Roles with their own model become ``dry-run:<that model>`` and are priced as it."""
        if self.default_model.parsed.is_dry_run:
            self.models = {role: as_dry_run(m) if isinstance(m, ModelSettings) else judge_spec.mapped(m, as_dry_run)
                           for role, m in self.models.items()}
        return self

    def model_for(self, role: str) -> ModelSettings:
        """The role's model (an ensemble's or cascade's first member: see :meth:`judge_for`)."""
        return primary(self.models.get(role, self.default_model))

    def judge_for(self, role: str) -> ModelSettings | Composite:
        """The role's model, ensemble or cascade, as the judge layer resolves it."""
        return self.models.get(role, self.default_model)


def dry_run_over(override: Any, previous: Any) -> Any:
    """A bare ``dry-run`` given over a config that names a default model becomes
    ``dry-run:<that model>`` (batched if it is), so the estimate prices what the config would have run."""
    spec = override.get("spec") if isinstance(override, dict) else override
    if not isinstance(spec, str) or spec.strip() != "dry-run" or previous is None:
        return override
    try:
        before = ModelSettings.model_validate(previous)
    except ValidationError as err:  # the config's own model is wrong: say so, as without the dry run
        raise ConfigError(f"the config's field 'model': {field_message(ModelSettings, err.errors()[0])}") from None
    new = f"dry-run:{before.spec}"
    if before.batch:  # the estimate counts the rounds and prices the batches the config would run
        return {**(override if isinstance(override, dict) else {}), "spec": new, "batch": True}
    return {**override, "spec": new} if isinstance(override, dict) else new


def as_dry_run(model: ModelSettings) -> ModelSettings:
    """``model`` as a dry run priced as ``model`` (a dry run stays as it is)."""
    if model.parsed.is_dry_run:
        return model
    keep = model.model_dump(include={"max_tokens", "price", "price_as", "temperature", "batch"})
    return ModelSettings(spec=f"dry-run:{model.spec}", **keep)


class RunConfig(BaseModel):
    """A whole run: benchmark, data, the graph context, and how to execute it."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str | None = None
    data: str | None = None
    model: ModelSettings | None = Field(default=None, description="default model for every role")
    models: dict[str, RoleModel] = Field(default_factory=dict)
    agents: dict[str, str] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    parse_retries: int = Field(default=2, ge=0)
    concurrency: int | None = Field(
        default=None,
        gt=0,
        description="items and model requests in flight (default: 64 when every model is an API model, else 8)",
    )
    limit: int | None = Field(default=None, gt=0)
    processes: int = Field(
        default=1, gt=0, description="worker processes sharing the items, the request limit and each model's limits (API models)"
    )
    shard: str | None = Field(
        default=None, pattern=r"^[1-9][0-9]*/[1-9][0-9]*$",
        description="'i/n': judge the i-th of n deterministic parts of the items into a run folder of its own (`dialeval merge` joins them)",
    )
    output_dir: str = "runs"
    run_id: str | None = None
    cache_path: str | None = DEFAULT_CACHE
    fresh: bool = Field(
        default=False, description="evaluate every item again and skip cache reads (old results are kept aside)"
    )
    max_consecutive_errors: int = Field(
        default=3, gt=0, description="stop the run after this many connection/auth errors in a row"
    )
    preflight: bool = Field(default=True, description="check every API model answers before the first item")
    figures: bool = Field(
        default=True, description="draw the report's PNG figures into plots/ (false: none, for runs read by a program)"
    )
    _source: str = PrivateAttr(default="config")

    @property
    def source(self) -> str:
        """The config file this came from, for messages (``config`` when built in code)."""
        return self._source
    plugins: list[str] = Field(default_factory=list, description="modules to import first: they register agents or benchmarks")

    @field_validator("shard")
    @classmethod
    def _shard_in_range(cls, shard: str | None) -> str | None:
        if shard is not None:
            index, of = (int(x) for x in shard.split("/"))
            if index > of:
                raise ValueError(f"shard {shard!r}: the part is one of 1..{of} (e.g. 1/{of})")
        return shard

    @property
    def shard_part(self) -> tuple[int, int] | None:
        """``(i, n)`` of ``shard: i/n`` (1-based), or ``None``."""
        if self.shard is None:
            return None
        index, of = (int(x) for x in self.shard.split("/"))
        return index, of

    def effective_concurrency(self) -> int:
        """The configured limit, or one that suits the backends: API servers take many
        requests at once (each model's adaptive limit backs off on 429s), local models
        fill one batch."""
        if self.concurrency is not None:
            return self.concurrency
        specs = [m.parsed for m in (self.model, *members(self.models)) if m is not None]
        if not self.model:
            specs.append(ModelSpec.parse(default_model_spec()))
        return API_CONCURRENCY if all(s.is_api for s in specs) else LOCAL_CONCURRENCY

    def context(self) -> EvalContext:
        """What the graphs see: every field the two models share, by name (none copied by
        hand, so a field added to both always reaches the graphs), plus the two renamed ones."""
        shared = {name: getattr(self, name) for name in EvalContext.model_fields if name in type(self).model_fields}
        return EvalContext(
            **shared,
            refresh_cache=self.fresh,
            default_model=self.model or ModelSettings(spec=default_model_spec()),
        )


def members(models: dict[str, ModelSettings | Composite]) -> list[ModelSettings]:
    """Every model the roles name, ensembles' and cascades' members one by one."""
    return [x for m in models.values() for x in (m.models if isinstance(m, (Ensemble, Cascade)) else [m])]


def default_model_spec() -> str:
    """The bundled offline model; API models are always an explicit choice."""
    return "smollm2"


def parse_options(model: type[O], options: dict[str, Any] | None, benchmark: str) -> O:
    """A benchmark's ``options`` validated by its own model; errors name the option."""
    try:
        return model.model_validate(options or {})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "options"
        raise ConfigError(f"{benchmark} option '{where}': {field_message(model, first)}") from None


def load_config(path: str | Path | None = None, **overrides: Any) -> RunConfig:
    """Read a YAML run config (if given) and apply non-``None`` overrides on top."""
    data: dict[str, Any] = {}
    source = "command line"
    if path is not None:
        import yaml  # only runs with a config file pay for it

        source = str(path)
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except UnicodeDecodeError as err:
            raise ConfigError(f"{path}: not UTF-8 text (byte offset {err.start}: {err.reason})") from None
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: not valid YAML: {err}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of fields")
        data = loaded or {}
    if "model" in overrides:
        overrides = {**overrides, "model": dry_run_over(overrides["model"], data.get("model"))}
    for key, value in overrides.items():
        if value is None:
            continue
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{source}: {describe_error(err, RunConfig)}") from None
    except ValueError as err:  # spec errors raised inside validators
        raise ConfigError(f"{source}: {err}") from None
    config._source = source
    return config


def resolve_config(config: RunConfig | dict[str, Any] | str | Path | None, overrides: dict[str, Any]) -> RunConfig:
    """The config of a Python call (``dialeval.evaluate``, the trust card's runs): ``config``
    is a :class:`RunConfig`, a dict of its fields or a YAML file; keyword ``overrides`` win,
    ``None`` included (``cache_path=None`` turns the cache off); ``base_url=`` goes with
    ``model=``, as ``--base-url`` with ``--model``."""
    keywords = [*RunConfig.model_fields, "base_url"]  # base_url= goes into model=
    for key in overrides:
        if key not in keywords:
            raise ConfigError(f"evaluate() arguments: field '{key}': {unknown_key(key, keywords)}")
    if isinstance(config, RunConfig):
        base = config.model_dump(exclude_unset=True)
    elif isinstance(config, (str, Path)):
        base = load_config(config).model_dump(exclude_unset=True)
    else:
        base = dict(config or {})
    if "base_url" in overrides:
        overrides = dict(overrides)
        url = overrides.pop("base_url")
        model = overrides.get("model", base.get("model"))
        if model is None:
            raise ConfigError("evaluate(): base_url= is the URL of the model= given with it; give model= too")
        if not isinstance(model, dict):
            model = {"spec": model} if isinstance(model, str) else model.model_dump(exclude_unset=True)
        overrides["model"] = {**model, "base_url": url}
    if "model" in overrides:
        overrides = {**overrides, "model": dry_run_over(overrides["model"], base.get("model"))}
    where = str(config) if isinstance(config, (str, Path)) else "evaluate() arguments"
    try:
        result = RunConfig.model_validate({**base, **overrides})
    except ValidationError as err:  # a misspelt keyword: the valid ones and the closest, as the CLI says it
        raise ConfigError(f"{where}: {describe_error(err, RunConfig)}") from None
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if isinstance(config, (str, Path)):
        result._source = str(config)  # messages name the file
    return result
