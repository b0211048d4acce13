"""Metastore tables a job reads or writes (``input_table``, ``output_table_prefix``), through
the session's catalog: on a classic or a Spark Connect session alike.

A table the job writes carries the table property ``neardup.job``; a table without it is
never replaced or dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pyspark.sql import DataFrame, SparkSession

from neardup_udfs.io.readers import InputError

__all__ = ["WRITTEN_BY", "check_output_tables", "read_table", "write_tables"]

WRITTEN_BY = "neardup.job"
"""The table property a job sets on each table it writes (its value: the job's name)."""


def read_table(spark: SparkSession, name: str) -> DataFrame:
    """The metastore table ``name``; InputError naming it when the catalog has none."""
    if not spark.catalog.tableExists(name):
        raise InputError(f"input_table {name!r} does not exist in the session's catalog")
    return spark.table(name)


def _written_by(spark: SparkSession, name: str) -> str | None:
    """The job that wrote the existing table ``name`` (its ``neardup.job`` property), or
    None when neardup did not write it."""
    rows = spark.sql(f"SHOW TBLPROPERTIES {name}").collect()
    found = {r[0]: r[1] for r in rows}
    return found.get(WRITTEN_BY)


def check_output_tables(
    spark: SparkSession, prefix: str, names: Iterable[str], *, job: str, input_table: str | None
) -> None:
    """InputError, before anything is read, unless each table ``prefix + name`` is absent or
    was written by neardup's ``job`` and none is ``input_table``."""
    for name in names:
        table = prefix + name
        if input_table is not None and table.lower() == input_table.lower():
            raise InputError(
                f"output_table_prefix {prefix!r}: the output table {table!r} is the input_table"
            )
        if not spark.catalog.tableExists(table):
            continue
        owner = _written_by(spark, table)
        if owner != job:
            whose = "was not written by neardup" if owner is None else f"was written by {owner}"
            raise InputError(
                f"output_table_prefix {prefix!r}: table {table!r} exists and {whose}: drop it "
                "or choose another prefix (neardup replaces only the tables it wrote)"
            )


def write_tables(
    spark: SparkSession,
    prefix: str,
    frames: Mapping[str, DataFrame],
    wanted: Iterable[str],
    every: Iterable[str],
    *,
    job: str,
) -> dict[str, str]:
    """The ``wanted`` frames written as tables ``prefix + name`` (replaced when they exist),
    each marked as ``job``'s; of the other ``every`` names, a table ``job`` wrote before is
    dropped, so a rerun leaves no stale output. Call it after :func:`check_output_tables`.
    Returns output name -> table name."""
    wanted = tuple(wanted)
    for name in every:
        table = prefix + name
        if name not in wanted and spark.catalog.tableExists(table):
            if _written_by(spark, table) == job:
                spark.sql(f"DROP TABLE {table}")
    written = {}
    for name in wanted:
        table = prefix + name
        frames[name].write.mode("overwrite").saveAsTable(table)
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('{WRITTEN_BY}' = '{job}')")
        written[name] = table
    return written
