"""The real images of ../shared/data/images (imagededup's UKBench photos, imagehash's and
Pillow's test images, GNOME's 256x256 icons): the originals the image benches edit, each more
than K bits of pHash from every earlier one, so that their families are distinct.

Progress goes to stderr, stamped ``[bench_images HH:MM:SS]``.
"""

from __future__ import annotations

import sys
import tarfile
import time

from lib.corpora import SHARED_DATA
from neardup_udfs.kernels import phash

IMAGES = SHARED_DATA / "images"
K = 10


def log(message: str) -> None:
    print(f"[bench_images {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def originals(limit: int) -> list[tuple[str, bytes]]:
    """Real images pHash can read, each more than K bits from every earlier one."""
    found: list[tuple[str, bytes]] = []
    for p in sorted(IMAGES.rglob("*")):
        if p.suffix.lower() in (".png", ".jpg", ".jpeg", ".gif") and p.is_file():
            found.append((str(p.relative_to(IMAGES)), p.read_bytes()))
    for tar in sorted(IMAGES.rglob("*.tar")):
        with tarfile.open(tar) as tf:
            for m in tf.getmembers():
                if m.isfile() and "/256x256/" in m.name and m.name.endswith(".png"):
                    f = tf.extractfile(m)
                    if f is not None:
                        found.append((m.name, f.read()))
    kept: list[tuple[str, bytes]] = []
    hashes: list[int] = []
    for name, data in found:
        try:
            h = phash.phash(data)
        except phash.PHashError:
            continue
        if all(phash.phash_distance(h, o) > K for o in hashes):
            kept.append((name, data))
            hashes.append(h)
        if len(kept) >= limit:
            break
    log(f"{len(kept)} distinct originals of {len(found)} readable files")
    return kept
