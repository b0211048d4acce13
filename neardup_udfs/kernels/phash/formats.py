"""What the hash accepts: the formats it decodes, signature sniffing, the pixel limit, and
the one error type every refusal raises.

:func:`image_format` recognises a format from its leading bytes only; :func:`check_size`
is the size check every decoder applies from a header, before any pixel is decoded.
"""

from __future__ import annotations

from PIL import Image

DEFAULT_MAX_PIXELS = 50_000_000
"""Default refusal limit on width x height, checked before any pixel is decoded."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
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


def image_format(data: bytes | bytearray | memoryview) -> str | None:
    """Which of :data:`FORMATS` the leading signature bytes say; None for anything else."""
    head = bytes(data[:16])
    if head.startswith(PNG_SIGNATURE):
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


def check_size(w: int, h: int, max_pixels: int, name: str) -> None:
    """PHashError naming the input unless a w x h image is non-empty and has at most
    ``max_pixels`` pixels (and at most Pillow's ``Image.MAX_IMAGE_PIXELS`` when set)."""
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


def describe_error(e: BaseException) -> str:
    """An exception as ``"Type: message"`` (``"Type"`` when it has no message)."""
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__
