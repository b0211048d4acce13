"""The compiled UTF-8 primitives (kernels.utf8): decoding as Go does, encoding, packing."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.utf8 import decode_rune, pack_utf8, put_rune

from oracle import go_runes


@given(st.binary(max_size=64))
def test_compiled_decoder_is_go_decoder(data: bytes) -> None:
    buf, _ = pack_utf8([data])
    runes, p = [], 0
    while p < len(buf):
        r, size = decode_rune(buf, p, len(buf))
        runes.append(chr(r))
        p += size
    assert runes == go_runes(data)


@given(st.integers(0, 0x10FFFF))
def test_put_rune_writes_utf8(r: int) -> None:
    out = np.zeros(4, dtype=np.uint8)
    n = put_rune(out, 0, r)
    assert out[:n].tobytes() == chr(r).encode("utf-8", "surrogatepass")


def test_pack_utf8_concatenates_with_offsets() -> None:
    buf, offsets = pack_utf8(["é", b"\xff", "", "a\ud800"])
    assert buf.tobytes() == b"\xc3\xa9\xff" + b"a\xed\xa0\x80"
    assert offsets.tolist() == [0, 2, 3, 3, 7]
