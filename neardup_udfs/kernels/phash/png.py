"""PNG exactly as Go's ``image/png`` decodes it: the chunk walk (CRCs, order, IHDR, PLTE,
tRNS) and the mapping of every colour type and bit depth onto the Go image type, including
colour-key ``tRNS`` and 16-bit samples (whose low bytes Pillow drops: read in a second pass).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import ImageFile

from neardup_udfs.kernels.phash.formats import PHashError
from neardup_udfs.kernels.phash.pillow_io import pillow_open, pillow_pixels
from neardup_udfs.kernels.phash.pixels import GoImage, palette_table


def png_header(data: bytes, name: str) -> dict[str, Any]:
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


def decode_png(data: bytes, hdr: dict[str, Any], im: ImageFile.ImageFile, name: str) -> GoImage:
    """The pixels of an opened PNG as the Go image type ``png.Decode`` returns for its
    header ``hdr`` (:func:`png_header`), 16-bit samples included."""
    depth: int = hdr["depth"]
    color: int = hdr["color"]
    trns: bytes | None = hdr["trns"]
    if im.format != "PNG" or im.size != (hdr["width"], hdr["height"]):
        raise PHashError(name, "cannot decode PNG: Pillow disagrees with the IHDR")
    if color == 0:  # grayscale: 1/2/4/8 -> *image.Gray (0..255), 16 -> *image.Gray16
        arr = pillow_pixels(im, name)
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
            rgb = np.ascontiguousarray(pillow_pixels(im, name), dtype=np.uint8)
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
        idx = np.ascontiguousarray(pillow_pixels(im, name), dtype=np.uint8)
        return GoImage("paletted", idx, palette_table(hdr["plte"] or b"", trns or b""))
    if color == 4:  # gray + alpha -> *image.NRGBA / *image.NRGBA64
        if depth == 8:
            return GoImage(
                "nrgba8_gray", np.ascontiguousarray(pillow_pixels(im, name), dtype=np.uint8)
            )
        # Pillow would truncate to 8 bits; reading the 4 bytes per pixel as "RGBA" is lossless.
        raw = np.ascontiguousarray(pillow_pixels(im, name, rawmode="RGBA"), dtype=np.uint16)
        ya = (raw[..., 0::2] << 8) | raw[..., 1::2]
        return GoImage("nrgba64_gray", np.ascontiguousarray(ya, dtype=np.uint16))
    # color == 6: RGBA -> *image.NRGBA / *image.NRGBA64
    if depth == 8:
        return GoImage("nrgba8", np.ascontiguousarray(pillow_pixels(im, name), dtype=np.uint8))
    return GoImage("nrgba64", _load16(data, im, name, "RGBA;16L", 4))


def _load16(
    data: bytes, im: ImageFile.ImageFile, name: str, low_rawmode: str, k: int
) -> npt.NDArray[np.uint16]:
    """16-bit colour samples: Pillow's default decode keeps the high bytes; a second decode
    of the same file with the little-endian rawmode yields the low bytes (same filters)."""
    hi = np.asarray(pillow_pixels(im, name), dtype=np.uint16)[..., :k]
    lo = np.asarray(
        pillow_pixels(pillow_open(data, name, "PNG"), name, rawmode=low_rawmode), dtype=np.uint16
    )
    return np.ascontiguousarray((hi << 8) | lo[..., :k], dtype=np.uint16)
