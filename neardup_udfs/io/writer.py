"""The output folder of a run, written: claimed before any data is read (never over an input
or a user's files), then each output frame written as Parquet, stale outputs of an earlier
run of the same job removed first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from neardup_udfs.io.outputs import OutputClaim, claim_output
from neardup_udfs.io.storage import HadoopStorage, Storage, join

if TYPE_CHECKING:
    from neardup_udfs.config import RunConfig
    from neardup_udfs.runtime import RunScope

__all__ = ["claim_run_output", "write_frames"]


def write_frames(
    store: Storage,
    output: str,
    frames: Mapping[str, DataFrame],
    wanted: Iterable[str],
    every: Iterable[str],
) -> None:
    """Write the ``wanted`` frames as parquet under ``output``, after removing (through
    ``store``) every output directory the job can write (``every``), so a rerun never leaves
    stale outputs behind. Call it only on an output the run claimed (:func:`claim_run_output`
    proved each of ``every`` present there is a folder of the job's own)."""
    for name in every:
        store.delete(join(output, name))
    for name in wanted:
        frames[name].write.mode("overwrite").parquet(join(output, name))


def claim_run_output(
    store: HadoopStorage,
    config: RunConfig,
    run: RunScope,
    *,
    job: str,
    names: Iterable[str],
    also: Sequence[tuple[str, str | None]] = (),
    keep_existing: bool = False,
) -> OutputClaim:
    """Claim ``config.output`` for ``run`` before any data is read (``outputs.claim_output``:
    refused, as an :class:`InputError` naming the path, when it is, contains or lies inside
    the input (``config.input``, named ``input``) or one of ``also`` ((setting, location)
    pairs; None or empty entries are skipped), lies under a regular file, holds one of
    ``names`` or a report that neardup did not write, is locked by a live run, or cannot be
    written; with ``keep_existing``, when it holds any of ``names``). The claim's lock is
    released when ``run`` ends, whatever its outcome; the previous run's ``_MANIFEST.json``
    is removed, so a run that fails leaves no success marker."""
    inputs = [("input", config.input or None), *also]
    claim = claim_output(
        store, config.output, job=job, names=names, inputs=inputs, keep_existing=keep_existing
    )
    run.exits.append(claim.release)
    return claim
