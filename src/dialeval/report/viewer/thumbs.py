"""Small copies of a run's images for its pages, made with Pillow and linked by URL.

Why: an image printed as base64 text stretched one MMDU page to 2,051 px and bloated it;
a 240 px JPEG/PNG file beside the pages keeps the page small. Only a file inside the
run's data folder is read (through the resolver of :mod:`dialeval.data.images`), so a
record cannot make the viewer copy an arbitrary file into a served folder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from dialeval.data.io import DataError

SIZE = (240, 240)
REDUCIBLE = ("L", "LA", "RGB", "RGBA", "I", "F")  # modes Image.reduce averages (not a palette's indices)


class Thumbnails:
    """Makes (once) and names the thumbnail of each image source a page shows."""

    def __init__(self, roots: list[Path], out: Path):
        self.roots = roots  # the run's data folder and image folders; empty: no local image is shown
        self.out = out  # <run>/view/thumbs
        self.made: dict[str, str | None] = {}

    def __call__(self, source: str) -> str | None:
        """The thumbnail's file name inside :attr:`out`, or None (a URL, a file outside the data
        folder, or no image Pillow can read: the page then names the image)."""
        if source not in self.made:
            self.made[source] = self._make(source)
        return self.made[source]

    def _make(self, source: str) -> str | None:
        from dialeval.data.images import URL_PREFIXES, open_image, resolve_local_image

        if source.startswith(URL_PREFIXES):
            return None
        path = None
        for root in self.roots:
            try:
                path = resolve_local_image(source, root, root, None, "image")
                break
            except DataError:
                continue
        if path is None:
            return None
        stat = path.stat()
        name = hashlib.sha256(f"{path}:{stat.st_mtime_ns}:{stat.st_size}".encode()).hexdigest()[:16] + ".png"
        target = self.out / name
        if not target.exists():
            self.out.mkdir(parents=True, exist_ok=True)
            try:
                image = open_image(path)  # over MAX_PIXELS: no thumbnail, the page names the image
            except (OSError, ValueError):
                return None
            with image:
                image.draft("RGB", SIZE)  # a JPEG decodes at 1/2, 1/4 or 1/8 of its size (others: no-op)
                factor = min(image.width // SIZE[0], image.height // SIZE[1])
                small = image.reduce(factor) if factor > 1 and image.mode in REDUCIBLE else image  # box-averaged
                small.thumbnail(SIZE)  # before converting: the mode change works on 240 px, not the full image
                small = small.convert("RGBA") if small.mode in ("P", "LA", "PA") else small.convert("RGB")
                small.save(target, format="PNG", optimize=True)
        return name


def image_roots(config: dict[str, Any]) -> list[Path]:
    """The folders a run's images may come from: the data file's folder (the data path itself
    for a folder of files) and every folder a run option names (``image_dir`` and the like)."""
    roots = []
    data = config.get("data")
    if isinstance(data, str) and data:
        path = Path(data)
        roots.append(path if path.is_dir() else path.parent)
    options = config.get("options")
    for value in (options.values() if isinstance(options, dict) else []):
        if isinstance(value, str) and value and not value.startswith(("http://", "https://")):
            roots.append(Path(value))
    return [root for root in roots if root.is_dir()]
