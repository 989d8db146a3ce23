"""An image of more pixels than an image may have (``MAX_PIXELS``) is refused when the data
loads, by name, without Pillow's raw warning; the viewer makes no thumbnail of it, and
makes the thumbnails of large photos from a reduced decode."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from PIL import Image

from dialeval.data.images import MAX_PIXELS, resolve_local_image
from dialeval.data.io import DataError
from dialeval.report.viewer.thumbs import SIZE, Thumbnails


@pytest.fixture
def huge_png(tmp_path) -> Path:
    """13000 x 13000 pixels (one bit each: a small file that would decode to half a gigabyte)."""
    assert 13000 * 13000 > MAX_PIXELS
    path = tmp_path / "huge.png"
    Image.new("1", (13000, 13000)).save(path)
    return path


def test_an_image_over_the_pixel_limit_is_refused_by_name_without_a_warning(huge_png):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Pillow's DecompressionBombWarning would raise here
        with pytest.raises(DataError) as caught:
            resolve_local_image("huge.png", huge_png.parent, "data.jsonl", "r1", "images[0]")
    message = str(caught.value)
    assert "huge.png" in message and "r1" in message and "images[0]" in message
    assert "169,000,000 pixels" in message and f"{MAX_PIXELS:,}" in message


def test_the_viewer_makes_no_thumbnail_of_it_and_says_nothing(huge_png, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Thumbnails([huge_png.parent], tmp_path / "thumbs")("huge.png") is None
    assert not (tmp_path / "thumbs").exists() or not any((tmp_path / "thumbs").iterdir())


@pytest.mark.parametrize(("name", "mode"), [("photo.jpg", "RGB"), ("scan.png", "L"), ("palette.png", "P")])
def test_large_photos_get_small_thumbnails(tmp_path, name, mode):
    Image.new(mode, (4800, 3600), 120).save(tmp_path / name)
    made = Thumbnails([tmp_path], tmp_path / "thumbs")(name)
    assert made is not None
    with Image.open(tmp_path / "thumbs" / made) as thumb:
        assert thumb.size == (SIZE[0], SIZE[0] * 3 // 4)
