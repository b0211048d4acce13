"""The provenance index (semblance ``winnow.Index``): postings from fingerprint hash to
(id, pos), and per query the shared fingerprints per document (``overlap``), the aligned
passages (``matches``), and the boilerplate regions recurring across the corpus (``cover``).

Ids are ordered byte-wise by their UTF-8 form, as Go orders strings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup_udfs.kernels.readonly import ReadOnly
from neardup_udfs.kernels.renamed import renamed
from neardup_udfs.kernels.text import go_str_key
from neardup_udfs.kernels.winnow.fingerprints import text
from neardup_udfs.kernels.winnow.inputs import hash64, integer, positive
from neardup_udfs.kernels.winnow.regions import Region
from neardup_udfs.kernels.winnow.spans import MAX_RESULTS


@dataclass(frozen=True)
class Match:
    """An aligned passage a query shares with an indexed document (``winnow.Match``).

    Query bytes ``[query_pos, query_pos + length)`` align with document ``id``'s bytes
    ``[doc_pos, doc_pos + length)``; a heuristic locator like :class:`Span`.
    """

    id: str
    query_pos: int
    doc_pos: int
    length: int


@dataclass(frozen=True)
class Overlap:
    """How much a query shares with one document: ``shared`` distinct common fingerprints."""

    id: str
    shared: int


def _check_id(id: str) -> str:
    if not isinstance(id, str):
        raise TypeError(f"winnow: id must be a str, got {type(id).__name__}")
    if id == "":
        raise ValueError("winnow: id must not be empty")
    return id


class Index:
    """Fingerprint index for fragment-level provenance (semblance ``winnow.Index``).

    Postings map a hash to its (id, pos) entries in add order; ids need not be unique (a
    repeated id accumulates fingerprints). All documents and queries use the index's k-gram
    size ``kgram_bytes`` (semblance's ``k``, still read as ``k=`` with a DeprecationWarning)
    and window ``w``.
    Results are deterministic; ids are ordered byte-wise by their UTF-8 form, as Go orders
    strings. Not safe for concurrent use.
    """

    __slots__ = ("_doc_freq", "_hashes", "_k", "_postings", "_w")

    @renamed(k="kgram_bytes")
    def __init__(self, kgram_bytes: int, w: int) -> None:
        self._k = positive("k", kgram_bytes)
        self._w = positive("w", w)
        self._postings: dict[int, list[tuple[str, int]]] = {}
        self._hashes: dict[str, list[int]] = {}
        self._doc_freq: dict[int, int] | None = None

    kgram_bytes = ReadOnly[int]("_k", "K-gram size in bytes.")
    k = ReadOnly[int]("_k", "K-gram size in bytes: :attr:`kgram_bytes` by semblance's name.")
    w = ReadOnly[int]("_w", "Winnowing window, in k-grams.")

    def _fingerprints(self, data: str | bytes) -> tuple[list[int], list[int]]:
        fp = text(data, self._k, self._w)
        return fp.pos.tolist(), fp.hash.tolist()

    def add(self, id: str, text: str | bytes) -> None:
        """Index ``text`` under ``id`` (ValueError if ``id`` is empty).

        A text too short for any fingerprint still registers ``id`` (it counts in ``len``
        and :meth:`remove` reports it present). Invalidates the document-frequency cache.
        """
        _check_id(id)
        positions, hs = self._fingerprints(text)
        self._doc_freq = None
        for pos, h in zip(positions, hs, strict=True):
            bucket = self._postings.get(h)
            if bucket is None:
                self._postings[h] = [(id, pos)]
            else:
                bucket.append((id, pos))
        self._hashes.setdefault(id, []).extend(hs)

    def remove(self, id: str) -> bool:
        """Drop every fingerprint of ``id``; True iff ``id`` was indexed."""
        hs = self._hashes.pop(id, None)
        if hs is None:
            return False
        self._doc_freq = None
        for h in dict.fromkeys(hs):
            kept = [p for p in self._postings[h] if p[0] != id]
            if kept:
                self._postings[h] = kept
            else:
                del self._postings[h]
        return True

    def __len__(self) -> int:
        """Number of distinct ids indexed."""
        return len(self._hashes)

    def __contains__(self, id: object) -> bool:
        return id in self._hashes

    def ids(self) -> list[str]:
        """The distinct indexed ids, in first-add order (semblance leaves the order unspecified)."""
        return list(self._hashes)

    def overlap(self, text: str | bytes) -> list[Overlap]:
        """Per indexed document, the number of distinct fingerprint hashes shared with ``text``.

        Sorted by ``shared`` descending, then id ascending; empty list if nothing is shared.
        """
        _, hs = self._fingerprints(text)
        counts: dict[str, int] = {}
        for h in dict.fromkeys(hs):
            for id in dict.fromkeys(p[0] for p in self._postings.get(h, ())):
                counts[id] = counts.get(id, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], go_str_key(kv[0])))
        return [Overlap(id, n) for id, n in ranked]

    def matches(self, text: str | bytes, *, max_results: int = MAX_RESULTS) -> list[Match]:
        """Aligned passages ``text`` shares with every indexed document, as :class:`Match` runs.

        As :func:`overlaps` against all documents at once: the query's fingerprints are
        walked in order (j counts them), each posting of the same hash (in add order) is one
        match costing one unit of the ``max_results`` budget (the scan stops when it is
        spent); the diagonal is (id, doc_pos - query_pos), and a match extends that
        diagonal's open run iff the run's last match came from query fingerprint j - 1.
        Sorted by id, query_pos, doc_pos (then length: equal keys only arise from a repeated
        id holding the same text twice, where Go's order is unspecified).
        """
        budget = integer("max_results", max_results)
        k = self._k
        positions, hs = self._fingerprints(text)
        active: dict[tuple[str, int], list[int]] = {}  # -> [q_start, d_start, q_end, last_j]
        out: list[Match] = []
        for j, (qpos, h) in enumerate(zip(positions, hs, strict=True)):
            postings = self._postings.get(h)
            if postings is None:
                continue
            if budget <= 0:
                break
            for id, dpos in postings:
                if budget <= 0:
                    break
                budget -= 1
                key = (id, dpos - qpos)
                run = active.get(key)
                if run is not None and run[3] == j - 1:
                    run[2] = qpos
                    run[3] = j
                    continue
                if run is not None:
                    out.append(Match(id, run[0], run[1], run[2] + k - run[0]))
                active[key] = [qpos, dpos, qpos, j]
        for (id, _), run in active.items():
            out.append(Match(id, run[0], run[1], run[2] + k - run[0]))
        out.sort(key=lambda m: (go_str_key(m.id), m.query_pos, m.doc_pos, m.length))
        return out

    def _doc_freqs(self) -> dict[int, int]:
        if self._doc_freq is None:
            self._doc_freq = {h: len({p[0] for p in ps}) for h, ps in self._postings.items()}
        return self._doc_freq

    def doc_freq(self, hash: int | np.integer) -> int:
        """Number of distinct indexed ids whose fingerprints include ``hash`` (0 if none).

        ``hash`` is an unsigned 64-bit value; a negative int64 is read as two's complement.
        """
        return self._doc_freqs().get(hash64(hash), 0)

    def cover(self, text: str | bytes, min_docs: int, min_run: int) -> list[Region]:
        """Byte ranges of ``text`` that recur across the corpus (boilerplate).

        A fingerprint qualifies when its hash is in at least ``min_docs`` indexed documents
        (the text itself counts if indexed). Consecutive qualifying fingerprints form a run;
        a run of ``n >= max(min_run, 1)`` fingerprints from Pos ``s`` to ``e`` becomes
        ``Region(s, e + k - s)``. Sorted, non-overlapping; empty list if none. No parameter
        is range-checked (as in Go): ``min_docs <= 0`` qualifies every fingerprint.
        """
        min_docs = integer("min_docs", min_docs)
        min_run = integer("min_run", min_run)
        df = self._doc_freqs()
        k = self._k
        out: list[Region] = []
        start = end = run = 0
        positions, hs = self._fingerprints(text)
        for pos, h in zip(positions, hs, strict=True):
            if df.get(h, 0) >= min_docs:
                if run == 0:
                    start = pos
                end = pos
                run += 1
                continue
            if run >= min_run and run > 0:
                out.append(Region(start, end + k - start))
            run = 0
        if run >= min_run and run > 0:
            out.append(Region(start, end + k - start))
        return out
