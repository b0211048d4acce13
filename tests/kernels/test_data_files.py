"""The Unicode tables the package ships (kernels.data_files) equal the reference libraries'."""

from __future__ import annotations

from fingerprint_golden import golden

from neardup_udfs.kernels import anchor
from neardup_udfs.kernels.data_files import shipped_json

# --- tables ---------------------------------------------------------------------------------


def test_shipped_tables_equal_the_golden_tables() -> None:
    go = shipped_json("go_unicode_15.json")
    go_golden = golden("unicode-15.0.0-go-and-semblance-tables.json")
    assert go["go_letter_ranges"] == go_golden["go_IsLetter_ranges"]
    assert go["go_digit_ranges"] == go_golden["go_IsDigit_ranges"]
    assert go["to_lower_map"] == go_golden["go_ToLower_map"]
    rust = shipped_json("rust_unicode_17.json")
    rust_golden = golden("unicode-17.0.0-rust-anchor-tables.json")
    assert rust["unicode_version"] == rust_golden["rust_unicode_version"] == "17.0.0"
    assert rust["alphanumeric_ranges"] == rust_golden["alphanumeric_ranges"]
    assert rust["to_lowercase_map"] == rust_golden["to_lowercase_map"]
    assert anchor.UNICODE_VERSION == "17.0.0"
