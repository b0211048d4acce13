"""semblance MinHash (K=128, word 3-shingles) throughput: minhash_batch vs datasketch.

Both run in this process, one core, on the same documents. datasketch is installed by
`make bench` into the venv for this comparison only; it is not a dependency of neardup.
"""

from __future__ import annotations

import json
import re
import sys

from lib.corpora import load_corpus
from lib.timing import best_of

from neardup_udfs.kernels.words_jit import minhash_batch, simhash_batch

TARGET_MBPS = 15.0
_WORD = re.compile(r"\w+")


def datasketch_signatures(docs: list[bytes]) -> None:
    from datasketch import MinHash

    for d in docs:
        tokens = _WORD.findall(d.decode("utf-8", "replace").lower())
        m = MinHash(num_perm=128)
        m.update_batch([" ".join(tokens[i : i + 3]).encode() for i in range(len(tokens) - 2)])


def main() -> int:
    name, docs = load_corpus()
    total = sum(map(len, docs))
    minhash_batch(docs[:5])  # JIT warm-up
    simhash_batch(docs[:5])
    t_ours = best_of(lambda: minhash_batch(docs), 3)
    t_sim = best_of(lambda: simhash_batch(docs), 3)
    t_ds = best_of(lambda: datasketch_signatures(docs), 1)
    rows = [
        ("neardup minhash_batch", t_ours),
        ("neardup simhash_batch", t_sim),
        ("datasketch MinHash", t_ds),
    ]
    print(f"semblance MinHash K=128, word 3-shingles, one core, on {name}")
    print(f"{'path':<24}{'docs':>8}{'MB':>9}{'seconds':>10}{'MB/s':>9}{'docs/s':>10}")
    for label, t in rows:
        print(
            f"{label:<24}{len(docs):>8}{total / 1e6:>9.2f}{t:>10.3f}"
            f"{total / t / 1e6:>9.2f}{len(docs) / t:>10.0f}"
        )
    ratio = t_ds / t_ours
    mbps = total / t_ours / 1e6
    print(f"minhash_batch: {mbps:.1f} MB/s (target >= {TARGET_MBPS:.0f}), {ratio:.1f}x datasketch")
    figures = {
        "bench": "semblance_minhash",
        "corpus": name,
        "minhash_mb_s": round(mbps, 2),
        "minhash_docs_s": round(len(docs) / t_ours, 1),
        "simhash_mb_s": round(total / t_sim / 1e6, 2),
        "datasketch_mb_s": round(total / t_ds / 1e6, 2),
        "speedup_vs_datasketch": round(ratio, 1),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
