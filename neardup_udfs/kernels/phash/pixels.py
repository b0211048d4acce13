"""Go's pixel model: decoded pixels as the Go image type ``image.Decode`` returns
(:class:`GoImage`), read the way ``x/image/draw``'s scaler reads them (premultiplied 16-bit
values), Go palettes, and the mapping of an already-decoded Pillow image onto that model.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from PIL import Image

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

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


def palette_table(rgb: bytes, alphas: bytes, default_alpha: int = 0xFF) -> I64:
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
        return GoImage("paletted", np.ascontiguousarray(idx), palette_table(rgb, alphas))
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
