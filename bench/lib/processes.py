"""Whole Spark processes, timed: ``spark-submit`` (the venv's own when present) with the
benches' flags and no properties file, run in its own session from the repository root, its
output to out/bench_dense/logs/<system>-<i>.log, ended with its whole process group (JVM and
Python workers) past a timeout or a disk floor, so that no Spark process outlives a bench.

Progress goes to stderr, stamped ``[bench_dense HH:MM:SS]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lib.project import ROOT

LOGS = ROOT / "out" / "bench_dense" / "logs"
SPARK_ARGS = ("--master", "local[2]", "--driver-memory", "2g")


def log(message: str) -> None:
    print(f"[bench_dense {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def spark_submit() -> str:
    local = Path(sys.executable).parent / "spark-submit"
    return str(local) if local.exists() else "spark-submit"


def spark_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return env


@dataclass
class Run:
    system: str  # job | job-conf | mllib
    seconds: float
    rc: int
    log: Path
    load: tuple[float, float]  # 1-minute load average before and after


def timed_process(
    system: str, cmd: list[str], index: int, args: argparse.Namespace, timeout: float | None
) -> Run:
    """One whole process, its wall time from start to exit; its output to a log file.

    Its process group (it, its JVM, its Python workers) is ended, and the run counts as
    failed, past ``timeout`` seconds (exit code -1) or when the disk of Spark's local
    directory (shuffle files) has less than ``args.min_free_gb`` left (-2): MLlib's join
    shuffles every candidate pair with both feature vectors, which on dense families can
    outgrow the disk of a shared machine. SIGTERM first, so Spark deletes its local files.
    """
    logs = LOGS
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{system}-{index}.log"
    log(f"{system} run {index}: {' '.join(cmd)}")
    local_dir = os.environ.get("SPARK_LOCAL_DIRS", tempfile.gettempdir()).split(",")[0]
    before = os.getloadavg()[0]
    with open(log_path, "w", encoding="utf-8") as fh:
        started = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=spark_env(), stdout=fh, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            while True:
                try:
                    rc = proc.wait(timeout=2.0)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if timeout and time.perf_counter() - started > timeout:
                    log(f"{system} run {index}: past its timeout of {timeout} s, ending it")
                    rc = -1
                elif shutil.disk_usage(local_dir).free < args.min_free_gb * 1e9:
                    log(f"{system} run {index}: {local_dir} under {args.min_free_gb} GB free")
                    rc = -2
                else:
                    continue
                _end_group(proc)
                break
        except BaseException:  # Ctrl-C: no Spark process outlives the bench
            _end_group(proc)
            raise
        seconds = time.perf_counter() - started
    run = Run(system, seconds, rc, log_path, (before, os.getloadavg()[0]))
    log(f"{system} run {index}: {seconds:.1f} s, exit {rc} (log {log_path})")
    return run


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group started with ``proc`` (its own session), SIGKILL to
    whatever of it is left after 30 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            proc.poll()
            os.killpg(proc.pid, 0)  # ProcessLookupError once the whole group is gone
            time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
