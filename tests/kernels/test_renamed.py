"""Renamed keywords (kernels.renamed): an old keyword still works where it is used, with a
DeprecationWarning naming the new one; the winnowing kernels' ``k`` is ``kgram_bytes``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from neardup_udfs.kernels import winnow
from neardup_udfs.kernels.renamed import renamed

KERNEL_CALLS = [  # a winnowing kernel called with its old keyword k and its new one
    pytest.param(lambda **kw: winnow.text("the quick brown fox", w=4, **kw), id="text"),
    pytest.param(lambda **kw: winnow.text_batch(["the quick", "brown fox"], w=2, **kw), id="batch"),
    pytest.param(lambda **kw: winnow.overlaps("the quick fox", "a quick fox", w=2, **kw), id="ov"),
    pytest.param(lambda **kw: winnow.Index(w=2, **kw).kgram_bytes, id="Index"),
]


@pytest.mark.parametrize("call", KERNEL_CALLS)
def test_old_kernel_keywords_still_work_and_warn(call: Callable[..., Any]) -> None:
    """``k=`` (semblance's name) gives what ``kgram_bytes=`` gives, with a DeprecationWarning
    naming both; the two at once are a TypeError."""
    with pytest.warns(DeprecationWarning, match="keyword 'k' is deprecated, use 'kgram_bytes'"):
        old = call(k=3)
    np.testing.assert_equal(old, call(kgram_bytes=3))
    with pytest.raises(TypeError, match="'kgram_bytes' and its old name 'k'"):
        call(k=3, kgram_bytes=3)


def test_an_old_keyword_warns_where_it_is_used() -> None:
    @renamed(k="max_distance")
    def near(a: int, b: int, max_distance: int) -> bool:
        return (a ^ b).bit_count() <= max_distance

    with pytest.warns(DeprecationWarning, match=r"near\(\): keyword 'k'") as seen:
        assert near(1, 2, k=2) is near(1, 2, 2) is True
    assert [w.filename for w in seen] == [__file__]  # the caller's line, not the decorator's
