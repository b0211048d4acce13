"""Where a dedup run works, decided in one place, with no Spark: ``local`` (no Spark session:
local JSON lines read, deduplicated and written in the job's own processes), ``driver`` (Spark
reads and writes; the core runs in the driver's process on the collected texts) or ``spark``
(the core as Spark stages). The job, the library and the config checks ask this module, and
report.json's ``engine`` entry is built here, whichever engine ran.

The decision reads plain values: the config, the Spark properties a job was started with or
a session holds (any mapping of ``spark.*`` keys), and the sizes the read measured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only its type: the engine decision imports no config code
    from neardup_udfs.config import DedupConfig

__all__ = [
    "BYTES_PER_DRIVER_EDGE",
    "BYTES_PER_MEMBER",
    "BYTES_PER_RESULT_EDGE",
    "DRIVER_BYTES_PER_DOC",
    "DRIVER_TEXT_COPIES",
    "ENGINES",
    "STREAM_BASE_BYTES",
    "STREAM_BYTES_PER_DOC",
    "config_refusal",
    "core_engine",
    "cores",
    "cluster_on_driver",
    "driver_byte_budget",
    "edge_budget",
    "held_need",
    "library_refusal",
    "local_byte_budget",
    "local_entry",
    "local_refusal",
    "streamed_need",
    "streamed_rows",
    "submitted_conf",
]

ENGINES = ("auto", "local", "driver", "spark")  # config key engine

DRIVER_TEXT_COPIES = 6
"""The driver's (or the local engine's) bytes per byte of accepted text when it holds the
texts (the table, a batch's Python strings and their normalized form, the shingle sets of the
texts with pairs to check; measured: 6.6 on 10,000 long dense documents, 11 on the short
corpus with its ids and sketches counted in)."""

DRIVER_BYTES_PER_DOC = 4096
"""What a held document costs besides its text (its MinHash signature and band keys, its rows
in the buckets it shares, its id)."""

STREAM_BASE_BYTES = 256 << 20
"""The streamed local run's need before its first document: the process with its kernels and
libraries loaded, and the blocks in flight."""

STREAM_BYTES_PER_DOC = 768
"""The streamed local run's need a document: its id, exact key, length and order in memory,
and its share of one band's buckets and of the pairs (measured: 597 bytes at 2,000,000
documents of the scaled corpus, the peak of private memory over the loaded process). Its
sketch, band keys and shingle set wait in mapped scratch files, whose resident pages are
page cache the system can drop."""

# What an edge costs the driver when a graph is finished there. The edges are collected with
# their string ids through Arrow (about 80 bytes an edge for ids of 30 characters) into the
# driver JVM and then the Python driver, which builds the sort's and the greedy pass's arrays
# beside them: 256 bytes of spark.driver.memory an edge, and 128 bytes of
# spark.driver.maxResultSize (Spark fails a collect larger than that).
BYTES_PER_DRIVER_EDGE = 256
BYTES_PER_RESULT_EDGE = 128
# What a document costs the driver when a Spark run's anchored cluster stage runs in the core
# there: its id and its leader's (collected through Arrow, then as Python strings), its
# length and order, its group, place and cluster arrays, and its output row.
BYTES_PER_MEMBER = 1024
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


# --- what the Spark properties give a run -------------------------------------------------


def cores(conf: Mapping[str, str]) -> int:
    """The cores the driver's own process may use, by Spark properties ``conf``: a local
    master's (``local``: 1, ``local[N]`` / ``local[N,F]``: N, ``local[*]`` or no master:
    the machine's), else ``spark.driver.cores`` (default 1). The local engine and the driver
    engine run this many worker processes."""
    master = conf.get("spark.master") or "local[*]"
    if master == "local":
        return 1
    if master.startswith("local["):
        given = master[len("local[") :].split(",")[0].rstrip("]")
        try:
            return (os.cpu_count() or 1) if given == "*" else max(1, int(given))
        except ValueError:
            return 1
    try:
        return max(1, int(conf.get("spark.driver.cores") or "1"))
    except ValueError:
        return 1


def driver_byte_budget(conf: Mapping[str, str]) -> tuple[int, str]:
    """The most bytes a run may hold in its driver (``engine = "auto"`` decides the driver
    engine by it), and where the figure comes from: half the smaller of
    ``spark.driver.memory`` (default 1g) and ``spark.driver.maxResultSize`` (default 1g; 0
    is no limit)."""
    return _driver_share(conf, 2, 2, "")


def local_byte_budget(conf: Mapping[str, str]) -> tuple[int, str]:
    """The most bytes the ``local`` engine may hold, and where the figure comes from: all of
    ``spark.driver.memory`` (default 1g). Its process holds the whole run, in place of the
    local-mode JVM that memory was given to (the JVM ``spark-submit`` started holds nothing
    of it), and nothing is collected, so no result limit applies."""
    memory, given = _bytes(conf, "spark.driver.memory", "1g")
    return memory, f"spark.driver.memory {given}"


def edge_budget(conf: Mapping[str, str]) -> tuple[int, str]:
    """The most edges a run's driver takes whole (anchored clustering's ``max_driver_edges``
    when it is unset), and where the figure comes from: the smaller of
    ``spark.driver.memory`` (default 1g) / :data:`BYTES_PER_DRIVER_EDGE` and
    ``spark.driver.maxResultSize`` (default 1g; 0 is no limit) / :data:`BYTES_PER_RESULT_EDGE`."""
    return _driver_share(conf, BYTES_PER_DRIVER_EDGE, BYTES_PER_RESULT_EDGE, " bytes an edge")


def submitted_conf() -> dict[str, str]:
    """The Spark properties this process was started with, read without starting Spark:
    under ``spark-submit``, the ``spark.*`` system properties of its JVM (its flags, its
    properties file, ``spark-defaults.conf``); else none (pyspark's defaults: local mode)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return {}
    from pyspark.java_gateway import launch_gateway  # only under spark-submit

    props = launch_gateway().jvm.java.lang.System.getProperties()  # connects, starts nothing
    return {str(k): str(props.get(k)) for k in props.keySet() if str(k).startswith("spark.")}


def _bytes(conf: Mapping[str, str], key: str, default: str) -> tuple[int, str]:
    """``key``'s size in bytes and the text given; the default's when unset or unreadable."""
    given = conf.get(key, None) or default
    try:
        return _size(given), given
    except ValueError:
        return _size(default), f"{default} (unreadable {given!r})"


def _size(given: str) -> int:
    """A size as Spark reads it (``512m``, ``2g``; a bare number is MiB); ValueError if none."""
    text = given.strip().lower().rstrip("b")
    unit = _UNITS.get(text[-1:], None)
    return int(text[:-1]) * unit if unit else int(text) * (1 << 20)


def _driver_share(
    conf: Mapping[str, str], of_memory: int, of_results: int, each: str
) -> tuple[int, str]:
    """The smaller of ``spark.driver.memory`` / ``of_memory`` and
    ``spark.driver.maxResultSize`` / ``of_results`` (a result limit of 0 is none), and where
    it comes from (``each`` follows the divisor)."""
    memory, given = _bytes(conf, "spark.driver.memory", "1g")
    budget, source = memory // of_memory, f"spark.driver.memory {given} / {of_memory}{each}"
    results, limit = _bytes(conf, "spark.driver.maxResultSize", "1g")
    if results > 0 and results // of_results < budget:
        budget = results // of_results
        source = f"spark.driver.maxResultSize {limit} / {of_results}{each}"
    return budget, source


def cluster_on_driver(edges: int, documents: int | None, conf: Mapping[str, str],
                      max_driver_edges: int) -> bool:
    """Whether a Spark run's anchored cluster stage runs in the core on the driver: its
    ``edges`` (verified pairs plus index matches) fit ``max_driver_edges`` (the edge budget)
    and its ``documents`` (None: not counted) fit :func:`driver_byte_budget` at
    :data:`BYTES_PER_MEMBER` each.
    Otherwise the stage runs as Spark stages (the parallel rounds when the edges do not
    fit)."""
    if documents is None or edges > max_driver_edges:
        return False
    return documents * BYTES_PER_MEMBER <= driver_byte_budget(conf)[0]


# --- what a run needs ---------------------------------------------------------------------


def held_need(text_bytes: int, documents: int) -> int:
    """The bytes a run needs to hold ``documents`` accepted texts of ``text_bytes`` UTF-8
    bytes in one process (the driver engine, the local engine's held read)."""
    return DRIVER_TEXT_COPIES * text_bytes + DRIVER_BYTES_PER_DOC * documents


def streamed_need(documents: int) -> int:
    """The bytes the local engine's streamed read needs for ``documents`` accepted rows."""
    return STREAM_BASE_BYTES + STREAM_BYTES_PER_DOC * documents


def streamed_rows(budget: int) -> int:
    """The most accepted rows a streamed local read of ``budget`` bytes holds."""
    return max(0, budget - STREAM_BASE_BYTES) // STREAM_BYTES_PER_DOC


# --- the decisions ------------------------------------------------------------------------


def config_refusal(config: DedupConfig) -> tuple[str, str] | None:
    """(config key, why) when the config's ``engine`` cannot run the rest of the config,
    whatever the input; None when it can."""
    engine = config.engine
    if engine in ("local", "driver") and config.clustering != "anchored":
        return "engine", f"{engine!r} clusters anchored only (clustering 'connected': spark)"
    if engine in ("local", "driver") and config.against:
        return "engine", f"{engine!r} does not match an index (against): use auto or spark"
    if engine != "local":
        return None
    if config.input_format != "jsonl":
        return "engine", "'local' reads JSON lines only (input_format 'jsonl')"
    if config.input_table is not None:
        return "engine", "'local' reads JSON lines files, not a table (input_table)"
    if config.output_table_prefix is not None:
        return "engine", "'local' writes folders, not tables (output_table_prefix)"
    return None


def library_refusal(engine: str | None) -> str | None:
    """Why ``dedup(df)`` (a caller's DataFrame on a caller's session) cannot run on
    ``engine``; None when it can."""
    if engine == "local":
        return (
            "engine: 'local' reads JSON-lines files (the dedup job); dedup(df) runs on its "
            "session: use 'auto', 'driver' or 'spark'"
        )
    return None


def local_refusal(config: DedupConfig, conf: Mapping[str, str]) -> str | None:
    """Why ``config`` cannot run on the ``local`` engine in a job started with Spark
    properties ``conf`` (:func:`submitted_conf`); None when it can be tried.

    Notes:
        It can when the engine is ``auto`` or ``local``, clustering is anchored, there is no
        ``against``, no table is read or written, the input is JSON lines, the master is
        ``local`` / ``local[N]``, and the input, the output and the checkpoint directory are
        on the local filesystem (a path without a scheme counts only where no Hadoop
        configuration could make another filesystem the default).
    """
    if config.engine not in ("auto", "local"):
        return f"config key engine = {config.engine!r}"
    if config.clustering != "anchored":
        return "connected clustering runs on Spark stages"
    if config.against:
        return "matching an index (against) runs on Spark stages"
    if config.input_table or config.output_table_prefix:
        return "metastore tables are read and written through Spark's catalog"
    if config.input_format != "jsonl":
        return f"input format {config.input_format!r} is read by Spark"
    master = conf.get("spark.master", "local[*]")
    if master != "local" and not master.startswith("local["):
        return f"the master is {master!r}, not local"
    default_fs = conf.get("spark.hadoop.fs.defaultFS", "")
    hadoop_conf = os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")
    for key in ("input", "output", "checkpoint_dir"):
        path = getattr(config, key)
        if not path:
            continue
        if "://" in path and not path.startswith("file:"):
            return f"{key} {path!r} is not on the local filesystem"
        if not path.startswith("file:") and (
            (default_fs and not default_fs.startswith("file:")) or hadoop_conf
        ):
            return f"{key} {path!r} names the default filesystem, which Hadoop's configuration sets"
    if any(k.startswith("spark.hadoop.fs.") and k != "spark.hadoop.fs.defaultFS" for k in conf):
        return "the job sets Hadoop filesystem properties"
    return None


def core_engine(
    config: DedupConfig, text_bytes: int, documents: int, conf: Mapping[str, str]
) -> dict[str, Any]:
    """Where a Spark run's core runs, as report.json's ``engine``: ``engine`` (``driver`` or
    ``spark``) and ``why``; under ``auto`` also the driver's budget and the run's need.
    ``text_bytes`` and ``documents``: the accepted rows the read measured; ``conf``: the
    session's Spark properties.

    Notes:
        ``auto`` picks the driver for an anchored run without ``against`` whose
        :func:`held_need` fits :func:`driver_byte_budget`.
    """
    if config.engine != "auto":
        return {"engine": config.engine, "why": f"config key engine = {config.engine!r}"}
    if config.clustering != "anchored" or config.against:
        why = "connected clustering" if config.clustering != "anchored" else "against an index"
        return {"engine": "spark", "why": f"{why} runs on Spark stages"}
    budget, source = driver_byte_budget(conf)
    need = held_need(text_bytes, documents)
    fits = need <= budget
    return {
        "engine": "driver" if fits else "spark",
        "why": "the accepted texts fit the driver's budget"
        if fits
        else "the accepted texts exceed the driver's budget",
        "need_bytes": need,
        "driver_budget_bytes": budget,
        "budget_from": source,
    }


def local_entry(read: str, need: int, budget: int, source: str) -> dict[str, Any]:
    """report.json ``engine`` of a local run whose input was ``held`` or ``streamed``."""
    why = {
        "held": "a local-mode job on local JSON lines whose texts fit the driver's budget",
        "streamed": "a local-mode job on local JSON lines: their texts exceed the driver's "
        "budget, their sketches fit it (read a block at a time)",
    }
    return {
        "engine": "local",
        "why": why[read],
        "input": read,
        "need_bytes": need,
        "driver_budget_bytes": budget,
        "budget_from": source,
    }
