"""Pillow access shared by the decoders: open an image by one format's plugin (header only),
load its pixels, and report every Pillow failure as a :class:`PHashError` naming the input.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageFile, UnidentifiedImageError

from neardup_udfs.kernels.phash.formats import PHashError, describe_error


def pillow_pixels(
    im: ImageFile.ImageFile, name: str, rawmode: str | None = None
) -> npt.NDArray[Any]:
    """Decode the pixels (optionally with another PNG rawmode) into a numpy array."""
    if rawmode is not None:  # same zip stream and filters, another sample unpacker
        im.tile = [ImageFile._Tile(t[0], t[1], t[2], rawmode) for t in im.tile]
    pillow_load(im, name)
    return np.asarray(im)


def pillow_load(im: ImageFile.ImageFile, name: str) -> None:
    """``im.load()``, a failure reported as corrupt data of the image's format."""
    try:
        im.load()
    except PHashError:
        raise
    except Exception as e:  # Pillow raises OSError, SyntaxError, ValueError, EOFError, ...
        fmt = im.format or "image"
        raise PHashError(name, f"corrupt or truncated {fmt} data: {describe_error(e)}") from e


def pillow_open(data: bytes, name: str, fmt: str) -> ImageFile.ImageFile:
    """Pillow's lazy image of ``data`` (header read, no pixel decoded), by ``fmt``'s plugin
    only: the format was recognised from the signature (:func:`image_format`)."""
    try:
        im = Image.open(io.BytesIO(data), formats=(fmt,))
    except Image.DecompressionBombError as e:
        raise PHashError(name, f"decompression bomb: {e}") from e
    except UnidentifiedImageError as e:
        raise PHashError(name, f"corrupt {fmt} header: Pillow cannot identify the file") from e
    except Exception as e:
        raise PHashError(name, f"corrupt {fmt} header: {describe_error(e)}") from e
    assert isinstance(im, ImageFile.ImageFile)
    return im
