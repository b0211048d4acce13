"""The pHash wire form and distance: ``PHashHex`` / ``PHashFromHex`` (16 hex digits,
big-endian, with the reference's error messages) and the Hamming distance of two hashes.

Negative values are read as the two's-complement int64 a Spark ``LongType`` column holds.
"""

from __future__ import annotations

from neardup_udfs.kernels.phash.formats import PHashError

_MASK64 = (1 << 64) - 1


def phash_hex(h: int) -> str:
    """``PHashHex``: the 8 bytes of ``h`` big-endian as 16 lowercase hex digits.

    Args:
        h: a hash in ``[0, 2**64)``; a negative value in ``[-2**63, 0)`` is read as the
            two's-complement int64 a Spark ``LongType`` column holds.

    Raises:
        ValueError: ``h`` is outside ``[-2**63, 2**64)``.

    Example:
        >>> phash_hex(0x0F0F0F0F0F0F0F0F)
        '0f0f0f0f0f0f0f0f'
    """
    h = int(h)
    if not -(1 << 63) <= h <= _MASK64:
        raise ValueError(f"phash {h} does not fit in 64 bits")
    return f"{h & _MASK64:016x}"


def _go_rune_repr(b: int) -> str:
    # Go's %#U of rune(b): "U+0067 'g'", or just "U+000A" when not printable.
    ch = chr(b)
    return f"U+{b:04X} '{ch}'" if ch.isprintable() else f"U+{b:04X}"


def phash_from_hex(s: str | bytes) -> int:
    """``PHashFromHex``: parse 16 hex digits (either case) back into the 64-bit hash.

    Raises:
        PHashError: with the reference's message: ``encoding/hex: invalid byte: U+0067 'g'``
            (a non-hex byte, reported before a bad length), ``encoding/hex: odd length hex
            string``, or ``phash hex must decode to 8 bytes`` (even length other than 16,
            including the empty string).

    Notes:
        Decoding is byte-wise like Go's ``hex.DecodeString``: no ``0x`` prefix, no
        whitespace; a non-ASCII character is reported by its first UTF-8 byte.

    Example:
        >>> hex(phash_from_hex("A18CAD6C2D93D25C"))
        '0xa18cad6c2d93d25c'
    """
    raw = s.encode("utf-8", "surrogatepass") if isinstance(s, str) else bytes(s)
    source = f"phash hex {s!r}"
    digits = b"0123456789abcdefABCDEF"
    for b in raw[: len(raw) - len(raw) % 2]:
        if b not in digits:
            raise PHashError(source, f"encoding/hex: invalid byte: {_go_rune_repr(b)}")
    if len(raw) % 2:
        if raw[-1] not in digits:
            raise PHashError(source, f"encoding/hex: invalid byte: {_go_rune_repr(raw[-1])}")
        raise PHashError(source, "encoding/hex: odd length hex string")
    if len(raw) != 16:
        raise PHashError(source, "phash hex must decode to 8 bytes")
    return int(raw, 16)


def phash_distance(a: int, b: int) -> int:
    """Hamming distance of two hashes (``Distance``: popcount of ``a ^ b``), in [0, 64].

    Notes:
        Negative int64 values are read as their unsigned 64-bit pattern. The reference's
        guide: <= 8 resize or re-save, <= 12 light crop or recolour, >= 20 likely different.
    """
    return ((int(a) ^ int(b)) & _MASK64).bit_count()
