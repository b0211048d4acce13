"""The Airflow DAG, conf/airflow/neardup_dag.py: it loads, its tasks run in order with retries,
it submits exactly the spark-submit lines docs/cluster.md shows, and its sensors see the
manifests.

`make test-airflow` runs this in its own venv (.venv-airflow); the main venv has no Airflow,
and `make test` does not collect tests_airflow/.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from itertools import pairwise
from pathlib import Path
from typing import Any

# Airflow reads AIRFLOW_HOME once, when imported (the Makefile sets it under .venv-airflow);
# not ~/airflow, where a developer may have a real one.
os.environ.setdefault("AIRFLOW_HOME", os.path.join(tempfile.gettempdir(), "neardup-airflow-home"))

import pendulum
import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk.execution_time.context import VariableAccessor
from airflow.serialization.serialized_objects import DagSerialization
from airflow.timetables.base import DataInterval, TimeRestriction

ROOT = Path(__file__).resolve().parent.parent
DAG_FOLDER = ROOT / "conf" / "airflow"
DAG_ID = "neardup_crawl_dedup"
LOGICAL_DATE = pendulum.datetime(2026, 11, 30, tz="UTC")
# docs/cluster.md's lines are rendered with the Variables unset (their defaults) and this master.
SPARK_MASTER = "spark://spark-master:7077"
ORDER = ["dedup", "dedup_manifest", "boilerplate", "boilerplate_manifest"]
SPARK_TASKS = ["dedup", "boilerplate"]
SENSORS = ["dedup_manifest", "boilerplate_manifest"]


@pytest.fixture
def dagbag(monkeypatch: pytest.MonkeyPatch) -> DagBag:
    """A fresh parse of the DAG folder (rendering changes tasks in place), with the Spark
    connection given the way a deployment may: an AIRFLOW_CONN_ environment variable."""
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", SPARK_MASTER)
    for name in ("NEARDUP_HOME", "NEARDUP_CRAWL_ROOT", "NEARDUP_OUT_ROOT", "NEARDUP_DRIVER_PYTHON"):
        monkeypatch.delenv(f"AIRFLOW_VAR_{name}", raising=False)
    return DagBag(dag_folder=str(DAG_FOLDER))


@pytest.fixture
def dag(dagbag: DagBag) -> Any:
    return dagbag.dags[DAG_ID]


def context() -> dict[str, Any]:
    """The parts of a worker's task context for the run of LOGICAL_DATE that the DAG uses
    (Variables through Airflow's own accessor)."""
    return {
        "ds": LOGICAL_DATE.strftime("%Y-%m-%d"),
        "logical_date": LOGICAL_DATE,
        "params": {},
        "var": {
            "value": VariableAccessor(deserialize_json=False),
            "json": VariableAccessor(deserialize_json=True),
        },
    }


def render(task: Any) -> None:
    """Render ``task``'s templated fields as a worker would for the run of LOGICAL_DATE."""
    task.render_template_fields(context())


def spark_submit_command(task: SparkSubmitOperator) -> list[str]:
    """The command line ``task.execute`` runs: its hook's, built from the rendered fields."""
    render(task)
    return task._get_hook()._build_spark_submit_command(task.application)


def documented_commands() -> list[list[str]]:
    """The spark-submit lines in docs/cluster.md's fenced block after
    ``<!-- airflow-commands -->``."""
    text = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- airflow-commands -->\s*```[^\n]*\n(.*?)\n```", text, re.S)
    assert match, "docs/cluster.md has no ```-block after <!-- airflow-commands -->"
    lines = match.group(1).replace("\\\n", " ").splitlines()
    return [shlex.split(line) for line in lines if line.strip()]


def test_dag_folder_imports_cleanly(dagbag: DagBag) -> None:
    assert dagbag.import_errors == {}
    assert list(dagbag.dags) == [DAG_ID]
    # warnings raised by the DAG file itself (the providers' own deprecations are theirs)
    ours = [w for ws in dagbag.captured_warnings.values() for w in ws if str(DAG_FOLDER) in w]
    assert ours == []


def test_tasks_order_retries_and_timeouts(dag: Any) -> None:
    assert sorted(dag.task_ids) == sorted(ORDER)
    for before, after in pairwise(ORDER):
        assert dag.get_task(after).upstream_task_ids == {before}
        assert dag.get_task(before).downstream_task_ids == {after}
    assert dag.get_task(ORDER[0]).upstream_task_ids == set()
    assert dag.get_task(ORDER[-1]).downstream_task_ids == set()
    for task_id in SPARK_TASKS:
        task = dag.get_task(task_id)
        assert isinstance(task, SparkSubmitOperator)
        assert task.retries > 0 and task.retry_delay.total_seconds() > 0
        assert task.execution_timeout is not None
        assert task._conn_id == "spark_default"
    for task_id in SENSORS:
        task = dag.get_task(task_id)
        assert isinstance(task, PythonSensor)
        assert task.mode == "reschedule" and 0 < task.timeout <= 3600
    assert dag.catchup is False and dag.max_active_runs == 1


def test_the_run_of_a_day_starts_when_the_day_is_over(dag: Any) -> None:
    """Serialized as the scheduler stores it, the DAG's daily schedule gives the run of
    logical date 2026-11-30 (the partition {{ ds }} = 2026-11-30) at 2026-12-01 00:00 UTC."""
    serialized = DagSerialization.from_dict(DagSerialization.to_dict(dag))
    info = serialized.timetable.next_dagrun_info(
        last_automated_data_interval=DataInterval(LOGICAL_DATE.subtract(days=1), LOGICAL_DATE),
        restriction=TimeRestriction(earliest=dag.start_date, latest=None, catchup=True),
    )
    assert info.logical_date == LOGICAL_DATE
    assert info.run_after == LOGICAL_DATE.add(days=1)
    assert set(serialized.task_ids) == set(ORDER)


def test_spark_submit_commands_are_the_documented_ones(dag: Any) -> None:
    commands = [spark_submit_command(dag.get_task(t)) for t in SPARK_TASKS]
    assert commands == documented_commands()
    dedup, boilerplate = commands
    for command, job in zip(commands, SPARK_TASKS, strict=True):
        assert command[:3] == ["spark-submit", "--master", SPARK_MASTER]
        assert "spark.pyspark.driver.python=/opt/neardup/build/env/bin/python" in command
        assert f"/opt/neardup/jobs/{job}.py" in command
        assert "/opt/neardup/dist/neardup-env.tar.gz#environment" in command
        assert command[-1] == "--no-progress-bar"
        assert "--allow-empty-input" in command  # an empty day is an empty run, not a failure
    assert "/data/crawl/2026-11-30" in dedup and "warc" in dedup
    assert "/data/neardup/2026-11-30/dedup/docs" in boilerplate


def test_sensor_paths_render_to_the_job_outputs(dag: Any) -> None:
    paths = {}
    for task_id in SENSORS:
        render(dag.get_task(task_id))
        paths[task_id] = dag.get_task(task_id).op_kwargs["path"]
    assert paths == {
        "dedup_manifest": "/data/neardup/2026-11-30/dedup/_MANIFEST.json",
        "boilerplate_manifest": "/data/neardup/2026-11-30/boilerplate/_MANIFEST.json",
    }


def test_variables_move_every_path(
    dag: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With neardup_home and neardup_out_root set (as AIRFLOW_VAR_ environment variables
    here), no default path is left, each sensor waits for the manifest of the directory its
    job writes, boilerplate reads dedup's docs/, and a poke is False until the manifest
    exists."""
    monkeypatch.setenv("AIRFLOW_VAR_NEARDUP_HOME", "/srv/neardup")
    monkeypatch.setenv("AIRFLOW_VAR_NEARDUP_OUT_ROOT", str(tmp_path))
    day = tmp_path / "2026-11-30"
    dedup = spark_submit_command(dag.get_task("dedup"))
    boilerplate = spark_submit_command(dag.get_task("boilerplate"))
    for command in (dedup, boilerplate):
        assert not [arg for arg in command if "/opt/neardup" in arg or "/data/neardup" in arg]
        archives = command[command.index("--archives") + 1]
        assert archives == "/srv/neardup/dist/neardup-env.tar.gz#environment"
        assert "spark.pyspark.driver.python=/srv/neardup/build/env/bin/python" in command
    assert dedup[dedup.index("--output") + 1] == str(day / "dedup")
    assert boilerplate[boilerplate.index("--input") + 1] == str(day / "dedup" / "docs")
    assert boilerplate[boilerplate.index("--output") + 1] == str(day / "boilerplate")

    for task_id, output in (("dedup_manifest", "dedup"), ("boilerplate_manifest", "boilerplate")):
        sensor = dag.get_task(task_id)
        render(sensor)
        manifest = day / output / "_MANIFEST.json"
        assert sensor.op_kwargs["path"] == str(manifest)
        assert not sensor.poke(context()).is_done
        (day / output / "docs").mkdir(parents=True)  # outputs written, manifest not yet
        assert not sensor.poke(context()).is_done
        manifest.write_text("{}\n")
        assert sensor.poke(context()).is_done
