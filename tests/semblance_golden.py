"""Helpers to read generated-semblance.json (Go nil lists, summarised long sequences), and its
parts several kernel tests read: the inputs in the golden's file order, their per-input
values, the corpus and primitive goldens, each input's MinHash signature and SimHash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

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


ORDER: list[str] = [i["id"] for i in semblance()["inputs"]]  # the golden's file order
TEXTS: dict[str, bytes] = dict(inputs())
PER_INPUT: dict[str, Any] = semblance()["per_input"]
CORPUS: dict[str, Any] = semblance()["corpus"]
PRIMS: dict[str, Any] = semblance()["primitives"]


def _sig(id: str) -> np.ndarray:
    return np.array([int(h, 16) for h in PER_INPUT[id]["minhash_default_signature"]], np.uint64)


SIGS = {id: _sig(id) for id in ORDER}  # each input's MinHash signature (the default one)
SIMHASH_W3 = {id: int(PER_INPUT[id]["simhash_w3"], 16) for id in ORDER}


def check_summary(values: list[int], summary: dict[str, Any]) -> None:
    """A long sequence against the golden's {count, sha256_of_hex_lines, first_10, last_3}."""
    hexes = [f"{v:016x}" for v in values]
    assert len(hexes) == summary["count"]
    assert hexes[:10] == summary["first_10"] and hexes[-3:] == summary["last_3"]
    digest = hashlib.sha256("".join(h + "\n" for h in hexes).encode()).hexdigest()
    assert digest == summary["sha256_of_hex_lines"]


def words_w1(input_id: str) -> list[int]:
    """semblance Words(text, 1): the golden list, or the shingle kernel when it is summarised."""
    golden = PER_INPUT[input_id]["words_w1_shingles"]
    if isinstance(golden, list):
        return [int(h, 16) for h in golden]
    from neardup_udfs.kernels.shingle import word_shingles  # the Words port (shingle kernel)

    values = [int(v) & (2**64 - 1) for v in word_shingles(TEXTS[input_id], 1)]
    check_summary(values, golden)
    return values
