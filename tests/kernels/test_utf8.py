"""The compiled UTF-8 primitives (kernels.utf8): decoding as Go does, encoding, packing."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.utf8 import decode_rune, pack_utf8, put_rune, whole_characters

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


def test_whole_characters_widens_a_range_cut_inside_characters() -> None:
    data = "aé€😀b".encode()  # 1, 2, 3, 4 and 1 bytes
    assert whole_characters(data, 0, len(data)) == (0, len(data))
    assert whole_characters(data, 2, 3) == (1, 3)  # the second byte of é -> all of é
    assert whole_characters(data, 4, 5) == (3, 6)  # inside € on both ends
    assert whole_characters(data, 7, 9) == (6, 10)  # inside 😀
    assert whole_characters(data, 10, 11) == (10, 11)  # already whole
    for start in range(len(data)):
        for end in range(start, len(data) + 1):
            lo, hi = whole_characters(data, start, end)
            assert lo <= start and hi >= end and lo >= 0 and hi <= len(data)
            if end > start:
                data[lo:hi].decode("utf-8")  # whole characters: decodes strictly


def test_whole_characters_widens_invalid_bytes_at_most_three() -> None:
    data = b"a" + b"\x80" * 6 + b"b"
    assert whole_characters(data, 5, 6) == (2, 7)  # three back, then stops; one ahead
    assert whole_characters(b"", 0, 0) == (0, 0)
    assert whole_characters(b"abc", -2, 9) == (0, 3)  # clamped to the data
