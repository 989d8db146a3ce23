"""Images a data record refers to (a local file or a URL), shared by the multimodal benchmarks.

A local image is sent to the model endpoint byte for byte, so a data file must not be
able to name any file on the machine: :func:`resolve_image` admits only real images
(Pillow can read them) that lie inside one folder, after ``..`` and symlinks resolve.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dialeval.data.io import DataError

URL_PREFIXES = ("http://", "https://", "data:")
DATA_URL = re.compile(r"data:(image/[A-Za-z0-9.+-]+)((?:;[A-Za-z0-9=._-]+)*);base64,", re.IGNORECASE)
UNKNOWN_SIZE_TOKENS = 765  # an image whose size we cannot read here (an http URL): a 1024 x 1024 picture's tiles


class ImageRef(BaseModel):
    """An image shown in a user turn: a local path or an http(s) URL, with an optional caption.

    The caption is what text-only backends see instead of the pixels.
    """

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1)
    caption: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: object) -> object:
        return {"source": value} if isinstance(value, str) else value

    @property
    def is_url(self) -> bool:
        return self.source.startswith(URL_PREFIXES)

    @property
    def label(self) -> str:
        """How a prompt's text names the image: a file name, a URL, or for a ``data:`` URL
        its type and size (never the base64 payload: it is pixels, not words)."""
        return source_label(self.source)


def source_label(source: str) -> str:
    """A file's name, a URL, or ``inline image/png, 160 KB`` for a ``data:`` URL."""
    if source[:5].lower() == "data:":
        match = DATA_URL.match(source)
        kind = match.group(1).lower() if match else "data"
        payload = len(source) - (match.end() if match else 0)
        return f"inline {kind}, {max(1, payload * 3 // 4 // 1024)} KB"
    return source if source.startswith(URL_PREFIXES) else Path(source).name


def data_url_problem(source: str) -> str | None:
    """Why a ``data:`` URL is not an image (None when Pillow reads its pixels): a wrong
    header, a payload that is not base64, or bytes that are no image."""
    match = DATA_URL.match(source)
    if match is None:
        return "a data: URL must read data:image/<type>;base64,<payload>"
    try:
        raw = base64.b64decode(source[match.end():], validate=True)
    except (binascii.Error, ValueError) as err:
        return f"its payload is not base64 ({err})"
    size = _pixel_size(raw)
    return size if isinstance(size, str) else None


def _pixel_size(raw: bytes, verify: bool = True) -> tuple[int, int] | str:
    """(width, height) of image bytes, or why Pillow cannot read them (``verify``: all of
    them checked, not only the header)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(raw)) as image:
            size = image.size
            if verify:
                image.verify()
    except Exception as err:  # Pillow raises many types for broken data; any of them means "not an image"
        return f"{type(err).__name__}: {err}"
    return size


_TOKENS: dict[tuple[int, int], int] = {}  # (length, hash) of a source -> tokens: a 30 MB URL is not kept as a key


def image_tokens(source: str) -> int:
    """Prompt tokens a vision model spends on an image, from its size (the published
    OpenAI rule: 85 plus 170 per 512-pixel tile after scaling into 2048 and 768 pixels);
    :data:`UNKNOWN_SIZE_TOKENS` where the size cannot be read without a download."""
    key = (len(source), hash(source))
    if key not in _TOKENS:
        if len(_TOKENS) > 4096:
            _TOKENS.clear()
        _TOKENS[key] = _tiles_tokens(_size_of(source))
    return _TOKENS[key]


def _size_of(source: str) -> tuple[int, int] | str:
    """An image's pixel size from its header (a data: URL's first bytes, else all of it)."""
    if source[:5].lower() == "data:":
        match = DATA_URL.match(source)
        if match is None:
            return "no header"
        for end in (match.end() + 65536, len(source)):  # the size sits in the first bytes of most formats
            try:
                size = _pixel_size(base64.b64decode(source[match.end():end]), verify=False)
            except (binascii.Error, ValueError) as err:
                size = str(err)
            if not isinstance(size, str):
                return size
        return size
    if source.startswith(URL_PREFIXES):
        return "not downloaded"
    try:
        return _pixel_size(Path(source).read_bytes(), verify=False)
    except OSError as err:
        return str(err)


def _tiles_tokens(size: tuple[int, int] | str) -> int:
    if isinstance(size, str):
        return UNKNOWN_SIZE_TOKENS
    fit = min(1.0, 2048 / max(*size, 1))
    width, height = size[0] * fit, size[1] * fit
    fit = min(1.0, 768 / max(min(width, height), 1))
    tiles = math.ceil(width * fit / 512) * math.ceil(height * fit / 512)
    return 85 + 170 * tiles


# The most pixels a local image may have: Pillow's own warning threshold (its default
# MAX_IMAGE_PIXELS). A 13000x13000 PNG of 519 KB decodes to half a gigabyte; such a file
# is refused when the data loads, like a file past Pillow's own refusal limit.
MAX_PIXELS = 89_478_485


def open_image(path: str | Path) -> Any:
    """``PIL.Image.open(path)``, raising ValueError for an image of more than :data:`MAX_PIXELS`
    (read from its header, before any pixel is decoded), without Pillow's own warning."""
    import warnings

    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        image = Image.open(path)
    width, height = image.size
    if width * height > MAX_PIXELS:
        image.close()
        raise ValueError(f"{width}x{height} is {width * height:,} pixels, over the {MAX_PIXELS:,} an image may have")
    return image


