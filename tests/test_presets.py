"""The preset registry and the public fingerprint API."""

from __future__ import annotations

import numpy as np
import pytest

import neardup_udfs
from neardup_udfs.presets import PresetError, get_preset, preset_names, resolve


def test_registry_has_ditto() -> None:
    assert "ditto/2" in preset_names()
    p = get_preset("ditto/2")
    assert p.version == "ditto/2" and p.defaults() == {"char": 4, "word": 0}


def test_pipeline_ids_name_non_default_options() -> None:
    assert resolve("ditto/2").id == "ditto/2"
    assert resolve("ditto/2", char=4, word=0).id == "ditto/2"
    assert resolve("ditto/2", char=3, word=1).id == "ditto/2;char=3,word=1"
    assert resolve("ditto/2", char=-2).id == "ditto/2;char=0"  # <= 0 means disabled


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("nope", {}, "unknown preset 'nope'"),
        ("ditto/2", {"shingle": 3}, "no option 'shingle'"),
        ("ditto/2", {"char": "4"}, "option 'char' of preset 'ditto/2' must be an integer"),
        ("ditto/2", {"char": True}, "must be an integer"),
        ("ditto/2", {"word": 5000}, "option 'word' of preset 'ditto/2' must be in [0, 1024]"),
    ],
)
def test_bad_presets_and_options_name_the_culprit(name: str, options: dict, message: str) -> None:
    with pytest.raises(PresetError) as err:
        resolve(name, **options)
    assert message in str(err.value)


def test_public_api_types_and_agreement() -> None:
    texts = ["hello world", b"hello world", "", b"\xff\xfe", "<b>Hello</b> World"]
    batch = neardup_udfs.fingerprint_batch(texts)
    assert batch.dtype == np.uint64 and batch.shape == (5,)
    singles = [neardup_udfs.fingerprint(t) for t in texts]
    assert all(isinstance(s, int) and 0 <= s < 2**64 for s in singles)
    assert [int(x) for x in batch] == singles
    assert singles[0] == singles[1] == singles[4]  # str and bytes agree; markup is stripped
    assert singles[2] == 0xCBF29CE484222325
    assert neardup_udfs.fingerprint_batch([]).shape == (0,)
    assert neardup_udfs.fingerprint("abcdefgh", char=3) != neardup_udfs.fingerprint("abcdefgh")


def test_api_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="expected str or bytes"):
        neardup_udfs.fingerprint(12)  # type: ignore[arg-type]
