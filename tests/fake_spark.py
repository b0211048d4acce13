"""Stand-ins for the parts of a SparkSession that a test without a JVM needs."""

from __future__ import annotations


class FakeConf:
    """``spark.conf`` of a session that is not there: ``get`` from a dict."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)


class FakeConnectSession:
    """A Spark Connect session as ``session.is_connect`` sees one (no SparkContext), with
    ``conf`` values from a dict."""

    __module__ = "pyspark.sql.connect.session"

    def __init__(self, values: dict[str, str]) -> None:
        self.conf = FakeConf(values)
