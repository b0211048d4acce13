"""Candidate pairs of LSH buckets, each pair produced once and scored where it is found.

A MinHash pair of documents can share many band buckets (two near copies at J = 0.9 share
about 15 of 25 bands of 5 rows). Enumerating every bucket's pairs and then making them
distinct moves every pair once per shared band; here each bucket keeps only the pairs whose
*first producing band* is its own, decided from the two signatures, so every pair leaves its
bucket at most once and already carries its estimate (equal slots).

"Producing" follows the candidates rule: a bucket of at most ``hot_bucket_size`` members
produces all its pairs; a larger ("hot") bucket only the pairs of its hub (its smallest id)
with each other member. A pair that first collides in a hot bucket without the hub there is
therefore kept by the first later band that does produce it: no pair any band produces is
lost to the rule, and none is produced twice.

The same walk serves MinHash bands (scored by equal signature slots) and Hamming tables
(SimHash and pHash keys of ``kernels.hamming_tables``, scored by the Hamming distance).

Pure numpy/numba; no Spark import.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.compiled import kernel
from neardup_udfs.kernels.lsh import band_keys_batch

__all__ = ["HOT", "HUB", "NOT_HOT", "Keyed", "first_band_pairs", "first_table_pairs"]

NOT_HOT, HOT, HUB = 0, 1, 2
"""A document's role in its bucket of one band: an ordinary bucket (or none), a member of a
hot bucket, the hub of a hot bucket."""

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


def first_band_pairs(
    band: npt.ArrayLike,
    star: npt.ArrayLike,
    offsets: npt.ArrayLike,
    member: npt.ArrayLike,
    signatures: npt.ArrayLike,
    roles: npt.ArrayLike,
    rows: int,
) -> tuple[I64, I64, I32, I32, I64]:
    """The pairs each bucket produces first, with their equal signature slots.

    Args:
        band: ``(g,)`` the band of each bucket (or bucket chunk).
        star: ``(g,)`` True where the bucket is hot: it produces only the pairs of its
            smallest member (the hub, present in every chunk of a hot bucket) with the others.
        offsets: ``(g + 1,)`` bucket ``i``'s members are rows ``offsets[i]:offsets[i+1]``.
        member: ``(m,)`` int64 document number of each member row.
        signatures: ``(m, bands * rows)`` the member's MinHash signature (any 64-bit ints).
        roles: ``(m, bands)`` the member document's role in its bucket of every band
            (``NOT_HOT``, ``HOT``, ``HUB``).
        rows: rows per band.

    Returns:
        ``a, b, band, equal, bucket``: one entry per produced pair whose first producing band
        is the bucket's band, ``a < b`` (document numbers), ``equal`` = the number of equal
        slots of the two signatures (the MinHash estimate is ``equal / (bands * rows)``),
        ``bucket`` = the index of the bucket (row of ``band``) that produced it.

    Notes:
        Two documents collide in band ``c`` when their band keys (``lsh.band_keys_batch``,
        semblance's Mix fold) are equal. Pairs are emitted bucket by bucket, in member order
        within a bucket. ValueError on inconsistent shapes.
    """
    band_a, star_a, off, mem = _buckets(band, star, offsets, member)
    if not len(mem):
        return _no_pairs()
    sigs = np.ascontiguousarray(signatures).view(np.uint64)
    if sigs.ndim != 2 or sigs.shape[0] != len(mem) or sigs.shape[1] % rows:
        raise ValueError(f"signatures of shape {sigs.shape} for {len(mem)} members, rows={rows}")
    bands = sigs.shape[1] // rows
    role = _roles(roles, len(mem), bands, band_a)
    keys = band_keys_batch(sigs, bands, rows)
    a, b, at, bucket, i, j = _first_pairs(band_a, star_a, off, mem, keys, role)
    return a, b, at, _equal_slots(sigs, i, j), bucket


def first_table_pairs(
    band: npt.ArrayLike,
    star: npt.ArrayLike,
    offsets: npt.ArrayLike,
    member: npt.ArrayLike,
    fingerprints: npt.ArrayLike,
    roles: npt.ArrayLike,
    scheme: Keyed,
) -> tuple[I64, I64, I32, I32, I64]:
    """The Hamming counterpart of :func:`first_band_pairs`: buckets of one table of
    ``scheme`` (``kernels.hamming_tables``: ``band`` is the table's index), members with a
    64-bit ``fingerprints`` value ``(m,)`` (SimHash, pHash; any 64-bit ints) and roles
    ``(m, tables)``. Returns ``a, b, table, distance, bucket``: each produced pair once, in
    the first table that produces it, with the Hamming distance of the two fingerprints.

    Notes:
        Two fingerprints collide in table ``t`` when ``scheme.keys`` gives them the same
        key there. The pairs are those of the candidates stage's buckets made distinct,
        hot buckets' stars included. ValueError on inconsistent shapes.
    """
    band_a, star_a, off, mem = _buckets(band, star, offsets, member)
    if not len(mem):
        return _no_pairs()
    fps = np.ascontiguousarray(fingerprints).view(np.uint64)
    if fps.shape != (len(mem),):
        raise ValueError(f"fingerprints of shape {fps.shape} for {len(mem)} members")
    keys = scheme.keys(fps)
    role = _roles(roles, len(mem), keys.shape[1], band_a)
    a, b, at, bucket, i, j = _first_pairs(band_a, star_a, off, mem, keys, role)
    distance = np.bitwise_count(np.bitwise_xor(fps[i], fps[j])).astype(np.int32)
    return a, b, at, distance, bucket


class Keyed(Protocol):
    """A Hamming key scheme: ``keys(fps)`` is ``(len(fps), tables)``."""

    def keys(self, fps: npt.ArrayLike) -> npt.NDArray[np.uint64]: ...


def _no_pairs() -> tuple[I64, I64, I32, I32, I64]:
    empty = np.empty(0, dtype=np.int64)
    return empty, empty.copy(), np.empty(0, np.int32), np.empty(0, np.int32), empty.copy()


def _buckets(
    band: npt.ArrayLike, star: npt.ArrayLike, offsets: npt.ArrayLike, member: npt.ArrayLike
) -> tuple[I32, npt.NDArray[np.bool_], I64, I64]:
    band_a = np.ascontiguousarray(band, dtype=np.int32)
    star_a = np.ascontiguousarray(star, dtype=np.bool_)
    off = np.ascontiguousarray(offsets, dtype=np.int64)
    mem = np.ascontiguousarray(member, dtype=np.int64)
    g = len(band_a)
    if star_a.shape != (g,) or off.shape != (g + 1,):
        raise ValueError(f"band, star and offsets disagree: {g}, {star_a.shape}, {off.shape}")
    if g and (off[0] != 0 or off[-1] != len(mem) or np.any(np.diff(off) < 0)):
        raise ValueError("offsets must rise from 0 to the number of member rows")
    return band_a, star_a, off, mem


def _roles(roles: npt.ArrayLike, m: int, bands: int, band: I32) -> npt.NDArray[np.int8]:
    role = np.ascontiguousarray(roles, dtype=np.int8)
    if role.shape != (m, bands):
        raise ValueError(f"roles of shape {role.shape}, expected {(m, bands)}")
    if np.any(band < 0) or np.any(band >= bands):
        raise ValueError(f"a bucket's band is outside 0..{bands - 1}")
    return role


def _first_pairs(
    band: I32,
    star: npt.NDArray[np.bool_],
    off: I64,
    mem: I64,
    keys: npt.NDArray[np.uint64],
    role: npt.NDArray[np.int8],
) -> tuple[I64, I64, I32, I64, I64, I64]:
    """``a, b, band, bucket`` of the first-band pairs and the member rows ``i, j`` of each."""
    a = np.empty(0, dtype=np.int64)
    out = (a, a.copy(), np.empty(0, np.int32), a.copy(), a.copy(), a.copy())
    n = _walk(band, star, off, mem, keys, role, out, False)
    a, b, bucket, i, j = (np.empty(n, dtype=np.int64) for _ in range(5))
    at = np.empty(n, dtype=np.int32)
    _walk(band, star, off, mem, keys, role, (a, b, at, bucket, i, j), True)
    return a, b, at, bucket, i, j


@kernel()
def _produced_before(keys, role, i, j, band):
    """True when some band before ``band`` produces the pair of member rows i, j."""
    for c in range(band):
        if keys[i, c] == keys[j, c]:
            # equal keys: one bucket, so both rows have the same hot status there
            if role[i, c] == NOT_HOT or role[i, c] == HUB or role[j, c] == HUB:
                return True
    return False


@kernel()
def _hub(member, lo, hi):
    h = lo
    for r in range(lo + 1, hi):
        if member[r] < member[h]:
            h = r
    return h


@kernel()
def _equal_slots(sigs, ri, rj):
    """The number of equal slots of signature rows ``ri[p]`` and ``rj[p]``, for every p."""
    out = np.empty(len(ri), dtype=np.int32)
    for p in range(len(ri)):
        i, j = ri[p], rj[p]
        e = 0
        for s in range(sigs.shape[1]):
            if sigs[i, s] == sigs[j, s]:
                e += 1
        out[p] = e
    return out


@kernel()
def _walk(band, star, off, member, keys, role, out, fill):
    """Counts (``fill`` False) or writes the first-band pairs into ``out`` (``a, b, band,
    bucket, i, j``); returns how many."""
    a, b, at, bucket, ri, rj = out
    n = 0
    for g in range(len(band)):
        lo, hi, c = off[g], off[g + 1], band[g]
        firsts = lo
        lasts = hi - 1
        if star[g]:
            firsts = _hub(member, lo, hi)
            lasts = firsts + 1
        for i in range(firsts, lasts):
            for j in range(lo if star[g] else i + 1, hi):
                if member[i] == member[j] or _produced_before(keys, role, i, j, c):
                    continue
                if fill:
                    x, y = member[i], member[j]
                    a[n], b[n] = min(x, y), max(x, y)
                    at[n] = c
                    bucket[n] = g
                    ri[n], rj[n] = i, j
                n += 1
    return n
