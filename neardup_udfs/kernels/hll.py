"""semblance's ``hll``: a dense HyperLogLog with the classic estimator, bit for bit."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.gomath import go_log
from neardup_udfs.kernels.hashing import mix64, mix64_array
from neardup_udfs.kernels.readonly import ReadOnly

__all__ = ["HyperLogLog"]

MIN_P, MAX_P = 4, 18
FORMAT_VERSION, ALGO_HLL, HEADER_SIZE = 1, 3, 3
_MASK64 = (1 << 64) - 1
# Exact powers 2**-r for every byte value (Add stores at most 61; decoded bytes may be more).
_POW2_NEG = np.ldexp(1.0, -np.arange(256))


def _bit_length(w: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    """Bit length of each value (0 for 0), exact: each 32-bit half converts to float exactly."""
    hi = (w >> np.uint64(32)).astype(np.float64)
    lo = (w & np.uint64(0xFFFFFFFF)).astype(np.float64)
    hi_len = np.frexp(hi)[1].astype(np.int64)
    lo_len = np.frexp(lo)[1].astype(np.int64)
    return np.where(hi_len > 0, hi_len + 32, lo_len)


class HyperLogLog:
    """Dense HyperLogLog with ``2**p`` one-byte registers (semblance ``hll.Sketch``).

    Notes:
        ``p`` must lie in [4, 18]; standard error is about ``1.04 / sqrt(2**p)``. Elements are
        64-bit ints (Python ints are taken mod 2**64, so signed Spark longs work) scrambled by
        ``mix64``, so duplicates and order never change the registers. ``merge`` is exact:
        merging equals adding both streams to one sketch. ``estimate`` is the classic
        estimator (linear counting below ``2.5 * m`` while a register is still zero, no
        large-range correction, no HLL++ bias tables) and is bit-identical to Go, including
        Go's ``math.Log``; an empty sketch estimates exactly 0.0.

    Example:
        >>> h = HyperLogLog(4); h.add(1); h.add(2); h.add(3); h.to_bytes().hex()
        '01030400010000000000000004000000000000'
    """

    __slots__ = ("_p", "_regs")

    def __init__(self, p: int) -> None:
        if not MIN_P <= p <= MAX_P:
            raise ValueError(f"hll: p must be in [{MIN_P}, {MAX_P}], got p={p}")
        self._p = int(p)
        self._regs = np.zeros(1 << p, dtype=np.uint8)

    p = ReadOnly[int]("_p", "The precision parameter.")

    @property
    def registers(self) -> npt.NDArray[np.uint8]:
        """Read-only view of the ``2**p`` registers (it follows later updates)."""
        view = self._regs.view()
        view.flags.writeable = False
        return view

    def add(self, x: int) -> None:
        """Observe one element (a duplicate never changes the sketch)."""
        p = self._p
        y = mix64(int(x) & _MASK64)
        idx = y >> (64 - p)
        rho = min(64 - ((y << p) & _MASK64).bit_length() + 1, 64 - p + 1)
        if rho > self._regs[idx]:
            self._regs[idx] = rho

    def add_many(self, xs: npt.NDArray[np.integer] | Iterable[int]) -> None:
        """Observe many elements at once; equals ``add`` one by one, in any order.

        A numpy integer array is processed without a Python-level loop (signed dtypes are
        reinterpreted mod 2**64, like ``add``); any other iterable of ints is first converted
        element by element, since numpy would turn a mix of large and small ints into floats.
        """
        if isinstance(xs, np.ndarray):
            arr = xs
        else:
            arr = np.fromiter((int(x) & _MASK64 for x in xs), dtype=np.uint64)
        if arr.size == 0:
            return
        if arr.dtype.kind not in "iu":
            raise TypeError(f"hll: add_many needs an integer array, got dtype {arr.dtype}")
        y = mix64_array(arr.astype(np.uint64, copy=False).ravel())
        p = self._p
        idx = (y >> np.uint64(64 - p)).astype(np.intp)
        rho = np.minimum(65 - _bit_length(y << np.uint64(p)), 65 - p).astype(np.uint8)
        np.maximum.at(self._regs, idx, rho)

    def estimate(self) -> float:
        """Estimated number of distinct elements, bit-identical to semblance's ``Estimate``."""
        m = float(len(self._regs))
        # Sequential sum in register order (accumulate never reassociates, unlike sum).
        total = float(np.add.accumulate(_POW2_NEG[self._regs])[-1])
        zeros = int(np.count_nonzero(self._regs == 0))
        est = _alpha(len(self._regs)) * m * m / total
        if est > 2.5 * m or zeros == 0:
            return est
        return m * go_log(m / float(zeros))  # linear counting, small range

    def merge(self, other: HyperLogLog) -> None:
        """Fold ``other`` in (register-wise max): the sketch of the union, exactly.

        Raises:
            ValueError: the precisions differ.
        """
        if self._p != other._p:
            raise ValueError(f"hll: precision mismatch (p={self._p} vs p={other._p})")
        np.maximum(self._regs, other._regs, out=self._regs)

    def reset(self) -> None:
        """Empty the sketch for reuse."""
        self._regs[:] = 0

    def to_bytes(self) -> bytes:
        """Wire format ``[version 1][algorithm 3][p][2**p registers]`` (semblance's)."""
        return bytes((FORMAT_VERSION, ALGO_HLL, self._p)) + self._regs.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> HyperLogLog:
        """Decode ``to_bytes`` output.

        Raises:
            ValueError: fewer than 3 bytes ("truncated"), unknown format version or algorithm
                id, precision outside [4, 18], or a length other than ``3 + 2**p``.
        """
        data = bytes(data)
        if len(data) < HEADER_SIZE:
            raise ValueError(f"hll: truncated sketch: {len(data)} bytes")
        if data[0] != FORMAT_VERSION:
            raise ValueError(f"hll: unknown sketch format version {data[0]}")
        if data[1] != ALGO_HLL:
            raise ValueError(f"hll: unknown sketch algorithm id {data[1]}")
        p = data[2]
        if not MIN_P <= p <= MAX_P:
            raise ValueError(f"hll: invalid precision {p}")
        want = HEADER_SIZE + (1 << p)
        if len(data) != want:
            raise ValueError(f"hll: sketch with p={p} must be {want} bytes, got {len(data)}")
        sketch = cls(p)
        sketch._regs[:] = np.frombuffer(data, dtype=np.uint8, offset=HEADER_SIZE)
        return sketch

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HyperLogLog):
            return NotImplemented
        return self._p == other._p and bool(np.array_equal(self._regs, other._regs))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HyperLogLog(p={self._p}, estimate={self.estimate()!r})"


def _alpha(m: int) -> float:
    if m == 16:
        return 0.673
    if m == 32:
        return 0.697
    if m == 64:
        return 0.709
    return 0.7213 / (1 + 1.079 / float(m))
