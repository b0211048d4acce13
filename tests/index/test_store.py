"""The persistent index's manifest and layout (index_store): no Spark, local filesystem."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from index_layout import SEMBLANCE, write_index

from neardup_udfs import __version__
from neardup_udfs.index.store import (
    FORMAT,
    MANIFEST,
    Batch,
    IndexManifest,
    IndexMismatch,
    IndexStoreError,
    check_compatible,
    check_index,
    commit,
    exists,
    inspect_index,
    is_batch_name,
    new_manifest,
    next_batch,
    open_index,
    remove_uncommitted,
    scheme_of,
    seq_base,
)
from neardup_udfs.io.storage import ArrowStorage
from neardup_udfs.kernels.hamming_tables import Scheme
from neardup_udfs.presets import Pipeline, resolve

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
    empty = new_manifest("semblance", SEMBLANCE, max_distance=3)
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
    manifest = _with_batches(new_manifest("ditto/2", DITTO, max_distance=3), _batch(1, 4))
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
    first = commit(path, None, new_manifest("ditto/2", DITTO, max_distance=3))
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
    base = commit(path, None, new_manifest("ditto/2", DITTO, max_distance=3))
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
    existing = commit(
        path, None, _with_batches(new_manifest("ditto/2", DITTO, max_distance=3), _batch(1, 2))
    )
    before = (tmp_path / "idx" / MANIFEST).read_bytes()
    with pytest.raises(IndexStoreError):
        commit(path, None, new_manifest("ditto/2", DITTO, max_distance=3))
    assert (tmp_path / "idx" / MANIFEST).read_bytes() == before
    assert open_index(path) == existing


def test_commit_with_previous_when_no_index_raises(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    ghost = replace(new_manifest("ditto/2", DITTO, max_distance=3), generation=1)
    with pytest.raises(IndexStoreError):
        commit(path, ghost, ghost)
    assert not exists(path)


# --- remove_uncommitted --------------------------------------------------------------------------


def test_remove_uncommitted_deletes_only_unlisted_batches(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    kept = [_batch(1, 3), _batch(2, 4)]
    manifest = commit(
        path, None, _with_batches(new_manifest("ditto/2", DITTO, max_distance=3), *kept)
    )
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


def _mismatch(manifest: IndexManifest, pipeline: Pipeline, max_distance: int) -> str:
    with pytest.raises(IndexMismatch) as info:
        check_compatible(manifest, pipeline, max_distance, "/some/index")
    assert isinstance(info.value, IndexStoreError)
    message = str(info.value)
    assert "/some/index" in message
    return message


def test_check_compatible_accepts_equal_settings() -> None:
    check_compatible(new_manifest("ditto/2", DITTO, 3), resolve("ditto/2"), 3, "x")
    check_compatible(
        new_manifest("semblance", SEMBLANCE, 0),
        resolve("semblance", bands=25, rows=5, k=125),
        7,  # the SimHash max_distance plays no part in a MinHash index's shape
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
    commit(path, None, new_manifest("ditto/2", DITTO, max_distance=3))
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
        commit(str(tmp_path / "idx"), None, new_manifest("ditto/2", DITTO, max_distance=3))
    assert (tmp_path / "idx" / MANIFEST).read_text() == "{not json"


# --- next_batch / seq_base -----------------------------------------------------------------------


def test_next_batch_numbers_and_fresh_dirs() -> None:
    empty = new_manifest("ditto/2", DITTO, max_distance=3)
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
        new_manifest("ditto/2", DITTO, max_distance=3), Batch("last", last, "batches/x", 1, 0, 0.0)
    )
    with pytest.raises(IndexStoreError, match="no more fit"):
        next_batch(full, "one-more")
    almost = _with_batches(
        new_manifest("ditto/2", DITTO, max_distance=3), Batch("b", last - 1, "batches/y", 1, 0, 0.0)
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


# --- checking an index: the manifest, the batch folders, their files ----------------------------


def test_a_healthy_index_passes_every_check(tmp_path: Path) -> None:
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 2), ("b2", 4, 0)])
    first = m.batches[0].contents
    assert first is not None and set(first) == {"docs", "keys", "rejects"}
    assert m.batches[1].contents is not None and set(m.batches[1].contents) == {"docs", "keys"}
    # the .crc sidecars and _SUCCESS markers are not data files
    docs = root / m.batches[0].dir / "docs" / "part-00000.parquet"
    assert (first["docs"].files, first["docs"].bytes) == (1, docs.stat().st_size)
    assert first["keys"].files == 2
    assert open_index(str(root)) == m  # the contents round-trip through _INDEX.json
    result = inspect_index(str(root), rows=True)
    assert result.ok and result.problems == ()
    assert (result.verified, result.present, result.rows) == (2, 0, True)
    assert result.manifest == m
    assert check_index(str(root)) == m
    assert check_index(str(root), ArrowStorage(str(root))) == m


def _truncate_manifest(root: Path, m: IndexManifest) -> None:
    target = root / MANIFEST
    target.write_bytes(target.read_bytes()[:100])


def _drop_batch(root: Path, m: IndexManifest) -> None:
    shutil.rmtree(root / m.batches[1].dir)


def _drop_docs_file(root: Path, m: IndexManifest) -> None:
    (root / m.batches[1].dir / "docs" / "part-00000.parquet").unlink()


def _truncate_keys_file(root: Path, m: IndexManifest) -> None:
    part = root / m.batches[1].dir / "keys" / "band=0" / "depth=1" / "part-00000.parquet"
    part.write_bytes(part.read_bytes()[:-10])


def _add_docs_file(root: Path, m: IndexManifest) -> None:
    (root / m.batches[1].dir / "docs" / "part-00009.parquet").write_bytes(b"stray")


def _rename_docs_file(root: Path, m: IndexManifest) -> None:
    docs = root / m.batches[1].dir / "docs"
    (docs / "part-00000.parquet").rename(docs / "part-00001.parquet")


DAMAGE: list[Any] = [
    pytest.param(
        _truncate_manifest, f"index manifest {{root}}/{MANIFEST} is damaged", id="manifest"
    ),
    pytest.param(_drop_batch, "batch 'b2': its folder {root}/{b2} is missing", id="batch-folder"),
    pytest.param(_drop_docs_file, "{root}/{b2}/docs holds 0 data files of 0 bytes", id="docs-file"),
    pytest.param(_truncate_keys_file, "{root}/{b2}/keys holds 2 data files of", id="truncated"),
    pytest.param(_add_docs_file, "{root}/{b2}/docs holds 2 data files", id="added-file"),
    pytest.param(_rename_docs_file, "{root}/{b2}/docs holds other files", id="renamed-file"),
]


@pytest.mark.parametrize(("damage", "expected"), DAMAGE)
def test_a_damaged_index_is_an_error_naming_the_path(
    tmp_path: Path, damage: Callable[[Path, IndexManifest], None], expected: str
) -> None:
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 1), ("b2", 4, 0)])
    damage(root, m)
    expected = expected.format(root=root, b2=m.batches[1].dir)
    with pytest.raises(IndexStoreError) as info:
        check_index(str(root))
    message = str(info.value)
    assert expected in message and "\n" not in message
    result = inspect_index(str(root))
    assert len(result.problems) == 1 and expected in result.problems[0]
    assert not result.ok


def test_every_problem_is_listed_and_the_error_counts_the_others(tmp_path: Path) -> None:
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 1), ("b2", 4, 0)])
    shutil.rmtree(root / m.batches[0].dir)
    _drop_docs_file(root, m)
    problems = inspect_index(str(root)).problems
    assert len(problems) == 2
    assert f"{root}/{m.batches[0].dir} is missing" in problems[0]
    assert f"{root}/{m.batches[1].dir}/docs holds 0" in problems[1]
    with pytest.raises(IndexStoreError) as info:
        check_index(str(root))
    assert str(info.value) == (
        f"index {str(root)!r} is damaged: {problems[0]} (and 1 more: "
        f"`neardup index check {root}` lists them)"
    )


def test_a_manifest_that_is_not_utf8_is_damaged(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / MANIFEST).write_bytes(b'{"format": "\xff\xfe')
    with pytest.raises(IndexStoreError, match=f"{MANIFEST} is damaged .not UTF-8"):
        open_index(str(tmp_path / "idx"))


class _JavaException:
    def __init__(self, text: str) -> None:
        self.text = text

    def toString(self) -> str:  # noqa: N802 (py4j's name)
        return self.text


class _Py4JJavaError(Exception):
    """What py4j raises for a JVM exception: a ``java_exception`` and a long message."""

    def __init__(self, text: str) -> None:
        super().__init__(f"An error occurred while calling o42.toByteArray.\n: {text}\n\tat x")
        self.java_exception = _JavaException(f"{text}\n\tat org.apache.hadoop.fs.Y")


class _ReadFails:
    """A storage whose reads raise ``error`` (as Hadoop's do through py4j)."""

    def __init__(self, inner: ArrowStorage, error: Exception) -> None:
        self.inner, self.error = inner, error

    def kind(self, path: str) -> Any:
        return self.inner.kind(path)

    def read_bytes(self, path: str) -> bytes | None:
        raise self.error

    def write_bytes(self, path: str, data: bytes) -> None:
        raise AssertionError("no writes")

    def delete(self, path: str) -> None:
        raise AssertionError("no deletes")

    def list(self, path: str) -> list[str]:
        return self.inner.list(path)


def test_a_manifest_failing_its_checksum_is_damaged(tmp_path: Path) -> None:
    """Hadoop's local filesystem checks a file against its ``.crc`` sidecar: a manifest
    changed behind it (truncated by hand) fails the read with a ChecksumException."""
    root = tmp_path / "idx"
    write_index(root, [("b1", 2, 0)])
    checksum = "org.apache.hadoop.fs.ChecksumException: Checksum error: file:/x at 0 exp: 1 got: 2"
    store = _ReadFails(ArrowStorage(str(root)), _Py4JJavaError(checksum))
    with pytest.raises(IndexStoreError) as info:
        open_index(str(root), store)
    assert str(info.value) == (
        f"index manifest {root}/{MANIFEST} is damaged: its bytes do not match their checksum "
        f"({checksum}); restore it from a copy or rebuild the index"
    )
    result = inspect_index(str(root), store)
    assert result.manifest is None and result.problems == (str(info.value),)
    other = _ReadFails(ArrowStorage(str(root)), _Py4JJavaError("java.io.IOException: gone"))
    with pytest.raises(IndexStoreError, match=r"cannot read index manifest .*: java.io.IOExc"):
        check_index(str(root), other)
    denied = _ReadFails(ArrowStorage(str(root)), PermissionError("permission denied"))
    with pytest.raises(IndexStoreError, match="cannot read index manifest .*permission denied"):
        check_index(str(root), denied)
    with pytest.raises(RuntimeError, match="a bug"):  # not a read error: not hidden
        check_index(str(root), _ReadFails(ArrowStorage(str(root)), RuntimeError("a bug")))


def test_batches_committed_before_contents_were_recorded(tmp_path: Path) -> None:
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 2), ("b2", 4, 0)], record=False)
    assert [b["contents"] for b in json.loads((root / MANIFEST).read_text())["batches"]] == [
        None,
        None,
    ]
    result = inspect_index(str(root))
    assert result.ok and (result.verified, result.present) == (0, 2)
    _add_docs_file(root, m)  # not recorded: not found
    assert inspect_index(str(root)).ok
    (root / m.batches[0].dir / "rejects" / "part-00000.parquet").unlink()
    for part in (root / m.batches[1].dir / "keys").rglob("part-*"):
        part.unlink()
    assert inspect_index(str(root)).problems == (
        f"batch 'b1': {root}/{m.batches[0].dir}/rejects holds no data files, but the batch "
        "has 2 rejects",
        f"batch 'b2': {root}/{m.batches[1].dir}/keys holds no data files, but the batch has "
        "4 documents",
    )


