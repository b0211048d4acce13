"""The core's declarations: the representative rule's keys, read by every engine."""

from __future__ import annotations

import pytest

from neardup_udfs.driver.settings import REPRESENTATIVES, RuleField, rule_fields


def test_each_rule_declares_its_keys_before_the_id() -> None:
    assert rule_fields("min_id") == ()
    assert rule_fields("earliest") == (RuleField("order", descending=False, nullable=True),)
    assert rule_fields("longest") == (RuleField("length", descending=True, nullable=False),)
    assert set(REPRESENTATIVES) == {"min_id", "earliest", "longest"}


def test_an_unknown_rule_is_named() -> None:
    with pytest.raises(ValueError, match="'shortest'"):
        rule_fields("shortest")


def test_checks_say_which_estimates_are_kept_checked_or_dropped() -> None:
    """hybrid: the estimates within the 4-sigma margin of the threshold are checked, those
    above it kept; exact: every one checked; estimate: none checked, kept from the
    threshold up. Both shells read these bounds (stages.verify, driver.near)."""
    from neardup_udfs.driver.settings import Checks
    from neardup_udfs.kernels.minhash import estimate_margin

    m = estimate_margin(128)
    assert Checks.of("hybrid", 0.7, 128) == Checks(0.7, 0.7 - m, 0.7 + m)
    assert 0.17 < m < 0.19
    exact = Checks.of("exact", 0.7, 128)
    assert exact.check == -float("inf") and exact.sure == float("inf")
    assert Checks.of("estimate", 0.7, 128) == Checks(0.7, 0.7, 0.7)
