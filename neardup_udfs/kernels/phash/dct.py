"""From the 32x32 grid to the bits: Rec. 601 luma, the unnormalised 8x8 DCT-II with Go's
cosines (``neardup_udfs/data/go_cos_table.json``, read as a package resource), and the
strictly-above-median bits, each in Go's float64 order of operations.
"""

from __future__ import annotations

import struct
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.data_files import shipped_json
from neardup_udfs.kernels.phash.resample import GRID

F64 = npt.NDArray[np.float64]
U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]

_LOW = 8


@cache
def go_cos_table() -> F64:
    """Go's ``math.Cos((2i+1)*u*pi/64)`` as a read-only (32, 8) float64 array ``[i, u]``."""
    bits: list[str] = shipped_json("go_cos_table.json")["float64_bits"]
    vals = [struct.unpack(">d", bytes.fromhex(h))[0] for h in bits]
    table = np.array(vals, dtype=np.float64).reshape(GRID, _LOW)
    table.setflags(write=False)
    return table


def luma(grid: U8) -> F64:
    """Rec. 601 luma of the grid's premultiplied bytes: ``(0.299R + 0.587G) + 0.114B``.

    Args:
        grid: ``(..., 32, 32, 4)`` uint8 from :func:`resize32` (alpha ignored, so transparent
            areas act as black).

    Returns:
        ``(..., 32, 32)`` float64, each product rounded then added left to right.
    """
    g = np.asarray(grid, dtype=np.float64)
    return (0.299 * g[..., 0] + 0.587 * g[..., 1]) + 0.114 * g[..., 2]


def dct8(lum: F64) -> F64:
    """Unnormalised 2-D DCT-II of a 32x32 luma grid, first 8x8 only, in Go's order.

    Args:
        lum: ``(32, 32)`` or ``(B, 32, 32)`` float64 ``[y, x]``.

    Returns:
        ``(8, 8)`` or ``(B, 8, 8)`` float64 ``[u, v]`` (u horizontal, v vertical frequency),
        so ``.reshape(64)`` is the reference's ``u*8 + v`` order.

    Notes:
        ``C(u, v) = sum over y, then x of (lum[y, x] * cos[x][u]) * cos[y][v]``, starting
        from 0.0, one rounded product and one rounded addition per term in that order, with
        Go's cosines. No ``alpha(u)alpha(v)`` or ``1/N`` scaling.
    """
    cos = go_cos_table()
    lum = np.asarray(lum, dtype=np.float64)
    single = lum.ndim == 2
    b = lum.reshape(-1, GRID, GRID)
    p = b[:, :, :, None] * cos[None, None, :, :]  # (B, y, x, u) = lum[y, x] * cos[x][u]
    terms = np.empty((b.shape[0], GRID * GRID + 1, _LOW, _LOW), dtype=np.float64)
    terms[:, 0] = 0.0
    t = terms[:, 1:].reshape(b.shape[0], GRID, GRID, _LOW, _LOW)
    np.multiply(p[..., :, None], cos[None, :, None, None, :], out=t)  # * cos[y][v]
    np.add.accumulate(terms, axis=1, out=terms)  # running sum in (y, x) order
    out = np.ascontiguousarray(terms[:, -1])
    return out[0] if single else out


def hash_from_dct(coeffs: F64) -> int:
    """Bits from an (8, 8) ``[u, v]`` block: bit ``u*8+v`` iff strictly above the median.

    Notes:
        The median is element 31 of the 63 AC coefficients sorted ascending; bit 0 (DC) is
        always 0. With distinct coefficients exactly 31 bits are set; ties set fewer.
    """
    c = np.asarray(coeffs, dtype=np.float64).reshape(_LOW * _LOW)
    median = np.sort(c[1:])[31]
    bits = np.flatnonzero(c > median)
    h = 0
    for i in bits:
        if i:
            h |= 1 << int(i)
    return h


def hashes_from_dct(coeffs: F64) -> U64:
    """:func:`hash_from_dct` of every (8, 8) block of ``coeffs`` (shape ``(n, 8, 8)``), as a
    uint64 array of n hashes."""
    c = coeffs.reshape(-1, _LOW * _LOW)
    med = np.sort(c[:, 1:], axis=1)[:, 31]
    above = c > med[:, None]
    above[:, 0] = False
    packed: U64 = np.packbits(above, axis=1, bitorder="little").view("<u8").ravel()
    return packed.astype(np.uint64)
