"""driver.strings: an Arrow string array's bytes and offsets, as the kernels read them."""

from __future__ import annotations

import pyarrow as pa

from neardup_udfs.driver.strings import string_buffers

TEXTS = ["", "a", "héllo ✓", "", "😀 and more"]


def _each(array: pa.Array) -> list[bytes]:
    data, at = string_buffers(array)
    return [data[at[i] : at[i + 1]].tobytes() for i in range(len(array))]


def test_each_string_s_bytes_whatever_the_offsets_width_and_slice() -> None:
    want = [t.encode("utf-8") for t in TEXTS]
    for kind in (pa.string(), pa.large_string()):
        array = pa.array(TEXTS, kind)
        assert _each(array) == want
        assert _each(array.slice(2, 3)) == want[2:5]
        assert _each(pa.array(["", ""], kind)) == [b"", b""]
        assert _each(pa.array([], kind)) == []
