"""The persistent index's manifest and layout (index_store): no Spark, local filesystem."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from neardup_udfs import __version__
from neardup_udfs.index.store import (
    FORMAT,
    MANIFEST,
    Batch,
    IndexManifest,
    IndexMismatch,
    IndexStoreError,
    check_compatible,
    commit,
    exists,
    new_manifest,
    next_batch,
    open_index,
    remove_uncommitted,
    scheme_of,
    seq_base,
)
from neardup_udfs.kernels.hamming_tables import Scheme
from neardup_udfs.presets import Pipeline, resolve

SEMBLANCE = resolve("semblance", bands=25, rows=5, k=125)
DITTO = resolve("ditto/2")


def _batch(number: int, documents: int, rejected: int = 0, batch_id: str | None = None) -> Batch:
    return Batch(
        batch_id=batch_id or f"b{number}",
        number=number,
        dir=f"batches/{number:05d}-{number:012x}",
        documents=documents,
        rejected=rejected,
        created=1700000000.0 + number,
    )


def _with_batches(manifest: IndexManifest, *batches: Batch) -> IndexManifest:
    return replace(manifest, batches=manifest.batches + batches)


# --- new_manifest / commit / open_index ----------------------------------------------------------


def test_minhash_round_trip(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    assert not exists(path)
    empty = new_manifest("semblance", SEMBLANCE, k=3)
    assert empty.generation == 0
    assert empty.documents == 0
    assert empty.batches == ()
    manifest = _with_batches(empty, _batch(1, 10, rejected=2), _batch(2, 7))

    committed = commit(path, None, manifest)
    assert committed.generation == 1
    assert exists(path)
    assert (tmp_path / "idx" / MANIFEST).is_file()
    # No temporary file is left beside the manifest.
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [MANIFEST]

    opened = open_index(path)
    assert opened == committed
    assert opened.preset == "semblance"
    assert opened.pipeline_id == SEMBLANCE.id == "semblance/1;bands=25,k=125,rows=5"
    assert opened.pipeline_version == "semblance/1"
    assert opened.kind == "minhash"
    assert dict(opened.shape) == {"bands": 25, "rows": 5}
    assert dict(opened.params) == dict(SEMBLANCE.params)
    assert dict(opened.params) == {"bands": 25, "k": 125, "rows": 5, "seed": 0, "w": 3}
    assert opened.generation == 1
    assert opened.documents == 17
    assert opened.full_depth == 5
    assert opened.format == FORMAT
    assert opened.neardup_version == __version__
    assert opened.created == manifest.created
    assert opened.batches == (_batch(1, 10, rejected=2), _batch(2, 7))
    assert opened.batch("b2") == _batch(2, 7)
    assert opened.batch("nope") is None

    raw = json.loads((tmp_path / "idx" / MANIFEST).read_text())
    assert raw["documents"] == 17
    assert raw["format"] == FORMAT
    assert raw["generation"] == 1
    assert raw["shape"] == {"bands": 25, "rows": 5}


def test_simhash_round_trip(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    manifest = _with_batches(new_manifest("ditto/2", DITTO, k=3), _batch(1, 4))
    commit(path, None, manifest)
    opened = open_index(path)
    assert opened.pipeline_id == "ditto/2"
    assert opened.kind == "simhash"
    assert dict(opened.shape) == {"k": 3, "blocks": 4}
    assert dict(opened.params) == {"char": 4, "word": 0}
    assert opened.full_depth == 1
    assert opened.documents == 4
    assert opened.generation == 1


def test_generations_grow_by_one(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    first = commit(path, None, new_manifest("ditto/2", DITTO, k=3))
    second = commit(path, first, _with_batches(first, _batch(1, 5)))
    third = commit(path, second, _with_batches(second, _batch(2, 6)))
    assert (first.generation, second.generation, third.generation) == (1, 2, 3)
    opened = open_index(path)
    assert opened == third
    assert opened.documents == 11
    assert [b.number for b in opened.batches] == [1, 2]


# --- commit's generation check -------------------------------------------------------------------


def test_commit_with_stale_previous_raises_and_changes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    base = commit(path, None, new_manifest("ditto/2", DITTO, k=3))
    # Writer A and writer B both read generation 1; A commits first.
    winner = commit(path, base, _with_batches(base, _batch(1, 5, batch_id="a")))
    before = (tmp_path / "idx" / MANIFEST).read_bytes()
    with pytest.raises(IndexStoreError, match="changed while this batch was written"):
        commit(path, base, _with_batches(base, _batch(1, 9, batch_id="b")))
    assert (tmp_path / "idx" / MANIFEST).read_bytes() == before
    assert open_index(path) == winner
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [MANIFEST]


def test_commit_without_previous_when_index_exists_raises(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    existing = commit(path, None, _with_batches(new_manifest("ditto/2", DITTO, k=3), _batch(1, 2)))
    before = (tmp_path / "idx" / MANIFEST).read_bytes()
    with pytest.raises(IndexStoreError):
        commit(path, None, new_manifest("ditto/2", DITTO, k=3))
    assert (tmp_path / "idx" / MANIFEST).read_bytes() == before
    assert open_index(path) == existing


def test_commit_with_previous_when_no_index_raises(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    ghost = replace(new_manifest("ditto/2", DITTO, k=3), generation=1)
    with pytest.raises(IndexStoreError):
        commit(path, ghost, ghost)
    assert not exists(path)


# --- remove_uncommitted --------------------------------------------------------------------------


def test_remove_uncommitted_deletes_only_unlisted_batches(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    kept = [_batch(1, 3), _batch(2, 4)]
    manifest = commit(path, None, _with_batches(new_manifest("ditto/2", DITTO, k=3), *kept))
    for b in kept:
        (tmp_path / "idx" / b.dir / "docs").mkdir(parents=True)
        (tmp_path / "idx" / b.dir / "docs" / "part-0.parquet").write_bytes(b"x")
    crashed = tmp_path / "idx" / "batches" / "00003-deadbeef0000"
    (crashed / "keys" / "band=0" / "depth=1").mkdir(parents=True)
    (crashed / "keys" / "band=0" / "depth=1" / "part-0.parquet").write_bytes(b"y")

    removed = remove_uncommitted(path, open_index(path))
    assert removed == ["batches/00003-deadbeef0000"]
    assert not crashed.exists()
    for b in manifest.batches:
        assert (tmp_path / "idx" / b.dir / "docs" / "part-0.parquet").read_bytes() == b"x"
    assert open_index(path) == manifest
    assert remove_uncommitted(path, manifest) == []


def test_remove_uncommitted_without_manifest_or_batches(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    assert remove_uncommitted(path, None) == []  # no batches/ directory at all
    (tmp_path / "idx" / "batches" / "00001-aaaaaaaaaaaa").mkdir(parents=True)
    (tmp_path / "idx" / "batches" / "00002-bbbbbbbbbbbb").mkdir(parents=True)
    assert remove_uncommitted(path, None) == [
        "batches/00001-aaaaaaaaaaaa",
        "batches/00002-bbbbbbbbbbbb",
    ]
    assert list((tmp_path / "idx" / "batches").iterdir()) == []


# --- check_compatible ----------------------------------------------------------------------------


def _mismatch(manifest: IndexManifest, pipeline: Pipeline, k: int) -> str:
    with pytest.raises(IndexMismatch) as info:
        check_compatible(manifest, pipeline, k, "/some/index")
    assert isinstance(info.value, IndexStoreError)
    message = str(info.value)
    assert "/some/index" in message
    return message


def test_check_compatible_accepts_equal_settings() -> None:
    check_compatible(new_manifest("ditto/2", DITTO, 3), resolve("ditto/2"), 3, "x")
    check_compatible(
        new_manifest("semblance", SEMBLANCE, 0),
        resolve("semblance", bands=25, rows=5, k=125),
        7,  # the SimHash k plays no part in a MinHash index's shape
        "x",
    )
    semblance = resolve("semblance")
    check_compatible(new_manifest("semblance", semblance, 3), resolve("semblance"), 3, "x")


def test_check_compatible_other_preset() -> None:
    other = resolve("semblance-simhash")
    message = _mismatch(new_manifest("ditto/2", DITTO, 3), other, 3)
    assert "'ditto/2'" in message
    assert "'semblance-simhash/1'" in message


def test_check_compatible_other_kind() -> None:
    message = _mismatch(new_manifest("ditto/2", DITTO, 3), SEMBLANCE, 3)
    assert "'ditto/2' with k=3" in message
    assert f"{SEMBLANCE.id!r} with bands=25, rows=5" in message


def test_check_compatible_other_bands_rows() -> None:
    default = resolve("semblance")
    message = _mismatch(new_manifest("semblance", default, 3), SEMBLANCE, 3)
    assert "'semblance/1' with bands=16, rows=8" in message
    assert "'semblance/1;bands=25,k=125,rows=5' with bands=25, rows=5" in message


def test_check_compatible_other_simhash_k() -> None:
    message = _mismatch(new_manifest("ditto/2", DITTO, 3), resolve("ditto/2"), 4)
    assert "'ditto/2' with k=3" in message
    assert "'ditto/2' with k=4" in message
    assert message.index("k=3") < message.index("k=4")  # built first, then wanted


def test_check_compatible_other_options() -> None:
    message = _mismatch(new_manifest("ditto/2", DITTO, 3), resolve("ditto/2", char=3), 3)
    assert "'ditto/2'" in message
    assert "'ditto/2;char=3'" in message


# --- open_index errors ---------------------------------------------------------------------------


def test_open_index_without_manifest(tmp_path: Path) -> None:
    path = str(tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexStoreError, match="no index at") as info:
        open_index(path)
    assert repr(path) in str(info.value)
    assert not exists(path)
    with pytest.raises(IndexStoreError) as missing:
        open_index(str(tmp_path / "missing"))
    assert str(tmp_path / "missing") in str(missing.value)


def test_open_index_other_format(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    commit(path, None, new_manifest("ditto/2", DITTO, k=3))
    target = tmp_path / "idx" / MANIFEST
    d = json.loads(target.read_text())
    d["format"] = "neardup-index/999"
    target.write_text(json.dumps(d))
    with pytest.raises(IndexStoreError, match="neardup-index/999") as info:
        open_index(path)
    assert path in str(info.value)
    del d["format"]
    target.write_text(json.dumps(d))
    with pytest.raises(IndexStoreError):
        open_index(path)


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "",
        "[]",  # valid JSON, but not an object
        "null",
        json.dumps({"format": FORMAT}),  # required fields missing
        json.dumps({"format": FORMAT, "batches": [{"bogus": 1}]}),
    ],
    ids=["truncated", "empty", "list", "null", "no-fields", "bad-batch"],
)
def test_open_index_invalid_manifest(tmp_path: Path, text: str) -> None:
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / MANIFEST).write_text(text)
    with pytest.raises(IndexStoreError) as info:
        open_index(str(tmp_path / "idx"))
    assert MANIFEST in str(info.value)


def test_commit_over_invalid_manifest_raises(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / MANIFEST).write_text("{not json")
    with pytest.raises(IndexStoreError):
        commit(str(tmp_path / "idx"), None, new_manifest("ditto/2", DITTO, k=3))
    assert (tmp_path / "idx" / MANIFEST).read_text() == "{not json"


# --- next_batch / seq_base -----------------------------------------------------------------------


def test_next_batch_numbers_and_fresh_dirs() -> None:
    empty = new_manifest("ditto/2", DITTO, k=3)
    number, d1 = next_batch(empty, "first")
    again, d2 = next_batch(empty, "first")
    assert number == again == 1
    assert d1 != d2
    for d in (d1, d2):
        assert d.startswith("batches/00001-")
        assert "/" not in d.removeprefix("batches/")
    one = _with_batches(empty, Batch("first", 1, d1, 3, 0, 0.0))
    assert next_batch(one, "second")[0] == 2
    two = _with_batches(one, Batch("second", 2, "batches/00002-x", 3, 0, 0.0))
    number3, d3 = next_batch(two, "third")
    assert number3 == 3
    assert d3.startswith("batches/00003-")
    # Numbers follow the largest committed one, not the count of batches.
    gap = _with_batches(empty, Batch("late", 7, "batches/00007-x", 1, 0, 0.0))
    assert next_batch(gap, "next")[0] == 8


def test_seq_base() -> None:
    for n in (0, 1, 2, 3, 1000, 2**31 - 1):
        assert seq_base(n) == n << 32
    assert seq_base(1) == 4294967296
    # A batch's seqs (base + rank < 2**32) never reach the next batch's.
    assert seq_base(1) + 2**32 - 1 < seq_base(2)
    # The largest batch number next_batch hands out keeps seq a positive int64.
    assert seq_base(2**31 - 1) + 2**32 - 1 == 2**63 - 1


def test_next_batch_refuses_numbers_past_the_seq_range() -> None:
    last = 2**31 - 1
    full = _with_batches(
        new_manifest("ditto/2", DITTO, k=3), Batch("last", last, "batches/x", 1, 0, 0.0)
    )
    with pytest.raises(IndexStoreError, match="no more fit"):
        next_batch(full, "one-more")
    almost = _with_batches(
        new_manifest("ditto/2", DITTO, k=3), Batch("b", last - 1, "batches/y", 1, 0, 0.0)
    )
    assert next_batch(almost, "last")[0] == last


def test_an_unknown_filesystem_is_an_error_naming_the_location() -> None:
    with pytest.raises(IndexStoreError, match="cannot open index location 'bogus://x/y'"):
        open_index("bogus://x/y")


# --- the SimHash key scheme ------------------------------------------------------------------


def test_an_index_records_its_key_scheme_and_old_ones_are_dittos() -> None:
    made = new_manifest("ditto/2", DITTO, 3, scheme=Scheme(6, 3))
    assert made.shape == {"k": 3, "blocks": 6}
    assert scheme_of(made) == Scheme(6, 3)
    before = replace(made, shape={"k": 3})  # an index made before the scheme was recorded
    assert scheme_of(before) == Scheme(4, 3)
    assert new_manifest("ditto/2", DITTO, 3).shape == {"k": 3, "blocks": 4}


def test_a_run_uses_the_index_scheme_unless_it_asks_for_another() -> None:
    index = new_manifest("ditto/2", DITTO, 3, scheme=Scheme(6, 3))
    check_compatible(index, resolve("ditto/2"), 3, "x")  # not asked: the index's scheme
    check_compatible(index, resolve("ditto/2"), 3, "x", blocks=6)
    message = _mismatch_blocks(index, 4)
    assert "hamming_blocks = 6" in message and "hamming_blocks = 4" in message
    assert "--hamming-blocks 6" in message
    old = replace(index, shape={"k": 3})
    check_compatible(old, resolve("ditto/2"), 3, "x", blocks=4)
    assert "hamming_blocks = 4" in _mismatch_blocks(old, 6)


def _mismatch_blocks(manifest: IndexManifest, blocks: int) -> str:
    with pytest.raises(IndexMismatch) as e:
        check_compatible(manifest, resolve("ditto/2"), 3, "/some/index", blocks=blocks)
    return str(e.value)
