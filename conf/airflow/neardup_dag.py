"""neardup_crawl_dedup: each day's crawl partition, deduplicated, then stripped of boilerplate.

The run of logical date ``ds`` (YYYY-MM-DD) starts once that day is over (data interval
``ds`` to ``ds`` + 1 day, whatever the deployment's ``create_cron_data_intervals``) and
submits to the Spark cluster of the ``spark_default`` connection (client mode by default: the
driver runs on the Airflow worker):

1. ``dedup``: jobs/dedup.py on ``<crawl_root>/<ds>`` (WARC files) -> ``<out_root>/<ds>/dedup``;
2. ``dedup_manifest``: waits for ``<out_root>/<ds>/dedup/_MANIFEST.json``, which the job
   writes last and only on success (a rerun deletes it first);
3. ``boilerplate``: jobs/boilerplate.py on the kept documents (``dedup/docs``, Parquet)
   -> ``<out_root>/<ds>/boilerplate``;
4. ``boilerplate_manifest``: waits for ``<out_root>/<ds>/boilerplate/_MANIFEST.json``.

Both jobs replace their outputs when rerun, so retries and cleared tasks are safe.

Paths are Airflow Variables, read when a task runs (defaults in brackets):
``neardup_home`` [/opt/neardup] (this repository after ``make package``: jobs/, conf/, dist/,
build/env/), ``neardup_crawl_root`` [/data/crawl], ``neardup_out_root`` [/data/neardup], and
``neardup_driver_python`` [<neardup_home>/build/env/bin/python], the driver's interpreter
(``./environment/bin/python`` in cluster deploy mode). The jobs write their outputs from the
driver and the executors, and the sensors read them, so ``out_root`` must be mounted at the
same path on the Airflow workers and every Spark executor.

The file lives in conf/airflow/, not in a top-level dags/ folder: it is deployment
configuration of the jobs, like conf/spark-cluster.conf and the TOML files, versioned and
shipped with the jobs and dist/ it submits; the repository is not an Airflow DAG folder.
Airflow's dags_folder gets a copy or a symlink of this one file (docs/cluster.md,
"Scheduling with Airflow"), and `make test-airflow` loads conf/airflow/ as a DAG folder.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk import DAG, CronDataIntervalTimetable

# Airflow Variables (with their defaults), read by Jinja when a task runs
_HOME = "var.value.get('neardup_home', '/opt/neardup')"
HOME = "{{ " + _HOME + " }}"
PYTHON = "{{ var.value.get('neardup_driver_python', " + _HOME + " ~ '/build/env/bin/python') }}"
CRAWL = "{{ var.value.get('neardup_crawl_root', '/data/crawl') }}/{{ ds }}"
OUT = "{{ var.value.get('neardup_out_root', '/data/neardup') }}/{{ ds }}"


class NeardupSparkSubmitOperator(SparkSubmitOperator):
    """SparkSubmitOperator whose ``archives`` is templated too (the provider's is not)."""

    template_fields = (*SparkSubmitOperator.template_fields, "_archives")


def spark_job(job: str, args: list[str]) -> SparkSubmitOperator:
    """spark-submit of jobs/<job>.py with conf/<job>.toml, the packed env and the package."""
    return NeardupSparkSubmitOperator(
        task_id=job,
        conn_id="spark_default",  # Admin -> Connections: spark://host:7077, yarn, k8s://...
        name=f"neardup-{job}",  # the name the job gives its SparkSession anyway
        properties_file=f"{HOME}/conf/spark-cluster.conf",
        # the driver's Python (client mode: on this worker; spark-cluster.conf sets the
        # executors' to ./environment/bin/python, which only the executors have)
        conf={"spark.pyspark.driver.python": PYTHON},
        archives=f"{HOME}/dist/neardup-env.tar.gz#environment",
        py_files=f"{HOME}/dist/neardup_udfs.zip",
        application=f"{HOME}/jobs/{job}.py",
        application_args=["--config", f"{HOME}/conf/{job}.toml", *args, "--no-progress-bar"],
        execution_timeout=timedelta(hours=6),
    )


def manifest_written(path: str) -> bool:
    """True once ``path``, a job's ``_MANIFEST.json``, exists."""
    return os.path.isfile(path)


def manifest_sensor(task_id: str, output: str) -> PythonSensor:
    """Waits for the success marker of the job that writes ``output``.

    For outputs on S3, use ``S3KeySensor(task_id=..., bucket_key="s3://BUCKET/.../
    _MANIFEST.json", aws_conn_id=...)`` from apache-airflow-providers-amazon instead.
    """
    return PythonSensor(
        task_id=task_id,
        python_callable=manifest_written,
        op_kwargs={"path": f"{output}/_MANIFEST.json"},
        mode="reschedule",  # no worker slot held between pokes
        poke_interval=30,
        timeout=15 * 60,  # normally there at once; this covers a shared filesystem's caching
    )


with DAG(
    dag_id="neardup_crawl_dedup",
    description="near-duplicate removal, then boilerplate removal, of each day's crawl",
    schedule=CronDataIntervalTimetable("@daily", timezone="UTC"),
    start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,  # the runs share one Spark cluster
    default_args={"retries": 2, "retry_delay": timedelta(minutes=10)},
    tags=["neardup"],
    doc_md=__doc__,
):
    # a day the crawler wrote nothing is an empty run with its manifest, not a failed task
    # (without --allow-empty-input an input with no records is an error, exit status 2)
    dedup = spark_job(
        "dedup",
        ["--input", CRAWL, "--input-format", "warc", "--output", f"{OUT}/dedup"]
        + ["--allow-empty-input"],
    )
    dedup_manifest = manifest_sensor("dedup_manifest", f"{OUT}/dedup")
    boilerplate = spark_job(
        "boilerplate",
        ["--input", f"{OUT}/dedup/docs", "--input-format", "parquet", "--id-col", "doc_id"]
        + ["--text-col", "text", "--output", f"{OUT}/boilerplate", "--allow-empty-input"],
    )
    boilerplate_manifest = manifest_sensor("boilerplate_manifest", f"{OUT}/boilerplate")

    dedup >> dedup_manifest >> boilerplate >> boilerplate_manifest
