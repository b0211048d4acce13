"""Text SimHash presets (fingerprint/1, anchor/1) throughput vs the PyPI ``simhash`` package.

All paths run in this process, one core, on the same documents. The PyPI ``simhash`` package
(``pip install simhash``, default features: 4-character windows of the lowercased word
characters, md5-based 64-bit hashes) is installed into the venv for this comparison only; it
is not a dependency of neardup, and it computes a different fingerprint.
"""

from __future__ import annotations

import json
import sys

from lib.corpora import load_corpus
from lib.timing import best_of

from neardup_udfs.kernels import anchor, fingerprint_text

TARGET_MBPS = 23.0


def pypi_simhash(docs: list[bytes]) -> None:
    """PyPI ``Simhash(text)`` with its default features, passed as an unweighted list.

    ``Simhash(text)`` itself raises OverflowError under numpy 2 when a feature occurs more
    than ``large_weight_cutoff`` times (simhash 2.1.2 multiplies a uint8 bit array by the
    weight), which many corpus documents trigger; the unweighted feature list gives the same
    fingerprint and does the same tokenization and hashing work (one md5 per occurrence).
    """
    from simhash import Simhash

    proto = Simhash(0)
    for d in docs:
        Simhash(proto._tokenize(d.decode("utf-8", "replace")))


def main() -> int:
    name, docs = load_corpus()
    total = sum(map(len, docs))
    fingerprint_text.simhash_batch(docs[:5])  # JIT warm-up
    anchor.simhash_batch(docs[:5])
    t_fp = best_of(lambda: fingerprint_text.simhash_batch(docs), 3)
    t_an = best_of(lambda: anchor.simhash_batch(docs), 3)
    try:
        t_py: float | None = best_of(lambda: pypi_simhash(docs), 1)
    except ImportError:
        t_py = None
    rows = [("neardup fingerprint/1", t_fp), ("neardup anchor/1", t_an)]
    if t_py is not None:
        rows.append(("PyPI simhash", t_py))
    print(f"text SimHash presets, one core, on {name}")
    print(f"{'path':<24}{'docs':>8}{'MB':>9}{'seconds':>10}{'MB/s':>9}{'docs/s':>10}")
    for label, t in rows:
        print(
            f"{label:<24}{len(docs):>8}{total / 1e6:>9.2f}{t:>10.3f}"
            f"{total / t / 1e6:>9.2f}{len(docs) / t:>10.0f}"
        )
    fp_mbps = total / t_fp / 1e6
    an_mbps = total / t_an / 1e6
    for label, mbps in (("fingerprint/1", fp_mbps), ("anchor/1", an_mbps)):
        verdict = "ok" if mbps >= TARGET_MBPS else "BELOW TARGET"
        print(f"{label}: {mbps:.1f} MB/s (target >= {TARGET_MBPS:.0f}) {verdict}")
    figures = {
        "bench": "text_presets",
        "corpus": name,
        "fingerprint_mb_s": round(fp_mbps, 2),
        "fingerprint_docs_s": round(len(docs) / t_fp, 1),
        "anchor_mb_s": round(an_mbps, 2),
        "anchor_docs_s": round(len(docs) / t_an, 1),
        "pypi_simhash_mb_s": round(total / t_py / 1e6, 2) if t_py is not None else None,
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
