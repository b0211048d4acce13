"""The decoding entry points: encoded bytes of any of ``FORMATS`` to a :class:`Decoded`
(Go image, format, animated) or a Go image, and Pillow's lazy image for views.

Every check that needs no pixel (signature, each format's header, the size limits) is made
in :func:`_opened` before any pixel is decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageFile

from neardup_udfs.kernels.phash.formats import (
    ANIMATED,
    DEFAULT_MAX_PIXELS,
    FORMATS,
    GO_REFERENCE_FORMATS,
    PHashError,
    check_size,
    image_format,
)
from neardup_udfs.kernels.phash.gif_jpeg import decode_gif, decode_jpeg, gif_animated
from neardup_udfs.kernels.phash.pillow_formats import check_ico, decode_pillow, webp_size
from neardup_udfs.kernels.phash.pillow_io import pillow_open
from neardup_udfs.kernels.phash.pixels import GoImage
from neardup_udfs.kernels.phash.png import decode_png, png_header


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
        return Decoded(decode_png(data, hdr, im, name), fmt, animated)
    if fmt == "GIF":
        return Decoded(decode_gif(im, name), fmt, gif_animated(data, name))
    if fmt == "JPEG":
        return Decoded(decode_jpeg(im, name), fmt, False)
    animated = bool(getattr(im, "is_animated", False))  # WebP animation, TIFF pages
    return Decoded(decode_pillow(im, fmt, name, max_pixels), fmt, animated)


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
        hdr = png_header(data, name)
        check_size(hdr["width"], hdr["height"], max_pixels, name)
    # before Pillow opens them: libwebp's decoder allocates the canvas when it is created,
    # and Pillow's ICO reader decodes the largest picture when it opens the file
    if fmt == "WEBP":
        check_size(*webp_size(data, name), max_pixels, name)
    if fmt == "ICO":
        check_ico(data, max_pixels, name)
    im = pillow_open(data, name, fmt)
    check_size(im.size[0], im.size[1], max_pixels, name)
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
