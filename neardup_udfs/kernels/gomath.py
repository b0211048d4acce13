"""Go's float64 math, step by step, where CPython's libm differs in the last bit.

semblance computes LSH thresholds with Go's ``math.Pow`` and HyperLogLog's linear counting
with Go's ``math.Log``. On amd64 both are assembly kernels whose results can differ from
glibc/CPython by 1 ulp, which changes golden values. These functions evaluate Go's kernels
in Go's operation order (spec §1.6, §3.8).
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["fma", "go_exp_fma", "go_log", "go_pow_unit"]

# Go math.Log (FreeBSD e_log.c), constants as Go spells them.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_SQRT2_HALF = 0.7071067811865476  # float64(Sqrt2 / 2)


def go_log(x: float) -> float:
    """Natural log exactly as Go's ``math.Log`` computes it (CPython's may differ by 1 ulp)."""
    if math.isnan(x) or x == math.inf:
        return x
    if x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    f1, ki = math.frexp(x)
    if f1 < _SQRT2_HALF:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


# Go math.Pow for thresholds.
#
# semblance computes thresholds with Go's math.Pow. For the arguments used here, x = 1/bands in
# (0, 1] and y = 1/rows in (0, 1], Go's Pow reduces to: 1 if x == 1, x if y == 1, Sqrt(x) if
# y == 0.5, otherwise Exp(y * Log(x)). On amd64 Log and Exp are assembly kernels; Exp takes a
# fused-multiply-add path on CPUs with AVX+FMA (the machine the goldens were produced on). The
# helpers below evaluate those kernels step by step in float64, with exact FMAs, so thresholds
# match Go bit for bit on such machines (all 64 cases of the golden Params grid do). A Go binary
# on a CPU without FMA can differ in the last bit for some inputs.

_LOG2E = 1.4426950408889634073599246810018920
_LN2_UPPER = 0.69314718055966295651160180568695068359375
_LN2_LOWER = 0.28235290563031577122588448175013436025525412068e-12
# Taylor coefficients of exp, highest degree first (1/8! ... 1/3!), then 1/2 and 1.
_EXP_TAYLOR = (
    2.4801587301587301587e-5,
    1.9841269841269841270e-4,
    1.3888888888888888889e-3,
    8.3333333333333333333e-3,
    4.1666666666666666667e-2,
    1.6666666666666666667e-1,
    0.5,
    1.0,
)


def fma(a: float, b: float, c: float) -> float:
    """``a * b + c`` with a single rounding (exact rational arithmetic, then round-to-even)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def go_exp_fma(x: float) -> float:
    """Go's amd64 ``math.Exp`` (FMA path) for a finite ``x`` whose result is a normal float."""
    e = round(_LOG2E * x)  # CVTSD2SL: round half to even
    ef = float(e)
    x = fma(-_LN2_UPPER, ef, x)
    x = fma(-_LN2_LOWER, ef, x)
    x *= 0.0625
    p = _EXP_TAYLOR[0]
    for c in _EXP_TAYLOR[1:]:
        p = fma(p, x, c)
    x *= p
    for _ in range(3):
        x *= x + 2.0
    x = fma(x, x + 2.0, 1.0)
    return x * math.ldexp(1.0, e)


def go_pow_unit(x: float, y: float) -> float:
    """Go ``math.Pow(x, y)`` for ``x, y`` in (0, 1] (the only domain thresholds need)."""
    if x == 1.0:
        return 1.0
    if y == 1.0:
        return x
    if y == 0.5:
        return math.sqrt(x)
    return go_exp_fma(y * go_log(x))
