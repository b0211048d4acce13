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
    _warm_as_read(texts)


def _warm_as_read(texts: list[bytes]) -> None:
    """The kernels the tests reach only through the runs, with the array kinds the runs
    give them: containment, sets' MinHash, CJK grouping, XXH64 of a writable buffer, and
    read-only (Arrow-backed) sets and signatures."""
    import numpy as np

    from neardup_udfs.kernels import band_pairs, containment, web_text, words_jit, xxh64_jit
    from neardup_udfs.presets import resolve

    hashes, offsets = words_jit.shingle_sets_batch([t.decode() for t in texts] * 2, 1)
    frozen = hashes.copy()
    frozen.setflags(write=False)
    pair = np.array([0]), np.array([2])
    for sets in (hashes, frozen):
        containment.shared_counts(sets, offsets, *pair)
        containment.contained_pairs(sets, offsets, np.arange(4), 0.5, [2, 3], [0, 1])
        words_jit.indexed_sets_jaccard(sets, offsets, *pair)
    containment.settle_containment([0, 1], [1], [0], [1.0])
    words_jit.minhash_of_sets(hashes, offsets, 8)
    web_text.cjk_chars("abc\u4e2d\u6587def")
    buf = bytearray(texts[0])
    np_buf = np.frombuffer(buf, dtype=np.uint8)
    xxh64_jit.xxh64_spans(np_buf, np.array([0, 3, 9]), 1 << 63)
    xxh64_jit.xxh64_at(np_buf, 0, 3, np.uint64(1 << 63))
    sigs = np.ascontiguousarray(resolve("semblance").signature_batch(texts)[:, :8])
    band = np.zeros(1, dtype=np.int32)
    for frozen_array in (sigs, band):
        frozen_array.setflags(write=False)
    band_pairs.first_band_pairs(band, [False], [0, 2], [0, 1], sigs, np.zeros((2, 8)), 1)


if __name__ == "__main__":
    warm()
