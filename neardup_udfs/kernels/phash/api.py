"""The hashing entry points: one image (:func:`phash` of encoded bytes, :func:`phash_image`
of decoded pixels) and batches (:func:`phash_images`, :func:`phash_batch`, used by the UDFs
and presets), where a bad row gets an error string instead of raising.

Every batch row equals :func:`phash` of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from PIL import Image

from neardup_udfs.kernels.phash.dct import dct8, hash_from_dct, hashes_from_dct, luma
from neardup_udfs.kernels.phash.decoding import decode, decode_image
from neardup_udfs.kernels.phash.formats import DEFAULT_MAX_PIXELS, PHashError, describe_error
from neardup_udfs.kernels.phash.pixels import GoImage, go_image_from_pil
from neardup_udfs.kernels.phash.resample import resize32

U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


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
        >>> from neardup_udfs.kernels.phash import phash_hex
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
            errors[i] = f"unexpected error: {describe_error(e)}"
    if ok:
        hashes[np.array(ok, dtype=np.int64)] = hashes_from_dct(dct8(luma(np.stack(grids))))
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
