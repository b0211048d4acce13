"""``kernels.compiled.kernel``: cached where numba can write a cache, compiled anyway where not."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from neardup_udfs.kernels import compiled, words_jit
from neardup_udfs.kernels.compiled import kernel

# source with no file behind it: numba has nowhere to put a cache for it
SOURCE = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"


def _unfiled(name: str):  # type: ignore[no-untyped-def]
    scope: dict[str, object] = {}
    exec(compile(SOURCE.replace("total", name), "<generated>", "exec"), scope)
    return scope[name]


def test_a_kernel_without_a_cache_location_still_compiles() -> None:
    with pytest.raises(RuntimeError, match="no locator available"):
        njit(cache=True)(_unfiled("plain_total"))  # what cache=True alone does
    total = kernel()(_unfiled("unfiled_total"))
    assert total(np.arange(10)) == 45
    assert "unfiled_total" in compiled.uncached


def test_the_package_kernels_are_cached_on_disk_here() -> None:
    words_jit.shingle_sets_batch(["a b c d"], 3)  # compiled or loaded from the cache
    assert words_jit._sorted_sets._cache._cache_path  # a cache location was found
    assert "_sorted_sets" not in compiled.uncached
