"""neardup: near-duplicate detection for web-crawl-scale corpora on Apache Spark.

The public Python API fingerprints text with a named, frozen preset::

    >>> import neardup_udfs
    >>> f"{neardup_udfs.fingerprint('hello world'):016x}"
    '4a98f4a451080124'

Kernels live in :mod:`neardup_udfs.kernels` (pure Python + numpy, no Spark).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup_udfs.presets import Pipeline, PresetError, preset_names, resolve

__all__ = [
    "Pipeline",
    "PresetError",
    "__version__",
    "fingerprint",
    "fingerprint_batch",
    "preset_names",
    "resolve",
    "signature",
    "signature_batch",
]

__version__ = "0.1.0"


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
