"""GIF and JPEG, the reference's other two formats: a GIF's first frame as Go's
``*image.Paletted`` (frame bounds, transparent index), a JPEG through libjpeg's YCbCr and
Go's conversion formula (close to Go's decoder, not exact).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageFile

from neardup_udfs.kernels.phash.formats import PHashError
from neardup_udfs.kernels.phash.pillow_io import pillow_open, pillow_pixels
from neardup_udfs.kernels.phash.pixels import GoImage, go_image_from_pil, palette_table


def decode_gif(im: ImageFile.ImageFile, name: str) -> GoImage:
    """The first frame of an opened GIF as Go's ``gif.Decode`` returns it: a paletted image
    with the frame's own bounds, the transparent entry set to ``color.RGBA{}``."""
    arr = pillow_pixels(im, name)
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
    table = palette_table(rgb, b"")
    if isinstance(trans, int) and 0 <= trans < 256:
        table[trans] = 0  # Go sets the transparent entry to color.RGBA{}
    return GoImage("paletted", np.ascontiguousarray(arr, dtype=np.uint8), table)


def decode_jpeg(im: ImageFile.ImageFile, name: str) -> GoImage:
    """An opened JPEG as the Go image type ``jpeg.Decode`` returns (YCbCr, gray, CMYK); the
    pixels are libjpeg's, so only close to Go's."""
    if im.mode == "RGB":
        # Ask libjpeg for YCbCr and convert with Go's integer formula; Go's own IDCT and
        # chroma replication still differ from libjpeg, so the result is only close.
        im.draft("YCbCr", None)
    arr = pillow_pixels(im, name)
    if im.mode == "YCbCr":
        return GoImage("ycbcr", np.ascontiguousarray(arr, dtype=np.uint8))
    if im.mode == "L":
        return GoImage("gray8", np.ascontiguousarray(arr, dtype=np.uint8))
    if im.mode == "CMYK":
        return GoImage("cmyk", np.ascontiguousarray(arr, dtype=np.uint8))
    return go_image_from_pil(im)


def gif_animated(data: bytes, name: str) -> bool:
    """Whether a GIF has a second frame (read on a second handle: seeking Pillow's GIF
    reader changes the state the first frame is decoded from)."""
    im = pillow_open(data, name, "GIF")
    try:
        return bool(getattr(im, "is_animated", False))
    except Exception:  # garbage after the first frame, which Go's gif.Decode never reads
        return False
