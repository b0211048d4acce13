"""driver.fork: work cut into runs, each but the first in a forked process of its own, the
results back in order; a failed child's run left to the caller, a named exception raised."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from local_runs import engine_config, streamed, write_lines

from neardup_udfs.driver import blocks, fork
from neardup_udfs.driver.read import Declined
from neardup_udfs.runs import local as local_run


def test_split_cuts_consecutive_runs_as_even_as_can_be() -> None:
    assert fork.split(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert fork.split(2, 5) == [(0, 1), (1, 2)]
    assert fork.split(0, 4) == [(0, 0)]
    for n in range(0, 30):
        for parts in range(1, 8):
            runs = fork.split(n, parts)
            assert runs[0][0] == 0 and runs[-1][1] == n and len(runs) == max(1, min(n, parts))
            assert all(a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))


def _whoami(i: int) -> tuple[int, int]:
    return i, os.getpid()


def test_each_task_runs_in_a_process_of_its_own_in_order() -> None:
    got = fork.in_parts([partial(_whoami, i) for i in range(4)])
    assert [g[0] for g in got if g is not None] == [0, 1, 2, 3]
    pids = [g[1] for g in got if g is not None]
    assert pids[0] == os.getpid() and len(set(pids)) == 4


def _declines() -> int:
    raise Declined("too many")


def _dies() -> int:
    os._exit(3)


def test_a_failed_child_is_none_and_a_named_exception_is_raised() -> None:
    assert fork.in_parts([lambda: 1, _dies, lambda: 3]) == [1, None, 3]
    with pytest.raises(Declined, match="too many"):
        fork.in_parts([lambda: 1, lambda: 2, _declines], raised=(Declined,))
    with pytest.raises(ValueError, match="here"):
        fork.in_parts([partial(int, "here"), lambda: 2])


@pytest.mark.parametrize("master", ["local[1]", "local[3]", "local[4]"])
def test_local_n_starts_n_processes_and_the_rows_do_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, master: str
) -> None:
    """The local engine's streamed read on ``local[N]`` cuts its blocks over N processes
    (more than this machine's cores included), and writes the rows ``local[1]`` writes."""
    streamed(monkeypatch)
    started: list[int] = []
    real = fork.in_parts

    def counted(tasks, **kwargs):  # type: ignore[no-untyped-def]
        started.append(len(tasks))
        return real(tasks, **kwargs)

    monkeypatch.setattr(blocks, "in_parts", counted)
    rows = [{"text": f"words of document {i % 30} " * 20} for i in range(60)]
    src = write_lines(tmp_path / "in.jsonl", rows)
    outs = {}
    for m in ("local[1]", master):
        out = tmp_path / m.replace("[", "-").replace("]", "")  # no glob in an output
        local_run.run_local(engine_config(src, out, id_col=None, text_col="text"),
                            {"spark.master": m})  # fmt: skip
        outs[m] = sorted(pq.read_table(out / "clusters").to_pylist(), key=repr)
    n = int(master[len("local[") : -1])
    assert started == ([] if n == 1 else [n])
    assert outs[master] == outs["local[1]"] and len(outs[master]) == 60


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_the_candidate_pass_runs_its_bands_over_n_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """``local[3]`` cuts the bands (SimHash: the tables) of the candidate pass into three
    runs, two of them in forked processes, and the pairs and clusters are ``local[1]``'s,
    row for row (the pairs' bands included)."""
    from neardup_udfs.driver import near

    monkeypatch.setattr(near, "FORK_MIN_ROWS", 0)  # fork whatever the input's size
    started: list[int] = []
    real = fork.in_parts

    def counted(tasks, **kwargs):  # type: ignore[no-untyped-def]
        started.append(len(tasks))
        return real(tasks, **kwargs)

    monkeypatch.setattr(near, "in_parts", counted)
    words = [f"w{i}" for i in range(400)]
    rows = [
        {"url": f"d{i}", "body": " ".join(words[(i % 7) * 40 : (i % 7) * 40 + 120] + [f"x{i}"])}
        for i in range(70)
    ]
    src = write_lines(tmp_path / "in.jsonl", rows)
    outs = {}
    for m in ("local[1]", "local[3]"):
        started.clear()
        out = tmp_path / m.replace("[", "-").replace("]", "")
        local_run.run_local(engine_config(src, out, method=method), {"spark.master": m})
        tables = ("pairs", "clusters")
        outs[m] = [sorted(pq.read_table(out / t).to_pylist(), key=repr) for t in tables]
        if m == "local[3]":
            assert started == [1, 3]  # the feature pass (one batch: one run), the candidates
    assert outs["local[1]"][0], "no pair found: the corpus must have near-duplicates"
    assert outs["local[3]"] == outs["local[1]"]


def test_the_shingle_pass_gives_each_row_its_set_from_any_number_of_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exact checks' shingle sets on 3 processes: every asked row gets the set one
    process gives it (rows asked out of order and twice included)."""
    import numpy as np
    import pyarrow as pa

    from neardup_udfs.driver import near
    from neardup_udfs.presets import resolve

    monkeypatch.setattr(near, "FORK_MIN_SETS", 0)
    texts = near.TableTexts(pa.array([" ".join(f"w{j}" for j in range(i, i + 9 + i % 5))
                                      for i in range(40)]))  # fmt: skip
    rows = np.array([7, 3, 39, 0, 3, 21, 12, 5, 30, 1, 18], dtype=np.int64)
    pipeline = resolve("semblance")

    def sets_of(workers: int) -> list[list[int]]:
        hashes, offsets, slot = near.ShingledTexts(texts, pipeline, workers).shingle_sets(rows)
        return [hashes[offsets[s] : offsets[s + 1]].tolist() for s in slot]

    one = sets_of(1)
    assert all(one) and one[1] == one[4]  # every text has shingles; a row asked twice
    assert sets_of(3) == one
    assert sets_of(11) == one  # a process a row
