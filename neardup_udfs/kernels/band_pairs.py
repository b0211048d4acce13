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

Pure numpy/numba; no Spark import.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.compiled import kernel
from neardup_udfs.kernels.lsh import band_keys_batch

__all__ = ["HOT", "HUB", "NOT_HOT", "first_band_pairs"]

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
    band_a = np.ascontiguousarray(band, dtype=np.int32)
    star_a = np.ascontiguousarray(star, dtype=np.bool_)
    off = np.ascontiguousarray(offsets, dtype=np.int64)
    mem = np.ascontiguousarray(member, dtype=np.int64)
    sigs = np.ascontiguousarray(signatures).view(np.uint64) if len(mem) else None
    role = np.ascontiguousarray(roles, dtype=np.int8)
    g = len(band_a)
    if star_a.shape != (g,) or off.shape != (g + 1,):
        raise ValueError(f"band, star and offsets disagree: {g}, {star_a.shape}, {off.shape}")
    if g and (off[0] != 0 or off[-1] != len(mem) or np.any(np.diff(off) < 0)):
        raise ValueError("offsets must rise from 0 to the number of member rows")
    if sigs is None:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), np.empty(0, np.int32), np.empty(0, np.int32), empty.copy()
    if sigs.ndim != 2 or sigs.shape[0] != len(mem) or sigs.shape[1] % rows:
        raise ValueError(f"signatures of shape {sigs.shape} for {len(mem)} members, rows={rows}")
    bands = sigs.shape[1] // rows
    if role.shape != (len(mem), bands):
        raise ValueError(f"roles of shape {role.shape}, expected {(len(mem), bands)}")
    if np.any(band_a < 0) or np.any(band_a >= bands):
        raise ValueError(f"a bucket's band is outside 0..{bands - 1}")
    keys = band_keys_batch(sigs, bands, rows)
    a = np.empty(0, dtype=np.int64)
    b, at, equal, bucket = a.copy(), np.empty(0, np.int32), np.empty(0, np.int32), a.copy()
    n = _walk(band_a, star_a, off, mem, keys, role, sigs, (a, b, at, equal, bucket), False)
    a, b, bucket = (np.empty(n, dtype=np.int64) for _ in range(3))
    at, equal = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    _walk(band_a, star_a, off, mem, keys, role, sigs, (a, b, at, equal, bucket), True)
    return a, b, at, equal, bucket


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
def _equal_slots(sigs, i, j):
    e = 0
    for s in range(sigs.shape[1]):
        if sigs[i, s] == sigs[j, s]:
            e += 1
    return e


@kernel()
def _walk(band, star, off, member, keys, role, sigs, out, fill):
    """Counts (``fill`` False) or writes the first-band pairs into ``out`` (``a, b, band,
    equal, bucket``); returns how many."""
    a, b, at, equal, bucket = out
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
                    equal[n] = _equal_slots(sigs, i, j)
                    bucket[n] = g
                n += 1
    return n