@lru_cache(maxsize=4096)
def _unreadable(path: str, mtime_ns: int, size: int) -> str | None:
    """Why Pillow cannot read ``path`` as an image (None when it can); cached per file version."""
    try:
        with open_image(path) as image:
            image.verify()
    except Exception as err:  # Pillow raises many types for broken files; any of them means "not an image"
        return f"{type(err).__name__}: {err}"
    return None


def resolve_local_image(
    source: str,
    root: str | Path,
    file: str | Path,
    record: str | int | None,
    field: str,
    alternatives: Sequence[str | Path] = (),
    what: str = "image file",
    folder_option: str | None = None,
) -> Path:
    """The image file ``source`` names, relative to ``root``, as an absolute resolved path.

    ``alternatives`` are further spellings tried in order when ``source`` does not exist
    (MDSEval's ``image_path`` with or without its leading folder). The first that exists
    must resolve (``..``, symlinks) inside ``root`` and be an image Pillow can verify;
    anything else raises :class:`DataError` naming ``file``, ``record`` and ``field``
    (``what`` says which image, e.g. ``dialogue 'd1': image 2``; ``folder_option`` the
    benchmark's option that sets ``root``, named in the message where there is one).
    """
    base = Path(root)
    inside = base.resolve()
    candidates = [base / source, *(base / alt for alt in alternatives)]  # an absolute source replaces the root
    found = next((p for p in candidates if p.exists()), None)
    if found is None:
        raise DataError(file, f"{what} not found: {source!r} (looked in {inside})", record, field)
    resolved = found.resolve()
    if not resolved.is_relative_to(inside):
        raise DataError(
            file,
            f"{what} {source!r} resolves to {resolved}, outside {inside}; local images must lie inside "
            + (f"the folder --option {folder_option} names" if folder_option else "the data file's folder")
            + " (no absolute paths elsewhere, '..' or symlinks out)",
            record,
            field,
        )
    if not resolved.is_file():
        raise DataError(file, f"{what} {source!r} is not a file: {resolved}", record, field)
    stat = resolved.stat()
    problem = _unreadable(str(resolved), stat.st_mtime_ns, stat.st_size)
    if problem:
        raise DataError(file, f"{what} {source!r} ({resolved}) is not an image Pillow can read ({problem})", record, field)
    return resolved


def resolve_image(
    image: ImageRef, root: str | Path, file: str | Path, record: str | int | None, field: str, what: str = "image file"
) -> ImageRef:
    """``image`` with its local file checked by :func:`resolve_local_image`, a ``data:``
    URL decoded and checked by Pillow the same way; http(s) URLs unchanged."""
    if image.source[:5].lower() == "data:":
        problem = data_url_problem(image.source)
        if problem:
            raise DataError(file, f"{what} given as a data: URL ({image.label}) is not an image Pillow can read: {problem}", record, field)
        return image
    if image.is_url:
        return image
    local = resolve_local_image(image.source, root, file, record, field, what=what)
    return image.model_copy(update={"source": str(local)})


GRAPH_INPUT = "graph input"  # the "file" an error names when a record was posted to a graph (Studio, the API)


def resolve_graph_image(image: ImageRef, root: str | Path, field: str, what: str = "image file") -> ImageRef:
    """An image of a record given to a graph directly, checked as the loaders check theirs.

    Why: LangGraph Studio and its API post a record without a data file to resolve paths
    against. A relative path must lie inside ``root``; an absolute one is what a run's
    loader wrote after its own checks, so only its file is checked. Errors are
    :class:`DataError`, a ``ValueError``, which LangGraph's server reports with its message
    (other errors reach an API client as "An internal error occurred").
    """
    if image.is_url:
        return image
    path = Path(image.source)
    local = resolve_local_image(image.source, path.parent if path.is_absolute() else root, GRAPH_INPUT, None, field, what=what)
    return image.model_copy(update={"source": str(local)})
