"""The kernels' argument checks (kernels.checks): what they accept, and errors that name
what is wrong.
"""

from __future__ import annotations

import numpy as np
import pytest

from neardup_udfs.kernels.checks import as_fingerprint, as_signature, as_u64, positive


def test_argument_checks_name_what_is_wrong() -> None:
    assert positive("k", np.int64(3)) == 3
    for bad in (0, -1, 2.5, "3"):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            positive("k", bad)  # type: ignore[arg-type]
    assert as_u64(np.array([-1], dtype=np.int64)).tolist() == [2**64 - 1]
    for bad_values in (np.array([0.5]), [-1], [2**64]):
        with pytest.raises(ValueError, match="signature values"):
            as_u64(bad_values)
    assert as_signature([1, 2], 2, "bands*rows").dtype == np.uint64
    with pytest.raises(ValueError, match="does not match bands\\*rows = 3"):
        as_signature([1, 2], 3, "bands*rows")
    with pytest.raises(ValueError, match="1-D"):
        as_signature([[1, 2]], 2, "bands*rows")
    assert as_fingerprint(2**64 - 1) == 2**64 - 1
    with pytest.raises(ValueError, match="fingerprint"):
        as_fingerprint(2**64)
