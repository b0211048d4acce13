"""A run's record: ``report.json``, the pages drawn from it (report.html) and
``_MANIFEST.json``, the success marker written last."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from neardup_udfs import __version__
from neardup_udfs.io.storage import Storage, join

if TYPE_CHECKING:  # only its type: report_files imports no config code
    from neardup_udfs.config import Settings

__all__ = ["MANIFEST_NAME", "counts_of", "report_of", "run_keys", "write_report"]

MANIFEST_NAME = "_MANIFEST.json"  # the success marker every job writes last

_log = logging.getLogger("neardup.report")


def write_report(
    store: Storage,
    output: str,
    job: str,
    *,
    counts: Mapping[str, Any],
    seconds: Mapping[str, float],
    pipeline: tuple[str, str],
    config: Settings,
    pages: Sequence[Callable[[Storage, str, dict[str, Any]], object]] = (),
    **extra: Any,
) -> None:
    """``report.json``, then each of ``pages`` (called with ``store``, ``output`` and the
    report: e.g. report.html), then ``_MANIFEST.json`` (the success marker), all through
    ``store``, the manifest with the same content as report.json: the
    counts, seconds per stage, pipeline id and version, the config, the package version, and
    ``extra`` keys. A page that raises is logged and listed under ``page_errors`` in the
    manifest; the run still succeeds, since every output is already written (``neardup
    report DIR`` rebuilds report.html)."""
    report = report_of(counts=counts, seconds=seconds, pipeline=pipeline, config=config, **extra)
    store.write_bytes(join(output, "report.json"), _json_bytes(report))
    failed = []
    for page in pages:
        try:
            page(store, output, report)
        except Exception as e:  # a page is a view of outputs already written: never lose them
            name = getattr(page, "__name__", repr(page))
            _log.error("%s failed (%s: %s); the outputs are complete", name, type(e).__name__, e)
            failed.append(f"{name}: {type(e).__name__}: {e}")
    manifest = {"job": job, **report, **({"page_errors": failed} if failed else {})}
    store.write_bytes(join(output, MANIFEST_NAME), _json_bytes(manifest))


def report_of(
    *,
    counts: Mapping[str, Any],
    seconds: Mapping[str, float],
    pipeline: tuple[str, str],
    config: Settings,
    **extra: Any,
) -> dict[str, Any]:
    """What report.json holds (:func:`write_report`): the counts, seconds per stage,
    pipeline id and version, the config, the package version, and ``extra`` keys."""
    return {
        "counts": dict(counts),
        "seconds": dict(seconds),
        "pipeline": {"id": pipeline[0], "version": pipeline[1]},
        "config": config.to_dict(),
        "neardup_version": __version__,
        **extra,
    }


def _json_bytes(data: Mapping[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")


def counts_of(summary: Any, *skip: str) -> dict[str, Any]:
    """A job summary dataclass's integer counts (``seconds``, ``pipeline`` and ``skip`` out)."""
    return {
        k: v
        for k, v in asdict(summary).items()
        if k not in ("seconds", "pipeline", "input_stats", *skip)
    }


def run_keys(
    summary: Any, config: Settings, pipeline: tuple[str, str], *skip: str
) -> dict[str, Any]:
    """:func:`report_of`'s keywords every run has, from its summary dataclass: ``counts``
    (its integer fields but ``skip``), ``seconds``, ``pipeline`` (id, version), ``config``
    and ``input`` (the summary's ``input_stats``: rejects by reason, unreadable bytes)."""
    return dict(
        counts=counts_of(summary, *skip),
        seconds=summary.seconds,
        pipeline=pipeline,
        config=config,
        input=summary.input_stats,
    )
