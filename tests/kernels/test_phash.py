"""pHash of richardwooding/fingerprint: goldens bit for bit, Go's pixel model, errors.

The goldens (tests/golden/generated-fingerprint.json, produced by the Go reference on amd64)
pin the 32x32 grid, every DCT coefficient (float64 bits), the median and the hash of 16
PNGs. PNG variants without a golden (sub-8-bit grey, colour-key tRNS, 16-bit colour,
interlacing, palette tRNS) are written here byte by byte and checked against Go's pixel
model computed independently from the samples; the vectorised scaler is checked against a
naive scalar transcription of golang.org/x/image/draw's CatmullRom.Scale.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import struct
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from neardup_udfs.kernels import phash as P
from neardup_udfs.kernels.phash import (
    GoImage,
    PHashError,
    dct8,
    decode,
    decode_image,
    go_cos_table,
    hash_from_dct,
    luma,
    phash,
    phash_batch,
    phash_distance,
    phash_from_hex,
    phash_hex,
    phash_image,
    phash_images,
    resize32,
)
from neardup_udfs.kernels.phash import dct as P_dct
from neardup_udfs.kernels.phash import decoding as P_decoding
from neardup_udfs.kernels.phash import resample as P_resample

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
IMAGES = GOLDEN / "phash-images"


@cache
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "generated-fingerprint.json").read_text())
    return data


def image_names() -> list[str]:
    return sorted(golden()["phash_images"])


def png(name: str) -> bytes:
    return (IMAGES / name).read_bytes()


def f64(bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(bits))[0])


def encode(im: Image.Image, fmt: str, **kw: Any) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# Goldens


def test_cos_table_is_gos() -> None:
    want = [f64(h) for h in golden()["go_math_cos_table"]]
    assert go_cos_table().reshape(-1).tolist() == want


@pytest.mark.parametrize("name", image_names())
def test_golden_image(name: str) -> None:
    g = golden()["phash_images"][name]
    data = png(name)
    assert hashlib.sha256(data).hexdigest() == g["sha256"]
    img = decode(data, name=name)
    assert img.go_type == g["go_decoded_type"]
    assert f"(0,0)-({img.width},{img.height})" == g["bounds"]
    grid = resize32(img)
    assert grid.tobytes().hex() == g["debug"]["grid_32x32_rgba_hex"]
    coeffs = dct8(luma(grid))
    bits = [struct.pack(">d", v).hex() for v in coeffs.reshape(64)]
    assert bits == g["debug"]["dct_8x8_float64_bits_index_u_times_8_plus_v"]
    median = np.sort(coeffs.reshape(64)[1:])[31]
    assert struct.pack(">d", median).hex() == g["debug"]["median_float64_bits"]
    h = hash_from_dct(coeffs)
    assert phash_hex(h) == g["phash_hex"] == g["debug"]["phash_hex"]
    assert h == g["phash_uint64"] == phash(data)


def test_golden_batch_matches_and_reports_no_errors() -> None:
    names = image_names()
    hashes, errors = phash_batch([png(n) for n in names])
    assert hashes.dtype == np.uint64
    assert errors == [None] * len(names)
    assert [int(h) for h in hashes] == [golden()["phash_images"][n]["phash_uint64"] for n in names]


def test_libm_cosines_would_change_five_goldens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spec §1.6: the exact Go table matters (CPython's cos changes 5 of 16 hashes)."""
    libm = np.array(
        [[math.cos((2 * i + 1) * u * math.pi / 64) for u in range(8)] for i in range(32)]
    )
    grids = {n: resize32(decode(png(n))) for n in image_names()}
    monkeypatch.setattr(P_dct, "go_cos_table", lambda: libm)
    changed = [
        n
        for n, grid in grids.items()
        if hash_from_dct(dct8(luma(grid))) != golden()["phash_images"][n]["phash_uint64"]
    ]
    assert len(changed) == 5


def test_known_behaviour_distances() -> None:
    """Spec §4.3.6: LANCZOS 128->64 identical, 2-pixel shift 4 bits, +10 brightness 2 bits."""
    h = {n: phash(png(n)) for n in image_names()}
    assert h["circle_resized_64.png"] == h["circle_128.png"]
    assert phash_distance(h["circle_128.png"], h["circle_shifted_128.png"]) == 4
    assert phash_distance(h["noise_48.png"], h["noise_brighter_48.png"]) == 2
    assert all(v & 1 == 0 for v in h.values())  # DC bit
    for n, v in h.items():  # 31 bits set when the 63 AC coefficients are distinct
        ac = dct8(luma(resize32(decode(png(n))))).reshape(64)[1:]
        assert bin(v).count("1") == 31 if len(set(ac.tolist())) == 63 else bin(v).count("1") <= 31


def test_batch_dct_equals_single() -> None:
    rng = np.random.default_rng(7)
    lum = rng.random((5, 32, 32)) * 255
    batch = dct8(lum)
    for i in range(5):
        assert np.array_equal(batch[i], dct8(lum[i]))


def naive_dct(lum: list[list[float]]) -> list[float]:
    cos = go_cos_table().tolist()
    out = []
    for u in range(8):
        for v in range(8):
            s = 0.0
            for y in range(32):
                cy = cos[y][v]
                for x in range(32):
                    s += lum[y][x] * cos[x][u] * cy
            out.append(s)
    return out


