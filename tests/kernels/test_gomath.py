"""Go's math.Log (kernels.gomath), where CPython's libm differs: the HyperLogLog goldens
follow Go.
"""

from __future__ import annotations

import math

import numpy as np
from semblance_golden import PER_INPUT, float_bits

from neardup_udfs.kernels.gomath import go_log


def test_go_log_is_needed_and_close_to_libm() -> None:
    # "fox" leaves 10 of 16 p=4 registers empty: linear counting takes ln(1.6), where
    # CPython's libm log is 1 ulp away from Go's and the golden follows Go.
    assert PER_INPUT["fox"]["hll_p4_words_w1_estimate"]["bits"] == float_bits(16 * go_log(1.6))
    assert 16 * math.log(1.6) != 16 * go_log(1.6)
    for x in np.random.default_rng(5).uniform(1e-3, 1e6, 2000):
        assert abs(go_log(float(x)) - math.log(x)) <= math.ulp(math.log(x))
    assert go_log(1.0) == 0.0 and go_log(0.0) == -math.inf and math.isnan(go_log(-1.0))
    assert go_log(math.inf) == math.inf and math.isnan(go_log(math.nan))
