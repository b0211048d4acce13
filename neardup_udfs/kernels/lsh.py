"""semblance's ``lsh`` package, part 1: banding parameters, thresholds and band keys.

The single-machine indexes are in ``lsh_index`` (Index, VerifiedIndex), ``lsh_forest``
(Forest) and ``lsh_hamming`` (HammingIndex).

A port of ophymx/semblance ``lsh`` (spec ``seeds-spec.md`` §3.5): band keys are the frozen
Mix fold of each band's rows, so keys computed here can share a store with keys computed by
semblance for the same (k, seed, bands, rows). Every query order is part of the contract and
reproduced exactly:

- :class:`Index` and :class:`HammingIndex`: first matching band (block), then insertion order;
- :class:`VerifiedIndex`: similarity descending, then id ascending (byte-wise, as Go);
- :class:`Forest`: prefix depth descending, then tree, then sorted key, then insertion order.

Signatures are 1-D ``numpy.uint64`` arrays (any array-like of ints is accepted and converted;
``int64`` arrays are reinterpreted as two's complement), SimHash fingerprints are Python ints in
``[0, 2**64)``, ids are ``str``. Where semblance panics, this module raises ``ValueError``.
None of the classes is safe for concurrent use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.checks import as_signature, as_u64, positive
from neardup_udfs.kernels.gomath import go_pow_unit
from neardup_udfs.kernels.hashing import MIX_INIT, SPLITMIX_GAMMA, mix_fold

__all__ = [
    "band_key_ints",
    "band_keys",
    "band_keys_batch",
    "candidate_probability",
    "prefix_keys_batch",
    "params",
    "recall_params",
    "threshold",
]

U64 = npt.NDArray[np.uint64]


# --- argument checks ---------------------------------------------------------------------------


def _open_unit(threshold: float) -> float:
    """``threshold`` as a float, or ValueError when it is not in (0, 1) (NaN included)."""
    t = float(threshold)
    if not 0.0 < t < 1.0:
        raise ValueError(f"threshold must be in the open interval (0, 1), got {threshold!r}")
    return t


# --- parameters ----------------------------------------------------------------------------------


def threshold(bands: int, rows: int) -> float:
    """The Jaccard similarity where the banding's candidate probability is about 1/2.

    ``(1/bands) ** (1/rows)``, evaluated as Go's ``math.Pow`` does (semblance
    ``Index.Threshold``).

    Notes:
        Bit-identical to Go on amd64 CPUs with FMA (every golden value matches); Go on a CPU
        without FMA, and CPython's ``math.pow``, can differ by 1 ulp (spec §1.6). ``bands = 1``
        gives exactly 1.0. ValueError names a non-positive argument.

    Example:
        >>> threshold(16, 8)
        0.7071067811865476
    """
    b = positive("bands", bands)
    r = positive("rows", rows)
    return go_pow_unit(1.0 / float(b), 1.0 / float(r))


def candidate_probability(jaccard: float, bands: int, rows: int) -> float:
    """Probability that two sets of Jaccard similarity ``jaccard`` share at least one band.

    ``1 - (1 - jaccard**rows) ** bands`` — the S-curve of a ``bands`` x ``rows`` banding.

    Notes:
        Plain float64 arithmetic (semblance only documents this formula). ValueError when
        ``jaccard`` is not in [0, 1] or ``bands``/``rows`` are not positive.

    Example:
        >>> round(candidate_probability(0.9, 16, 8), 4)
        0.9999
        >>> candidate_probability(0.1, 16, 8) < 2e-7
        True
    """
    b = positive("bands", bands)
    r = positive("rows", rows)
    j = float(jaccard)
    if not 0.0 <= j <= 1.0:
        raise ValueError(f"jaccard must be in [0, 1], got {jaccard!r}")
    return 1.0 - (1.0 - j**r) ** b


def params(k: int, threshold: float) -> tuple[int, int]:
    """semblance ``Params``: the banding ``(bands, rows)``, ``bands * rows == k``, whose
    threshold ``(1/bands) ** (1/rows)`` is closest to ``threshold``.

    Scans ``bands = 1 .. k`` over the divisors of ``k``; on an exact tie in distance the later
    candidate (more bands, higher recall) wins.

    Notes:
        Thresholds are computed as :func:`threshold` does (Go ``math.Pow``), so ties resolve as
        in Go. ValueError names ``k`` when it is not a positive integer and ``threshold`` when it
        is not in the open interval (0, 1) — NaN included (Go would silently return
        ``(1, k)`` for NaN). Cost: ``k`` divisibility tests plus one power per divisor.

    Example:
        >>> params(128, 0.71)
        (16, 8)
    """
    n = positive("k", k)
    target = _open_unit(threshold)
    best_bands, best_rows = 1, n
    best = math.inf
    for b in range(1, n + 1):
        if n % b:
            continue
        r = n // b
        d = abs(go_pow_unit(1.0 / float(b), 1.0 / float(r)) - target)
        if d <= best:
            best, best_bands, best_rows = d, b, r
    return best_bands, best_rows


def recall_params(
    k: int, threshold: float, *, margin: float = 0.05, probability: float = 0.995
) -> tuple[int, int]:
    """A recall-first banding for signatures of ``k`` slots (neardup's, not semblance's).

    Returns the ``(bands, rows)`` with ``bands = k // rows`` and the largest ``rows`` such that
    two sets of Jaccard ``threshold + m`` become candidates with at least ``probability``,
    where ``m = min(margin, (1 - threshold) / 2)``. ``rows = 1`` (``k`` bands) when no larger
    ``rows`` qualifies.

    Notes:
        semblance's :func:`params` puts the S-curve's midpoint at the threshold, so half the
        pairs right at the threshold, and one in five at threshold + 0.05 (16 x 8), are never
        compared. This banding trades more candidates (checked by verification) for recall.
        ValueError names ``k``, ``threshold``, ``margin`` or ``probability`` when out of range.

    Example:
        >>> recall_params(128, 0.7)
        (25, 5)
    """
    n = positive("k", k)
    t = _open_unit(threshold)
    if not margin >= 0.0:
        raise ValueError(f"margin must be >= 0, got {margin!r}")
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability!r}")
    j = t + min(margin, (1.0 - t) / 2.0)
    for rows in range(n, 1, -1):
        if candidate_probability(j, n // rows, rows) >= probability:
            return n // rows, rows
    return n, 1


# --- band keys -----------------------------------------------------------------------------------


def band_key_ints(values: Sequence[int], bands: int, rows: int) -> list[int]:
    """:func:`band_keys` of a signature of exactly ``bands * rows`` values, as Python ints
    (no checks)."""
    return [mix_fold(values[b * rows : (b + 1) * rows]) for b in range(bands)]


def band_keys(sig: npt.ArrayLike, bands: int, rows: int) -> U64:
    """semblance ``BandKeys``: the bucket key of every band of one signature.

    Key ``b`` is the Mix fold (from ``MIX_INIT``) of ``sig[b*rows : (b+1)*rows]`` in order.

    Notes:
        Frozen and persistable: equal to semblance's keys for the same signature. Keys from
        different (k, seed, bands, rows) must never share a store. ValueError when ``bands`` or
        ``rows`` is not positive or ``len(sig) != bands * rows``. Agrees with
        :func:`band_keys_batch` row for row.

    Example:
        >>> [f"{k:016x}" for k in band_keys(list(range(1, 9)), 2, 4).tolist()]
        ['7ff1d476798020a7', 'fd4888f51ae197db']
    """
    b = positive("bands", bands)
    r = positive("rows", rows)
    arr = as_signature(sig, b * r, "bands*rows")
    return np.array(band_key_ints(arr.tolist(), b, r), dtype=np.uint64)


def band_keys_batch(sigs: npt.ArrayLike, bands: int, rows: int) -> U64:
    """Band keys of many signatures at once: ``(n, bands*rows)`` uint64 -> ``(n, bands)``.

    Vectorised over all signatures and bands; the only Python loop runs over the ``rows``
    positions of a band.

    Notes:
        Row ``i`` equals ``band_keys(sigs[i], bands, rows)``. ``n = 0`` gives shape
        ``(0, bands)``. ValueError when ``sigs`` is not 2-D, its width is not ``bands * rows``,
        or ``bands``/``rows`` is not positive.

    Example:
        >>> keys = band_keys_batch(np.arange(1, 17, dtype=np.uint64).reshape(2, 8), 2, 4)
        >>> f"{int(keys[0, 0]):016x}", keys.shape
        ('7ff1d476798020a7', (2, 2))
    """
    return prefix_keys_batch(sigs, bands, rows)[:, :, rows - 1].copy()


def prefix_keys_batch(sigs: npt.ArrayLike, bands: int, rows: int) -> U64:
    """Keys of every band prefix: ``(n, bands*rows)`` uint64 -> ``(n, bands, rows)``.

    Entry ``[i, b, d - 1]`` is the Mix fold of the first ``d`` values of band ``b`` of
    signature ``i``, so ``[:, :, rows - 1]`` are the band keys (:func:`band_keys_batch`).

    Notes:
        Two signatures with equal first ``d`` values in band ``b`` (the Forest's tree ``b``)
        have equal prefix keys at depth ``d``; equal keys with different values need a 64-bit
        collision. This is what lets a stored index answer :class:`Forest` queries by key
        lookups, one depth at a time. ValueError as :func:`band_keys_batch`.
    """
    b = positive("bands", bands)
    r = positive("rows", rows)
    arr = as_u64(sigs)
    if arr.ndim != 2:
        raise ValueError(f"signatures must be 2-D (n, bands*rows), got shape {arr.shape}")
    if arr.shape[1] != b * r:
        raise ValueError(f"signature length {arr.shape[1]} does not match bands*rows = {b * r}")
    cube = arr.reshape(arr.shape[0], b, r)
    out = np.empty((arr.shape[0], b, r), dtype=np.uint64)
    acc = np.full((arr.shape[0], b), MIX_INIT, dtype=np.uint64)
    tmp = np.empty_like(acc)
    gamma = np.uint64(SPLITMIX_GAMMA)
    s31, s33 = np.uint64(31), np.uint64(33)
    for j in range(r):
        np.right_shift(acc, s33, out=tmp)
        acc <<= s31
        acc |= tmp  # rotl(acc, 31)
        acc ^= cube[:, :, j]
        acc *= gamma  # wraps mod 2**64
        out[:, :, j] = acc
    return out