def test_dct_matches_naive_go_loop() -> None:
    rng = np.random.default_rng(3)
    lum = rng.integers(0, 256, (32, 32)) * 0.587 + rng.random((32, 32))
    assert dct8(lum).reshape(64).tolist() == naive_dct(lum.tolist())


# ---------------------------------------------------------------------------------------------
# Hex form and distance


def test_hex_examples() -> None:
    assert phash_hex(0x0F0F0F0F0F0F0F0F) == golden()["examples"]["phashhex_0f0f"]
    assert phash_hex(0) == "0000000000000000"
    assert phash_hex(-1) == "ffffffffffffffff"  # int64 reinterpretation
    assert phash_from_hex("A18CAD6C2D93D25C") == 0xA18CAD6C2D93D25C
    assert phash_from_hex(b"0000000000000001") == 1
    with pytest.raises(ValueError):
        phash_hex(1 << 64)
    with pytest.raises(ValueError):
        phash_hex(-(1 << 63) - 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "phash hex must decode to 8 bytes"),
        ("00", "phash hex must decode to 8 bytes"),
        ("a18cad6c2d93d25c00", "phash hex must decode to 8 bytes"),
        ("a18cad6c2d93d25", "encoding/hex: odd length hex string"),
        ("0xa18cad6c2d93d2", "encoding/hex: invalid byte: U+0078 'x'"),
        ("a18cad6c2d93d25g", "encoding/hex: invalid byte: U+0067 'g'"),
        ("g18cad6c2d93d25", "encoding/hex: invalid byte: U+0067 'g'"),  # before odd length
        ("a18cad6c2d93d2z", "encoding/hex: invalid byte: U+007A 'z'"),  # the odd last byte
        (" a18cad6c2d93d25c", "encoding/hex: invalid byte: U+0020 ' '"),
        ("a18cad6c2d93d25\n", "encoding/hex: invalid byte: U+000A"),
        ("é18cad6c2d93d25c", "encoding/hex: invalid byte: U+00C3 'Ã'"),
    ],
)
def test_hex_errors(text: str, message: str) -> None:
    with pytest.raises(PHashError) as e:
        phash_from_hex(text)
    assert e.value.problem == message
    assert repr(text) in str(e.value)


@given(st.integers(min_value=0, max_value=(1 << 64) - 1))
def test_hex_round_trip(h: int) -> None:
    s = phash_hex(h)
    assert len(s) == 16 and s == s.lower()
    assert phash_from_hex(s) == h
    assert phash_from_hex(s.upper()) == h
    signed = h - (1 << 64) if h >= 1 << 63 else h
    assert phash_hex(signed) == s


u64 = st.integers(min_value=0, max_value=(1 << 64) - 1)


@given(u64, u64, u64)
def test_distance_is_a_metric(a: int, b: int, c: int) -> None:
    assert phash_distance(a, b) == phash_distance(b, a)
    assert phash_distance(a, a) == 0
    assert 0 <= phash_distance(a, b) <= 64
    assert phash_distance(a, c) <= phash_distance(a, b) + phash_distance(b, c)
    assert phash_distance(a, b) == phash_distance(a - (1 << 64), b)  # signed view


# ---------------------------------------------------------------------------------------------
# Other encodings of the goldens


@pytest.mark.parametrize("name", ["circle_128.png", "circle_shifted_128.png", "noise_48.png"])
def test_jpeg_reencode_is_close(name: str) -> None:
    im = Image.open(IMAGES / name)
    buf = io.BytesIO()
    im.convert("RGB").save(buf, "JPEG", quality=90)
    img = decode(buf.getvalue())
    assert img.go_type == "*image.YCbCr"
    assert phash_distance(phash(buf.getvalue()), phash(png(name))) <= 4


def test_gray_jpeg_decodes_as_gray() -> None:
    buf = io.BytesIO()
    Image.open(IMAGES / "checker_L_64.png").save(buf, "JPEG", quality=95)
    assert decode(buf.getvalue()).go_type == "*image.Gray"
    assert phash_distance(phash(buf.getvalue()), phash(png("checker_L_64.png"))) <= 4


def test_cmyk_jpeg_decodes() -> None:
    buf = io.BytesIO()
    Image.open(IMAGES / "circle_128.png").convert("CMYK").save(buf, "JPEG", quality=95)
    assert decode(buf.getvalue()).go_type == "*image.CMYK"
    assert phash_distance(phash(buf.getvalue()), phash(png("circle_128.png"))) <= 4


def test_gif_palette_is_lossless() -> None:
    buf = io.BytesIO()
    Image.open(IMAGES / "palette_P_64.png").save(buf, "GIF")
    gif = buf.getvalue()
    assert decode(gif).go_type == "*image.Paletted"
    assert np.array_equal(resize32(decode(gif)), resize32(decode(png("palette_P_64.png"))))


def test_gif_transparent_index_is_transparent_black() -> None:
    idx = np.zeros((40, 40), dtype=np.uint8)
    idx[10:30, 10:30] = 1
    im = Image.fromarray(idx, "P")
    im.putpalette([255, 255, 255, 200, 30, 30] + [0] * 762)
    buf = io.BytesIO()
    im.save(buf, "GIF", transparency=0)
    img = decode(buf.getvalue())
    v = img.rgba64()
    assert v[0, 0].tolist() == [0, 0, 0, 0]
    assert v[20, 20].tolist() == [200 * 257, 30 * 257, 30 * 257, 0xFFFF]