class _NamesOnly(_ReadFails):
    """A storage layer that lists names but no sizes (neither Hadoop's nor pyarrow's)."""

    def read_bytes(self, path: str) -> bytes | None:
        return self.inner.read_bytes(path)


def test_a_storage_without_sizes_checks_the_presence_of_data_files(tmp_path: Path) -> None:
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 0), ("b2", 4, 0)])
    store = _NamesOnly(ArrowStorage(str(root)), RuntimeError())
    result = inspect_index(str(root), store)
    assert result.ok and (result.verified, result.present) == (0, 2)
    _drop_docs_file(root, m)
    assert inspect_index(str(root), store).problems == (
        f"batch 'b2': {root}/{m.batches[1].dir}/docs holds no data files, but the batch has "
        "4 documents",
    )


def test_documents_are_counted_from_the_footers_on_request(tmp_path: Path) -> None:
    """``rows`` (neardup index check) counts docs/ rows; a file damaged without changing
    its size passes the fingerprint (names and sizes) but not the footer read."""
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 0), ("b2", 4, 0)])
    raw = json.loads((root / MANIFEST).read_text())
    raw["batches"][1]["documents"], raw["documents"] = 5, 8
    (root / MANIFEST).write_text(json.dumps(raw))
    assert inspect_index(str(root)).ok
    docs = f"{root}/{m.batches[1].dir}/docs"
    assert inspect_index(str(root), rows=True).problems == (
        f"batch 'b2': {docs} holds 4 documents; the manifest records 5",
    )
    part = root / m.batches[0].dir / "docs" / "part-00000.parquet"
    part.write_bytes(b"\0" * part.stat().st_size)
    assert check_index(str(root)).documents == 8  # same names and sizes
    problems = inspect_index(str(root), rows=True).problems
    assert problems[0].startswith(f"batch 'b1': {part} is damaged (not a readable Parquet file")


