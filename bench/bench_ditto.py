"""ditto/2 kernel throughput: vectorised batch path vs the naive per-shingle oracle.

Both paths run in the same process on the same documents; figures are ratios against the
naive path measured in this run (machines here are noisy), plus absolute MB/s and docs/s.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from corpus import load_corpus  # noqa: E402

from neardup_udfs.kernels.featurize import fingerprints  # noqa: E402

from oracle import naive_fingerprint  # noqa: E402

TARGET_RATIO = 20.0
TARGET_MBPS = 23.0
NAIVE_BYTES = 1_000_000  # the naive path is slow: time it on the first ~1 MB of documents


def best_of(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    name, docs = load_corpus()
    total = sum(map(len, docs))
    subset, size = [], 0
    for d in docs:
        if size >= NAIVE_BYTES:
            break
        subset.append(d)
        size += len(d)

    fingerprints(docs[:10])  # warm-up (imports, tables)
    t_batch_all = best_of(lambda: fingerprints(docs), 3)
    t_batch_sub = best_of(lambda: fingerprints(subset), 3)
    naive: list[int] = []
    t_naive_sub = best_of(lambda: naive.extend(naive_fingerprint(d) for d in subset), 1)
    if [int(x) for x in fingerprints(subset)] != naive:
        raise SystemExit("batch and naive fingerprints differ: the benchmark is void")

    mbps_all = total / t_batch_all / 1e6
    ratio = t_naive_sub / t_batch_sub
    rows = [
        ("batch, whole corpus", len(docs), total, t_batch_all),
        ("batch, subset", len(subset), size, t_batch_sub),
        ("naive, subset", len(subset), size, t_naive_sub),
    ]
    print(f"ditto/2 fingerprint throughput on {name}")
    print(f"{'path':<22}{'docs':>8}{'MB':>9}{'seconds':>10}{'MB/s':>9}{'docs/s':>10}")
    for label, n, b, t in rows:
        print(f"{label:<22}{n:>8}{b / 1e6:>9.2f}{t:>10.3f}{b / t / 1e6:>9.2f}{n / t:>10.0f}")
    print(f"batch / naive speed-up on the subset: {ratio:.1f}x (target >= {TARGET_RATIO:.0f}x)")
    print(f"batch MB/s on one core: {mbps_all:.1f} (target >= {TARGET_MBPS:.0f})")
    print(
        json.dumps(
            {
                "bench": "ditto2_kernel",
                "corpus": name,
                "batch_mb_s": round(mbps_all, 2),
                "batch_docs_s": round(len(docs) / t_batch_all, 1),
                "naive_mb_s": round(size / t_naive_sub / 1e6, 3),
                "speedup_vs_naive": round(ratio, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