@pytest.mark.parametrize(
    "name",
    [
        "checker_L_64.png",
        "circle_128.png",
        "gray_alpha_LA_50.png",
        "palette_P_64.png",
        "rgba_alpha_64.png",
        "gray16_40.png",
    ],
)
def test_phash_image_from_pillow_matches_bytes(name: str) -> None:
    im = Image.open(IMAGES / name)
    im.load()
    assert phash_image(im) == phash(png(name))


def test_fully_transparent_hashes_like_black() -> None:
    rng = np.random.default_rng(1)
    rgba = rng.integers(0, 256, (40, 50, 4), dtype=np.uint8)
    rgba[..., 3] = 0
    black = np.zeros((40, 50, 3), dtype=np.uint8)
    assert phash_image(Image.fromarray(rgba, "RGBA")) == phash_image(Image.fromarray(black))


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 1), (1, 70)])
def test_tiny_images_are_upscaled(size: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(size))
    arr = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "PNG")
    assert phash(buf.getvalue()) == phash_image(GoImage("rgb8", arr))


# ---------------------------------------------------------------------------------------------
# Formats beyond the reference's decoders: WebP, BMP, TIFF, ICO


def photo(seed: int, w: int = 160, h: int = 120) -> Image.Image:
    """A photo-like RGB picture: a tinted gradient under soft coloured blobs."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = (x / w * 120 + y / h * 60)[..., None] * rng.uniform(0.3, 1.0, 3)
    for _ in range(10):
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(6, 30)
        blob = np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))
        img += blob[..., None] * rng.uniform(-150, 200, 3)
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


SOURCES = {
    "circle": lambda: Image.open(IMAGES / "circle_128.png").convert("RGB"),
    "photo": lambda: photo(0),
}
LOSSLESS = {  # the PNG's pixels exactly: the PNG's hash exactly
    "webp-lossless": ("WEBP", {"lossless": True}),
    "bmp": ("BMP", {}),
    "tiff": ("TIFF", {}),
    "tiff-lzw": ("TIFF", {"compression": "tiff_lzw"}),
    "tiff-deflate": ("TIFF", {"compression": "tiff_adobe_deflate"}),
    "ico": ("ICO", {"sizes": [(160, 120), (128, 128)]}),  # the largest picture is hashed
}
LOSSY = {  # measured over 41 photo-like pictures: at most 2 bits at q80, 4 at q50
    "webp-q80": ("WEBP", {"quality": 80}),
    "webp-q50": ("WEBP", {"quality": 50}),
    "tiff-jpeg": ("TIFF", {"compression": "jpeg", "quality": 75}),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("variant", sorted(LOSSLESS))
def test_lossless_formats_hash_like_the_png(source: str, variant: str) -> None:
    im = SOURCES[source]()
    fmt, kw = LOSSLESS[variant]
    found = decode_image(encode(im.copy(), fmt, **kw))
    assert (found.format, found.animated, found.go_reference) == (fmt, False, False)
    assert phash_image(found.image) == phash(encode(im, "PNG"))


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("variant", sorted(LOSSY))
def test_lossy_formats_hash_close_to_the_png(source: str, variant: str) -> None:
    im = SOURCES[source]()
    fmt, kw = LOSSY[variant]
    data = encode(im.copy(), fmt, **kw)
    assert decode_image(data).format == fmt
    assert phash_distance(phash(data), phash(encode(im, "PNG"))) <= 4


def _with_alpha(im: Image.Image) -> Image.Image:
    rgba = np.asarray(im.convert("RGBA")).copy()
    rgba[..., 3] = np.linspace(0, 255, rgba.shape[1]).astype(np.uint8)[None, :]
    return Image.fromarray(rgba, "RGBA")


def _gray16(im: Image.Image) -> Image.Image:
    return Image.fromarray(np.asarray(im.convert("L")).astype(np.uint16) * 257)


MODES: list[tuple[str, str, Callable[[Image.Image], Image.Image], dict[str, Any], str]] = [
    # (format, what, how the picture is made, save options, Go type)
    ("BMP", "8-bit palette", lambda im: im.convert("P"), {}, "*image.Paletted"),
    ("BMP", "grey", lambda im: im.convert("L"), {}, "*image.Gray"),
    ("TIFF", "1-bit", lambda im: im.convert("1"), {}, "*image.Gray"),
    ("TIFF", "16-bit grey", _gray16, {}, "*image.Gray16"),
    ("TIFF", "unassociated alpha", _with_alpha, {}, "*image.NRGBA"),
    ("TIFF", "CMYK", lambda im: im.convert("CMYK"), {}, "*image.CMYK"),
    ("WEBP", "lossless alpha", _with_alpha, {"lossless": True}, "*image.NRGBA"),
    ("WEBP", "lossy", lambda im: im, {"quality": 90}, "*image.RGBA"),
    ("ICO", "alpha", _with_alpha, {"sizes": [(128, 128)]}, "*image.NRGBA"),
]


@pytest.mark.parametrize(
    ("fmt", "what", "make", "kw", "go_type"), MODES, ids=[f"{m[0]}-{m[1]}" for m in MODES]
)
def test_pillow_modes_map_to_go_types(
    fmt: str,
    what: str,
    make: Callable[[Image.Image], Image.Image],
    kw: dict[str, Any],
    go_type: str,
) -> None:
    """Each mode becomes the Go type x/image's decoder of the format returns (lossy WebP:
    RGB from libwebp, not Go's YCbCr); lossless ones hash exactly as a PNG of the pixels."""
    im = make(SOURCES["circle"]())
    data = encode(im, fmt, **kw)
    assert decode(data).go_type == go_type
    if fmt == "WEBP" and not kw.get("lossless"):
        return
    pixels = Image.open(io.BytesIO(data))
    pixels.load()
    assert phash(data) == phash_image(pixels)
    if im.mode != "CMYK":  # PNG has no CMYK
        assert phash(data) == phash(encode(im, "PNG"))


