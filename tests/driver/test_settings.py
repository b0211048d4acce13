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
