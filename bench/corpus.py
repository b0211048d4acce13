"""Benchmark corpora: real text from ../shared/data when present, else a generated one."""

from __future__ import annotations

import random
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
DEBIAN_COPYRIGHT = SHARED_DATA / "text/debian_copyright/debian_bookworm_copyright_files.tar.xz"


def load_corpus() -> tuple[str, list[bytes]]:
    """(description, documents as raw bytes)."""
    if DEBIAN_COPYRIGHT.exists():
        with tarfile.open(DEBIAN_COPYRIGHT) as tf:
            docs = []
            for m in tf.getmembers():
                f = tf.extractfile(m) if m.isfile() else None
                if f is not None:
                    docs.append(f.read())
        return f"Debian copyright files ({DEBIAN_COPYRIGHT.relative_to(SHARED_DATA)})", docs
    return "generated from samples/ (../shared/data absent)", _generated()


def _generated(n_docs: int = 2000) -> list[bytes]:
    """Sample documents replicated with seeded word substitutions, insertions and deletions."""
    rng = random.Random(20261130)
    seeds = [p.read_text("utf-8").split() for p in sorted((ROOT / "samples").iterdir())]
    vocab = sorted({w for s in seeds for w in s})
    docs = []
    for i in range(n_docs):
        words = list(seeds[i % len(seeds)]) * rng.randint(5, 40)
        for _ in range(rng.randint(0, len(words) // 10)):
            j = rng.randrange(len(words))
            op = rng.random()
            if op < 0.4:
                words[j] = rng.choice(vocab)
            elif op < 0.7:
                words.insert(j, rng.choice(vocab))
            elif len(words) > 1:
                del words[j]
        docs.append(" ".join(words).encode())
    return docs
