"""Which pages are out of date, and writing them: a run's pages are rewritten when its files
changed (or a process started or stopped writing it), so new and running runs appear on the
next page request without re-running ``dialeval view``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from dialeval.report.results import RunData
from dialeval.report.viewer.item_page import counts, write_item
from dialeval.report.viewer.run_page import write_run_page
from dialeval.report.viewer.thumbs import Thumbnails, image_roots

VIEW = "view"  # folder of pages inside each run folder
VERSION = "3"  # bump when the pages change shape, so existing pages are rewritten once
WATCHED = ("results.jsonl", "metrics.json", "usage.json", "report.md", "compare.json", "plots")


def is_running(run_dir: Path) -> bool:
    """Whether a dialeval process holds the run folder's lock (it is writing the run now)."""
    import fcntl

    from dialeval.run.folder import LOCK

    try:
        fd = os.open(run_dir / LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def stamp(folder: Path) -> str:
    """What the pages of ``folder`` were made from: its files' sizes and times, and whether it runs."""
    parts = [VERSION, "running" if is_running(folder) else "idle"]
    for name in WATCHED:
        try:
            info = (folder / name).stat()
            parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:-")
    return "|".join(parts)


def up_to_date(folder: Path, current: str) -> bool:
    try:
        return (folder / VIEW / "stamp.txt").read_text(encoding="utf-8") == current and (folder / VIEW / "index.html").exists()
    except OSError:
        return False


def mark(folder: Path, current: str) -> None:
    (folder / VIEW / "stamp.txt").write_text(current, encoding="utf-8")


def run_overview(run: RunData, running: bool = False) -> dict[str, Any]:
    """One line of the index: benchmark, models, items, failures, cost."""
    from dialeval.report.compare import option_text, run_models

    info = run.metrics.get("run", {})
    outcomes = counts([call for item in run.items for call in item.calls])  # so far, for a running run too
    return {
        "name": run.path.name,
        "benchmark": run.benchmark,
        "models": run_models(run.config),
        "options": option_text(run.config.get("options") or {}),  # runs alike in all but options read apart
        "swaps": swaps(run.config),  # and runs alike in all but an agent or a template
        "item_count": info.get("items", len(run.items)),
        "finished": info.get("finished", len(run.items) - run.failed),
        "failed": info.get("failed", run.failed),
        "not_evaluated": info.get("not_evaluated", 0),  # a stopped or killed run's items never started
        "unparsed": outcomes["unparsed"],
        "truncated": outcomes["truncated"],
        "errors": outcomes["error"],
        "cost": _cost(run),
        "dry_run": bool(info.get("dry_run")) or run.config.get("model", {}).get("spec") == "dry-run",
        "running": running,
        "href": f"{run.path.name}/{VIEW}/index.html",
    }


def swaps(config: dict[str, Any]) -> list[str]:
    """``agent judge=my_pkg.verifiers:strict``, ``template judge=strict.txt``: the roles whose
    agent or template the run's config chose instead of the packaged one (a file by its name)."""
    from dialeval.report.compare import option_text

    context = config.get("context") or {}
    out = []
    for kind, chosen in (("agent", context.get("agents")), ("template", context.get("templates"))):
        if isinstance(chosen, dict) and chosen:
            out += [f"{kind} {part}" for part in option_text({str(k): v for k, v in chosen.items()}).split(", ")]
    return out


def _cost(run: RunData) -> float | None:
    """The run's cost: usage.json's total once the run wrote it, else the sum over its items
    so far; None when a model has no known price."""
    total = run.usage.get("total")
    if total:
        return None if total.get("unpriced_calls") else float(total.get("cost_usd") or 0.0)  # part priced: unknown
    costs = [item.cost_usd for item in run.items]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


@lru_cache(maxsize=8)
def _load_items(benchmark: str, data: str, options: str, version: tuple[int, int]) -> dict[str, Any]:
    from dialeval.benchmarks import get_benchmark

    items = get_benchmark(benchmark).load(Path(data), json.loads(options))
    return {str(getattr(item, "id", None) or getattr(item, "dialogue_id", "")): item for item in items}


def data_items(config: dict[str, Any]) -> dict[str, Any]:
    """The run's data items by id (the questions, references and images records leave out);
    empty when the data file is gone or no longer reads."""
    data = config.get("data")
    if not isinstance(data, str) or not Path(data).exists():
        return {}
    try:
        info = Path(data).stat()
        return _load_items(str(config.get("benchmark")), data, json.dumps(config.get("options") or {}, sort_keys=True),
                           (info.st_mtime_ns, info.st_size))
    except Exception:  # any loader error (moved images, changed options): the pages show the records alone
        return {}


def read_scored(folder: Path) -> RunData:
    """The run with each finished item's scores; a record its benchmark cannot score (written
    by hand, or by an older version) keeps its page, without scores, instead of hiding the run."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.report.results import read_run

    run = read_run(folder, scores=False)
    try:
        item_scores = get_benchmark(run.benchmark).item_scores
    except (KeyError, ImportError):
        return run
    if item_scores is None:
        return run
    items = []
    for item in run.items:
        try:
            scores = {d: u for d, u in item_scores([item.detail]).items() if u} if item.status == "ok" else {}
        except (KeyError, TypeError, ValueError, AttributeError):
            scores = {}
        items.append(item.model_copy(update={"scores": scores}))
    return run.model_copy(update={"items": items})


def item_data(item: Any) -> Any:
    """A data item as JSON-like values, for pages of benchmarks without a turn-by-turn view.

    Why pydantic's converter: a dataclass holding pydantic records (KGDS's item) printed as
    a Python repr (``SBK=[Paragraph(paragraph_index=1, ...``) through ``asdict``."""
    from pydantic_core import to_jsonable_python

    if item is None:
        return None
    return to_jsonable_python(item, fallback=str)


def write_run(run_dir: str | Path) -> Path:
    """The pages of one run: its page with the item table, and one page per item."""
    folder = Path(run_dir)
    current = stamp(folder)
    page = write_pages(read_scored(folder), current)
    mark(folder, current)
    return page


def write_pages(run: RunData, current: str) -> Path:
    from dialeval.models.prompt_store import load_prompts
    from dialeval.run.folder import read_results

    out = run.path / VIEW
    overview = run_overview(run, running="|running|" in f"|{current}|")
    view_of = conversation_view(run.benchmark)
    items = data_items(run.config)
    thumbs = Thumbnails(image_roots(run.config), out / "thumbs")

    def thumb(source: str) -> str | None:
        name = thumbs(source)
        return f"../thumbs/{name}" if name else None

    keys = page_keys(run)
    before = read_manifest(out)
    todo = [n for n, key in enumerate(keys, start=1) if before.get(str(n)) != key]
    prompts = load_prompts(run.path) if todo else {}
    for number in todo:  # issue 33: only the items whose page would change (a run in progress adds a few)
        item = run.items[number - 1]
        view = view_of(item.detail, items.get(item.id)) if view_of and item.detail else None
        data = None if view else item_data(items.get(item.id))
        write_item(out, number, len(run.items), item, overview, prompts, view, thumb, data)
    write_manifest(out, keys)
    page = write_run_page(run, overview, read_results(run.path))
    from dialeval.secrets import scrub

    (out / "overview.json").write_text(scrub(json.dumps(overview)), encoding="utf-8")
    return page


MANIFEST = "pages.json"  # item number -> what its page was made from


def page_keys(run: RunData) -> list[str]:
    """What each item page shows, hashed: the run's name and benchmark, the record, its number
    and whether a next item exists, the data file's version and the page layout; a page whose
    key is unchanged is not written again."""
    import hashlib

    data = run.config.get("data")
    try:
        info = Path(data).stat() if isinstance(data, str) else None
        data_version = f"{info.st_mtime_ns}:{info.st_size}" if info else "-"
    except OSError:
        data_version = "-"
    head = json.dumps([VERSION, run.path.name, run.benchmark, data_version, run.config.get("options")], default=str)
    total = len(run.items)
    return [
        # json.dumps escapes a lone surrogate a judge wrote (pydantic's own JSON refuses it)
        hashlib.sha256(f"{head}|{number}|{number == total}|{json.dumps(item.model_dump(mode='json'), default=str)}".encode()).hexdigest()
        for number, item in enumerate(run.items, start=1)
    ]


def read_manifest(out: Path) -> dict[str, str]:
    """The keys of the item pages written last time; empty when the pages are gone or unreadable."""
    try:
        value = json.loads((out / MANIFEST).read_text(encoding="utf-8")) if (out / "items").is_dir() else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def write_manifest(out: Path, keys: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    temporary = out / f".{MANIFEST}.tmp"
    temporary.write_text(json.dumps({str(n): key for n, key in enumerate(keys, start=1)}), encoding="utf-8")
    temporary.replace(out / MANIFEST)


def conversation_view(name: str) -> Callable[[dict[str, Any], Any], Any] | None:
    """The benchmark's turn-by-turn view of a record, if it has one (through the registry,
    so the viewer never imports a benchmark package itself)."""
    from dialeval.benchmarks import get_benchmark

    try:
        return get_benchmark(name).conversation_view
    except (KeyError, ImportError):  # a plugin benchmark not installed here: its pages show the raw record
        return None


def refresh_run(folder: Path, warn: Callable[[str], None], wait: bool = True) -> dict[str, Any] | None:
    """The run's index line, its pages rewritten first when out of date; None when it cannot be read.

    One rewrite of a run at a time (:func:`rebuilding`), and nobody waits for one: while a
    run's pages are being rewritten, the pages already there are served. With ``wait=False``
    a big run (:func:`small`) whose pages exist is rewritten in a thread of its own and its
    last line comes back at once (``updating``): the index never waits for a big run's pages."""
    current = stamp(folder)
    previous = last_overview(folder)
    if previous is not None and up_to_date(folder, current):
        return previous
    if previous is not None and (rebuilding(folder).locked() or not (wait or small(folder))):
        if not rebuilding(folder).locked():
            threading.Thread(target=_rebuild, args=(folder, warn), daemon=True).start()
        return {**previous, "updating": True}  # the pages there are served meanwhile
    return _rebuild(folder, warn)


SMALL_RESULTS = 1 << 20  # bytes of results.jsonl (a few thousand items) read in well under a second


def small(folder: Path) -> bool:
    """Whether the run's results are small enough for the index to wait for its pages."""
    try:
        return (folder / "results.jsonl").stat().st_size <= SMALL_RESULTS
    except OSError:
        return True


def _rebuild(folder: Path, warn: Callable[[str], None]) -> dict[str, Any] | None:
    from dialeval.data.io import DataError

    with rebuilding(folder):
        current = stamp(folder)
        if not up_to_date(folder, current):  # another request may have rewritten it meanwhile
            try:
                write_pages(read_scored(folder), current)
            except DataError as err:
                warn(f"dialeval view: skipped run {folder.name}: {err}")
                return {"name": folder.name, "reason": str(err), "skipped": True}
            mark(folder, current)
    return last_overview(folder)


def last_overview(folder: Path) -> dict[str, Any] | None:
    """The index line the run's pages were last written with; None before its first pages."""
    try:
        return dict(json.loads((folder / VIEW / "overview.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


_REBUILDING: dict[Path, threading.Lock] = {}
_REBUILDING_LOCK = threading.Lock()


def rebuilding(folder: Path) -> threading.Lock:
    """The lock held while ``folder``'s pages are rewritten (one per folder: other runs' pages
    and the index are served meanwhile)."""
    with _REBUILDING_LOCK:
        return _REBUILDING.setdefault(folder.resolve(), threading.Lock())


def stderr_warn(message: str) -> None:
    print(message, file=sys.stderr)
