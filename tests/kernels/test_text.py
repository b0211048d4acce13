"""Go-compatible decoding, lowercasing and whitespace (kernels.text), where Python's
defaults differ.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.text import (
    UNICODE_VERSION,
    go_collapse_spaces,
    go_decode,
    go_fields,
    go_is_space,
    go_lower,
    go_str_key,
    to_go_str,
)

from oracle import go_runes


def test_unicode_version() -> None:
    assert UNICODE_VERSION == "15.0.0"


def test_every_invalid_byte_is_its_own_replacement() -> None:
    assert go_decode(b"\xe2\x82") == "\ufffd\ufffd"  # Python's "replace" gives one
    assert go_decode(b"\xed\xa0\x80") == "\ufffd" * 3  # encoded surrogate
    assert go_decode(b"\xc0\xaf") == "\ufffd\ufffd"  # overlong
    assert go_decode(b"\xf4\x90\x80\x80") == "\ufffd" * 4  # above U+10FFFF
    assert go_decode(b"a\xffb") == "a\ufffdb"
    assert go_decode("é😀".encode()) == "é😀"


@given(st.binary(max_size=64))
def test_decode_matches_hand_written_go_decoder(data: bytes) -> None:
    assert go_decode(data) == "".join(go_runes(data))


def test_go_str_key_orders_as_go_does() -> None:
    ordered = ["z", "é", "\uffff", "\U0001f600", "\udcff"]  # the raw byte 0xFF last
    assert sorted(ordered) != ordered  # Python orders by code point
    assert sorted(reversed(ordered), key=go_str_key) == ordered
    assert go_str_key("a\udcff") == b"a\xff"  # a raw byte smuggled by surrogateescape
    assert go_str_key("\ud800") == b"\xed\xa0\x80"  # any other lone surrogate


def test_str_with_lone_surrogate_reads_as_its_bytes() -> None:
    assert to_go_str("a\ud800b") == "a\ufffd\ufffd\ufffdb"
    assert to_go_str("plain") == "plain"
    assert to_go_str(b"x\xff") == "x\ufffd"


def test_lower_is_go_simple_mapping() -> None:
    assert go_lower("ΣΟΦΟΣ") == "σοφοσ"  # no final sigma
    assert go_lower("İ") == "i"  # one rune, not i + U+0307
    assert go_lower("ǅ") == "ǆ"
    assert go_lower("\u212a") == "k"  # Kelvin sign
    assert go_lower("ÀB") == "àb"


def test_fields_keep_information_separators() -> None:
    assert go_fields("a\x1cb c") == ["a\x1cb", "c"]  # str.split() would split at U+001C
    assert go_fields("a\u200bb\u00a0c\u3000d") == ["a\u200bb", "c", "d"]
    assert go_fields(" \t\n") == []
    assert go_collapse_spaces("  a \x85 b\u2028") == "a b"
    assert go_is_space("\u0085") and not go_is_space("\u200b") and not go_is_space("\x1f")
