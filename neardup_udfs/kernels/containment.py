"""Containment of one shingle set in another: every pair at or above a threshold, found
completely, then settled so that an excerpt goes only next to a container that stays.

The containment of q in x is ``|q ∩ x| / |q|`` (semblance's ``Containment`` on exact sets).
Candidates come from prefix filtering (Chaudhuri, Ganti, Kaushik, ICDE 2006; Bayardo, Ma,
Srikant, WWW 2007): with every set sorted in one global order (ascending hash, a random
order), ``|q ∩ x| >= t`` leaves at most ``|q| - t`` elements of q outside x, so x holds at
least one of q's first ``|q| - t + 1``. Probing only those against an index of every
container's whole set therefore misses no pair: recall is 1 by construction, and every pair
reported is checked on the two full sets. Probing twice the prefix and counting the hits
cuts the checks: a qualifying pair hits at least one more than the prefix's extra length.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.compiled import kernel

__all__ = [
    "contained_pairs",
    "containment_order",
    "may_take_place",
    "prefix_lengths",
    "required_shared",
    "settle_containment",
    "shared_counts",
]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
_EPS = 1e-9  # T * n computed in floating point: 0.8 * 35 must count as 28, not 28.000...04


def required_shared(sizes: npt.ArrayLike, threshold: float) -> I64:
    """The fewest shared elements that make a set of each size at least ``threshold``
    contained: ``ceil(threshold * size)``, at least 1."""
    n = np.asarray(sizes, dtype=np.int64)
    return np.maximum(np.ceil(threshold * n - _EPS).astype(np.int64), 1)


def may_take_place(kept: Any, member: Any, min_shingles: int) -> Any:
    """Whether a removed near-duplicate with ``member`` shingles may be kept in place of its
    cluster's kept document with ``kept`` shingles (if that one is verified inside it):
    the kept one takes part (at least ``min_shingles``) and the member has more shingles.

    Shingle counts, never text lengths: an HTML page's raw text (its markup) can be longer
    than a page whose visible text holds it. The one rule of both engines: numpy arrays and
    Spark columns alike (``driver.containment``, ``stages.containment``)."""
    return (kept >= min_shingles) & (member > kept)


def prefix_lengths(sizes: npt.ArrayLike, threshold: float) -> I64:
    """How many of a set's first (smallest) hashes a container must be probed with: any set
    holding ``required_shared`` of its elements holds one of these."""
    n = np.asarray(sizes, dtype=np.int64)
    return np.maximum(n - required_shared(n, threshold) + 1, 0)


def containment_order(sizes: npt.ArrayLike, place: npt.ArrayLike) -> I64:
    """Each set's rank in the order containers are decided in: more shingles first, then
    the representative rule's ``place`` (smaller first); ranks are 0..n-1."""
    n = np.asarray(sizes, dtype=np.int64)
    order = np.lexsort((np.asarray(place, dtype=np.int64), -n))
    rank = np.empty(len(n), dtype=np.int64)
    rank[order] = np.arange(len(n), dtype=np.int64)
    return rank


@kernel()
def _merge_count(hashes, p, pe, r, re, need):  # pragma: no cover - compiled
    """|hashes[p:pe] ∩ hashes[r:re]| (both ascending), or any smaller count once the rest of
    the first run cannot bring it to ``need``."""
    c = 0
    while p < pe and r < re and c + (pe - p) >= need:
        if hashes[p] == hashes[r]:
            c += 1
            p += 1
            r += 1
        elif hashes[p] < hashes[r]:
            p += 1
        else:
            r += 1
    return c


@kernel()
def _shared(hashes, offsets, a, b):  # pragma: no cover - compiled
    out = np.zeros(len(a), dtype=np.int64)
    for i in range(len(a)):
        out[i] = _merge_count(hashes, offsets[a[i]], offsets[a[i] + 1], offsets[b[i]],
                              offsets[b[i] + 1], 0)  # fmt: skip
    return out


def shared_counts(hashes: U64, offsets: I64, a: npt.ArrayLike, b: npt.ArrayLike) -> I64:
    """``|set a[i] ∩ set b[i]|`` for every i; set d is ``hashes[offsets[d]:offsets[d + 1]]``,
    sorted ascending without repeats (``words_jit.shingle_sets_batch``'s form)."""
    ai = np.ascontiguousarray(a, dtype=np.int64)
    bi = np.ascontiguousarray(b, dtype=np.int64)
    if not len(ai):
        return np.zeros(0, dtype=np.int64)
    return np.asarray(_shared(hashes, offsets, ai, bi), dtype=np.int64)


@kernel()
def _probe(
    hashes, offsets, rank, need, probe, queries, post_hash, post_doc, start, out_q, out_x, out_s
):  # pragma: no cover - compiled
    n_docs = len(rank)
    hits = np.zeros(n_docs, dtype=np.int64)
    touched = np.empty(n_docs, dtype=np.int64)
    found_x = np.empty(n_docs, dtype=np.int64)
    found_s = np.empty(n_docs, dtype=np.int64)
    written = 0
    cap = len(out_q)
    for qi in range(start, len(queries)):
        q = queries[qi]
        qs, qe = offsets[q], offsets[q + 1]
        n_touched = 0
        for j in range(qs, qs + probe[q]):  # hits of every earlier set among q's first hashes
            h = hashes[j]
            lo = np.searchsorted(post_hash, h)
            while lo < len(post_hash) and post_hash[lo] == h:
                x = post_doc[lo]
                lo += 1
                if rank[x] >= rank[q]:
                    continue
                if hits[x] == 0:
                    touched[n_touched] = x
                    n_touched += 1
                hits[x] += 1
        # with at most |q| - need of q's elements outside x, at least probe - (|q| - need)
        # of the probed ones are in x
        least = probe[q] - (qe - qs - need[q])
        k = 0
        for i in range(n_touched):
            x = touched[i]
            if hits[x] >= least:
                c = _merge_count(hashes, qs, qe, offsets[x], offsets[x + 1], need[q])
                if c >= need[q]:
                    found_x[k] = x
                    found_s[k] = c
                    k += 1
            hits[x] = 0
        if written + k > cap:
            return qi, written
        for i in range(k):
            out_q[written] = q
            out_x[written] = found_x[i]
            out_s[written] = found_s[i]
            written += 1
    return len(queries), written


