"""ditto's Normalize (kernels.normalize): markup stripped, Go's lowercasing and whitespace;
the normalized texts of generated-ditto.json reproduced bit for bit.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.normalize import normalize, strip_tags

from oracle import naive_strip_tags


def test_strip_tags_edges() -> None:
    assert strip_tags("a<b>c") == "a c"
    assert strip_tags("<a <b> c> d") == "   d"
    assert strip_tags("text before <div unclosed") == "text before "
    assert strip_tags("x<>y") == "x<>y"
    assert strip_tags("a > b") == "a > b"
    assert strip_tags("<") == "<"


def test_normalize_bytes_and_markup() -> None:
    assert normalize(b"\xff<b>x") == "\ufffd x"
    assert normalize("   \n\t ") == ""
    assert normalize("<p></p>") == ""


@given(st.text(alphabet="<>/!?aZ1 é", max_size=40))
def test_strip_tags_fast_and_slow_paths_equal_state_machine(text: str) -> None:
    want = "".join(naive_strip_tags(text))
    assert strip_tags(text) == want
    if text.isascii():
        assert strip_tags(text.encode()) == want.encode()


def test_normalized_text(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]]
) -> None:
    for doc_id, data in golden_inputs:
        want = bytes.fromhex(ditto_golden["per_input"][doc_id]["normalized_hex"])
        assert normalize(data).encode("utf-8") == want, doc_id


def test_normalized_text_from_str(ditto_golden: dict[str, Any]) -> None:
    for item in ditto_golden["inputs"]:
        if item["text"] is not None:
            want = ditto_golden["per_input"][item["id"]]["normalized"]
            assert normalize(item["text"]) == want, item["id"]


@pytest.mark.parametrize("probe", ["normalize_probes"])
def test_normalize_probes(ditto_golden: dict[str, Any], probe: str) -> None:
    probes = ditto_golden["examples"][probe]
    assert len(probes) == 13
    for text, want in probes.items():
        assert normalize(text) == want, repr(text)