def _edit(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def apply(d: dict[str, Any]) -> None:
        for key, value in changes.items():
            if key.startswith("b0_"):
                d["batches"][0][key[3:]] = value
            else:
                d[key] = value

    return apply


def _duplicate_batch(d: dict[str, Any]) -> None:
    d["batches"][1]["batch_id"] = d["batches"][0]["batch_id"]


def _drop_kind(d: dict[str, Any]) -> None:
    del d["kind"]


INVALID: list[Any] = [
    pytest.param(_edit(kind="bogus"), "kind must be 'simhash' or 'minhash'", id="kind"),
    pytest.param(_edit(shape={"bands": 0, "rows": 5}), "shape of a minhash index", id="shape"),
    pytest.param(_edit(kind="simhash", shape={"k": 3, "blocks": 3}), "shape of a simhash index",
                 id="simhash-blocks"),
    pytest.param(_edit(normalization="html"), "normalization must be one of", id="normalize"),
    pytest.param(_edit(generation=True), "generation must be a non-negative", id="generation"),
    pytest.param(_edit(preset=""), "preset must be a non-empty string", id="preset"),
    pytest.param(_edit(documents=99), "documents is 99, but its batches hold 7", id="total"),
    pytest.param(_edit(b0_dir="../../home/me"), "dir must be batches/NNNNN-", id="dir-outside"),
    pytest.param(_edit(b0_dir="batches/00002-0123456789ab"), "not the folder of batch number 1",
                 id="dir-number"),
    pytest.param(_edit(b0_documents="3"), "documents must be a non-negative integer",
                 id="documents"),
    pytest.param(_edit(b0_rejected=-1), "rejected must be a non-negative integer", id="rejected"),
    pytest.param(_edit(b0_number=0), "number must be an integer in [1, 2**31)", id="number"),
    pytest.param(_edit(b0_contents={"other": {"files": 1, "bytes": 2, "digest": "x"}}),
                 "contents names 'other'", id="contents-folder"),
    pytest.param(_edit(b0_contents={"docs": {"files": 1}}), "not a valid index manifest",
                 id="contents-fields"),
    pytest.param(_edit(b0_contents={"docs": {"files": -1, "bytes": 2, "digest": "x"}}),
                 "contents of 'docs' must be", id="contents-values"),
    pytest.param(_edit(batches=["x"]), "a batch is a JSON object", id="batch-type"),
    pytest.param(_duplicate_batch, "batch_id 'b1' is listed twice", id="duplicate"),
    pytest.param(_drop_kind, "missing 1 required positional argument: 'kind'", id="missing"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "expected"), INVALID)
def test_invalid_manifest_fields_are_errors_naming_the_field(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], expected: str
) -> None:
    root = tmp_path / "idx"
    write_index(root, [("b1", 3, 0), ("b2", 4, 0)])
    raw = json.loads((root / MANIFEST).read_text())
    edit(raw)
    (root / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(IndexStoreError) as info:
        open_index(str(root))
    assert f"{root}/{MANIFEST}" in str(info.value) and expected in str(info.value)
    assert inspect_index(str(root)).problems == (str(info.value),)


def test_a_simhash_manifest_without_blocks_is_valid(tmp_path: Path) -> None:
    """Indexes made before the key scheme was recorded have ``shape = {"k"}``."""
    path = str(tmp_path / "idx")
    commit(path, None, replace(new_manifest("ditto/2", DITTO, max_distance=3), shape={"k": 3}))
    assert dict(open_index(path).shape) == {"k": 3}


def test_remove_uncommitted_deletes_only_folders_the_index_writes(tmp_path: Path) -> None:
    """Whatever a user keeps in batches/ stays: only unlisted folders named as the index
    names its batches (NNNNN-<12 lowercase hex digits>) are removed."""
    root = tmp_path / "idx"
    m = write_index(root, [("b1", 3, 0)])
    batches = root / "batches"
    theirs = [
        "my-notes",
        "00002-0123456789AB",  # not how the index writes its nonce
        "00002-0123456789abc",
        "2-0123456789ab",
        "00002-0123456789ab.bak",
        "00002-xyz",
        "backup",
    ]
    for name in theirs:
        (batches / name).mkdir()
        (batches / name / "keep.txt").write_text(name)
    (batches / "00003-0123456789ab").write_text("a file, not a folder")
    (root / "other-data").mkdir()
    (root / "other-data" / "keep.txt").write_text("x")
    crashed = batches / "00002-0123456789ab"
    (crashed / "docs").mkdir(parents=True)
    (crashed / "docs" / "part-0.parquet").write_bytes(b"partial")

    assert remove_uncommitted(str(root), m) == ["batches/00002-0123456789ab"]
    assert not crashed.exists()
    for name in theirs:
        assert (batches / name / "keep.txt").read_text() == name
    assert (batches / "00003-0123456789ab").is_file()
    assert (root / "other-data" / "keep.txt").exists()
    assert check_index(str(root)) == m  # the committed batch is untouched


def test_batch_names_are_what_next_batch_hands_out() -> None:
    empty = new_manifest("ditto/2", DITTO, max_distance=3)
    for _ in range(20):
        _, rel = next_batch(empty, "x")
        assert is_batch_name(rel.removeprefix("batches/"))
    big = _with_batches(empty, _batch(123456, 1))
    assert is_batch_name(next_batch(big, "y")[1].removeprefix("batches/"))  # 6 digits
    for name in ("", "batches", "my-notes", "00001-", "00001-0123456789ab/docs", "1-0123456789ab"):
        assert not is_batch_name(name)
