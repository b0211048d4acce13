"""Aligned passages two texts share (semblance ``winnow.Overlaps``): fingerprint matches
grouped into runs along diagonals, reported as :class:`Span` in bytes, with the
``MAX_RESULTS`` budget on the matches examined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.renamed import renamed
from neardup_udfs.kernels.winnow.fingerprints import text
from neardup_udfs.kernels.winnow.inputs import integer, positive

I64 = npt.NDArray[np.int64]

MAX_RESULTS = 1 << 20
"""Cap on the fingerprint matches :func:`overlaps` and :meth:`Index.matches` examine (in scan
order: query fingerprint first, then the other side's positions in order), so highly
repetitive input cannot blow up quadratically; it also bounds the number of spans."""


@dataclass(frozen=True, order=True)
class Span:
    """An aligned passage two texts share (semblance ``winnow.Span``), in bytes.

    ``a[pos_a : pos_a + length]`` aligns with ``b[pos_b : pos_b + length]``. A located region,
    not a proof of byte equality: the bounding k-grams are equal, the interior need not be, and
    edges land within about w + k bytes of the true passage boundaries.
    """

    pos_a: int
    pos_b: int
    length: int


def _runs(diag: I64, j: I64) -> tuple[I64, I64]:
    """Group matches (in scan order) into diagonal runs.

    A match continues the run on its diagonal iff the previous match on that diagonal (in scan
    order) came from query fingerprint ``j - 1``; otherwise it starts a new run. Returns the
    indices (into the scan order) of each run's first and last match.
    """
    order = np.argsort(diag, kind="stable")
    d, jj = diag[order], j[order]
    new = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        new[1:] = (d[1:] != d[:-1]) | (jj[1:] != jj[:-1] + 1)
    last = np.ones(len(order), dtype=bool)
    last[:-1] = new[1:]
    return order[new], order[last]


@renamed(k="kgram_bytes")
def overlaps(
    a: str | bytes, b: str | bytes, kgram_bytes: int, w: int, *, max_results: int = MAX_RESULTS
) -> list[Span]:
    """Aligned passages two texts share (semblance ``winnow.Overlaps``), sorted by (pos_a, pos_b).

    Both texts are winnowed with k-grams of k = ``kgram_bytes`` bytes (semblance's ``k``,
    still read as ``k=`` with a DeprecationWarning) and windows of ``w`` k-grams.

    Each fingerprint of ``b`` (in order, counted by j) is matched against every position of
    the same hash in ``a`` (in order); each match costs one unit of a ``max_results`` budget,
    and the scan stops outright when it is spent. A match on diagonal ``pos_a - pos_b``
    extends the open run there when that run's last match came from fingerprint j - 1, else
    it starts a new run. A run becomes ``Span(first pos_a, first pos_b, last pos_a + k -
    first pos_a)``. A fingerprint repeated in ``a`` gives one span per alignment. A shared run
    of w + k - 1 or more bytes yields at least one span. Empty list if none.
    """
    k = positive("k", kgram_bytes)
    w = positive("w", w)
    budget = integer("max_results", max_results)
    fa, fb = text(a, k, w), text(b, k, w)
    if len(fa.pos) == 0 or len(fb.pos) == 0 or budget <= 0:
        return []
    order = np.argsort(fa.hash, kind="stable")  # positions stay increasing within a hash
    ha, pa_sorted = fa.hash[order], fa.pos[order]
    lo = np.searchsorted(ha, fb.hash, side="left")
    cnt = np.searchsorted(ha, fb.hash, side="right") - lo
    csum = np.cumsum(cnt)
    if int(csum[-1]) > budget:  # only the first `budget` matches in scan order are examined
        cut = int(np.searchsorted(csum, budget, side="left"))
        cnt = cnt[: cut + 1].copy()
        cnt[cut] -= int(csum[cut]) - budget
        lo = lo[: cut + 1]
    total = int(cnt.sum())
    if total == 0:
        return []
    j = np.repeat(np.arange(len(cnt), dtype=np.int64), cnt)
    first = np.zeros(len(cnt), dtype=np.int64)
    np.cumsum(cnt[:-1], out=first[1:])
    pa = pa_sorted[np.arange(total, dtype=np.int64) + np.repeat(lo - first, cnt)]
    pb = fb.pos[j]
    start, end = _runs(pa - pb, j)
    pos_a, pos_b = pa[start], pb[start]
    length = pa[end] + k - pos_a
    out = np.lexsort((pos_b, pos_a))
    return [
        Span(x, y, n)
        for x, y, n in zip(
            pos_a[out].tolist(), pos_b[out].tolist(), length[out].tolist(), strict=True
        )
    ]