def contained_pairs(
    hashes: U64,
    offsets: I64,
    rank: npt.ArrayLike,
    threshold: float,
    queries: npt.ArrayLike,
    containers: npt.ArrayLike,
    workers: int = 1,
) -> tuple[I64, I64, I64]:
    """Every pair ``(q, x)``, q among ``queries`` and x among ``containers``, with
    ``rank[x] < rank[q]`` and q at least ``threshold`` contained in x.

    Args:
        hashes, offsets: the sets (``shared_counts``'s form), indexed 0..n-1.
        rank: each set's place in the decision order (:func:`containment_order`): only a set
            earlier in it may contain a later one.
        threshold: in (0, 1].
        queries, containers: set indices.
        workers: threads the queries are shared among (the result is the same).

    Returns:
        ``q, x, shared`` (``shared = |q ∩ x|``), by query in the order given, then by the
        container's first shared prefix hash. Complete: no qualifying pair is left out
        (prefix filtering, see the module's note).
    """
    ranks = np.ascontiguousarray(rank, dtype=np.int64)
    sizes = np.diff(offsets)
    need = required_shared(sizes, threshold)
    # twice the prefix (at most the set): a candidate must hit prefix + 1 of the probed
    # hashes, which every qualifying pair does, and chance overlaps mostly do not
    probe = np.minimum(2 * prefix_lengths(sizes, threshold), sizes)
    box = np.ascontiguousarray(containers, dtype=np.int64)
    q_list = np.ascontiguousarray(queries, dtype=np.int64)
    counts = sizes[box]
    post_doc = np.repeat(box, counts)
    starts = np.repeat(offsets[box] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    post_hash = hashes[np.arange(len(post_doc), dtype=np.int64) + starts]
    by_hash = np.argsort(post_hash, kind="stable")
    post_hash, post_doc = post_hash[by_hash], post_doc[by_hash]

    def run(part: I64) -> tuple[I64, I64, I64]:
        parts: list[tuple[I64, I64, I64]] = []
        start, cap = 0, max(1024, 4 * len(part))
        while True:
            out = [np.empty(cap, dtype=np.int64) for _ in range(3)]
            start, written = _probe(hashes, offsets, ranks, need, probe, part, post_hash,
                                    post_doc, start, *out)  # fmt: skip
            parts.append((out[0][:written], out[1][:written], out[2][:written]))
            if start >= len(part):
                break
            cap = max(2 * cap, len(ranks))  # one query finds at most every other set
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]

    halves = np.array_split(q_list, max(1, min(workers, len(q_list))))
    if len(halves) == 1:
        return run(halves[0])
    with ThreadPoolExecutor(len(halves)) as pool:  # the kernel holds no GIL
        found = list(pool.map(run, halves))
    q, x, s = (np.concatenate([f[i] for f in found]) for i in range(3))
    return q, x, s


@kernel()
def _settle(by_rank, first, edge_x, edge_score, edge_ok, rank, rep, score):  # pragma: no cover
    for q in by_rank:
        best = -1
        for e in range(first[q], first[q + 1]):
            x = edge_x[e]
            if not edge_ok[e] or rep[x] != -1:
                continue
            better = best == -1 or edge_score[e] > score[q]
            if not better and edge_score[e] == score[q] and rank[x] < rank[best]:
                better = True
            if better:
                best = x
                score[q] = edge_score[e]
        rep[q] = best


def settle_containment(
    rank: npt.ArrayLike,
    q: npt.ArrayLike,
    x: npt.ArrayLike,
    score: npt.ArrayLike,
    allowed: npt.ArrayLike | None = None,
) -> tuple[I64, npt.NDArray[np.float64]]:
    """Which sets are removed, and next to which container: a pass in ``rank`` order.

    Args:
        rank: each set's place (0..n-1) in the decision order.
        q, x, score: the verified pairs, q contained in x (``rank[x] < rank[q]``) with the
            given containment.
        allowed: per pair, whether q may be removed next to x (default: every pair).

    Returns:
        ``rep, value``: ``rep[i] = -1`` for a set that stays; else the container it is
        removed next to, which stays, among its allowed pairs the one with the highest
        containment (ties: the earliest), and ``value[i]`` that containment. A set stays
        exactly when none of its allowed containers stays.
    """
    ranks = np.ascontiguousarray(rank, dtype=np.int64)
    qa = np.asarray(q, dtype=np.int64)
    xa = np.asarray(x, dtype=np.int64)
    if np.any(ranks[xa] >= ranks[qa]):
        raise ValueError("a container must come before its excerpt in the order")
    ok = np.ones(len(qa), dtype=np.bool_) if allowed is None else np.asarray(allowed, bool)
    n = len(ranks)
    by_q = np.argsort(qa, kind="stable")
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(qa, minlength=n), out=first[1:])
    rep = np.full(n, -1, dtype=np.int64)
    value = np.zeros(n, dtype=np.float64)
    by_rank = np.argsort(ranks, kind="stable")
    _settle(by_rank, first, xa[by_q], np.asarray(score, np.float64)[by_q],
            np.ascontiguousarray(ok[by_q]), ranks, rep, value)  # fmt: skip
    return rep, value
