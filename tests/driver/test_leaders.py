"""driver.leaders: the exact-duplicate leader rule, over rows in any order and over sorted
batches cut anywhere."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from neardup_udfs.driver.leaders import leaders, leaders_fn, sorted_leaders
from neardup_udfs.schemas import DOC_ID, EXACT_KEY, LEADER


def _rows(seed: int, n: int = 300) -> tuple[list[str | None], list[str], list[bool]]:
    """Keys with many repeats and some nulls, distinct ids (some non-ASCII, where UTF-8
    byte order is not code-point order of UTF-16), some rows empty."""
    rng = random.Random(seed)
    ids = rng.sample([f"{p}{i}" for i in range(n) for p in ("d", "\uff41", "\U0001f600")], n)
    keys = [None if rng.random() < 0.1 else f"k{rng.randrange(n // 6)}" for _ in range(n)]
    empty = [rng.random() < 0.05 for _ in range(n)]
    return keys, ids, empty


def _expected(keys: list[str | None], ids: list[str], empty: list[bool]) -> list[str]:
    smallest: dict[str | None, bytes] = {}
    for k, i in zip(keys, ids, strict=True):
        b = i.encode()
        smallest[k] = min(smallest.get(k, b), b)
    return [i if e else smallest[k].decode() for k, i, e in zip(keys, ids, empty, strict=True)]


@pytest.mark.parametrize("seed", range(5))
def test_each_row_is_led_by_the_smallest_id_of_its_key_in_byte_order(seed: int) -> None:
    keys, ids, empty = _rows(seed)
    got = leaders(pa.array(keys, pa.string()), np.array(ids, dtype=object), np.array(empty))
    assert list(got) == _expected(keys, ids, empty)
    held = leaders(  # the ids as Arrow strings too, as the local engine holds them
        pa.array(keys, pa.string()), np.array(ids, dtype=object), np.array(empty), pa.array(ids)
    )
    assert list(held) == list(got)


def test_no_rows_no_leaders() -> None:
    got = leaders(pa.array([], pa.string()), np.array([], dtype=object), np.array([], bool))
    assert len(got) == 0


@pytest.mark.parametrize("seed", range(5))
def test_sorted_batches_cut_anywhere_give_the_leaders_of_the_whole(seed: int) -> None:
    """A group cut between two batches (even one batch of a single row, and cuts right at a
    group's start) keeps one leader: the batch function gives what the whole-table rule
    gives."""
    keys, ids, empty = _rows(seed)
    table = pa.table(
        {
            DOC_ID: pa.array(ids, pa.string()),
            EXACT_KEY: pa.array(keys, pa.string()),
            "alone": pa.array([None if i % 17 == 0 else e for i, e in enumerate(empty)]),
        }
    )
    order = pc.sort_indices(table, [(EXACT_KEY, "ascending"), (DOC_ID, "ascending")])
    ordered = table.take(order)
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(2, len(ids)), 40)) + [len(ids)]
    batches, lo = [], 0
    for hi in [1, *cuts]:
        batches.append(ordered.slice(lo, hi - lo).to_batches()[0])
        lo = hi
    out = pa.Table.from_batches(list(leaders_fn("alone")(iter(batches))))
    assert out.column_names == [DOC_ID, EXACT_KEY, "alone", LEADER]
    alone = [bool(a) for a in ordered.column("alone").to_pylist()]  # a null: not alone
    assert out.column(LEADER).to_pylist() == _expected(
        ordered.column(EXACT_KEY).to_pylist(), ordered.column(DOC_ID).to_pylist(), alone
    )


def test_a_run_goes_on_only_into_its_own_key() -> None:
    """The run a batch ends in leads the next batch's first rows only when their key is the
    same; a null key goes on into a null key."""
    ids = np.array(["m", "n"], dtype=object)
    no = np.zeros(2, bool)
    got, run = sorted_leaders(pa.array(["k", "k"]), ids, no, ("k", "a"))
    assert list(got) == ["a", "a"] and run == ("k", "a")
    got, run = sorted_leaders(pa.array(["k", "l"]), ids, no, ("j", "a"))
    assert list(got) == ["m", "n"] and run == ("l", "n")
    got, run = sorted_leaders(pa.array([None, "l"], pa.string()), ids, no, (None, "b"))
    assert list(got) == ["b", "n"] and run == ("l", "n")
