"""ditto/2 kernel throughput: compiled and vectorised batch paths vs the naive oracle.

All paths run in the same process on the same documents; figures are ratios against the
naive per-shingle path measured in this run (machines here are noisy), plus absolute MB/s
and docs/s. One core: nothing here is parallel.
"""

from __future__ import annotations

import json
import sys

from lib.corpora import load_corpus
from lib.project import load
from lib.timing import best_of

from neardup_udfs.kernels.featurize import fingerprints
from neardup_udfs.kernels.normalize import normalize_utf8

naive_fingerprint = load("tests/oracle.py").naive_fingerprint

TARGET_RATIO = 20.0
TARGET_MBPS = 23.0
NAIVE_BYTES = 1_000_000  # the naive path is slow: time it on the first ~1 MB of documents


def main() -> int:
    name, docs = load_corpus()
    total = sum(map(len, docs))
    subset, size = [], 0
    for d in docs:
        if size >= NAIVE_BYTES:
            break
        subset.append(d)
        size += len(d)

    for engine in ("numba", "numpy"):
        fingerprints(docs[:10], engine=engine)  # warm-up: imports, tables, JIT compile
    naive: list[int] = []
    t_naive = best_of(lambda: naive.extend(naive_fingerprint(d) for d in subset), 1)
    rows = []
    figures: dict[str, float] = {}
    for engine in ("numba", "numpy"):
        if [int(x) for x in fingerprints(subset, engine=engine)] != naive:
            raise SystemExit(f"{engine} and naive fingerprints differ: the benchmark is void")
        t_sub = best_of(lambda e=engine: fingerprints(subset, engine=e), 3)
        t_all = best_of(lambda e=engine: fingerprints(docs, engine=e), 3)
        rows.append((f"{engine}, whole corpus", len(docs), total, t_all))
        rows.append((f"{engine}, subset", len(subset), size, t_sub))
        figures[f"{engine}_mb_s"] = round(total / t_all / 1e6, 2)
        figures[f"{engine}_docs_s"] = round(len(docs) / t_all, 1)
        figures[f"{engine}_speedup_vs_naive"] = round(t_naive / t_sub, 1)
    t_norm = best_of(lambda: [normalize_utf8(d) for d in docs], 3)
    rows.append(("normalize only", len(docs), total, t_norm))
    rows.append(("naive, subset", len(subset), size, t_naive))
    figures["normalize_mb_s"] = round(total / t_norm / 1e6, 2)
    figures["naive_mb_s"] = round(size / t_naive / 1e6, 3)

    print(f"ditto/2 fingerprint throughput, one core, on {name}")
    print(f"{'path':<22}{'docs':>8}{'MB':>9}{'seconds':>10}{'MB/s':>9}{'docs/s':>10}")
    for label, n, b, t in rows:
        print(f"{label:<22}{n:>8}{b / 1e6:>9.2f}{t:>10.3f}{b / t / 1e6:>9.2f}{n / t:>10.0f}")
    for engine in ("numba", "numpy"):
        ratio = figures[f"{engine}_speedup_vs_naive"]
        mbps = figures[f"{engine}_mb_s"]
        print(
            f"{engine}: {ratio:.1f}x the naive path (target >= {TARGET_RATIO:.0f}x), "
            f"{mbps:.1f} MB/s (target >= {TARGET_MBPS:.0f})"
        )
    print(json.dumps({"bench": "ditto2_kernel", "corpus": name, **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
