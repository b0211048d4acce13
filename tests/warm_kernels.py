"""Compile every numba kernel once and store it in numba's cache (the kernels are
``cache=True``): later processes (pytest, Spark's Python workers, CLI subprocesses) load the
compiled code instead of compiling it again. ``make test`` runs this beside the linters, so a
clean clone's compilation overlaps them; pytest runs it again at session start, which costs
about two seconds once the cache is warm."""

from __future__ import annotations


def warm() -> None:
    import numpy as np

    from neardup_udfs.kernels import anchor, band_pairs, web_text, words_jit, xxh64_jit
    from neardup_udfs.presets import resolve

    texts = [b"the quick brown fox jumps over the lazy dog", "h\u00e9llo \u4e2d\u6587".encode()]
    for name in ("ditto/2", "semblance-simhash", "fingerprint", "anchor"):
        resolve(name).fingerprint_batch(texts)
    minhash = resolve("semblance")
    sigs = minhash.signature_batch(texts)
    minhash.band_keys_batch(sigs)
    band_pairs.first_band_pairs([0], [False], [0, 2], [0, 1], sigs[:, :8], np.zeros((2, 8)), 1)
    anchor.simhash_bytes_batch(texts)
    words_jit.pair_jaccard_batch(texts, texts[::-1], 3)
    words_jit.token_texts_batch(texts)
    web_text.normalize_web_batch([t.decode() for t in texts])
    xxh64_jit.xxh64_spans(np.frombuffer(texts[0], dtype=np.uint8), np.array([0, 3, 9]), 42)


if __name__ == "__main__":
    warm()
