"""The preset registry and the public fingerprint API."""

from __future__ import annotations

import numpy as np
import pytest

import neardup_udfs
from neardup_udfs.presets import PresetError, get_preset, preset_names, resolve


def test_registry_has_ditto() -> None:
    assert preset_names() == [
        "anchor",
        "ditto/2",
        "fingerprint",
        "phash",
        "semblance",
        "semblance-simhash",
    ]
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


def test_semblance_presets() -> None:
    p = resolve("semblance")
    assert (p.id, p.version, p.kind) == ("semblance/1", "semblance/1", "minhash")
    assert dict(p.params) == {"w": 3, "k": 128, "seed": 0, "bands": 16, "rows": 8}
    assert p.threshold == 0.7071067811865476
    assert resolve("semblance", threshold=0.5).id == "semblance/1;bands=32,rows=4"
    assert resolve("semblance", k=64, threshold=0.8).id == "semblance/1;bands=8,k=64"
    assert resolve("semblance-simhash").id == "semblance-simhash/1"
    fox = "The quick brown fox jumps over the lazy dog"
    assert neardup_udfs.fingerprint(fox, preset="semblance-simhash") == 0x52F39A596B4BB5FB
    assert neardup_udfs.fingerprint(fox, preset="semblance-simhash", w=2) == 0x006C3206B01C8274
    sig = neardup_udfs.signature(fox, k=16)
    assert f"{int(sig[0]):016x}" == "311b9b4d66a9375b" and sig.shape == (16,)
    batch = neardup_udfs.signature_batch([fox, "too short"])
    assert batch.shape == (2, 128) and (batch[1] == 2**64 - 1).all()
    keys = p.band_keys_batch(batch)
    assert keys.shape == (2, 16) and keys.dtype == np.uint64


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bands": 3}, "bands x rows must equal k: 3 x 8 != 128"),
        ({"threshold": 0.5, "bands": 4}, "give either 'threshold' or 'bands'/'rows'"),
        ({"threshold": 1.5}, "option 'threshold' of preset 'semblance' must be in (0, 1)"),
        ({"k": 0}, "option 'k' of preset 'semblance' must be in [1, 65535]"),
        ({"w": 0}, "option 'w' of preset 'semblance' must be in [1, 1024]"),
    ],
)
def test_semblance_option_errors(options: dict, message: str) -> None:
    with pytest.raises(PresetError) as err:
        resolve("semblance", **options)
    assert message in str(err.value)


def test_kinds_are_not_mixed() -> None:
    with pytest.raises(PresetError, match="makes minhash values, not 64-bit fingerprints"):
        neardup_udfs.fingerprint("x", preset="semblance")
    with pytest.raises(PresetError, match="makes simhash values, not MinHash signatures"):
        neardup_udfs.signature("x", preset="ditto/2")
    with pytest.raises(PresetError, match="preset 'ditto/2' has no option 'threshold'"):
        resolve("ditto/2", threshold=0.5)


def test_new_k_alone_keeps_the_preset_threshold() -> None:
    p = resolve("semblance", k=64)
    assert dict(p.params)["bands"] * dict(p.params)["rows"] == 64
    assert p.id == "semblance/1;bands=8,k=64"


def test_image_preset_reports_unusable_inputs() -> None:
    from pathlib import Path

    png = (Path(__file__).parent / "golden/phash-images/circle_128.png").read_bytes()
    pipe = resolve("phash")
    assert (pipe.id, pipe.preset.input) == ("phash/1", "image")
    fps, errors = pipe.fingerprint_batch_checked([png, b"not an image"])
    assert f"{int(fps[0]):016x}" == "a18cad6c2d93d25c" and errors[0] is None
    assert int(fps[1]) == 0 and "unsupported image format" in (errors[1] or "")
    with pytest.raises(PresetError, match="preset 'phash': an input is not a usable image"):
        pipe.fingerprint_batch([b"not an image"])
    text_fps, text_errors = resolve("anchor").fingerprint_batch_checked(["a b c"])
    assert text_errors == [None] and int(text_fps[0]) == neardup_udfs.fingerprint("a b c", "anchor")
