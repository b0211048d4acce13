"""neardup: near-duplicate detection for web-crawl-scale corpora on Apache Spark.

The public Python API fingerprints text with a named, frozen preset::

    >>> import neardup_udfs
    >>> f"{neardup_udfs.fingerprint('hello world'):016x}"
    '4a98f4a451080124'

and deduplicates the DataFrame you hold (:func:`dedup`, :mod:`neardup_udfs.library`), with
column functions for the fingerprints in :mod:`neardup_udfs.functions`. Those import
pyspark when first used; the fingerprint functions above do not.

Kernels live in :mod:`neardup_udfs.kernels` (pure Python + numpy, no Spark).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup_udfs.presets import Pipeline, PresetError, preset_names, resolve

__all__ = [
    "ConfigError",
    "DedupResult",
    "ImagesResult",
    "InputError",
    "Pipeline",
    "PresetError",
    "QueryResult",
    "__version__",
    "dedup",
    "dedup_images",
    "functions",
    "fingerprint",
    "fingerprint_batch",
    "preset_names",
    "query_index",
    "resolve",
    "signature",
    "signature_batch",
]

__version__ = "0.1.0"

if TYPE_CHECKING:  # the lazy names below, for type checkers
    from neardup_udfs import functions
    from neardup_udfs.io.readers import InputError
    from neardup_udfs.library import (
        DedupResult,
        ImagesResult,
        QueryResult,
        dedup,
        dedup_images,
        query_index,
    )
    from neardup_udfs.settings import ConfigError

_LAZY = {
    "ConfigError": "neardup_udfs.settings",
    "DedupResult": "neardup_udfs.library",
    "ImagesResult": "neardup_udfs.library",
    "dedup_images": "neardup_udfs.library",
    "QueryResult": "neardup_udfs.library",
    "query_index": "neardup_udfs.library",
    "InputError": "neardup_udfs.io.readers",
    "dedup": "neardup_udfs.library",
}


def __getattr__(name: str) -> Any:
    """The names that import pyspark (:data:`_LAZY`, ``functions``), imported when first used."""
    import importlib

    if name == "functions":
        return importlib.import_module("neardup_udfs.functions")
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neardup_udfs' has no attribute {name!r}")


def fingerprint(text: str | bytes, preset: str = "ditto/2", **options: Any) -> int:
    """The 64-bit fingerprint of ``text`` under ``preset``, as an unsigned int.

    Notes:
        ``bytes`` are read the way the preset's reference reads them (for ``ditto/2``:
        Go-style UTF-8 decoding, one U+FFFD per invalid byte). Unknown presets and options
        raise :class:`PresetError`.
    """
    return resolve(preset, **options).fingerprint(text)


def fingerprint_batch(
    texts: Sequence[str | bytes], preset: str = "ditto/2", **options: Any
) -> npt.NDArray[np.uint64]:
    """Fingerprints of many texts at once, as a uint64 array in input order.

    Notes:
        Equal, element by element, to :func:`fingerprint`; vectorised over the batch.
    """
    return resolve(preset, **options).fingerprint_batch(texts)


def signature(
    text: str | bytes, preset: str = "semblance", **options: Any
) -> npt.NDArray[np.uint64]:
    """The MinHash signature of ``text`` under a MinHash preset: a uint64 array of k slots.

    Notes:
        A text with fewer words than the shingle size gets the empty-set signature (every
        slot ``0xffffffffffffffff``). Options: ``w``, ``k``, ``seed``, ``bands``/``rows`` or
        ``threshold`` (see :func:`resolve`).
    """
    return resolve(preset, **options).signature_batch([text])[0]


def signature_batch(
    texts: Sequence[str | bytes], preset: str = "semblance", **options: Any
) -> npt.NDArray[np.uint64]:
    """MinHash signatures of many texts: shape (n, k), row i equal to ``signature(texts[i])``."""
    return resolve(preset, **options).signature_batch(texts)
