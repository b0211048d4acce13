"""Photo-like test pictures and the edits a near-duplicate image survives (resize, JPEG,
crop, grey, watermark), shared by the images job's tests and bench/bench_images.py."""

from __future__ import annotations

import io
import random

from PIL import Image, ImageDraw, ImageFilter

VARIANTS = ("half", "double", "jpeg50", "crop5", "grey", "watermark")


def encode(im: Image.Image, fmt: str = "PNG", **kw: object) -> bytes:
    """``im`` as a file of format ``fmt`` (Pillow's ``save`` options ``kw``)."""
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def scene(seed: int, size: tuple[int, int] = (320, 240)) -> Image.Image:
    """A photo-like picture: blurred overlapping shapes on a coloured ground."""
    rng = random.Random(seed)
    im = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(im)
    w, h = size
    for _ in range(12):
        x0, y0 = rng.randrange(w), rng.randrange(h)
        box = (x0, y0, x0 + rng.randrange(20, w // 2), y0 + rng.randrange(20, h // 2))
        fill = tuple(rng.randrange(256) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=fill)
    return im.filter(ImageFilter.GaussianBlur(2))


def variants(im: Image.Image) -> dict[str, bytes]:
    """The issue's edits: x0.5, x2, JPEG quality 50, a 5% crop (2.5% off each side), grey,
    a text watermark."""
    rgb = im.convert("RGB")
    w, h = rgb.size
    dx, dy = max(1, round(w * 0.025)), max(1, round(h * 0.025))
    marked = rgb.copy()
    ImageDraw.Draw(marked).text((w * 0.05, h * 0.8), "(c) neardup", fill=(255, 255, 255))
    return {
        "half": encode(rgb.resize((w // 2, h // 2), Image.LANCZOS)),
        "double": encode(rgb.resize((w * 2, h * 2), Image.LANCZOS)),
        "jpeg50": encode(rgb, "JPEG", quality=50),
        "crop5": encode(rgb.crop((dx, dy, w - dx, h - dy))),
        "grey": encode(rgb.convert("L")),
        "watermark": encode(marked),
    }
