"""Helpers to read generated-semblance.json (Go nil lists, summarised long sequences)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "generated-semblance.json"


@cache
def semblance() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text())
    return data


def inputs() -> list[tuple[str, bytes]]:
    return [(i["id"], bytes.fromhex(i["hex"])) for i in semblance()["inputs"]]


def hexes(values: Sequence[int]) -> list[str]:
    return [f"{int(v) & (2**64 - 1):016x}" for v in values]


def matches_stream(got_hex: list[str], want: Any) -> bool:
    """A golden stream is a list, None (Go's nil = empty) or a {count, sha256...} summary."""
    if want is None:
        return got_hex == []
    if isinstance(want, list):
        return got_hex == want
    digest = hashlib.sha256("".join(h + "\n" for h in got_hex).encode()).hexdigest()
    return (
        len(got_hex) == want["count"]
        and digest == want["sha256_of_hex_lines"]
        and got_hex[:10] == want["first_10"]
        and got_hex[-3:] == want["last_3"]
    )


def float_bits(x: float) -> str:
    import struct

    return struct.pack(">d", x).hex()


def assert_fp_golden(got: list[str], want: Any, where: str) -> None:
    """A golden fingerprint list, None (Go nil), or a {count, first_10, sha256} summary."""
    if isinstance(want, dict):
        digest = hashlib.sha256("".join(x + "\n" for x in got).encode()).hexdigest()
        assert len(got) == want["count"], where
        assert got[:10] == want["first_10"], where
        assert digest == want["sha256_of_pos_colon_hash_lines"], where
    else:
        assert got == (want or []), where