def test_float_and_32_bit_tiff_samples_are_refused() -> None:
    grey = np.asarray(SOURCES["circle"]().convert("L"))
    for mode, arr in (("F", grey.astype(np.float32)), ("I", grey.astype(np.int32) * 65536)):
        data = encode(Image.fromarray(arr, mode), "TIFF")
        with pytest.raises(PHashError, match=f"unsupported TIFF pixel format: Pillow mode {mode}"):
            phash(data)


def _frames(fmt: str) -> tuple[bytes, bytes, bytes]:
    """(an animation of three pictures, its first picture alone, its second alone)."""
    pics = [photo(1), photo(2), photo(3)]
    if fmt == "GIF":
        pics = [p.convert("P") for p in pics]
    kw: dict[str, Any] = {"lossless": True} if fmt == "WEBP" else {}
    timing = {} if fmt == "TIFF" else {"duration": 100, "loop": 0}
    anim = encode(pics[0], fmt, save_all=True, append_images=pics[1:], **timing, **kw)
    return anim, encode(pics[0].copy(), fmt, **kw), encode(pics[1].copy(), fmt, **kw)


@pytest.mark.parametrize("fmt", ["WEBP", "GIF", "PNG", "TIFF"])
def test_animations_hash_their_first_frame(fmt: str) -> None:
    anim, first, second = _frames(fmt)
    found = decode_image(anim)
    assert found.animated and found.label == f"{fmt} (animated)"
    assert found.go_reference == (fmt in ("GIF", "PNG"))  # Go decodes the first frame too
    assert not decode_image(first).animated
    assert phash(anim) == phash(first)
    assert phash_distance(phash(anim), phash(second)) > 20


def test_lossy_animated_webp_hashes_its_first_frame() -> None:
    pics = [photo(1), photo(2)]
    anim = encode(pics[0], "WEBP", save_all=True, append_images=pics[1:], quality=80)
    assert decode_image(anim).animated
    png1, png2 = (phash(encode(p, "PNG")) for p in pics)
    assert phash_distance(phash(anim), png1) <= 4 < 20 < phash_distance(phash(anim), png2)


def _webp_canvas(width: int, height: int) -> bytes:
    """A WebP whose VP8X header claims a canvas of width x height (no image data)."""
    body = bytes([0x10, 0, 0, 0]) + (width - 1).to_bytes(3, "little")
    chunk = b"VP8X" + struct.pack("<I", 10) + body + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def _ico_around(picture: bytes) -> bytes:
    """An ICO whose directory says 16x16 around ``picture`` (a PNG of any size)."""
    entry = struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, len(picture), 22)
    return struct.pack("<HHH", 0, 1, 1) + entry + picture


