"""The ground truth of the text benches: exact Jaccard of every document pair's word 3-shingle
sets (semblance's shingles, computed by the job's own kernel), by lossless prefix filtering.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from lib.corpora import I64
from neardup_udfs.kernels.words_jit import word_shingles_batch

THRESHOLD = 0.7  # Jaccard threshold of every system and of the ground truth
T_07 = (7, 10)  # the same thresholds as exact fractions: J >= num / den
T_075 = (3, 4)
SHINGLE_W = 3  # semblance word 3-shingles

U64 = npt.NDArray[np.uint64]


def shingle_sets(texts: Sequence[str], w: int = SHINGLE_W) -> list[U64]:
    """Each text's set of semblance word w-shingles (the job's own kernel), sorted, unique."""
    hashes, offsets = word_shingles_batch(texts, w)
    return [np.unique(hashes[offsets[i] : offsets[i + 1]]) for i in range(len(texts))]


@njit(cache=False)
def _all_pairs(
    indptr: I64,
    data: I64,
    plen: I64,
    post_ptr: I64,
    post_doc: I64,
    num: int,
    den: int,
    out: I64,
) -> int:
    """Prefix-filtered all-pairs join: every (y, x), y < x, with J >= num/den, into ``out``
    rows (y, x, |x & y|). Returns the row count, or -1 when ``out`` is too small."""
    n = len(indptr) - 1
    mark = np.full(n, -1, dtype=np.int64)
    count = 0
    for x in range(n):
        x0, x1 = indptr[x], indptr[x + 1]
        nx = x1 - x0
        for q in range(x0, x0 + plen[x]):
            tok = data[q]
            for r in range(post_ptr[tok], post_ptr[tok + 1]):
                y = post_doc[r]
                if y >= x:
                    break  # postings are sorted by set index
                if mark[y] == x:
                    continue
                mark[y] = x
                y0, y1 = indptr[y], indptr[y + 1]
                ny = y1 - y0
                if den * min(nx, ny) < num * max(nx, ny):
                    continue  # J <= min/max: too different in size
                i, j, inter = x0, y0, 0
                while i < x1 and j < y1:
                    if data[i] == data[j]:
                        inter += 1
                        i += 1
                        j += 1
                    elif data[i] < data[j]:
                        i += 1
                    else:
                        j += 1
                if den * inter >= num * (nx + ny - inter):
                    if count == len(out):
                        return -1
                    out[count, 0] = y
                    out[count, 1] = x
                    out[count, 2] = inter
                    count += 1
    return count


@dataclass(frozen=True)
class Truth:
    """Exact Jaccard of every document pair with J >= 0.7 among ``n`` documents.

    Pairs are codes ``a * n + b`` (a < b, positions in the evaluated document list).
    """

    n: int
    sizes: I64  # shingle-set size per document
    codes: I64  # sorted pair codes with J >= 0.7
    inter: I64  # |A & B| per code
    union: I64  # |A | B| per code
    seconds: float

    def at_least(self, num: int, den: int) -> I64:
        return self.codes[den * self.inter >= num * self.union]


def exact_pairs(sets: Sequence[U64], t: tuple[int, int] = T_07) -> Truth:
    """All pairs with exact Jaccard >= t, by prefix filtering (AllPairs) over an inverted index.

    Notes:
        Lossless: with shingles ordered rarest first, two sets with J >= t share a shingle
        within their first ``|x| - ceil(t|x|) + 1`` shingles. Identical sets are collapsed
        first (their pairs have J = 1). Empty sets (fewer than 3 words) pair with nothing:
        J = 0, semblance's rule and the job's exact verification.
    """
    started = time.perf_counter()
    num, den = t
    n = len(sets)
    sizes = np.array([len(s) for s in sets], dtype=np.int64)
    groups: dict[bytes, list[int]] = defaultdict(list)
    for i, s in enumerate(sets):
        if len(s):
            groups[s.tobytes()].append(i)
    members = list(groups.values())
    uniq = [sets[g[0]] for g in members]
    codes: list[I64] = []
    inter: list[I64] = []
    union: list[I64] = []

    def add(a: I64, b: I64, common: I64, total: I64) -> None:
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        codes.append(lo * n + hi)
        inter.append(common)
        union.append(total)

    for g in members:  # identical sets: J = 1
        if len(g) > 1:
            a, b = np.triu_indices(len(g), 1)
            arr = np.asarray(g, dtype=np.int64)
            k = sizes[arr[a]]
            add(arr[a], arr[b], k, k)
    if len(uniq) > 1:
        allv = np.concatenate(uniq)
        tokens, inverse, counts = np.unique(allv, return_inverse=True, return_counts=True)
        rank_of = np.empty(len(tokens), dtype=np.int64)
        rank_of[np.lexsort((tokens, counts))] = np.arange(len(tokens))  # rarest first
        ranks = rank_of[inverse]
        lens = np.array([len(u) for u in uniq], dtype=np.int64)
        indptr = np.zeros(len(uniq) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        data = np.concatenate([np.sort(ranks[indptr[i] : indptr[i + 1]]) for i in range(len(uniq))])
        plen = lens - (num * lens + den - 1) // den + 1
        owner = np.repeat(np.arange(len(uniq), dtype=np.int64), lens)
        pos = np.arange(len(data), dtype=np.int64) - indptr[owner]
        in_prefix = pos < plen[owner]
        p_tok, p_doc = data[in_prefix], owner[in_prefix]
        order = np.lexsort((p_doc, p_tok))
        post_doc = p_doc[order]
        post_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(np.bincount(p_tok, minlength=len(tokens)), out=post_ptr[1:])
        cap = 1 << 16
        while True:
            out = np.empty((cap, 3), dtype=np.int64)
            got = _all_pairs(indptr, data, plen, post_ptr, post_doc, num, den, out)
            if got >= 0:
                break
            cap *= 4
        for y, x, common in out[:got]:
            ga = np.asarray(members[y], dtype=np.int64)
            gb = np.asarray(members[x], dtype=np.int64)
            a, b = np.repeat(ga, len(gb)), np.tile(gb, len(ga))
            total = lens[y] + lens[x] - common
            add(a, b, np.full(len(a), common), np.full(len(a), total))
    if codes:
        all_codes = np.concatenate(codes)
        order = np.argsort(all_codes, kind="stable")
        c, i_, u_ = all_codes[order], np.concatenate(inter)[order], np.concatenate(union)[order]
    else:
        c = i_ = u_ = np.zeros(0, dtype=np.int64)
    return Truth(n, sizes, c, i_, u_, time.perf_counter() - started)
