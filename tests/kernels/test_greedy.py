"""The anchored clustering's sequential pass (kernels.greedy), on small graphs."""

from __future__ import annotations

import pytest

from neardup_udfs.kernels.greedy import greedy_keep


def test_kernel_keeps_the_sequential_pass() -> None:
    assert greedy_keep(5, [0, 1, 2, 3], [1, 2, 3, 4]).tolist() == [True, False, True, False, True]
    assert greedy_keep(3, [2, 1], [0, 0]).tolist() == [True, False, False]  # a star on 0
    assert greedy_keep(2, [1], [1]).tolist() == [True, True]  # a self-loop is no edge
    with pytest.raises(ValueError, match="outside"):
        greedy_keep(2, [0], [2])