def test_webp_corruption_is_named() -> None:
    im = SOURCES["photo"]()
    lossy, lossless = encode(im, "WEBP", quality=80), encode(im, "WEBP", lossless=True)
    cases = {
        "truncated WEBP: the RIFF header declares": lossy[: len(lossy) // 2],
        "corrupt WEBP: the VP8 frame header has no start code": lossy[:23] + b"xxx" + lossy[26:],
        "corrupt WEBP: the VP8L header has no signature byte": lossless[:20]
        + b"\0"
        + lossless[21:],
        "corrupt WEBP: unknown first chunk": lossy[:12] + b"ABCD" + lossy[16:],
        "corrupt or truncated WEBP data": lossy[:30] + bytes(b ^ 0x5A for b in lossy[30:]),
    }
    for problem, data in cases.items():
        with pytest.raises(PHashError) as e:
            phash(data, name="broken.webp")
        assert e.value.problem.startswith(problem), e.value.problem
        assert str(e.value).startswith("broken.webp: ")


@pytest.mark.parametrize(
    ("fmt", "kw"),
    [("WEBP", {"lossless": True}), ("WEBP", {"quality": 50}), ("BMP", {}), ("TIFF", {})],
    ids=["webp-lossless", "webp-lossy", "bmp", "tiff"],
)
def test_new_formats_obey_max_pixels(fmt: str, kw: dict[str, Any]) -> None:
    data = encode(Image.new("L", (3000, 2000), 7), fmt, **kw)
    with pytest.raises(PHashError, match="6000000 pixels, over the limit of 5000000"):
        phash(data, max_pixels=5_000_000)
    assert phash(data, max_pixels=6_000_000) == phash(encode(Image.new("L", (30, 20), 7), "PNG"))


def test_webp_and_ico_sizes_are_checked_before_pillow_opens_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libwebp allocates the canvas when its decoder is made, Pillow's ICO reader decodes the
    largest picture when it opens the file: both are refused from their own headers."""

    def never(*args: object) -> None:
        raise AssertionError("Pillow opened a file over the limit")

    monkeypatch.setattr(P_decoding, "pillow_open", never)
    with pytest.raises(PHashError, match="16777216x16777216 = .* over the limit"):
        phash(_webp_canvas(1 << 24, 1 << 24))
    big_png = encode(Image.new("L", (3000, 2000), 3), "PNG")
    with pytest.raises(PHashError, match="3000x2000 = 6000000 pixels, over the limit of 5000"):
        phash(_ico_around(big_png), max_pixels=5_000_000)


def test_batch_labels_formats_and_animation() -> None:
    im = SOURCES["photo"]()
    anim, _, _ = _frames("GIF")
    blobs = [encode(im, "PNG"), encode(im, "WEBP", quality=80), anim, encode(im, "BMP"), b"x"]
    batch = phash_images(blobs)
    assert batch.formats == ["PNG", "WEBP", "GIF (animated)", "BMP", None]
    assert batch.errors[:4] == [None] * 4 and batch.errors[4] is not None
    assert (batch.widths[:4].tolist(), batch.heights[:4].tolist()) == ([160] * 4, [120] * 4)


# ---------------------------------------------------------------------------------------------
# PNG variants, written byte by byte, against Go's pixel model


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _filter_rows(rows: list[bytes], bpp: int) -> bytes:
    """Filter every row with a different filter type (0..4 in turn), as an encoder may."""
    out = bytearray()
    prev = bytes(len(rows[0])) if rows else b""
    for y, row in enumerate(rows):
        ft = y % 5
        f = bytearray()
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[ft]
            f.append((x - pred) & 0xFF)
        out += bytes([ft]) + f
        prev = row
    return bytes(out)


def _pack_rows(samples: np.ndarray, depth: int) -> list[bytes]:
    """Rows of raw samples (h, w, k) into PNG scanline bytes (MSB-first bit packing)."""
    h = samples.shape[0]
    flat = samples.reshape(h, -1)
    rows = []
    for y in range(h):
        if depth == 16:
            rows.append(flat[y].astype(">u2").tobytes())
        elif depth == 8:
            rows.append(flat[y].astype(np.uint8).tobytes())
        else:
            bits = "".join(format(int(v), f"0{depth}b") for v in flat[y])
            bits += "0" * (-len(bits) % 8)
            rows.append(bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8)))
    return rows


_ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2)]
_ADAM7 += [(0, 1, 1, 2)]


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def make_png(
    samples: np.ndarray,
    depth: int,
    color: int,
    *,
    plte: bytes | None = None,
    trns: bytes | None = None,
    interlace: bool = False,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> bytes:
    """A PNG of raw samples ``(h, w)`` or ``(h, w, k)`` (palette indices for colour type 3)."""
    s = samples if samples.ndim == 3 else samples[..., None]
    h, w, k = s.shape
    bpp = max(1, k * depth // 8)
    if interlace:
        raw = b""
        for x0, y0, dx, dy in _ADAM7:
            sub = s[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                raw += _filter_rows(_pack_rows(sub, depth), bpp)
    else:
        raw = _filter_rows(_pack_rows(s, depth), bpp)
    out = b"\x89PNG\r\n\x1a\n"
    out += _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, int(interlace)))
    for kind, body in extra or []:
        out += _chunk(kind, body)
    if plte is not None:
        out += _chunk(b"PLTE", plte)
    if trns is not None:
        out += _chunk(b"tRNS", trns)
    comp = zlib.compress(raw)
    out += _chunk(b"IDAT", comp[: len(comp) // 2]) + _chunk(b"IDAT", comp[len(comp) // 2 :])
    return out + _chunk(b"IEND", b"")


def nrgba(r: Any, g: Any, b: Any, a: Any, one: int) -> np.ndarray:
    """Go's NRGBA(64).RGBA(): premultiply straight samples with ``one`` = 0xff or 0xffff."""
    r, g, b, a = (np.asarray(v, dtype=np.int64) for v in (r, g, b, a))
    scale = 0x101 if one == 0xFF else 1
    a16 = a * scale
    return np.stack([r * scale * a // one, g * scale * a // one, b * scale * a // one, a16], -1)


RNG = np.random.default_rng(2024)
H, W = 11, 13


@pytest.mark.parametrize("interlace", [False, True])
@pytest.mark.parametrize("depth", [1, 2, 4, 8])
def test_png_gray_depths(depth: int, interlace: bool) -> None:
    top = (1 << depth) - 1
    s = RNG.integers(0, top + 1, (H, W))
    y8 = s * (255 // top)
    img = decode(make_png(s, depth, 0, interlace=interlace))
    assert img.go_type == "*image.Gray"
    assert np.array_equal(img.rgba64(), nrgba(y8, y8, y8, np.full_like(y8, 255), 0xFF))
    # tRNS colour key: Go scales the key's low byte like the samples (uint8 arithmetic)
    key = int(s[3, 4])
    ty = (key * (255 // top)) & 0xFF
    img = decode(make_png(s, depth, 0, trns=struct.pack(">H", key), interlace=interlace))
    assert img.go_type == "*image.NRGBA"
    assert np.array_equal(img.rgba64(), nrgba(y8, y8, y8, np.where(y8 == ty, 0, 255), 0xFF))


def test_png_gray8_key_uses_low_byte_only() -> None:
    s = RNG.integers(0, 256, (H, W))
    key = int(s[0, 0])
    img = decode(make_png(s, 8, 0, trns=struct.pack(">H", 0x100 | key)))
    assert np.array_equal(img.rgba64()[..., 3], np.where(s == key, 0, 0xFFFF))


@pytest.mark.parametrize("interlace", [False, True])
def test_png_gray16(interlace: bool) -> None:
    s = RNG.integers(0, 1 << 16, (H, W))
    img = decode(make_png(s, 16, 0, interlace=interlace))
    assert img.go_type == "*image.Gray16"
    assert np.array_equal(img.rgba64(), np.stack([s, s, s, np.full_like(s, 0xFFFF)], -1))
    key = int(s[5, 5])
    img = decode(make_png(s, 16, 0, trns=struct.pack(">H", key), interlace=interlace))
    assert img.go_type == "*image.NRGBA64"
    assert np.array_equal(img.rgba64(), nrgba(s, s, s, np.where(s == key, 0, 0xFFFF), 0xFFFF))


@pytest.mark.parametrize("interlace", [False, True])
def test_png_gray_alpha_16(interlace: bool) -> None:
    s = RNG.integers(0, 1 << 16, (H, W, 2))
    img = decode(make_png(s, 16, 4, interlace=interlace))
    assert img.go_type == "*image.NRGBA64"
    y, a = s[..., 0], s[..., 1]
    assert np.array_equal(img.rgba64(), nrgba(y, y, y, a, 0xFFFF))


def test_png_rgb8_colour_key() -> None:
    s = RNG.integers(0, 4, (H, W, 3)) * 85
    key = s[2, 2]
    trns = struct.pack(">HHH", *(0x4200 | int(v) for v in key))  # high bytes ignored by Go
    img = decode(make_png(s, 8, 2, trns=trns))
    assert img.go_type == "*image.NRGBA"
    a = np.where(np.all(s == key, axis=-1), 0, 255)
    assert a.min() == 0
    assert np.array_equal(img.rgba64(), nrgba(s[..., 0], s[..., 1], s[..., 2], a, 0xFF))


@pytest.mark.parametrize("interlace", [False, True])
def test_png_rgb16(interlace: bool) -> None:
    s = RNG.integers(0, 1 << 16, (H, W, 3))
    img = decode(make_png(s, 16, 2, interlace=interlace))
    assert img.go_type == "*image.RGBA64"
    want = np.concatenate([s, np.full((H, W, 1), 0xFFFF)], -1)
    assert np.array_equal(img.rgba64(), want)
    key = s[7, 1]
    img = decode(make_png(s, 16, 2, trns=struct.pack(">HHH", *key), interlace=interlace))
    assert img.go_type == "*image.NRGBA64"
    a = np.where(np.all(s == key, axis=-1), 0, 0xFFFF)
    assert np.array_equal(img.rgba64(), nrgba(s[..., 0], s[..., 1], s[..., 2], a, 0xFFFF))


@pytest.mark.parametrize("interlace", [False, True])
def test_png_rgba16(interlace: bool) -> None:
    s = RNG.integers(0, 1 << 16, (H, W, 4))
    img = decode(make_png(s, 16, 6, interlace=interlace))
    assert img.go_type == "*image.NRGBA64"
    assert np.array_equal(img.rgba64(), nrgba(*np.moveaxis(s, -1, 0), 0xFFFF))


def test_png_16_bit_expansion_of_8_bit_hashes_the_same() -> None:
    """RGB8 (*image.RGBA) and RGB16 with samples c*257 (*image.RGBA64) read equal values."""
    s = RNG.integers(0, 256, (45, 37, 3))
    assert phash(make_png(s, 8, 2)) == phash(make_png(s * 257, 16, 2))


@pytest.mark.parametrize("depth", [1, 2, 4, 8])
def test_png_palette_with_partial_trns(depth: int) -> None:
    n = 1 << depth
    npal = max(1, n - 1)  # one index past the palette: opaque black in Go
    pal = RNG.integers(0, 256, (npal, 3))
    alphas = RNG.integers(0, 256, min(n, 3))
    s = RNG.integers(0, n, (H, W))
    img = decode(
        make_png(s, depth, 3, plte=pal.astype(np.uint8).tobytes(), trns=bytes(alphas.tolist()))
    )
    assert img.go_type == "*image.Paletted"
    table = np.zeros((256, 4), dtype=np.int64)
    table[:, 3] = 0xFFFF
    table[:npal, :3] = pal * 0x101
    for i, a in enumerate(alphas):
        r, g, b = (table[i, :3] // 0x101).tolist()
        table[i] = nrgba(r, g, b, a, 0xFF)
    assert np.array_equal(img.rgba64(), table[s])


def test_png_ancillary_chunks_are_ignored() -> None:
    s = RNG.integers(0, 256, (20, 20, 3))
    extra = [(b"gAMA", struct.pack(">I", 45455)), (b"tEXt", b"Comment\x00hello")]
    assert phash(make_png(s, 8, 2, extra=extra)) == phash(make_png(s, 8, 2))


# ---------------------------------------------------------------------------------------------
# The vectorised scaler against a naive transcription of CatmullRom.Scale


def naive_distrib(dw: int, sw: int) -> list[tuple[list[tuple[int, float]], float, float]]:
    scale = sw / dw
    half, arg = 2.0, 1.0
    if scale > 1:
        half *= scale
        arg = 1 / scale
    out = []
    for x in range(dw):
        center = (x + 0.5) * scale - 0.5
        i = max(math.floor(center - half), 0)
        j = math.ceil(center + half)
        if j > sw:
            j = max(sw, i)
        contribs, total = [], 0.0
        for c in range(i, j):
            t = abs((center - c) * arg)
            if t >= 2:
                continue
            w = (1.5 * t - 2.5) * t * t + 1 if t < 1 else ((-0.5 * t + 2.5) * t - 4) * t + 2
            if w == 0:
                continue
            total += w
            contribs.append((c, w))
        inv = 1 / total
        out.append((contribs, inv, inv / 0xFFFF))
    return out


def ftou(f: float) -> int:
    i = math.trunc(0xFFFF * f + 0.5)
    return 0xFFFF if i > 0xFFFF else max(i, 0)


def naive_scale(v: np.ndarray, alpha_one: bool) -> np.ndarray:
    """Go's scaleX_* then scaleY_RGBA_Over into a zeroed 32x32 RGBA, scalar by scalar."""
    h, w = v.shape[:2]
    px = v.tolist()
    hd, vd = naive_distrib(32, w), naive_distrib(32, h)
    tmp = []
    for y in range(h):
        row = []
        for contribs, _, inv_ffff in hd:
            s = [0.0, 0.0, 0.0, 0.0]
            for c, wt in contribs:
                p = px[y][c]
                for ch in range(4):
                    s[ch] += float(p[ch]) * wt
            a = 1.0 if alpha_one else s[3] * inv_ffff
            row.append([s[0] * inv_ffff, s[1] * inv_ffff, s[2] * inv_ffff, a])
        tmp.append(row)
    out = np.zeros((32, 32, 4), dtype=np.uint8)
    for dx in range(32):
        for dy, (contribs, inv, _) in enumerate(vd):
            s = [0.0, 0.0, 0.0, 0.0]
            for c, wt in contribs:
                for ch in range(4):
                    s[ch] += tmp[c][dx][ch] * wt
            for ch in range(3):
                s[ch] = min(s[ch], s[3])
            out[dy, dx] = [ftou(x * inv) >> 8 for x in s]
    return out


def _random_images() -> list[GoImage]:
    rng = np.random.default_rng(11)

    def u8(*shape: int) -> np.ndarray:
        return rng.integers(0, 256, shape, dtype=np.uint8)

    pal = np.zeros((256, 4), dtype=np.int64)
    pal[:, 3] = 0xFFFF
    pal[:20] = nrgba(*np.moveaxis(rng.integers(0, 256, (20, 4)), -1, 0), 0xFF)
    opaque_grey = rng.integers(0, 256, (40, 33))
    alpha_const = u8(9, 45, 4)
    alpha_const[..., 3] = 77
    return [
        GoImage("rgb8", u8(37, 45, 3)),
        GoImage("gray8", u8(64, 48)),
        GoImage("nrgba8", u8(33, 31, 4)),
        GoImage("nrgba8", alpha_const),
        GoImage("nrgba8_gray", u8(5, 70, 2)),
        GoImage("paletted", u8(29, 40) % 20, pal),
        GoImage("paletted", opaque_grey.astype(np.uint8), _grey_palette()),
        GoImage("gray16", rng.integers(0, 1 << 16, (3, 100), dtype=np.uint16)),
        GoImage("nrgba64", rng.integers(0, 1 << 16, (50, 2, 4), dtype=np.uint16)),
        GoImage("ycbcr", u8(17, 19, 3)),
        GoImage("cmyk", u8(21, 8, 4)),
        GoImage("rgb8", u8(1, 1, 3)),
    ]


def _grey_palette() -> np.ndarray:
    t = np.zeros((256, 4), dtype=np.int64)
    t[:, :3] = (np.arange(256) * 0x101)[:, None]
    t[:, 3] = 0xFFFF
    return t


RANDOM_IMAGES = _random_images()


@pytest.mark.parametrize("img", RANDOM_IMAGES, ids=lambda g: f"{g.model}-{g.width}x{g.height}")
def test_resize_matches_naive_scaler(img: GoImage) -> None:
    alpha_one = img.go_type in ("*image.Gray", "*image.YCbCr")
    assert np.array_equal(resize32(img), naive_scale(img.rgba64(), alpha_one))


def test_every_resampler_path_gives_the_same_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strips, whole vs streamed vertical input, per-tap vs chunked horizontal sums."""
    rng = np.random.default_rng(5)
    cases = [
        GoImage("rgb8", rng.integers(0, 256, (70, 150, 3), dtype=np.uint8)),
        GoImage("nrgba8", rng.integers(0, 256, (90, 64, 4), dtype=np.uint8)),
        GoImage("gray8", rng.integers(0, 256, (100, 33), dtype=np.uint8)),
    ]
    want = [resize32(g) for g in cases]
    monkeypatch.setattr(P_resample, "_STRIP_BYTES", 3000)
    monkeypatch.setattr(P_resample, "_TMP_BYTES", 0)
    monkeypatch.setattr(P_resample, "_LOOP_TAPS", 2)
    monkeypatch.setattr(P_resample, "_CHUNK_TAPS", 7)
    for g, grid in zip(cases, want, strict=True):
        assert np.array_equal(resize32(g), grid)


# ---------------------------------------------------------------------------------------------
# Errors


def _bomb_png(w: int, h: int) -> bytes:
    """A valid-looking PNG header claiming w x h pixels with almost no data."""
    ihdr = _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    idat = _chunk(b"IDAT", zlib.compress(b"\x00" * 1000))
    return b"\x89PNG\r\n\x1a\n" + ihdr + idat + _chunk(b"IEND", b"")


def _ppm() -> bytes:
    """A raster format Pillow reads but the job does not accept (not a web format)."""
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(buf, "PPM")
    return buf.getvalue()


def _cut_webp() -> bytes:
    data = encode(Image.open(IMAGES / "circle_128.png"), "WEBP", quality=80)
    return data[: len(data) // 2]


def _crc_broken() -> bytes:
    data = bytearray(png("circle_128.png"))
    data[40] ^= 0xFF  # inside the IDAT body
    return bytes(data)


def _zero_width_png() -> bytes:
    body = struct.pack(">IIBBBBB", 0, 5, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", body) + _chunk(b"IEND", b"")


BAD_INPUTS: list[tuple[str, Callable[[], bytes], str, int]] = [
    ("notes.png", lambda: b"just some text, not an image\n", "unknown or unsupported", 0),
    ("half.png", lambda: png("circle_128.png")[:300], "truncated", 0),
    ("empty.png", lambda: b"", "empty input", 0),
    ("zero.png", _zero_width_png, "zero-size", 0),
    ("picture.ppm", _ppm, "unknown or unsupported", 0),
    ("vector.svg", lambda: b'<svg xmlns="http://www.w3.org/2000/svg"/>', "unknown or unsupp", 0),
    ("cut.webp", _cut_webp, "truncated WEBP: the RIFF header declares", 0),
    ("bomb.png", lambda: _bomb_png(100_000, 100_000), "decompression bomb", 0),
    ("big.png", lambda: png("circle_128.png"), "over the limit of 1000", 1000),
    ("crc.png", _crc_broken, "checksum", 0),
    ("signature.png", lambda: b"\x89PNG\r\n\x1a\n", "truncated", 0),
]


@pytest.mark.parametrize(("name", "make", "problem", "limit"), BAD_INPUTS, ids=lambda x: x)
def test_phash_errors_name_the_file(
    name: str, make: Callable[[], bytes], problem: str, limit: int
) -> None:
    with pytest.raises(PHashError) as e:
        phash(make(), name=name, max_pixels=limit or P.DEFAULT_MAX_PIXELS)
    assert str(e.value).startswith(f"{name}: ")
    assert problem in e.value.problem
    assert isinstance(e.value, ValueError)


def test_batch_reports_bad_rows_and_hashes_the_rest() -> None:
    good = png("circle_128.png")
    blobs: list[bytes | None] = [good]
    for _, make, _, _ in BAD_INPUTS[:-3]:
        blobs.append(make())
    blobs += [None, bytearray(good)]
    hashes, errors = phash_batch(blobs, max_pixels=10_000_000)
    want = golden()["phash_images"]["circle_128.png"]["phash_uint64"]
    assert int(hashes[0]) == int(hashes[-1]) == want
    assert errors[0] is None and errors[-1] is None
    for i, (_, _, problem, _) in enumerate(BAD_INPUTS[:-3], start=1):
        assert hashes[i] == 0
        err = errors[i]
        assert err is not None and problem in err
    assert errors[-2] is not None and "null" in errors[-2]


def test_batch_over_max_pixels() -> None:
    hashes, errors = phash_batch([png("circle_128.png"), png("tiny_8.png")], max_pixels=100)
    assert hashes[0] == 0
    assert errors[0] is not None and "over the limit of 100" in errors[0]
    assert errors[1] is None
    assert int(hashes[1]) == golden()["phash_images"]["tiny_8.png"]["phash_uint64"]


def test_empty_batch() -> None:
    hashes, errors = phash_batch([])
    assert hashes.shape == (0,) and hashes.dtype == np.uint64
    assert errors == []


def test_png_chunk_order_follows_go() -> None:
    """Go rejects tRNS after a (suggested) PLTE in a truecolour PNG: chunk out of order."""
    s = RNG.integers(0, 256, (8, 8, 3))
    data = make_png(s, 8, 2, plte=bytes(range(6)), trns=struct.pack(">HHH", 1, 2, 3))
    with pytest.raises(PHashError, match="out of order"):
        phash(data)
    with pytest.raises(PHashError, match="tRNS, color type mismatch"):
        phash(make_png(RNG.integers(0, 256, (4, 4, 4)), 8, 6, trns=b"\x00\x01"))
    with pytest.raises(PHashError, match="bad tRNS length"):
        phash(make_png(RNG.integers(0, 256, (4, 4)), 8, 0, trns=b"\x00\x01\x02\x03"))
