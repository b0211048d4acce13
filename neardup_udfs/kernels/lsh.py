"""semblance's ``lsh`` package: MinHash banding, LSH Forest and exact SimHash Hamming search.

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
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.gomath import go_pow_unit
from neardup_udfs.kernels.hashing import MIX_INIT, SPLITMIX_GAMMA, mix_fold
from neardup_udfs.kernels.minhash import jaccard
from neardup_udfs.kernels.simhash import distance

__all__ = [
    "Forest",
    "HammingIndex",
    "Index",
    "Neighbor",
    "Stats",
    "VerifiedIndex",
    "band_keys",
    "band_keys_batch",
    "candidate_probability",
    "params",
    "threshold",
]

U64 = npt.NDArray[np.uint64]
_MASK64 = (1 << 64) - 1


# --- argument checks ---------------------------------------------------------------------------


def _positive(name: str, value: int) -> int:
    """``value`` as an int, or ValueError naming ``name`` when it is not a positive integer."""
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from None
    if v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v}")
    return v


def _as_u64(values: npt.ArrayLike) -> U64:
    """``values`` as a uint64 array.

    uint64 arrays pass through; other integer arrays are cast (signed ones reinterpreted as
    two's complement, e.g. Spark ``LongType``); other arrays raise ValueError. Sequences go
    through ``numpy.array(values, dtype=uint64)``: Python ints must lie in ``[0, 2**64)``
    (ValueError otherwise).
    """
    if isinstance(values, np.ndarray):
        if values.dtype == np.uint64:
            return values
        if np.issubdtype(values.dtype, np.integer):
            return values.astype(np.uint64)
        raise ValueError(f"signature values must be integers, got dtype {values.dtype}")
    try:
        arr = np.array(values, dtype=np.uint64)
    except (OverflowError, TypeError) as exc:
        raise ValueError(f"signature values must be ints in [0, 2**64): {exc}") from None
    return arr


def _as_sig(sig: npt.ArrayLike, length: int, what: str) -> U64:
    """``sig`` as a 1-D uint64 array of exactly ``length`` values (ValueError otherwise)."""
    arr = _as_u64(sig)
    if arr.ndim != 1:
        raise ValueError(f"signature must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != length:
        raise ValueError(f"signature length {arr.shape[0]} does not match {what} = {length}")
    return arr


def _as_fp(fp: int) -> int:
    """A SimHash fingerprint as an int in ``[0, 2**64)`` (ValueError otherwise)."""
    v = operator.index(fp)
    if not 0 <= v <= _MASK64:
        raise ValueError(f"fingerprint must be in [0, 2**64), got {v}")
    return v


def _go_str_key(s: str) -> bytes:
    """Go orders strings by their bytes: the UTF-8 encoding (raw bytes kept as smuggled)."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


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
    b = _positive("bands", bands)
    r = _positive("rows", rows)
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
    b = _positive("bands", bands)
    r = _positive("rows", rows)
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
    n = _positive("k", k)
    target = float(threshold)
    if not 0.0 < target < 1.0:
        raise ValueError(f"threshold must be in the open interval (0, 1), got {threshold!r}")
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


# --- band keys -----------------------------------------------------------------------------------


def _band_key_ints(values: Sequence[int], bands: int, rows: int) -> list[int]:
    """Band keys of one signature (as Python ints); ``values`` already has bands*rows items."""
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
    b = _positive("bands", bands)
    r = _positive("rows", rows)
    arr = _as_sig(sig, b * r, "bands*rows")
    return np.array(_band_key_ints(arr.tolist(), b, r), dtype=np.uint64)


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
    b = _positive("bands", bands)
    r = _positive("rows", rows)
    arr = _as_u64(sigs)
    if arr.ndim != 2:
        raise ValueError(f"signatures must be 2-D (n, bands*rows), got shape {arr.shape}")
    if arr.shape[1] != b * r:
        raise ValueError(f"signature length {arr.shape[1]} does not match bands*rows = {b * r}")
    cube = arr.reshape(arr.shape[0], b, r)
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
    return acc


# --- shared bucket store -------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """Occupancy of an index (semblance ``lsh.Stats``).

    Attributes:
        ids: distinct ids indexed (same as ``len``).
        buckets: non-empty buckets over all bands (blocks).
        entries: total bucket entries (``bands`` per Add to an Index, ``max_dist + 1`` per Add
            to a HammingIndex).
        max_bucket: size of the largest bucket — the hot-bucket signal.
    """

    ids: int
    buckets: int
    entries: int
    max_bucket: int


class _Buckets:
    """Per band: key -> ids in insertion order (duplicates allowed)."""

    __slots__ = ("bands",)

    def __init__(self, n: int) -> None:
        self.bands: list[dict[int, list[str]]] = [{} for _ in range(n)]

    def add(self, band: int, key: int, id: str) -> None:
        table = self.bands[band]
        bucket = table.get(key)
        if bucket is None:
            table[key] = [id]
        else:
            bucket.append(id)

    def get(self, band: int, key: int) -> list[str]:
        return self.bands[band].get(key, [])

    def remove(self, band: int, key: int, id: str) -> None:
        """Drop every occurrence of ``id`` from one bucket; an emptied bucket disappears."""
        table = self.bands[band]
        bucket = table.get(key)
        if bucket is None:
            return
        kept = [v for v in bucket if v != id]
        if kept:
            table[key] = kept
        else:
            del table[key]

    def candidates(self, keys: Iterable[int]) -> list[str]:
        """Ids in the buckets of ``keys`` (band order, then insertion order), first sight only."""
        out: list[str] = []
        seen: set[str] = set()
        for band, key in enumerate(keys):
            for id in self.bands[band].get(key, ()):
                if id not in seen:
                    seen.add(id)
                    out.append(id)
        return out

    def stats(self, ids: int) -> Stats:
        buckets = entries = biggest = 0
        for table in self.bands:
            for bucket in table.values():
                buckets += 1
                entries += len(bucket)
                biggest = max(biggest, len(bucket))
        return Stats(ids, buckets, entries, biggest)


# --- Index ---------------------------------------------------------------------------------------


class Index:
    """semblance ``lsh.Index``: MinHash banding index returning unverified candidates.

    A signature of ``bands * rows`` values becomes a candidate of a query when the two agree
    on every row of at least one band. For Jaccard ``J`` that happens with probability
    ``1 - (1 - J**rows)**bands``.

    Notes:
        Ids need not be unique: each ``add`` indexes again, a query still returns the id
        once, and ``remove`` drops the entries of all its adds. ``query`` returns ids in the
        order: first matching band, then insertion order within the bucket; false positives
        are expected (verify with ``minhash.jaccard``), near-threshold pairs can be missed.
        The index keeps no signatures, only, per id, the keys of every add (``bands`` ints
        per add) for ``remove``.

    Example:
        >>> ix = Index(2, 2)
        >>> ix.add("a", [1, 2, 3, 4]); ix.add("b", [9, 9, 3, 4]); ix.add("c", [5, 6, 7, 8])
        >>> ix.query([1, 2, 3, 4])
        ['a', 'b']
    """

    def __init__(self, bands: int, rows: int) -> None:
        self._bands = _positive("bands", bands)
        self._rows = _positive("rows", rows)
        self._store = _Buckets(self._bands)
        self._keys: dict[str, list[int]] = {}

    @property
    def bands(self) -> int:
        """Number of bands."""
        return self._bands

    @property
    def rows(self) -> int:
        """Rows (signature values) per band."""
        return self._rows

    def threshold(self) -> float:
        """``(1/bands) ** (1/rows)`` as Go computes it (see the module function)."""
        return threshold(self._bands, self._rows)

    def _keys_of(self, sig: npt.ArrayLike) -> list[int]:
        arr = _as_sig(sig, self._bands * self._rows, "bands*rows")
        return _band_key_ints(arr.tolist(), self._bands, self._rows)

    def _add_keys(self, id: str, keys: list[int]) -> None:
        for band, key in enumerate(keys):
            self._store.add(band, key, id)
        self._keys.setdefault(id, []).extend(keys)

    def add(self, id: str, sig: npt.ArrayLike) -> None:
        """Index ``id`` under ``sig`` (ValueError if ``len(sig) != bands * rows``)."""
        self._add_keys(id, self._keys_of(sig))

    def add_many(self, ids: Sequence[str], sigs: npt.ArrayLike) -> None:
        """``add`` every ``(ids[i], sigs[i])`` in order, band keys computed in one batch.

        Notes:
            Same result as the sequential adds. ValueError (before any change) when the
            lengths differ or ``sigs`` is not ``(len(ids), bands * rows)``.
        """
        keys = band_keys_batch(sigs, self._bands, self._rows)
        if keys.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids but {keys.shape[0]} signatures")
        for id, row in zip(ids, keys.tolist(), strict=True):
            self._add_keys(id, row)

    def remove(self, id: str) -> bool:
        """Delete every entry of ``id`` (from all its adds); report whether it was present."""
        keys = self._keys.pop(id, None)
        if keys is None:
            return False
        for i, key in enumerate(keys):
            self._store.remove(i % self._bands, key, id)
        return True

    def query(self, sig: npt.ArrayLike) -> list[str]:
        """Ids sharing at least one band key with ``sig``: band order, then insertion order.

        Notes:
            Deduplicated; empty list when there are none. Unverified candidates.
        """
        return self._store.candidates(self._keys_of(sig))

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, id: object) -> bool:
        return id in self._keys

    def ids(self) -> Iterator[str]:
        """The distinct ids (semblance ``Range``; order unspecified — here first-add order)."""
        return iter(list(self._keys))

    def stats(self) -> Stats:
        """Bucket occupancy (a full walk of the buckets)."""
        return self._store.stats(len(self._keys))


# --- VerifiedIndex -------------------------------------------------------------------------------


class Neighbor(NamedTuple):
    """A verified match of :meth:`VerifiedIndex.query`."""

    id: str
    similarity: float


class VerifiedIndex:
    """semblance ``lsh.VerifiedIndex``: a banding index that keeps signatures and ranks matches.

    Notes:
        ``add`` stores a copy of the signature; adding an existing id replaces its signature
        and re-indexes it (no stale bucket entries). ``query(sig, min_jaccard)`` walks the
        same candidates as :class:`Index`, keeps those with ``jaccard(sig, stored) >=
        min_jaccard`` (``0`` keeps them all) and sorts them by similarity descending, then id
        ascending (byte-wise). The query's own id is not excluded. A ``min_jaccard`` below
        :meth:`threshold` silently misses pairs the banding never surfaces.

    Example:
        >>> vi = VerifiedIndex(2, 2)
        >>> vi.add("a", [1, 2, 3, 4]); vi.add("b", [1, 2, 0, 0])
        >>> vi.query([1, 2, 3, 4], 0.5)
        [Neighbor(id='a', similarity=1.0), Neighbor(id='b', similarity=0.5)]
    """

    def __init__(self, bands: int, rows: int) -> None:
        self._bands = _positive("bands", bands)
        self._rows = _positive("rows", rows)
        self._store = _Buckets(self._bands)
        self._sigs: dict[str, U64] = {}

    @property
    def bands(self) -> int:
        """Number of bands."""
        return self._bands

    @property
    def rows(self) -> int:
        """Rows (signature values) per band."""
        return self._rows

    def threshold(self) -> float:
        """``(1/bands) ** (1/rows)`` as Go computes it (see the module function)."""
        return threshold(self._bands, self._rows)

    def _sig(self, sig: npt.ArrayLike) -> U64:
        return _as_sig(sig, self._bands * self._rows, "bands*rows")

    def _keys_of(self, arr: U64) -> list[int]:
        return _band_key_ints(arr.tolist(), self._bands, self._rows)

    def add(self, id: str, sig: npt.ArrayLike) -> None:
        """Store a copy of ``sig`` under ``id``, replacing and re-indexing a previous one."""
        arr = self._sig(sig)
        keys = self._keys_of(arr)
        prev = self._sigs.get(id)
        if prev is not None:
            self._drop(id, prev)
        for band, key in enumerate(keys):
            self._store.add(band, key, id)
        self._sigs[id] = arr.copy()

    def _drop(self, id: str, sig: U64) -> None:
        for band, key in enumerate(self._keys_of(sig)):
            self._store.remove(band, key, id)

    def remove(self, id: str) -> bool:
        """Delete ``id``; report whether it was present."""
        sig = self._sigs.pop(id, None)
        if sig is None:
            return False
        self._drop(id, sig)
        return True

    def query(self, sig: npt.ArrayLike, min_jaccard: float = 0.0) -> list[Neighbor]:
        """Indexed ids whose estimated Jaccard with ``sig`` is ``>= min_jaccard``, ranked.

        Notes:
            Order: similarity descending, then id ascending by UTF-8 bytes (Go string order).
            Empty list when nothing qualifies.
        """
        arr = self._sig(sig)
        out: list[Neighbor] = []
        for id in self._store.candidates(self._keys_of(arr)):
            sim = jaccard(arr, self._sigs[id])
            if sim >= min_jaccard:
                out.append(Neighbor(id, sim))
        out.sort(key=lambda n: (-n.similarity, _go_str_key(n.id)))
        return out

    def signature(self, id: str) -> U64 | None:
        """A copy of the stored signature of ``id``, or None when it is not indexed."""
        sig = self._sigs.get(id)
        return None if sig is None else sig.copy()

    def __len__(self) -> int:
        return len(self._sigs)

    def __contains__(self, id: object) -> bool:
        return id in self._sigs

    def ids(self) -> Iterator[str]:
        """The indexed ids (semblance ``Range``; order unspecified — here first-add order)."""
        return iter(list(self._sigs))

    def stats(self) -> Stats:
        """Bucket occupancy (a full walk of the buckets)."""
        return self._store.stats(len(self._sigs))


# --- Forest --------------------------------------------------------------------------------------


class Forest:
    """semblance ``lsh.Forest``: LSH Forest (Bawa, Condie and Ganesan 2005) for top-k search.

    A signature of ``trees * depth`` values is cut into ``trees`` keys of ``depth`` values;
    each tree keeps its entries sorted by (key, add sequence). The longer the prefix a stored
    key shares with the query's, the more similar the two are likely to be.

    Notes:
        ``query(sig, k)``: for prefix length ``d`` from ``depth`` down to 1, for tree 0 ..
        ``trees - 1``, the entries whose first ``d`` values equal the query's (in sorted
        order) contribute their unseen ids until ``k`` are found. Ids sharing not even the
        first value of any tree are never returned, so fewer than ``k`` results is possible.
        Sorting is lazy (paid by the first query after adds). Ids may repeat; ``remove``
        drops all their entries. ValueError when ``k <= 0`` or the signature length is not
        ``trees * depth``.

    Example:
        >>> f = Forest(2, 2)
        >>> f.add("a", [1, 2, 3, 4]); f.add("b", [1, 9, 9, 9]); f.add("c", [7, 7, 7, 7])
        >>> f.query([1, 2, 3, 5], 3)
        ['a', 'b']
    """

    def __init__(self, trees: int, depth: int) -> None:
        self._trees = _positive("trees", trees)
        self._depth = _positive("depth", depth)
        self._entries: list[list[tuple[tuple[int, ...], int, str]]] = [
            [] for _ in range(self._trees)
        ]
        self._dirty = False
        self._adds: dict[str, int] = {}
        self._seq = 0

    @property
    def trees(self) -> int:
        """Number of trees."""
        return self._trees

    @property
    def depth(self) -> int:
        """Key length (signature values) per tree."""
        return self._depth

    def _values(self, sig: npt.ArrayLike) -> list[int]:
        return _as_sig(sig, self._trees * self._depth, "trees*depth").tolist()

    def add(self, id: str, sig: npt.ArrayLike) -> None:
        """Index ``id`` under ``sig`` (O(trees); the next query sorts)."""
        vals = self._values(sig)
        d = self._depth
        for t, entries in enumerate(self._entries):
            entries.append((tuple(vals[t * d : (t + 1) * d]), self._seq, id))
        self._seq += 1
        self._adds[id] = self._adds.get(id, 0) + 1
        self._dirty = True

    def _sort(self) -> None:
        if self._dirty:
            for entries in self._entries:
                entries.sort(key=lambda e: (e[0], e[1]))
            self._dirty = False

    def query(self, sig: npt.ArrayLike, k: int) -> list[str]:
        """Up to ``k`` ids by decreasing shared-prefix depth (see the class notes)."""
        vals = self._values(sig)
        want = _positive("k", k)
        self._sort()
        out: list[str] = []
        seen: set[str] = set()
        depth = self._depth
        for d in range(depth, 0, -1):
            if len(out) >= want:
                break
            for t, entries in enumerate(self._entries):
                if len(out) >= want:
                    break
                prefix = tuple(vals[t * depth : t * depth + d])

                def head(e: tuple[tuple[int, ...], int, str], n: int = d) -> tuple[int, ...]:
                    return e[0][:n]

                lo = bisect_left(entries, prefix, key=head)
                hi = bisect_right(entries, prefix, lo=lo, key=head)
                for e in entries[lo:hi]:
                    if e[2] not in seen:
                        seen.add(e[2])
                        out.append(e[2])
                        if len(out) == want:
                            break
        return out

    def remove(self, id: str) -> bool:
        """Delete every entry of ``id``; report whether it was present."""
        if self._adds.pop(id, None) is None:
            return False
        for t, entries in enumerate(self._entries):
            self._entries[t] = [e for e in entries if e[2] != id]
        return True

    def __len__(self) -> int:
        return len(self._adds)

    def __contains__(self, id: object) -> bool:
        return id in self._adds

    def ids(self) -> Iterator[str]:
        """The distinct ids (semblance ``Range``; order unspecified — here first-add order)."""
        return iter(list(self._adds))


# --- HammingIndex --------------------------------------------------------------------------------


class HammingIndex:
    """semblance ``lsh.HammingIndex``: exact SimHash search within ``max_dist`` bits.

    The 64 bits are cut into ``max_dist + 1`` blocks (Manku, Jain and Das Sarma 2007); two
    fingerprints within ``max_dist`` bits agree on at least one block, so one exact-match table
    per block finds every match, and each hit is verified by its distance.

    Notes:
        ``max_dist`` must be 1, 2 or 3 (ValueError otherwise). Block ``i`` has width
        ``64 // n + (1 if i < 64 % n else 0)``, laid out from bit 0 up — for ``max_dist = 2``
        the widths are 22, 21, 21 (ditto's layout is 21, 21, 22). ``query`` order: first
        matching block, then insertion order; no false positives or negatives. Ids may
        repeat; ``remove`` drops every entry of all their adds.

    Example:
        >>> hx = HammingIndex(1)
        >>> hx.add("a", 0b1011); hx.add("b", 0b1000); hx.add("c", 0b0100)
        >>> hx.query(0b1010)
        ['a', 'b']
    """

    def __init__(self, max_dist: int) -> None:
        d = operator.index(max_dist)
        if not 1 <= d <= 3:
            raise ValueError(f"max_dist must be in [1, 3], got {d}")
        self._max_dist = d
        n = d + 1
        layout: list[tuple[int, int]] = []
        shift = 0
        for i in range(n):
            width = 64 // n + (1 if i < 64 % n else 0)
            layout.append((shift, width))
            shift += width
        self._layout = tuple(layout)
        self._masks = tuple((1 << w) - 1 for _, w in layout)
        self._tables: list[dict[int, list[tuple[int, str]]]] = [{} for _ in range(n)]
        self._fps: dict[str, list[int]] = {}

    @property
    def max_dist(self) -> int:
        """The distance bound queries answer at."""
        return self._max_dist

    @property
    def blocks(self) -> tuple[tuple[int, int], ...]:
        """``(shift, width)`` of every block, from bit 0 upward."""
        return self._layout

    def _keys(self, fp: int) -> list[int]:
        return [(fp >> s) & m for (s, _), m in zip(self._layout, self._masks, strict=True)]

    def add(self, id: str, fp: int) -> None:
        """Index ``id`` under the fingerprint ``fp`` (an int in ``[0, 2**64)``)."""
        v = _as_fp(fp)
        for table, key in zip(self._tables, self._keys(v), strict=True):
            bucket = table.get(key)
            if bucket is None:
                table[key] = [(v, id)]
            else:
                bucket.append((v, id))
        self._fps.setdefault(id, []).append(v)

    def remove(self, id: str) -> bool:
        """Delete every entry of ``id``; report whether it was present."""
        fps = self._fps.pop(id, None)
        if fps is None:
            return False
        for v in fps:
            for table, key in zip(self._tables, self._keys(v), strict=True):
                bucket = table.get(key)
                if bucket is None:
                    continue
                kept = [e for e in bucket if e[1] != id]
                if kept:
                    table[key] = kept
                else:
                    del table[key]
        return True

    def query(self, fp: int) -> list[str]:
        """Ids of fingerprints within ``max_dist`` bits of ``fp``: block, then insertion order."""
        v = _as_fp(fp)
        out: list[str] = []
        seen: set[str] = set()
        limit = self._max_dist
        for table, key in zip(self._tables, self._keys(v), strict=True):
            for stored, id in table.get(key, ()):
                if id not in seen and distance(stored, v) <= limit:
                    seen.add(id)
                    out.append(id)
        return out

    def __len__(self) -> int:
        return len(self._fps)

    def __contains__(self, id: object) -> bool:
        return id in self._fps

    def items(self) -> Iterator[tuple[str, int]]:
        """``(id, fingerprint)`` once per add (semblance ``Range``; order unspecified)."""
        return iter([(id, v) for id, fps in self._fps.items() for v in fps])

    def stats(self) -> Stats:
        """Block-table occupancy (a full walk of the tables)."""
        buckets = entries = biggest = 0
        for table in self._tables:
            for bucket in table.values():
                buckets += 1
                entries += len(bucket)
                biggest = max(biggest, len(bucket))
        return Stats(len(self._fps), buckets, entries, biggest)
