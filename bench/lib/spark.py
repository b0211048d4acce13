"""The benches' in-process SparkSession (local[2], Arrow on, the UI off) and a description of
the machine a figure was measured on."""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any

from pyspark.sql import SparkSession

from neardup_udfs.session import local_session


def start_spark() -> SparkSession:
    """The benches' local[2] session (8 shuffle partitions, Arrow batches of 2,000 rows, 4 GiB
    driver), its log at WARN."""
    spark = local_session(
        "neardup-bench-dedup",
        {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "8",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.sql.execution.arrow.maxRecordsPerBatch": "2000",
            "spark.driver.memory": "4g",
            "spark.sql.session.timeZone": "UTC",
        },
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


def machine() -> dict[str, Any]:
    import pyspark

    free = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    return {
        "nproc": os.cpu_count(),
        "free_h": free.strip(),
        "load_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "java": (java.stderr.splitlines() or ["?"])[0],
        "platform": platform.platform(),
    }
