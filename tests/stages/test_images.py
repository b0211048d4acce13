"""stages.images: the thumbnail step of the images report."""

from __future__ import annotations

import pandas as pd
import pytest
from image_edits import encode, scene

from neardup_udfs.config import load_images_config

pytestmark = pytest.mark.spark


def test_a_thumbnail_that_cannot_be_made_is_left_out(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The thumbnail step gives null for a file gone or broken since it was hashed."""
    from neardup_udfs.stages.images import _thumbnailer

    good, broken, gone = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    good.write_bytes(encode(scene(1)))
    broken.write_bytes(encode(scene(1))[:100])
    cfg = load_images_config(input=str(tmp_path), output=str(tmp_path / "out"))
    paths = [f"file:{p}" for p in (good, broken, gone)]
    rows = pd.DataFrame({"doc_id": paths, "file": paths})
    (made,) = list(_thumbnailer(cfg)(iter([rows.iloc[:2], rows.iloc[2:]])))
    assert made["thumbnail"][0].startswith("data:image/jpeg;base64,")
    assert made["thumbnail"][1] is None and made["thumbnail"][2] is None
