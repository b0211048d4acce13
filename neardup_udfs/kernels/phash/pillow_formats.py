"""Formats beyond the reference's decoders (``PILLOW_FORMATS``: WebP, BMP, TIFF, ICO):
decoded by Pillow onto Go's pixel model, after size checks read from each format's own
header (WebP's RIFF chunks, every ICO picture) before Pillow opens the file.
"""

from __future__ import annotations

import struct

from PIL import ImageFile

from neardup_udfs.kernels.phash.formats import PNG_SIGNATURE, PHashError, check_size
from neardup_udfs.kernels.phash.pillow_io import pillow_load
from neardup_udfs.kernels.phash.pixels import GoImage, go_image_from_pil

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


def webp_size(data: bytes, name: str) -> tuple[int, int]:
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


def check_ico(data: bytes, max_pixels: int, name: str) -> None:
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
        if data[at : at + 8] == PNG_SIGNATURE and at + 24 <= n:
            w, h = struct.unpack_from(">II", data, at + 16)
        elif at + 12 <= n and _u32le(data, at) == 12:  # BITMAPCOREHEADER
            w, h = _u16le(data, at + 4), _u16le(data, at + 6) // 2
        elif at + 12 <= n:  # BITMAPINFOHEADER and later: the height covers XOR and AND masks
            w, h = struct.unpack_from("<ii", data, at + 4)
            w, h = abs(w), abs(h) // 2
        else:
            raise PHashError(name, f"truncated ICO: picture {i} starts past the end")
        check_size(max(w, 1), max(h, 1), max_pixels, name)


def decode_pillow(im: ImageFile.ImageFile, fmt: str, name: str, max_pixels: int) -> GoImage:
    """Decode a PILLOW_FORMATS image's first frame onto Go's pixel model."""

    def supported() -> None:
        if im.mode not in _PILLOW_MODES:
            raise PHashError(
                name, f"unsupported {fmt} pixel format: Pillow mode {im.mode} is not hashed"
            )

    supported()  # known from the header: refused before decoding
    pillow_load(im, name)
    supported()  # ICO: the picture's own mode
    check_size(im.size[0], im.size[1], max_pixels, name)  # ICO: the picture's own size
    return go_image_from_pil(im)
