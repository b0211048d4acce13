"""pandas UDF factories: each wraps one kernel and holds no algorithm logic."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import LongType

from neardup_udfs.presets import Pipeline

__all__ = ["fingerprint_udf"]


def fingerprint_udf(pipeline: Pipeline) -> Any:
    """A scalar pandas UDF: text (string or binary column) -> fingerprint as ``bigint``.

    Notes:
        The bigint is the two's-complement view of the unsigned 64-bit fingerprint (convert
        back with ``value & (2**64 - 1)``). Null text gives a null fingerprint. Each Arrow
        batch is fingerprinted in one kernel call.
    """

    @pandas_udf(LongType())  # type: ignore[call-overload]
    def fingerprint(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for texts in batches:
            present = texts.notna().to_numpy()
            values = np.zeros(len(texts), dtype=np.uint64)
            if present.any():
                values[present] = pipeline.fingerprint_batch(texts[present].tolist())
            out = pd.Series(values.view(np.int64), index=texts.index, dtype="Int64")
            out[~present] = pd.NA
            yield out

    return fingerprint
