"""Image perceptual hash (pHash) of richardwooding/fingerprint, bit-identical to the Go code.

The reference (``phash.go``) decodes an image with Go's ``image.Decode`` (PNG, JPEG, GIF),
scales it to a 32x32 ``*image.RGBA`` with ``golang.org/x/image/draw`` ``CatmullRom.Scale``,
takes Rec. 601 luma, computes the unnormalised 2-D DCT-II of which it keeps the 8x8
low-frequency block, and sets bit ``u*8+v`` iff coefficient ``(u, v)`` is strictly above the
median of the 63 AC coefficients (spec §4.2-4.3).

Reproducing it bit for bit takes three things this module does explicitly:

* **Go's pixel model.** Pillow decodes the pixels; the samples are then re-expressed as the
  Go image type ``image/png`` would have produced (``*image.Gray``, ``*image.RGBA``,
  ``*image.NRGBA``, ``*image.Paletted``, ``*image.Gray16``, ``*image.RGBA64``,
  ``*image.NRGBA64``) and read the way the scaler reads them (premultiplied 16-bit values).
  PNG headers (bit depth, colour type, ``PLTE``, ``tRNS``) are parsed here, not taken from
  Pillow, which folds some of them away; 16-bit colour samples, which Pillow truncates to
  8 bits, are recovered by decoding the low bytes in a second pass.
* **Go's float operation order.** The scaler's sums, the luma and the DCT are evaluated in
  float64 in exactly Go's order (each product rounded, then added left to right; no fused
  multiply-add). Sums are vectorised with numpy across independent outputs only; the
  sequential direction uses ``np.add.accumulate``, which is a running sum by definition.
* **Go's cosines.** The DCT uses the 256 float64 values of Go's ``math.Cos`` shipped in
  ``neardup_udfs/data/go_cos_table.json`` (61 of them differ by 1 ulp from CPython's).

JPEG and GIF go through the same pipeline, but Go's JPEG decoder (its own IDCT, chroma
replication) is not reproducible with libjpeg, so JPEG hashes are only close to Go's; GIF
frames are lossless and modelled like Go's ``*image.Paletted`` (first frame, frame bounds),
but have no golden.

**Formats beyond the reference's decoders** (``PILLOW_FORMATS``: WebP, BMP, TIFF, ICO) are
decoded by Pillow and go through the same pipeline (same pipeline id): their pixels are
mapped onto the Go image type Go's own decoders for them (``golang.org/x/image/webp``,
``bmp``, ``tiff``) return, or the closest one (:func:`go_image_from_pil`). There is no Go
reference for them: the hash is as exact as the decoded pixels (lossless WebP, BMP and
uncompressed or LZW/Deflate TIFF give PNG's hash of the same pixels; lossy WebP is decoded
by libwebp to RGB, not to Go's YCbCr, so it is close). Vector and exotic formats (SVG, EPS,
WMF, PSD, JPEG 2000, AVIF/HEIF, TGA, ...) are refused as unsupported. A file with more than
one frame (animated GIF, WebP or PNG, multi-page TIFF) is hashed by its first frame, and
:class:`Decoded` says so. Every format is size-checked from its header before any pixel is
decoded (for WebP, before Pillow even creates libwebp's decoder, which allocates the canvas).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageFile, UnidentifiedImageError

__all__ = [
    "ANIMATED",
    "DEFAULT_MAX_PIXELS",
    "FORMATS",
    "GO_REFERENCE_FORMATS",
    "PILLOW_FORMATS",
    "Decoded",
    "GoImage",
    "ImageBatch",
    "PHashError",
    "decode",
    "decode_image",
    "dct8",
    "go_cos_table",
    "go_image_from_pil",
    "hash_from_dct",
    "image_format",
    "luma",
    "open_image",
    "phash",
    "phash_batch",
    "phash_distance",
    "phash_from_hex",
    "phash_hex",
    "phash_image",
    "phash_images",
    "resize32",
]

F64 = npt.NDArray[np.float64]
U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

DEFAULT_MAX_PIXELS = 50_000_000
"""Default refusal limit on width x height, checked before any pixel is decoded."""

_GRID = 32
_LOW = 8
_MASK64 = (1 << 64) - 1
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GO_REFERENCE_FORMATS = ("PNG", "JPEG", "GIF")
"""The formats the reference decodes (Go's ``image.Decode`` with png, jpeg and gif)."""
PILLOW_FORMATS = ("WEBP", "BMP", "TIFF", "ICO")
"""Formats the reference cannot read, decoded by Pillow onto Go's pixel model (no golden)."""
FORMATS = GO_REFERENCE_FORMATS + PILLOW_FORMATS
ANIMATED = " (animated)"
"""Appended to :attr:`ImageBatch.formats` for a file of several frames (the first is hashed)."""


class PHashError(ValueError):
    """An input cannot be hashed (not an image, truncated, unsupported, too large, bad hex).

    Attributes:
        source: the file name or description of the input (``"<bytes>"`` by default).
        problem: what is wrong, without the source; this is the row error of
            :func:`phash_batch`.
    """

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


# ---------------------------------------------------------------------------------------------
# Hex wire form and distance


def phash_hex(h: int) -> str:
    """``PHashHex``: the 8 bytes of ``h`` big-endian as 16 lowercase hex digits.

    Args:
        h: a hash in ``[0, 2**64)``; a negative value in ``[-2**63, 0)`` is read as the
            two's-complement int64 a Spark ``LongType`` column holds.

    Raises:
        ValueError: ``h`` is outside ``[-2**63, 2**64)``.

    Example:
        >>> phash_hex(0x0F0F0F0F0F0F0F0F)
        '0f0f0f0f0f0f0f0f'
    """
    h = int(h)
    if not -(1 << 63) <= h <= _MASK64:
        raise ValueError(f"phash {h} does not fit in 64 bits")
    return f"{h & _MASK64:016x}"


def _go_rune_repr(b: int) -> str:
    # Go's %#U of rune(b): "U+0067 'g'", or just "U+000A" when not printable.
    ch = chr(b)
    return f"U+{b:04X} '{ch}'" if ch.isprintable() else f"U+{b:04X}"


def phash_from_hex(s: str | bytes) -> int:
    """``PHashFromHex``: parse 16 hex digits (either case) back into the 64-bit hash.

    Raises:
        PHashError: with the reference's message: ``encoding/hex: invalid byte: U+0067 'g'``
            (a non-hex byte, reported before a bad length), ``encoding/hex: odd length hex
            string``, or ``phash hex must decode to 8 bytes`` (even length other than 16,
            including the empty string).

    Notes:
        Decoding is byte-wise like Go's ``hex.DecodeString``: no ``0x`` prefix, no
        whitespace; a non-ASCII character is reported by its first UTF-8 byte.

    Example:
        >>> hex(phash_from_hex("A18CAD6C2D93D25C"))
        '0xa18cad6c2d93d25c'
    """
    raw = s.encode("utf-8", "surrogatepass") if isinstance(s, str) else bytes(s)
    source = f"phash hex {s!r}"
    digits = b"0123456789abcdefABCDEF"
    for b in raw[: len(raw) - len(raw) % 2]:
        if b not in digits:
            raise PHashError(source, f"encoding/hex: invalid byte: {_go_rune_repr(b)}")
    if len(raw) % 2:
        if raw[-1] not in digits:
            raise PHashError(source, f"encoding/hex: invalid byte: {_go_rune_repr(raw[-1])}")
        raise PHashError(source, "encoding/hex: odd length hex string")
    if len(raw) != 16:
        raise PHashError(source, "phash hex must decode to 8 bytes")
    return int(raw, 16)


def phash_distance(a: int, b: int) -> int:
    """Hamming distance of two hashes (``Distance``: popcount of ``a ^ b``), in [0, 64].

    Notes:
        Negative int64 values are read as their unsigned 64-bit pattern. The reference's
        guide: <= 8 resize or re-save, <= 12 light crop or recolour, >= 20 likely different.
    """
    return ((int(a) ^ int(b)) & _MASK64).bit_count()


# ---------------------------------------------------------------------------------------------
# Go's cosine table


@cache
def go_cos_table() -> F64:
    """Go's ``math.Cos((2i+1)*u*pi/64)`` as a read-only (32, 8) float64 array ``[i, u]``."""
    raw = resources.files("neardup_udfs").joinpath("data/go_cos_table.json").read_text("utf-8")
    bits: list[str] = json.loads(raw)["float64_bits"]
    vals = [struct.unpack(">d", bytes.fromhex(h))[0] for h in bits]
    table = np.array(vals, dtype=np.float64).reshape(_GRID, _LOW)
    table.setflags(write=False)
    return table


# ---------------------------------------------------------------------------------------------
# Go's pixel model

Model = Literal[
    "gray8",  # *image.Gray
    "ycbcr",  # *image.YCbCr (JPEG): Y, Cb, Cr bytes
    "rgb8",  # *image.RGBA, opaque (PNG RGB 8)
    "nrgba8",  # *image.NRGBA: R, G, B, A bytes
    "nrgba8_gray",  # *image.NRGBA with R = G = B: Y, A bytes
    "gray16",  # *image.Gray16
    "rgb16",  # *image.RGBA64, opaque (PNG RGB 16)
    "nrgba64",  # *image.NRGBA64: R, G, B, A uint16
    "nrgba64_gray",  # *image.NRGBA64 with R = G = B: Y, A uint16
    "paletted",  # *image.Paletted: indices + 256-entry premultiplied RGBA64 table
    "cmyk",  # *image.CMYK
]

_GO_TYPES: dict[str, str] = {
    "gray8": "*image.Gray",
    "ycbcr": "*image.YCbCr",
    "rgb8": "*image.RGBA",
    "nrgba8": "*image.NRGBA",
    "nrgba8_gray": "*image.NRGBA",
    "gray16": "*image.Gray16",
    "rgb16": "*image.RGBA64",
    "nrgba64": "*image.NRGBA64",
    "nrgba64_gray": "*image.NRGBA64",
    "paletted": "*image.Paletted",
    "cmyk": "*image.CMYK",
}


class GoImage:
    """Decoded pixels in the Go image type ``image.Decode`` returns, as the scaler reads them.

    Args:
        model: which Go type the samples stand for (see ``Model``).
        pix: the raw samples, ``(h, w)`` or ``(h, w, k)``, uint8 or uint16 as the model says.
        palette: for ``"paletted"``, a (256, 4) int64 table of the premultiplied 16-bit
            ``RGBA()`` of each index (indices past the Go palette are opaque black).

    Notes:
        The scaler never sees a whole float64 copy of the image: :meth:`planes` converts a
        strip of rows at a time. Channel plans are chosen from the model so that identical
        work is done once (``R = G = B`` images use one colour plane; a uniform alpha is
        computed on one row) - this changes no result, because identical inputs go through
        identical float operations.
    """

    __slots__ = ("alpha", "alpha_value", "go_type", "model", "nc", "palette", "pix")

    def __init__(self, model: Model, pix: npt.NDArray[Any], palette: I64 | None = None) -> None:
        if pix.ndim < 2 or pix.shape[0] == 0 or pix.shape[1] == 0:
            raise ValueError("a GoImage needs at least one row and one column")
        self.model: Model = model
        self.pix = pix
        self.palette = palette
        self.go_type = _GO_TYPES[model]
        gray = model in ("gray8", "nrgba8_gray", "gray16", "nrgba64_gray")
        # alpha: "one" (Gray, YCbCr: the scaler stores exactly 1.0), "const" (uniform 16-bit
        # value alpha_value), or "plane" (varies: an extra plane after the colour planes).
        alpha: Literal["one", "const", "plane"] = "const"
        alpha_value = 65535
        if model in ("gray8", "ycbcr"):
            alpha = "one"
        elif model in ("nrgba8", "nrgba8_gray", "nrgba64", "nrgba64_gray"):
            a = pix[..., -1]
            lo, hi = int(a.min()), int(a.max())
            if lo == hi:
                alpha_value = lo * 257 if pix.dtype == np.uint8 else lo
            else:
                alpha = "plane"
        elif model == "paletted":
            if palette is None or palette.shape != (256, 4):
                raise ValueError("a paletted GoImage needs a (256, 4) palette table")
            used = np.bincount(pix.ravel(), minlength=256)[:256] > 0
            table = palette[used]
            gray = bool(np.all(table[:, 0] == table[:, 1]) and np.all(table[:, 0] == table[:, 2]))
            if np.all(table[:, 3] == table[0, 3]):
                alpha_value = int(table[0, 3])
            else:
                alpha = "plane"
        self.nc = 1 if gray else 3
        self.alpha = alpha
        self.alpha_value = float(alpha_value)

    @property
    def width(self) -> int:
        return int(self.pix.shape[1])

    @property
    def height(self) -> int:
        return int(self.pix.shape[0])

    def rgba64(self, y0: int = 0, y1: int | None = None, x0: int = 0, x1: int | None = None) -> I64:
        """Premultiplied 16-bit (R, G, B, A) of ``pix[y0:y1, x0:x1]`` as the scaler reads them.

        Notes:
            For ``*image.Gray`` and ``*image.YCbCr`` the returned A is 0xffff, but the scaler
            does not read it: it stores an alpha of exactly 1.0 after the horizontal pass.
        """
        return self._premultiply(self.pix[y0:y1, x0:x1])

    def _premultiply(self, raw: npt.NDArray[Any]) -> I64:
        """Premultiplied RGBA64 of raw samples with any two leading (pixel) axes."""
        r = raw.astype(np.int64)
        out = np.empty((*r.shape[:2], 4), dtype=np.int64)
        m = self.model
        if m == "gray8":
            out[..., :3] = (r * 0x101)[..., None]
            out[..., 3] = 0xFFFF
        elif m == "ycbcr":
            yy1 = r[..., 0] * 0x10101
            cb1 = r[..., 1] - 128
            cr1 = r[..., 2] - 128
            for c, v in enumerate(
                (yy1 + 91881 * cr1, yy1 - 22554 * cb1 - 46802 * cr1, yy1 + 116130 * cb1)
            ):
                out[..., c] = np.clip(v >> 8, 0, 0xFFFF)
            out[..., 3] = 0xFFFF
        elif m == "rgb8":
            out[..., :3] = r[..., :3] * 0x101
            out[..., 3] = 0xFFFF
        elif m in ("nrgba8", "nrgba8_gray"):
            a = r[..., -1] * 0x101
            out[..., :3] = (r[..., :-1] * a[..., None]) // 0xFF
            out[..., 3] = a
        elif m == "gray16":
            out[..., :3] = r[..., None]
            out[..., 3] = 0xFFFF
        elif m == "rgb16":
            out[..., :3] = r
            out[..., 3] = 0xFFFF
        elif m in ("nrgba64", "nrgba64_gray"):
            a = r[..., -1]
            out[..., :3] = (r[..., :-1] * a[..., None]) // 0xFFFF
            out[..., 3] = a
        elif m == "paletted":
            assert self.palette is not None
            out[...] = self.palette[r]
        elif m == "cmyk":
            w = 0xFFFF - r[..., 3] * 0x101
            out[..., :3] = ((0xFFFF - r[..., :3] * 0x101) * w[..., None]) // 0xFFFF
            out[..., 3] = 0xFFFF
        else:  # pragma: no cover - Model is closed
            raise AssertionError(m)
        return out

    @property
    def n_planes(self) -> int:
        """Float planes the scaler carries: colour planes, plus alpha when it varies."""
        return self.nc + (1 if self.alpha == "plane" else 0)

    def planes(self, y0: int, y1: int, x0: int = 0, x1: int | None = None) -> F64:
        """``pix[y0:y1, x0:x1]`` as float64 planes, transposed: shape ``(cols, rows * P)``.

        ``P`` is :attr:`n_planes`; element ``[x, r*P + c]`` is plane ``c`` (R, G, B or the
        single grey plane, then alpha) of pixel ``(x0 + x, y0 + r)``.
        """
        m = self.model
        if m in ("gray8", "rgb8", "gray16", "rgb16"):
            raw = self.pix[y0:y1, x0:x1]
            t = raw.T if raw.ndim == 2 else raw.transpose(1, 0, 2)
            scale = 257.0 if raw.dtype == np.uint8 else 1.0
            f: F64 = np.multiply(t, scale, dtype=np.float64, order="C")
            return f.reshape(f.shape[0], -1)
        raw = self.pix[y0:y1, x0:x1]
        v = self._premultiply(np.ascontiguousarray(raw.swapaxes(0, 1)))  # (cols, rows, 4)
        chans = [0] if self.nc == 1 else [0, 1, 2]
        if self.alpha == "plane":
            chans.append(3)
        sel = v[..., chans] if len(chans) < 4 else v
        t2: F64 = sel.astype(np.float64, order="C")
        return t2.reshape(t2.shape[0], -1)


# ---------------------------------------------------------------------------------------------
# Decoding


def _png_header(data: bytes, name: str) -> dict[str, Any]:
    """Walk a PNG's chunks the way Go's ``image/png`` does; return IHDR/PLTE/tRNS facts.

    Raises PHashError where Go's decoder would fail on the chunk structure: bad signature,
    truncation (no IEND), CRC mismatch, chunk order, invalid depth/colour type, non-positive
    dimensions, bad PLTE/tRNS lengths.
    """
    n = len(data)
    view = memoryview(data)
    pos = 8
    stage = 0  # 0 start, 1 IHDR, 2 PLTE, 3 tRNS, 4 IDAT, 5 IEND
    info: dict[str, Any] = {"plte": None, "trns": None}
    paletted = False
    while stage != 5:
        if pos + 8 > n:
            raise PHashError(name, "truncated PNG (unexpected EOF before IEND)")
        (length,) = struct.unpack_from(">I", data, pos)
        ctype = data[pos + 4 : pos + 8]
        if length > 0x7FFFFFFF:
            raise PHashError(name, f"invalid PNG: bad chunk length {length}")
        end = pos + 8 + length
        if end + 4 > n:
            raise PHashError(name, "truncated PNG (unexpected EOF)")
        body = view[pos + 8 : end]
        (crc,) = struct.unpack_from(">I", data, end)
        if zlib.crc32(body, zlib.crc32(ctype)) & 0xFFFFFFFF != crc:
            raise PHashError(name, f"invalid PNG: checksum mismatch in {ctype!r} chunk")
        if stage == 0 and ctype != b"IHDR":
            raise PHashError(name, "invalid PNG: chunk out of order (IHDR must come first)")
        if ctype == b"IHDR":
            if stage != 0:
                raise PHashError(name, "invalid PNG: chunk out of order")
            if length != 13:
                raise PHashError(name, "invalid PNG: bad IHDR length")
            w, h, depth, color, comp, filt, inter = struct.unpack(">iiBBBBB", body)
            if comp != 0 or filt != 0:
                raise PHashError(name, "unsupported PNG compression or filter method")
            if inter not in (0, 1):
                raise PHashError(name, "invalid PNG: invalid interlace method")
            if w <= 0 or h <= 0:
                raise PHashError(name, f"zero-size image ({w}x{h}): non-positive dimension")
            valid = {1: (0, 3), 2: (0, 3), 4: (0, 3), 8: (0, 2, 3, 4, 6), 16: (0, 2, 4, 6)}
            if color not in valid.get(depth, ()):
                raise PHashError(
                    name, f"unsupported PNG feature: bit depth {depth}, color type {color}"
                )
            paletted = color == 3
            info.update(width=w, height=h, depth=depth, color=color, interlace=inter)
            stage = 1
        elif ctype == b"PLTE":
            if stage != 1:
                raise PHashError(name, "invalid PNG: chunk out of order (PLTE)")
            npal = length // 3
            if length % 3 or npal <= 0 or npal > 256 or npal > 1 << info["depth"]:
                raise PHashError(name, "invalid PNG: bad PLTE length")
            if info["color"] not in (2, 3, 6):
                raise PHashError(name, "invalid PNG: PLTE, color type mismatch")
            info["plte"] = bytes(body)
            stage = 2
        elif ctype == b"tRNS":
            if (paletted and stage != 2) or (not paletted and stage != 1):
                raise PHashError(name, "invalid PNG: chunk out of order (tRNS)")
            color = info["color"]
            if color in (4, 6):
                raise PHashError(name, "invalid PNG: tRNS, color type mismatch")
            want = {0: 2, 2: 6}.get(color)
            if (want is not None and length != want) or length > 256:
                raise PHashError(name, "invalid PNG: bad tRNS length")
            info["trns"] = bytes(body)
            stage = 3
        elif ctype == b"IDAT":
            if stage < 1 or (stage == 1 and paletted):
                raise PHashError(name, "invalid PNG: chunk out of order (IDAT)")
            stage = 4
        elif ctype == b"IEND":
            if stage != 4:
                raise PHashError(name, "invalid PNG: chunk out of order (IEND before IDAT)")
            stage = 5
        pos = end + 4
    return info


def _check_size(w: int, h: int, max_pixels: int, name: str) -> None:
    if w <= 0 or h <= 0:
        raise PHashError(name, f"zero-size image ({w}x{h})")
    limit = max_pixels
    if Image.MAX_IMAGE_PIXELS is not None:
        limit = min(limit, int(Image.MAX_IMAGE_PIXELS))
    if w * h > limit:
        raise PHashError(
            name,
            f"image is {w}x{h} = {w * h} pixels, over the limit of {limit} "
            "(decompression bomb guard)",
        )


def _load(im: ImageFile.ImageFile, name: str, rawmode: str | None = None) -> npt.NDArray[Any]:
    """Decode the pixels (optionally with another PNG rawmode) into a numpy array."""
    if rawmode is not None:  # same zip stream and filters, another sample unpacker
        im.tile = [ImageFile._Tile(t[0], t[1], t[2], rawmode) for t in im.tile]
    _load_pixels(im, name)
    return np.asarray(im)


def _load_pixels(im: ImageFile.ImageFile, name: str) -> None:
    """``im.load()``, a failure reported as corrupt data of the image's format."""
    try:
        im.load()
    except PHashError:
        raise
    except Exception as e:  # Pillow raises OSError, SyntaxError, ValueError, EOFError, ...
        fmt = im.format or "image"
        raise PHashError(name, f"corrupt or truncated {fmt} data: {_describe(e)}") from e


def _describe(e: BaseException) -> str:
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _open(data: bytes, name: str, fmt: str) -> ImageFile.ImageFile:
    """Pillow's lazy image of ``data`` (header read, no pixel decoded), by ``fmt``'s plugin
    only: the format was recognised from the signature (:func:`image_format`)."""
    try:
        im = Image.open(io.BytesIO(data), formats=(fmt,))
    except Image.DecompressionBombError as e:
        raise PHashError(name, f"decompression bomb: {e}") from e
    except UnidentifiedImageError as e:
        raise PHashError(name, f"corrupt {fmt} header: Pillow cannot identify the file") from e
    except Exception as e:
        raise PHashError(name, f"corrupt {fmt} header: {_describe(e)}") from e
    assert isinstance(im, ImageFile.ImageFile)
    return im


def _palette_table(rgb: bytes, alphas: bytes, default_alpha: int = 0xFF) -> I64:
    """256-entry premultiplied RGBA64 table of a Go palette.

    Entries from ``rgb`` are ``color.RGBA`` (opaque, or with ``default_alpha``); the first
    ``len(alphas)`` entries become ``color.NRGBA`` with those alphas; entries past both
    are opaque black, as Go's PNG decoder fills them.
    """
    table = np.zeros((256, 4), dtype=np.int64)
    table[:, 3] = 0xFFFF
    npal = len(rgb) // 3
    if npal:
        pal = np.frombuffer(rgb[: npal * 3], dtype=np.uint8).reshape(npal, 3).astype(np.int64)
        table[:npal, :3] = pal * 0x101
        table[:npal, 3] = default_alpha * 0x101
    na = len(alphas)
    if na:
        a = np.frombuffer(alphas, dtype=np.uint8).astype(np.int64)
        rgb8 = table[:na, :3] // 0x101
        table[:na, :3] = (rgb8 * 0x101 * a[:, None]) // 0xFF
        table[:na, 3] = a * 0x101
    return table


def _decode_png(data: bytes, hdr: dict[str, Any], im: ImageFile.ImageFile, name: str) -> GoImage:
    depth: int = hdr["depth"]
    color: int = hdr["color"]
    trns: bytes | None = hdr["trns"]
    if im.format != "PNG" or im.size != (hdr["width"], hdr["height"]):
        raise PHashError(name, "cannot decode PNG: Pillow disagrees with the IHDR")
    if color == 0:  # grayscale: 1/2/4/8 -> *image.Gray (0..255), 16 -> *image.Gray16
        arr = _load(im, name)
        if depth == 16:
            y16 = arr.astype(np.uint16)
            if trns is None:
                return GoImage("gray16", y16)
            ty = (trns[0] << 8) | trns[1]
            a16 = np.where(y16 == ty, 0, 0xFFFF).astype(np.uint16)
            return GoImage("nrgba64_gray", np.stack([y16, a16], axis=-1))
        y8 = arr.astype(np.uint8) * np.uint8(255) if arr.dtype == np.bool_ else arr
        y8 = np.ascontiguousarray(y8, dtype=np.uint8)
        if trns is None:
            return GoImage("gray8", y8)
        ty8 = (trns[1] * {1: 0xFF, 2: 0x55, 4: 0x11, 8: 1}[depth]) & 0xFF
        a8 = np.where(y8 == ty8, 0, 0xFF).astype(np.uint8)
        return GoImage("nrgba8_gray", np.stack([y8, a8], axis=-1))
    if color == 2:  # truecolour: 8 -> *image.RGBA, 16 -> *image.RGBA64 (NRGBA* with tRNS)
        if depth == 8:
            rgb = np.ascontiguousarray(_load(im, name), dtype=np.uint8)
            if trns is None:
                return GoImage("rgb8", rgb)
            key = np.array([trns[1], trns[3], trns[5]], dtype=np.uint8)
            a8 = np.where(np.all(rgb == key, axis=-1), 0, 0xFF).astype(np.uint8)
            return GoImage("nrgba8", np.concatenate([rgb, a8[..., None]], axis=-1))
        rgb16 = _load16(data, im, name, "RGB;16L", 3)
        if trns is None:
            return GoImage("rgb16", rgb16)
        key16 = np.array(struct.unpack(">HHH", trns), dtype=np.uint16)
        a16 = np.where(np.all(rgb16 == key16, axis=-1), 0, 0xFFFF).astype(np.uint16)
        return GoImage("nrgba64", np.concatenate([rgb16, a16[..., None]], axis=-1))
    if color == 3:  # palette -> *image.Paletted
        idx = np.ascontiguousarray(_load(im, name), dtype=np.uint8)
        return GoImage("paletted", idx, _palette_table(hdr["plte"] or b"", trns or b""))
    if color == 4:  # gray + alpha -> *image.NRGBA / *image.NRGBA64
        if depth == 8:
            return GoImage("nrgba8_gray", np.ascontiguousarray(_load(im, name), dtype=np.uint8))
        # Pillow would truncate to 8 bits; reading the 4 bytes per pixel as "RGBA" is lossless.
        raw = np.ascontiguousarray(_load(im, name, rawmode="RGBA"), dtype=np.uint16)
        ya = (raw[..., 0::2] << 8) | raw[..., 1::2]
        return GoImage("nrgba64_gray", np.ascontiguousarray(ya, dtype=np.uint16))
    # color == 6: RGBA -> *image.NRGBA / *image.NRGBA64
    if depth == 8:
        return GoImage("nrgba8", np.ascontiguousarray(_load(im, name), dtype=np.uint8))
    return GoImage("nrgba64", _load16(data, im, name, "RGBA;16L", 4))


def _load16(
    data: bytes, im: ImageFile.ImageFile, name: str, low_rawmode: str, k: int
) -> npt.NDArray[np.uint16]:
    """16-bit colour samples: Pillow's default decode keeps the high bytes; a second decode
    of the same file with the little-endian rawmode yields the low bytes (same filters)."""
    hi = np.asarray(_load(im, name), dtype=np.uint16)[..., :k]
    lo = np.asarray(_load(_open(data, name, "PNG"), name, rawmode=low_rawmode), dtype=np.uint16)
    return np.ascontiguousarray((hi << 8) | lo[..., :k], dtype=np.uint16)


def _decode_gif(im: ImageFile.ImageFile, name: str) -> GoImage:
    arr = _load(im, name)
    extent = getattr(im, "dispose_extent", None)
    if extent is not None:  # Go's image is the first frame, with the frame's own bounds
        x0, y0, x1, y1 = (int(v) for v in extent)
        arr = arr[max(y0, 0) : y1, max(x0, 0) : x1]
        if arr.shape[0] == 0 or arr.shape[1] == 0:
            raise PHashError(name, "zero-size GIF frame")
    trans = im.info.get("transparency")
    if im.mode == "P":
        rgb = bytes(im.getpalette() or [])
    elif im.mode == "L":  # Pillow drops an identity grey palette
        rgb = bytes(np.repeat(np.arange(256, dtype=np.uint8), 3))
    else:
        return go_image_from_pil(Image.fromarray(np.ascontiguousarray(arr), im.mode))
    table = _palette_table(rgb, b"")
    if isinstance(trans, int) and 0 <= trans < 256:
        table[trans] = 0  # Go sets the transparent entry to color.RGBA{}
    return GoImage("paletted", np.ascontiguousarray(arr, dtype=np.uint8), table)


def _decode_jpeg(im: ImageFile.ImageFile, name: str) -> GoImage:
    if im.mode == "RGB":
        # Ask libjpeg for YCbCr and convert with Go's integer formula; Go's own IDCT and
        # chroma replication still differ from libjpeg, so the result is only close.
        im.draft("YCbCr", None)
    arr = _load(im, name)
    if im.mode == "YCbCr":
        return GoImage("ycbcr", np.ascontiguousarray(arr, dtype=np.uint8))
    if im.mode == "L":
        return GoImage("gray8", np.ascontiguousarray(arr, dtype=np.uint8))
    if im.mode == "CMYK":
        return GoImage("cmyk", np.ascontiguousarray(arr, dtype=np.uint8))
    return go_image_from_pil(im)


# ---------------------------------------------------------------------------------------------
# Formats beyond the reference's decoders (PILLOW_FORMATS)

_PILLOW_MODES = {
    # Pillow mode -> the Go image type it is modelled as (go_image_from_pil), the type Go's
    # x/image decoders return for such a file (or the closest): see docs/design-notes.md.
    "1": "*image.Gray",  # 0 / 255, as x/image/tiff expands 1-bit grey
    "L": "*image.Gray",
    "P": "*image.Paletted",  # palette and transparency as the palette's alphas
    "LA": "*image.NRGBA",  # grey + straight alpha
    "RGB": "*image.RGBA",  # opaque (x/image/webp's lossy *image.YCbCr: libwebp gives RGB)
    "RGBX": "*image.RGBA",
    "RGBA": "*image.NRGBA",  # straight alpha, as x/image/webp (VP8L) and tiff decode it
    "CMYK": "*image.CMYK",
    "YCbCr": "*image.YCbCr",
    "I;16": "*image.Gray16",
    "I;16L": "*image.Gray16",
    "I;16B": "*image.Gray16",
    "I;16N": "*image.Gray16",
    "PA": "*image.NRGBA",  # converted by Pillow to RGBA first
    "La": "*image.NRGBA",  # premultiplied: converted by Pillow to RGBA first
    "RGBa": "*image.NRGBA",
}
"""Pillow modes hashed from PILLOW_FORMATS; others (32-bit integer or float samples, signed
16-bit, LAB, HSV) are refused: Go's decoders do not read them and a conversion would guess."""


def _u16le(b: bytes, at: int) -> int:
    return int.from_bytes(b[at : at + 2], "little")


def _u24le(b: bytes, at: int) -> int:
    return int.from_bytes(b[at : at + 3], "little")


def _u32le(b: bytes, at: int) -> int:
    return int.from_bytes(b[at : at + 4], "little")


def _webp_size(data: bytes, name: str) -> tuple[int, int]:
    """Width and height of a WebP from its RIFF header and first chunk (VP8, VP8L or VP8X's
    canvas), with libwebp's own container checks: nothing is decoded or allocated."""
    n = len(data)
    declared = _u32le(data, 4) + 8
    if declared > n:
        raise PHashError(
            name, f"truncated WEBP: the RIFF header declares {declared} bytes, {n} present"
        )
    if declared < 20:
        raise PHashError(name, f"corrupt WEBP: the RIFF header declares {declared} bytes, no chunk")
    fourcc, size = data[12:16], _u32le(data, 16)
    body = data[20 : 20 + size]
    if 20 + size > declared:
        what = fourcc.decode("latin-1")
        raise PHashError(
            name,
            f"truncated WEBP: the {what!r} chunk declares {size} bytes, {declared - 20} present",
        )
    if fourcc == b"VP8 ":
        if size < 10 or body[3:6] != b"\x9d\x01\x2a":
            raise PHashError(name, "corrupt WEBP: the VP8 frame header has no start code")
        return _u16le(body, 6) & 0x3FFF, _u16le(body, 8) & 0x3FFF
    if fourcc == b"VP8L":
        if size < 5 or body[0] != 0x2F:
            raise PHashError(name, "corrupt WEBP: the VP8L header has no signature byte")
        bits = _u32le(body, 1)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if fourcc == b"VP8X":
        if size < 10:
            raise PHashError(name, "corrupt WEBP: the VP8X chunk is shorter than 10 bytes")
        return _u24le(body, 4) + 1, _u24le(body, 7) + 1
    raise PHashError(name, f"corrupt WEBP: unknown first chunk {fourcc!r}")


def _check_ico(data: bytes, max_pixels: int, name: str) -> None:
    """Size-check every picture an ICO holds, from its own header (PNG's IHDR or the DIB
    header): the directory's sizes stop at 256 and Pillow decodes what the picture says."""
    n = len(data)
    if n < 6:
        raise PHashError(name, "truncated ICO: no directory")
    for i in range(_u16le(data, 4)):
        entry = 6 + 16 * i
        if entry + 16 > n:
            raise PHashError(name, f"truncated ICO: directory entry {i} is cut off")
        at = _u32le(data, entry + 12)
        if data[at : at + 8] == _PNG_SIGNATURE and at + 24 <= n:
            w, h = struct.unpack_from(">II", data, at + 16)
        elif at + 12 <= n and _u32le(data, at) == 12:  # BITMAPCOREHEADER
            w, h = _u16le(data, at + 4), _u16le(data, at + 6) // 2
        elif at + 12 <= n:  # BITMAPINFOHEADER and later: the height covers XOR and AND masks
            w, h = struct.unpack_from("<ii", data, at + 4)
            w, h = abs(w), abs(h) // 2
        else:
            raise PHashError(name, f"truncated ICO: picture {i} starts past the end")
        _check_size(max(w, 1), max(h, 1), max_pixels, name)


def _decode_pillow(im: ImageFile.ImageFile, fmt: str, name: str, max_pixels: int) -> GoImage:
    """Decode a PILLOW_FORMATS image's first frame onto Go's pixel model."""

    def supported() -> None:
        if im.mode not in _PILLOW_MODES:
            raise PHashError(
                name, f"unsupported {fmt} pixel format: Pillow mode {im.mode} is not hashed"
            )

    supported()  # known from the header: refused before decoding
    _load_pixels(im, name)
    supported()  # ICO: the picture's own mode
    _check_size(im.size[0], im.size[1], max_pixels, name)  # ICO: the picture's own size
    return go_image_from_pil(im)


def _gif_animated(data: bytes, name: str) -> bool:
    """Whether a GIF has a second frame (read on a second handle: seeking Pillow's GIF
    reader changes the state the first frame is decoded from)."""
    im = _open(data, name, "GIF")
    try:
        return bool(getattr(im, "is_animated", False))
    except Exception:  # garbage after the first frame, which Go's gif.Decode never reads
        return False


# ---------------------------------------------------------------------------------------------
# Decoding entry points


@dataclass(frozen=True)
class Decoded:
    """A decoded image and what it was: see :func:`decode_image`."""

    image: GoImage
    format: str  # one of FORMATS
    animated: bool  # the file holds more than one frame; ``image`` is the first

    @property
    def go_reference(self) -> bool:
        """Whether the reference reads this format (PNG bit-exact, JPEG close, GIF modelled)."""
        return self.format in GO_REFERENCE_FORMATS

    @property
    def label(self) -> str:
        """The format, with :data:`ANIMATED` appended for a file of several frames."""
        return self.format + (ANIMATED if self.animated else "")


def decode_image(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "<bytes>"
) -> Decoded:
    """Decode an image (any of :data:`FORMATS`) into Go's pixel model, with its format.

    Args:
        data: the encoded image (``bytes``, ``bytearray`` or ``memoryview``).
        max_pixels: refuse images with more than this many pixels (width x height), checked
            from the header before any pixel is decoded, whatever the format. Pillow's own
            bomb guard (``PIL.Image.MAX_IMAGE_PIXELS``) stays on and also applies.
        name: how errors name the input (a file name or row description).

    Raises:
        PHashError: empty input, unknown or unsupported format, truncated or corrupt data
            (the message names the format and the problem), an unsupported pixel format,
            zero-size, or too many pixels.

    Notes:
        PNG: every colour type and bit depth is modelled exactly, including ``tRNS`` colour
        keys (Go compares sub-8-bit grey keys after scaling, and 8-bit keys by their low
        byte), palettes with partial ``tRNS``, indices past the palette (opaque black) and
        16-bit samples. Chunk structure is checked as Go does (CRCs, order, IEND present);
        ancillary chunks (gAMA, iCCP, sRGB, APNG's acTL/fcTL/fdAT) are ignored, so an APNG
        is its default image, as in Go. JPEG: decoded by libjpeg to YCbCr and converted with
        Go's formula (close to Go, not exact). GIF: first frame only, cropped to its own
        bounds, transparent index as transparent black. WebP, BMP, TIFF, ICO: decoded by
        Pillow (first frame; an ICO's largest picture), mapped by :func:`go_image_from_pil`.
    """
    data = bytes(data)
    fmt, im, hdr = _opened(data, max_pixels, name)
    if hdr is not None:  # PNG
        animated = bool(getattr(im, "is_animated", False))  # APNG
        return Decoded(_decode_png(data, hdr, im, name), fmt, animated)
    if fmt == "GIF":
        return Decoded(_decode_gif(im, name), fmt, _gif_animated(data, name))
    if fmt == "JPEG":
        return Decoded(_decode_jpeg(im, name), fmt, False)
    animated = bool(getattr(im, "is_animated", False))  # WebP animation, TIFF pages
    return Decoded(_decode_pillow(im, fmt, name, max_pixels), fmt, animated)


def _opened(
    data: bytes, max_pixels: int, name: str
) -> tuple[str, ImageFile.ImageFile, dict[str, Any] | None]:
    """``(format, Pillow's lazy image, PNG header facts or None)`` after every check that
    needs no pixel: the signature, each format's own header, the size limits."""
    if not data:
        raise PHashError(name, "empty input (zero bytes): not an image")
    fmt = image_format(data)
    if fmt is None:
        raise PHashError(
            name, f"unknown or unsupported image format (decoded: {', '.join(FORMATS)})"
        )
    hdr = None
    if fmt == "PNG":  # Go's chunk rules, and the size from IHDR
        hdr = _png_header(data, name)
        _check_size(hdr["width"], hdr["height"], max_pixels, name)
    # before Pillow opens them: libwebp's decoder allocates the canvas when it is created,
    # and Pillow's ICO reader decodes the largest picture when it opens the file
    if fmt == "WEBP":
        _check_size(*_webp_size(data, name), max_pixels, name)
    if fmt == "ICO":
        _check_ico(data, max_pixels, name)
    im = _open(data, name, fmt)
    _check_size(im.size[0], im.size[1], max_pixels, name)
    return fmt, im, hdr


def open_image(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "<bytes>"
) -> Image.Image:
    """Pillow's image of an encoded image (first frame), opened after the checks
    :func:`decode_image` makes before decoding (format, headers, size limits), not loaded:
    for views of the pixels (report thumbnails), not for hashing.

    Raises:
        PHashError: as :func:`decode_image` for what the headers show.
    """
    return _opened(bytes(data), max_pixels, name)[1]


def decode(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "<bytes>") -> GoImage:
    """The Go image of an encoded image: ``decode_image(...).image`` (PNG, JPEG and GIF as
    Go's ``image.Decode`` returns them; the other :data:`FORMATS` as Go's x/image decoders
    would, or the closest type). Raises :class:`PHashError` as :func:`decode_image` does."""
    return decode_image(data, max_pixels=max_pixels, name=name).image


def go_image_from_pil(img: Image.Image) -> GoImage:
    """Map an already-decoded Pillow image onto the Go image type Go would use for it.

    Notes:
        ``1``/``L`` -> ``*image.Gray``; ``LA`` -> ``*image.NRGBA`` (grey); ``RGB`` ->
        ``*image.RGBA``; ``RGBA`` -> ``*image.NRGBA``; ``P`` -> ``*image.Paletted`` (with
        ``info["transparency"]``); ``I;16*`` -> ``*image.Gray16``; ``CMYK`` ->
        ``*image.CMYK``; ``YCbCr`` -> ``*image.YCbCr``. Other modes (``I``, ``F``, ``RGBa``,
        ``HSV``, ...) are converted by Pillow to ``RGBA`` first. This matches :func:`decode`
        for 8-bit PNGs without colour-key ``tRNS``; decode from bytes when exactness matters
        for the other cases. It is how :func:`decode` maps the pixels of WebP, BMP, TIFF and
        ICO files, after refusing the modes Go's decoders do not produce (``_PILLOW_MODES``).
    """
    mode = img.mode
    if mode == "P":
        rgb = bytes(img.getpalette() or [])
        trans = img.info.get("transparency")
        alphas = b""
        if isinstance(trans, bytes):
            alphas = trans
        elif isinstance(trans, int) and 0 <= trans < 256:
            alphas = bytes([0xFF] * trans + [0])
        idx = np.asarray(img, dtype=np.uint8)
        return GoImage("paletted", np.ascontiguousarray(idx), _palette_table(rgb, alphas))
    if mode in ("1", "L"):
        arr = np.asarray(img.convert("L"), dtype=np.uint8)
        return GoImage("gray8", np.ascontiguousarray(arr))
    if mode.startswith("I;16"):
        return GoImage("gray16", np.ascontiguousarray(np.asarray(img), dtype=np.uint16))
    simple: dict[str, Model] = {
        "LA": "nrgba8_gray",
        "RGB": "rgb8",
        "RGBA": "nrgba8",
        "CMYK": "cmyk",
        "YCbCr": "ycbcr",
    }
    if mode in simple:
        return GoImage(simple[mode], np.ascontiguousarray(np.asarray(img), dtype=np.uint8))
    if mode == "RGBX":
        rgbx = np.asarray(img, dtype=np.uint8)[..., :3]
        return GoImage("rgb8", np.ascontiguousarray(rgbx))
    return GoImage("nrgba8", np.ascontiguousarray(np.asarray(img.convert("RGBA")), np.uint8))


# ---------------------------------------------------------------------------------------------
# golang.org/x/image/draw CatmullRom.Scale


def _catmull_rom(t: float) -> float:
    if t < 1:
        return (1.5 * t - 2.5) * t * t + 1
    return ((-0.5 * t + 2.5) * t - 4) * t + 2


@cache
def _distrib(dw: int, sw: int) -> tuple[I64, F64, F64, F64]:
    """``newDistrib(CatmullRom, dw, sw)`` as dense bands.

    Returns ``(start, weights, inv, inv_ffff)``: destination ``x`` reads source coordinates
    ``start[x] + k`` for ``k < K`` with ``weights[x, k]`` (0 where Go skips the coordinate:
    ``t >= 2``, a zero weight, or past the band), ``inv[x] = 1/totalWeight`` and
    ``inv_ffff[x] = inv[x] / 0xffff``. Adding ``p * 0.0`` to a running sum changes nothing,
    so the dense band gives Go's sums exactly.
    """
    scale = sw / dw
    half, arg = 2.0, 1.0
    if scale > 1:
        half *= scale
        arg = 1 / scale
    bands: list[tuple[int, list[float]]] = []
    inv: list[float] = []
    for x in range(dw):
        center = (x + 0.5) * scale - 0.5
        i = max(math.floor(center - half), 0)
        j = math.ceil(center + half)
        if j > sw:
            j = max(sw, i)
        total = 0.0
        ws: list[float] = []
        for coord in range(i, j):
            t = (center - coord) * arg
            if t < 0:
                t = -t
            w = _catmull_rom(t) if t < 2 else 0.0
            total += w  # adding a skipped 0.0 is exact
            ws.append(w)
        bands.append((i, ws))
        inv.append(1 / total)
    k = max(len(ws) for _, ws in bands)
    start = np.empty(dw, dtype=np.int64)
    weights = np.zeros((dw, k), dtype=np.float64)
    for x, (i, ws) in enumerate(bands):
        i = min(i, sw - k)  # keep the band inside the image (bands never exceed sw)
        shift = bands[x][0] - i
        start[x] = i
        weights[x, shift : shift + len(ws)] = ws
    inv_a = np.array(inv, dtype=np.float64)
    inv_ffff = inv_a / 0xFFFF
    for a in (start, weights, inv_a, inv_ffff):
        a.setflags(write=False)
    return start, weights, inv_a, inv_ffff


def _strided_runs(starts: I64) -> tuple[list[tuple[int, int, int, int]], I64]:
    """Split destinations into runs whose band starts form arithmetic progressions.

    Returns ``(runs, rest)``: each run ``(d0, d_step, count, s_step)`` covers destinations
    ``d0, d0 + d_step, ...`` whose starts advance by ``s_step > 0``, so their rows for one
    tap are a strided view of the source; ``rest`` are the other destinations (band starts
    clipped at the image edges, or no short period), read with a gather. With dw = 32 and a
    width that is a multiple of 32 / p (p <= 4), starts repeat with period p in d.
    """
    d = len(starts)
    runs: list[tuple[int, int, int, int]] = []
    covered = np.zeros(d, dtype=bool)
    for period in (1, 2, 4):
        if runs:
            break
        for r in range(period):
            st = starts[r::period]
            if len(st) < 4:
                continue
            diffs = np.diff(st)
            # longest stretch of equal positive differences
            best = (0, 0)
            i = 0
            while i < len(diffs):
                j = i
                while j + 1 < len(diffs) and diffs[j + 1] == diffs[i]:
                    j += 1
                if diffs[i] > 0 and j - i + 1 > best[1] - best[0]:
                    best = (i, j + 1)
                i = j + 1
            lo, hi = best
            if hi - lo + 1 >= max(4, len(st) // 2):
                runs.append((r + lo * period, period, hi - lo + 1, int(diffs[lo])))
        if len(runs) < period:
            runs = []
    for d0, dstep, count, _ in runs:
        covered[d0 : d0 + dstep * (count - 1) + 1 : dstep] = True
    return runs, np.flatnonzero(~covered)


def _taps(src: F64, idx: I64, weights: F64, out: F64) -> None:
    """``out[d] += src[idx[d, 0]]*w[d, 0]``, then ``+= src[idx[d, 1]]*w[d, 1]``, ... in order.

    Vectorised across the destinations ``d`` (rows of ``out``) and the columns of ``src``;
    sequential in the tap ``k``, exactly as Go adds them. Destinations whose rows form an
    arithmetic progression read them through strided views, the rest through a gather.
    """
    k = weights.shape[1]
    g = np.empty_like(out)
    runs, rest = _strided_runs(idx[:, 0])
    cols = np.ascontiguousarray(idx.T)
    wcols = np.ascontiguousarray(weights.T)[:, :, None]
    rest_cols = np.ascontiguousarray(cols[:, rest])
    g_rest = np.empty((len(rest), out.shape[1]), dtype=np.float64)
    for j in range(k):
        wj = wcols[j]
        for d0, dstep, count, sstep in runs:
            dsl = slice(d0, d0 + dstep * (count - 1) + 1, dstep)
            s0 = int(cols[j, d0])
            np.multiply(src[s0 : s0 + sstep * (count - 1) + 1 : sstep], wj[dsl], out=g[dsl])
        if len(rest):
            np.take(src, rest_cols[j], axis=0, out=g_rest, mode="clip")
            g_rest *= wj[rest]
            g[rest] = g_rest
        out += g


def _band_sum(src: F64, lo: int, w: F64, out: F64) -> None:
    """``out = out + src[lo]*w[0] + src[lo+1]*w[1] + ...`` left to right, for each column.

    The slow but bounded path (per destination, any band length): the running sum is a
    ``np.add.accumulate`` along the contiguous axis, which is sequential by definition.
    """
    k = len(w)
    buf = np.empty((src.shape[1], k + 1), dtype=np.float64)
    buf[:, 0] = out
    np.multiply(src[lo : lo + k].T, w[None, :], out=buf[:, 1:])
    np.add.accumulate(buf, axis=1, out=buf)
    out[...] = buf[:, k]


# Thresholds of the resampler's strategies (tests lower them to exercise every path).
_LOOP_TAPS = 4096  # horizontal taps above this (source wider than 32768): chunked path
_STRIP_BYTES = 1 << 23  # float64 bytes of source planes converted per horizontal step
_CHUNK_TAPS = 1 << 16  # columns converted at once on the chunked horizontal path
_TMP_BYTES = 1 << 26  # vertical input kept whole up to this size, else streamed


def _horizontal(img: GoImage, y0: int, y1: int, out: F64) -> None:
    """Horizontal pass sums (before ``* invTotalWeightFFFF``) of rows ``y0:y1`` into out."""
    hs, hw, _, _ = _distrib(_GRID, img.width)
    kh = hw.shape[1]
    if kh <= _LOOP_TAPS:
        idx = hs[:, None] + np.arange(kh, dtype=np.int64)[None, :]
        _taps(img.planes(y0, y1), idx, hw, out)
        return
    for dx in range(_GRID):
        lo = int(hs[dx])
        for c0 in range(0, kh, _CHUNK_TAPS):
            c1 = min(c0 + _CHUNK_TAPS, kh)
            part = img.planes(y0, y1, lo + c0, lo + c1)
            _band_sum(part, 0, hw[dx, c0:c1], out[dx])


def resize32(img: GoImage) -> U8:
    """``draw.CatmullRom.Scale`` of the whole image onto a zeroed 32x32 ``*image.RGBA``.

    Returns:
        (32, 32, 4) uint8, premultiplied R, G, B, A bytes (Go's ``Pix``), ``[y, x, c]``.

    Notes:
        Separable, float64: per source row, each destination column sums ``value * weight``
        over its band left to right and multiplies by ``1/totalWeight/0xffff``; per
        destination column, each destination row sums those by ``weight`` over its band,
        R, G, B are clamped to at most A, and each channel becomes
        ``ftou(sum/totalWeight) >> 8`` with ``ftou(f) = clamp(int32(0xffff*f + 0.5))``.
        Gray and YCbCr sources get an alpha of exactly 1.0 after the horizontal pass.
        Sources smaller than 32 are upscaled with the same kernel; pixels outside the image
        are absent (weights renormalised).

        Cost and memory: about 4 multiply-adds per source pixel and plane (as in Go). The
        source is converted to float64 a strip of rows at a time; the vertical input (Go's
        own ``tmp``, up to 1 KiB per source row) is kept whole when it is under 64 MiB and
        otherwise streamed into running sums, which keeps Go's summation order.
    """
    sw, sh = img.width, img.height
    _, _, _, h_inv_ffff = _distrib(_GRID, sw)
    vs, vw, v_inv, _ = _distrib(_GRID, sh)
    nc, planes = img.nc, img.n_planes
    kh, kv = _distrib(_GRID, sw)[1].shape[1], vw.shape[1]
    width_cols = min(sw, _CHUNK_TAPS) if kh > _LOOP_TAPS else sw
    rows = max(1, _STRIP_BYTES // (8 * planes * max(width_cols, _GRID)))
    whole = sh * _GRID * planes * 8 <= _TMP_BYTES
    tmp_all = np.empty((sh, _GRID * planes), dtype=np.float64) if whole else None
    vacc = np.zeros((_GRID, _GRID * planes), dtype=np.float64)
    for y0 in range(0, sh, rows):
        y1 = min(y0 + rows, sh)
        tmp = np.zeros((_GRID, (y1 - y0) * planes), dtype=np.float64)
        _horizontal(img, y0, y1, tmp)
        tmp *= h_inv_ffff[:, None]
        # (dx, row, plane) -> (row, dx, plane): the vertical pass reads source rows
        tv = tmp.reshape(_GRID, y1 - y0, planes).transpose(1, 0, 2).reshape(y1 - y0, -1)
        if tmp_all is not None:
            tmp_all[y0:y1] = tv
            continue
        tv = np.ascontiguousarray(tv)
        for dy in range(_GRID):  # streamed: continue each destination row's running sum
            lo = int(vs[dy])
            a, b = max(lo, y0), min(lo + kv, y1)
            if a < b:
                _band_sum(tv, a - y0, vw[dy, a - lo : b - lo], vacc[dy])
    if tmp_all is not None:
        idx = vs[:, None] + np.arange(kv, dtype=np.int64)[None, :]
        _taps(tmp_all, idx, vw, vacc)
    sums = vacc.reshape(_GRID, _GRID, planes)
    color = sums[..., :nc]
    alpha = sums[..., nc] if img.alpha == "plane" else _const_alpha_sums(img, sw, sh)
    color = np.minimum(color, alpha[..., None])
    grid = np.empty((_GRID, _GRID, 4), dtype=np.uint8)
    grid[..., :3] = _ftou8(color * v_inv[:, None, None])
    grid[..., 3] = _ftou8(alpha * v_inv[:, None])
    return grid


def _scaled_sums(x: F64, w: F64, out: F64) -> None:
    """``out[d] = out[d] + x[d]*w[0] + x[d]*w[1] + ...``, left to right, in bounded memory."""
    for c0 in range(0, len(w), _CHUNK_TAPS):
        wc = w[c0 : c0 + _CHUNK_TAPS]
        buf = np.empty((len(x), len(wc) + 1), dtype=np.float64)
        buf[:, 0] = out
        np.multiply(x[:, None], wc[None, :], out=buf[:, 1:])
        np.add.accumulate(buf, axis=1, out=buf)
        out[...] = buf[:, -1]


def _const_alpha_sums(img: GoImage, sw: int, sh: int) -> F64:
    """Vertical alpha sums (dy, dx) when every source pixel has the same alpha.

    Every source row then has the same horizontal alpha, so one row is computed, and its
    vertical sums use the same per-tap products and additions as the general path.
    """
    _, hw, _, h_inv_ffff = _distrib(_GRID, sw)
    _, vw, _, _ = _distrib(_GRID, sh)
    if img.alpha == "one":
        row = np.ones(_GRID, dtype=np.float64)
    else:
        a = np.array([img.alpha_value], dtype=np.float64)
        row = np.zeros(_GRID, dtype=np.float64)
        for dx in range(_GRID):
            _scaled_sums(a, hw[dx], row[dx : dx + 1])
        row *= h_inv_ffff
    out = np.zeros((_GRID, _GRID), dtype=np.float64)
    for dy in range(_GRID):
        _scaled_sums(row, vw[dy], out[dy])
    return out


def _ftou8(f: F64) -> U8:
    """``uint8(ftou(f) >> 8)``: ``int32(0xffff*f + 0.5)`` truncated, clamped to 16 bits."""
    v = np.trunc(f * 65535.0 + 0.5)
    return (np.clip(v, 0, 65535).astype(np.int64) >> 8).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# Luma, DCT, bits


def luma(grid: U8) -> F64:
    """Rec. 601 luma of the grid's premultiplied bytes: ``(0.299R + 0.587G) + 0.114B``.

    Args:
        grid: ``(..., 32, 32, 4)`` uint8 from :func:`resize32` (alpha ignored, so transparent
            areas act as black).

    Returns:
        ``(..., 32, 32)`` float64, each product rounded then added left to right.
    """
    g = np.asarray(grid, dtype=np.float64)
    return (0.299 * g[..., 0] + 0.587 * g[..., 1]) + 0.114 * g[..., 2]


def dct8(lum: F64) -> F64:
    """Unnormalised 2-D DCT-II of a 32x32 luma grid, first 8x8 only, in Go's order.

    Args:
        lum: ``(32, 32)`` or ``(B, 32, 32)`` float64 ``[y, x]``.

    Returns:
        ``(8, 8)`` or ``(B, 8, 8)`` float64 ``[u, v]`` (u horizontal, v vertical frequency),
        so ``.reshape(64)`` is the reference's ``u*8 + v`` order.

    Notes:
        ``C(u, v) = sum over y, then x of (lum[y, x] * cos[x][u]) * cos[y][v]``, starting
        from 0.0, one rounded product and one rounded addition per term in that order, with
        Go's cosines. No ``alpha(u)alpha(v)`` or ``1/N`` scaling.
    """
    cos = go_cos_table()
    lum = np.asarray(lum, dtype=np.float64)
    single = lum.ndim == 2
    b = lum.reshape(-1, _GRID, _GRID)
    p = b[:, :, :, None] * cos[None, None, :, :]  # (B, y, x, u) = lum[y, x] * cos[x][u]
    terms = np.empty((b.shape[0], _GRID * _GRID + 1, _LOW, _LOW), dtype=np.float64)
    terms[:, 0] = 0.0
    t = terms[:, 1:].reshape(b.shape[0], _GRID, _GRID, _LOW, _LOW)
    np.multiply(p[..., :, None], cos[None, :, None, None, :], out=t)  # * cos[y][v]
    np.add.accumulate(terms, axis=1, out=terms)  # running sum in (y, x) order
    out = np.ascontiguousarray(terms[:, -1])
    return out[0] if single else out


def hash_from_dct(coeffs: F64) -> int:
    """Bits from an (8, 8) ``[u, v]`` block: bit ``u*8+v`` iff strictly above the median.

    Notes:
        The median is element 31 of the 63 AC coefficients sorted ascending; bit 0 (DC) is
        always 0. With distinct coefficients exactly 31 bits are set; ties set fewer.
    """
    c = np.asarray(coeffs, dtype=np.float64).reshape(_LOW * _LOW)
    median = np.sort(c[1:])[31]
    bits = np.flatnonzero(c > median)
    h = 0
    for i in bits:
        if i:
            h |= 1 << int(i)
    return h


def _hashes_from_dct(coeffs: F64) -> U64:
    c = coeffs.reshape(-1, _LOW * _LOW)
    med = np.sort(c[:, 1:], axis=1)[:, 31]
    above = c > med[:, None]
    above[:, 0] = False
    packed: U64 = np.packbits(above, axis=1, bitorder="little").view("<u8").ravel()
    return packed.astype(np.uint64)


# ---------------------------------------------------------------------------------------------
# Entry points


def phash_image(img: GoImage | Image.Image) -> int:
    """``PHashFromImage``: the hash of already-decoded pixels.

    Args:
        img: a :class:`GoImage` (from :func:`decode`), or a Pillow image mapped with
            :func:`go_image_from_pil`.
    """
    g = img if isinstance(img, GoImage) else go_image_from_pil(img)
    return hash_from_dct(dct8(luma(resize32(g))))


def phash(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "<bytes>") -> int:
    """``PHash``: the 64-bit perceptual hash of an encoded image (PNG, JPEG, GIF as the
    reference; WebP, BMP, TIFF, ICO through the same pipeline; see :func:`decode_image`).

    Args:
        data: the encoded image bytes.
        max_pixels: refuse images over this many pixels before decoding them.
        name: names the input in error messages.

    Returns:
        The hash in ``[0, 2**64)``; bit 0 is always 0.

    Raises:
        PHashError: the message starts with ``name`` and says what is wrong (see
            :func:`decode`).

    Notes:
        Bit-identical to the reference (Go on amd64, x/image v0.41.0) for every PNG; JPEG
        hashes are close but not guaranteed equal (different JPEG decoder); the formats the
        reference does not read have no reference value. Same pixels give the same hash
        whatever the encoding; images smaller than 32x32 are upscaled; a fully transparent
        image hashes like black; an animation is hashed by its first frame.

    Example:
        >>> import io
        >>> from PIL import Image
        >>> buf = io.BytesIO()
        >>> Image.new("L", (32, 32), 128).save(buf, "PNG")
        >>> phash_hex(phash(buf.getvalue()))
        'c7a9618aa54ea8ea'
    """
    return phash_image(decode(data, max_pixels=max_pixels, name=name))


@dataclass(frozen=True)
class ImageBatch:
    """What :func:`phash_images` found in each row (0, 0, None on an error row)."""

    hashes: U64
    widths: I64
    heights: I64
    formats: list[str | None]  # Decoded.label: "PNG", "WEBP", "GIF (animated)", ...
    errors: list[str | None]  # None, or what is wrong with the row


def image_format(data: bytes | bytearray | memoryview) -> str | None:
    """Which of :data:`FORMATS` the leading signature bytes say; None for anything else."""
    head = bytes(data[:16])
    if head.startswith(_PNG_SIGNATURE):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "WEBP"
    if head.startswith(b"BM"):
        return "BMP"
    if head.startswith((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")):  # TIFF, BigTIFF
        return "TIFF"
    if head.startswith(b"\x00\x00\x01\x00"):
        return "ICO"
    return None


def phash_images(
    blobs: Sequence[bytes | bytearray | memoryview | None],
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageBatch:
    """Hash many encoded images, with each one's size and format; a bad row gets an error
    string instead of raising.

    Notes:
        One image is decoded at a time and only its 32x32 grid is kept, so memory is bounded
        by the largest image allowed (``max_pixels``), not by the batch. Every hash equals
        :func:`phash` of its row. Unexpected exceptions in one row (including MemoryError)
        are reported in that row, never raised.
    """
    n = len(blobs)
    hashes = np.zeros(n, dtype=np.uint64)
    widths = np.zeros(n, dtype=np.int64)
    heights = np.zeros(n, dtype=np.int64)
    formats: list[str | None] = [None] * n
    errors: list[str | None] = [None] * n
    grids: list[U8] = []
    ok: list[int] = []
    for i, blob in enumerate(blobs):
        if blob is None:
            errors[i] = "null input: no image data"
            continue
        try:
            found = decode_image(bytes(blob), max_pixels=max_pixels, name=f"row {i}")
            img = found.image
            grids.append(resize32(img))
            widths[i], heights[i] = img.width, img.height
            formats[i] = found.label
            ok.append(i)
            del img, found
        except PHashError as e:
            errors[i] = e.problem
        except Exception as e:  # one bad row must not fail the batch
            errors[i] = f"unexpected error: {_describe(e)}"
    if ok:
        hashes[np.array(ok, dtype=np.int64)] = _hashes_from_dct(dct8(luma(np.stack(grids))))
    return ImageBatch(hashes, widths, heights, formats, errors)


def phash_batch(
    blobs: Sequence[bytes | bytearray | memoryview | None],
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> tuple[U64, list[str | None]]:
    """Hash many encoded images; a bad row gets 0 and an error string instead of raising.

    Args:
        blobs: encoded images; ``None`` (a null cell) is an error row.
        max_pixels: per-image pixel limit (see :func:`decode`).

    Returns:
        ``(hashes, errors)``: uint64 hashes, and per row ``None`` or what went wrong (not an
        image, truncated, zero-size, unsupported format, over ``max_pixels``, ...).

    Notes:
        Rows are decoded and resampled one at a time (sizes differ); the DCT runs once for
        the whole batch. Every row equals :func:`phash` of it. Unexpected exceptions in one
        row (including MemoryError) are reported in that row, never raised.
    """
    batch = phash_images(blobs, max_pixels)
    return batch.hashes, batch.errors
