"""A run's identity: everything that decides its results, hashed into the run id.

The benchmark, the data's content (and every local file its items refer to: images),
the config, the content of each template file the config names, the endpoint each model
is actually sent to, and the dialeval version. Change any of them and the same command
starts a new run instead of resuming one whose answers came from another setup; a run
resumed by an explicit ``--run-id`` stops and names what changed.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel

import dialeval.version  # read at call time: a test may set another release
from dialeval.config import RunConfig
from dialeval.errors import ConfigError, RunError
from dialeval.endpoint import redact_urls, redacted

# fields that change how a run executes, not what it measures
EXECUTION_ONLY = ("run_id", "limit", "concurrency", "processes", "shard", "output_dir", "cache_path", "fresh",
                  "max_consecutive_errors", "preflight", "provenance", "figures")
CONTEXT_EXECUTION_ONLY = ("cache_path", "refresh_cache", "run_dir")


def _hash_files(digest: Any, root: Path) -> None:
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    for path in files:
        digest.update(str(path.relative_to(root) if root.is_dir() else path.name).encode() + b"\0")
        if path.is_file():
            with path.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
        digest.update(b"\0")


def data_digest(data: str | Path, options: dict[str, Any] | None = None, referenced: Iterable[str] = ()) -> str:
    """SHA-256 of the data's content (a file, or every file under a folder), of any file
    or folder an option names (a predictions file), and of the ``referenced`` files the
    items point to (images), so edited data, or a replaced image, is a new run."""
    digest = hashlib.sha256()
    paths = [Path(data)]
    for value in (options or {}).values():
        if isinstance(value, str) and len(value) < 4096:
            candidate = Path(value).expanduser()
            try:
                if candidate.exists():
                    paths.append(candidate)
            except OSError:
                continue
    for root in paths:
        _hash_files(digest, root)
    for name in sorted(set(referenced)):
        path = Path(name)
        digest.update(b"ref\0" + str(path).encode("utf-8", "surrogatepass") + b"\0")
        if path.is_file():
            _hash_files(digest, path)
    return digest.hexdigest()


def referenced_files(items: Iterable[Any]) -> list[str]:
    """Local files the loaded items refer to: every local :class:`ImageRef` and every
    ``local_path`` (MDSEval's image folder), found by walking the items' models."""
    from dialeval.data.images import ImageRef

    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, ImageRef):
            if not value.is_url:
                found.add(value.source)
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                child = getattr(value, name, None)
                if name == "local_path" and isinstance(child, str):
                    found.add(child)
                else:
                    walk(child)
        elif isinstance(value, dict):
            for child in value.values():
                walk(child)
        elif isinstance(value, (list, tuple)):
            for child in value:
                walk(child)

    for item in items:
        walk(item)
    return sorted(found)


def template_digests(templates: dict[str, str]) -> dict[str, dict[str, str]]:
    """Template key -> the file it loads and a digest of its content (the file's bytes as
    they are now; a packaged template's text), for each template the config names: an
    edited prompt file is another run."""
    from dialeval.agents.templates import load_template

    out = {}
    for key, ref in sorted(templates.items()):
        template = load_template(ref)
        path = Path(template.source)
        blob = path.read_bytes() if path.is_file() else json.dumps(template.sections).encode()
        out[key] = {"file": template.source, "sha256": hashlib.sha256(blob).hexdigest()}
    return out


def endpoints(models: dict[str, Any]) -> dict[str, str]:
    """Config field -> the URL that model's requests go to (configured, or from the SDK's
    environment variable): the same command against another server is another run."""
    from dialeval.models.client import get_client

    out = {}
    for field, settings in sorted(models.items()):
        url = get_client(settings).endpoint
        if url:
            out[field] = redacted(url) or url  # issue 33: no user info, query values masked
    return out


def identity(templates: dict[str, str], models: dict[str, Any]) -> dict[str, Any]:
    """What decides results beyond the config's own fields."""
    return {"dialeval": dialeval.version.__version__, "templates": template_digests(templates), "endpoints": endpoints(models)}


def resolved_config(
    benchmark: str, data: str, config: RunConfig, digest: str | None = None, context: Any = None,
    ident: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The config as run: every default filled in. It holds env-var names, never keys."""
    out = config.model_dump(mode="json")
    out.update(benchmark=benchmark, data=str(Path(data).resolve()))
    if digest is not None:
        out["data_sha256"] = digest
    out["context"] = (context or config.context()).model_dump(mode="json")
    if ident is not None:
        out["identity"] = ident
    return without_url_secrets(out)


def without_url_secrets(value: Any) -> Any:
    """``value`` with every ``base_url`` and ``url`` (a bot's) redacted (issues 33 and 45: ``config.json``
    and the run id never hold a URL's user info or query values; a rotated password resumes the same run)."""
    return redact_urls(value)


def comparable(resolved: dict[str, Any]) -> dict[str, Any]:
    """The part of a resolved config that decides results (execution settings left out)."""
    out = {k: v for k, v in resolved.items() if k not in EXECUTION_ONLY}
    if isinstance(out.get("context"), dict):
        out["context"] = {k: v for k, v in out["context"].items() if k not in CONTEXT_EXECUTION_ONLY}
    return out


def run_id(benchmark: str, resolved: dict[str, Any]) -> str:
    """``<benchmark>-<10 hex>`` from the comparable part of the resolved config."""
    relevant = comparable(resolved)
    relevant.pop("context", None)  # derived from the config's own fields
    blob = json.dumps(relevant, sort_keys=True, default=str)
    name = f"{benchmark}-{hashlib.sha256(blob.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"
    shard = resolved.get("shard")  # a shard's folder beside the whole run's, which `dialeval merge` writes
    return f"{name}-shard{shard.replace('/', 'of')}" if shard else name


def what_changed(before: dict[str, Any], now: dict[str, Any]) -> str:
    """One phrase naming what differs between two resolved configs, most specific first."""
    old, new = before.get("identity") or {}, now.get("identity") or {}
    old_t, new_t = old.get("templates") or {}, new.get("templates") or {}
    for key in sorted(set(old_t) | set(new_t)):
        a, b = old_t.get(key) or {}, new_t.get(key) or {}
        if a.get("sha256") != b.get("sha256"):
            return f"template '{key}' changed ({b.get('file') or a.get('file')})"
    old_e, new_e = old.get("endpoints") or {}, new.get("endpoints") or {}
    for field in sorted(set(old_e) | set(new_e)):
        if old_e.get(field) != new_e.get(field):
            return f"the endpoint of '{field}' changed ({old_e.get(field)} -> {new_e.get(field)})"
    if old.get("dialeval") != new.get("dialeval"):
        return f"the dialeval version changed ({old.get('dialeval')} -> {new.get('dialeval')})"
    if before.get("data_sha256") != now.get("data_sha256"):
        return "the data (or a file it refers to) changed"
    a, b = comparable(before), comparable(now)
    fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return f"the configuration changed ({', '.join(fields)})"


def check_same_setup(run_dir: Path, before: dict[str, Any], now: dict[str, Any]) -> None:
    """A run resumes only with the setup it started with; otherwise stop and say what changed."""
    if before.get("shard") != now.get("shard"):  # another part of the items: never resumed into this folder
        raise RunError(
            f"run {run_dir.name} holds shard {before.get('shard') or 'none (every item)'}, not {now.get('shard') or 'every item'}; "
            "use another --run-id for each shard"
        )
    if comparable(before) != comparable(now):
        raise RunError(
            f"run {run_dir.name} exists with a different configuration or data: {what_changed(before, now)} ({run_dir / 'config.json'}); "
            "use another --run-id so results of two setups never mix, or --fresh to start over"
        )


def prepare_folder(run_dir: Path, resolved: dict[str, Any], fresh: bool) -> None:
    """Write ``config.json``; an existing folder must hold the same setup (``fresh``
    starts over, keeping the old results aside)."""
    from dialeval.run.folder import CONFIG, set_aside_earlier_results
    from dialeval.secrets import scrub

    resolved = json.loads(scrub(json.dumps(resolved)))  # a key pasted into a URL or an option is never written
    config_path = run_dir / CONFIG
    if fresh:
        set_aside_earlier_results(run_dir, time.strftime("%Y%m%d-%H%M%S"))
    elif config_path.exists():
        try:
            before = json.loads(config_path.read_text(encoding="utf-8"))
            if not isinstance(before, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as err:
            raise ConfigError(
                f"{config_path}: not a readable run config ({err}); use --fresh to start this run over"
            ) from None
        check_same_setup(run_dir, before, resolved)
    config_path.write_text(json.dumps(resolved, indent=2))


def unit_hash(bench: Any, item: Any) -> str:
    """The content hash of what ``item`` asks (``Benchmark.unit_content``; by default the whole
    item but its id and system), recorded in its row: two runs paired on a unit id judged the
    same unit only when these agree."""
    if bench.unit_content is not None:
        content = bench.unit_content(item)
    elif hasattr(item, "model_dump"):
        content = {k: v for k, v in item.model_dump(mode="json").items() if k not in ("id", "system")}
    else:
        content = repr(item)
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
