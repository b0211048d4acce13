"""semblance ``winnow``: MOSS winnowing fingerprints, aligned overlap spans, and the Index.

Winnowing (Schleimer, Wilkerson and Aiken, 2003): from a document's sequence of k-gram
hashes, every window of w consecutive hashes contributes its minimum (the **rightmost** one
on ties) as a fingerprint, recorded with the position it came from; a selection is reported
once, when it first wins a window. Any common substring of at least w + k - 1 bytes shares at
least one fingerprint hash; matches shorter than k bytes are never detected; the expected
density is 2 / (w + 1) fingerprints per k-gram.

Text becomes bytes exactly once: ``bytes`` are taken as they are (invalid UTF-8 included) and
a ``str`` is its UTF-8 encoding (lone surrogates as their 3-byte form). K-grams are byte
windows hashed with XXH64 (seed 0), as semblance's ``shingle.Char``; positions are byte
offsets. Every result here is bit-identical to the Go reference (ophymx/semblance).

Fingerprints come back as two numpy arrays, ``pos`` (int64) and ``hash`` (uint64), ready for
an Arrow/pandas column (store hashes in a Spark ``LongType`` via ``hash.view(np.int64)``).

Modules (each imports the others' submodules directly):

* ``inputs``: argument checks, text as bytes, hashes as uint64.
* ``xxh64``: XXH64 of every k-byte window.
* ``fingerprints``: winnowing of hash sequences and texts (``hashes``, ``text``,
  ``text_batch``).
* ``spans``: aligned passages of two texts (``overlaps``, ``Span``, ``MAX_RESULTS``).
* ``index``: the provenance ``Index`` (``overlap``, ``matches``, ``cover``).
* ``regions``: ``Region`` and ``remove_ranges``.

This package re-exports the names used outside it.
"""

from __future__ import annotations

from neardup_udfs.kernels.winnow.fingerprints import Fingerprints, hashes, text, text_batch
from neardup_udfs.kernels.winnow.index import Index, Match, Overlap
from neardup_udfs.kernels.winnow.regions import Region, remove_ranges
from neardup_udfs.kernels.winnow.spans import MAX_RESULTS, Span, overlaps

__all__ = [
    "MAX_RESULTS",
    "Fingerprints",
    "Index",
    "Match",
    "Overlap",
    "Region",
    "Span",
    "hashes",
    "overlaps",
    "remove_ranges",
    "text",
    "text_batch",
]
