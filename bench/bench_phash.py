"""Image pHash throughput: phash_batch (Go-exact) vs imagehash.phash, on 1024x768 PNGs.

The 16 golden images (tests/golden/phash-images) are resized to 1024x768 with Pillow, in
their own modes, and encoded as PNG in memory. Both paths start from the encoded bytes and
run in this process, one core. imagehash is installed into the venv for this comparison
only; it is not a dependency of neardup. The two hashes are different algorithms (imagehash:
Pillow LANCZOS to 32x32 greyscale, scipy DCT, 8x8 block, median) - this compares cost only.
"""

from __future__ import annotations

import io
import json
import sys

from lib.project import ROOT
from lib.timing import best_of
from PIL import Image

from neardup_udfs.kernels.phash import phash_batch

IMAGES = ROOT / "tests" / "golden" / "phash-images"
SIZE = (1024, 768)


def load_images() -> list[bytes]:
    blobs = []
    for path in sorted(IMAGES.glob("*.png")):
        with Image.open(path) as im:
            im.load()
            exact_modes = ("P", "1", "I;16")  # indexed / 16-bit: no smoothing filter
            rs = Image.Resampling.NEAREST if im.mode in exact_modes else Image.Resampling.BILINEAR
            big = im.resize(SIZE, rs)
        buf = io.BytesIO()
        big.save(buf, "PNG")
        blobs.append(buf.getvalue())
    return blobs


def imagehash_all(blobs: list[bytes]) -> None:
    import imagehash

    for b in blobs:
        with Image.open(io.BytesIO(b)) as im:
            imagehash.phash(im)


def main() -> int:
    blobs = load_images()
    n, total = len(blobs), sum(map(len, blobs))
    hashes, errors = phash_batch(blobs[:2])  # warm the weight caches
    assert errors == [None, None]
    t_ours = best_of(lambda: phash_batch(blobs), 3)
    t_ih = best_of(lambda: imagehash_all(blobs), 3)
    print(f"image pHash, {n} PNGs {SIZE[0]}x{SIZE[1]} ({total / 1e6:.2f} MB encoded), one core")
    print(f"{'path':<26}{'images':>8}{'seconds':>10}{'images/s':>11}")
    for label, t in (("neardup phash_batch", t_ours), ("imagehash.phash", t_ih)):
        print(f"{label:<26}{n:>8}{t:>10.3f}{n / t:>11.1f}")
    ratio = t_ih / t_ours
    print(f"phash_batch: {n / t_ours:.1f} images/s, {ratio:.2f}x imagehash's throughput")
    figures = {
        "bench": "fingerprint_phash",
        "images": n,
        "size": f"{SIZE[0]}x{SIZE[1]}",
        "phash_batch_images_s": round(n / t_ours, 2),
        "imagehash_images_s": round(n / t_ih, 2),
        "throughput_ratio_vs_imagehash": round(ratio, 3),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
