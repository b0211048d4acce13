"""The dedup job on a real Spark standalone cluster (a master and three 1-core workers on
127.0.0.1, started from the installed pyspark), shipped as README "Running on a cluster" says:
``make package``'s archive and zip with conf/spark-cluster.conf. The executors must run the
archive's interpreter on every worker, and the result must equal the local engine's run although
a worker is killed mid-job."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pyspark
import pytest
from dedup_corpus import planted
from spark_settings import QUICK_JVM

# make package and the jobs take minutes on a loaded 2-core machine: past the default timeout
pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.spark, pytest.mark.timeout(2400)]

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
ENV_ARCHIVE, PY_FILES = "neardup-env.tar.gz", "neardup_udfs.zip"
JOB_TIMEOUT = 900  # seconds; a loaded 2-core machine runs the job in 1-4 minutes
LOG4J = f"-Dlog4j2.configurationFile=file:{ROOT / 'conf' / 'log4j2.properties'}"
# the dedup stages before the cluster stage's lineage cuts: Spark recomputes what a lost
# executor held; from the cluster stage on, the run's cuts are reliable checkpoints (the
# cluster run sets --checkpoint-dir), which a lost executor does not take with it
RECOMPUTABLE = ("read", "fingerprint", "pairs")
SHARED_OBJECT = re.compile(r"\.so(\.[0-9.]+)?$")


# --- processes ------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        ppid = int(text[text.rindex(")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(stat.parent.name))
    return kids


def _tree(*roots: int) -> list[int]:
    """``roots`` and all their descendants (parents first)."""
    kids, out, todo = _children(), [], list(roots)
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _ours(marker: str) -> list[int]:
    """Live processes whose command line or working directory mentions ``marker``."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            cwd = ""
        if marker in cwd or any(marker in a for a in _cmdline(int(proc.name))):
            found.append(int(proc.name))
    return found


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    java_tmp = tmp / "java-tmp"
    java_tmp.mkdir(exist_ok=True)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",  # not the host name's address: everything on loopback
        SPARK_LOCAL_DIRS=str(tmp / "spark-local"),  # shuffle and block files
        # every JVM's scratch (master, workers, executors, the driver): Spark copies the
        # --archives file (180 MB) into a java.io.tmpdir directory of the driver and of each
        # executor and never removes it (docs/cluster.md), so here it is the test's to remove;
        # and the quick JVM options of every JVM the tests start (spark_settings.QUICK_JVM)
        JAVA_TOOL_OPTIONS=f"-Djava.io.tmpdir={java_tmp} {QUICK_JVM}",
        # local mode's Python workers; a cluster run must ignore it (spark.pyspark.python)
        PYSPARK_PYTHON=sys.executable,
    )
    return env


# --- the cluster ----------------------------------------------------------------------------


@dataclass
class Worker:
    name: str
    work_dir: Path
    proc: subprocess.Popen[bytes]

    def executor_ids(self) -> set[str]:
        """Ids of the executors this worker runs now (its CoarseGrainedExecutorBackend JVMs)."""
        ids = set()
        for pid in _tree(self.proc.pid):
            args = _cmdline(pid)
            if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in args:
                ids.add(args[args.index("--executor-id") + 1])
        return ids


@dataclass
class Cluster:
    root: Path
    env: dict[str, str]
    master_port: int
    master_ui: int
    master: subprocess.Popen[bytes] | None = None
    workers: list[Worker] = field(default_factory=list)
    others: list[subprocess.Popen[bytes]] = field(default_factory=list)  # drivers

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = _get_json(f"http://127.0.0.1:{self.master_ui}/json/")
        return state

    def _spawn(self, name: str, *args: str, **env: str) -> subprocess.Popen[bytes]:
        cmd = [str(SPARK_HOME / "bin" / "spark-class"), *args]
        with open(self.root / f"{name}.log", "wb") as log:  # the process keeps its own copy
            return subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**self.env, **env},
                cwd=self.root,
                start_new_session=True,
            )

    def _wait(self, what: str, ok: Callable[[dict[str, Any]], bool], timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in [self.master, *(w.proc for w in self.workers)]:
                assert p is not None and p.poll() is None, f"a cluster process died: {self.logs()}"
            try:
                if ok(self.state()):
                    return
            except (OSError, ValueError):  # the web UI is not up yet
                pass
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}: {self.logs()}")

    def start(self, n_workers: int = 2) -> None:
        daemon = {"SPARK_DAEMON_MEMORY": "512m"}
        self.master = self._spawn(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.master_port)),
            *("--webui-port", str(self.master_ui)),
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",  # no fixed port 6066
            **daemon,
        )
        # workers that start before the master is ALIVE retry only ~10 s later
        self._wait("the master", lambda s: s.get("status") == "ALIVE")
        ports = _free_ports(2 * n_workers)
        for i in range(n_workers):
            name, port, ui = f"worker{i + 1}", ports[2 * i], ports[2 * i + 1]
            work = self.root / name
            work.mkdir()
            proc = self._spawn(
                name,
                "org.apache.spark.deploy.worker.Worker",
                *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)),
                *("--cores", "1", "--memory", "1g", "--work-dir", str(work)),
                self.url,
                SPARK_LOCAL_DIRS=str(self.root / f"{name}-local"),
                **daemon,
            )
            self.workers.append(Worker(name, work, proc))
        self._wait(
            f"{n_workers} ALIVE workers",
            lambda s: sum(w["state"] == "ALIVE" for w in s["workers"]) == n_workers,
        )

    def kill_worker(self, worker: Worker) -> list[int]:
        """SIGKILL the worker's JVM, its executor and the executor's Python workers at once."""
        pids = _tree(worker.proc.pid)  # before any dies: orphans would leave the tree
        _kill(pids)
        worker.proc.wait(timeout=30)
        return pids

    def stop(self) -> None:
        roots = [p.pid for p in [self.master, *(w.proc for w in self.workers), *self.others] if p]
        _kill(_tree(*roots))
        for p in [self.master, *(w.proc for w in self.workers), *self.others]:
            if p is not None:
                p.wait(timeout=30)
        _kill(_ours(str(self.root)))  # orphans of a killed parent, if any

    def logs(self) -> str:
        parts = []
        for log in sorted(self.root.glob("*.log")):
            parts.append(f"--- {log.name}\n{log.read_text(errors='replace')[-1500:]}")
        return "\n".join(parts)


def _archive_copies() -> set[Path]:
    """Directories of the machine's temporary directory holding a copy of the archive, which
    Spark makes under java.io.tmpdir and leaves (docs/cluster.md)."""
    return {p.parent for p in Path(tempfile.gettempdir()).glob(f"spark-*/{ENV_ARCHIVE}")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the module; its one dedup run kills two of the three workers (so that
    test stays last in the file)."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    copies_before = _archive_copies()
    master_port, master_ui = _free_ports(2)
    c = Cluster(tmp_path / "cluster", _env(tmp_path), master_port, master_ui)
    c.root.mkdir()
    try:
        c.start(n_workers=3)
        yield c
    finally:
        c.stop()
        deadline = time.monotonic() + 10
        while (left := _ours(str(tmp_path))) and time.monotonic() < deadline:
            time.sleep(0.2)  # killed, not yet gone
        # the unpacked environments (~650 MB each) and fetched archives; the logs stay
        for big in [
            *c.root.glob("worker*/app-*/*/environment"),
            *c.root.glob("*-local"),
            tmp_path / "java-tmp",
        ]:
            shutil.rmtree(big, ignore_errors=True)
        assert not left, f"processes left behind: {[_cmdline(p)[:3] for p in left]}"
        # nothing of the run's in the machine's /tmp: the archive's copies were in java-tmp
        assert not [d for d in _archive_copies() if d not in copies_before]


# --- the artifacts, the corpus and the local engine's reference ------------------------------


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make package`` (a no-op when dist/ is up to date), its cluster artifacts linked into
    a private directory: a concurrent rebuild replaces dist/ files, never these."""
    (ROOT / "build").mkdir(exist_ok=True)
    out = tmp_path_factory.mktemp("dist")
    with open(ROOT / "build" / ".package.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one `make package` at a time
        res = subprocess.run(
            # -o: never reinstall the dev venv this test runs in (make test has done it)
            ["make", "-o", ".venv/.installed", "package"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        for name in (ENV_ARCHIVE, PY_FILES):
            try:
                os.link(ROOT / "dist" / name, out / name)
            except OSError:
                shutil.copy2(ROOT / "dist" / name, out / name)
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """157 documents, 30 planted near-duplicate families, as JSON lines (``id``, ``text``) in
    8 files: several input splits and tasks per stage."""
    d = tmp_path_factory.mktemp("corpus")
    docs = planted(n_families=30, n_singles=60, seed=7).docs
    for part in range(8):
        lines = [json.dumps({"id": i, "text": t}) + "\n" for i, t in docs[part::8]]
        (d / f"part-{part}.jsonl").write_text("".join(lines), encoding="utf-8")
    return d


def _job_args(corpus: Path, out: Path) -> list[str]:
    return [
        str(ROOT / "jobs" / "dedup.py"),
        *("--config", str(ROOT / "conf" / "dedup.toml")),
        *("--input", str(corpus), "--input-format", "jsonl", "--id-col", "id"),
        *("--output", str(out)),
    ]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """The reference: the same job on the local engine (one process, no Spark), which gives
    every engine's rows (the fast tier holds the engines to that)."""
    tmp = tmp_path_factory.mktemp("local")
    out = tmp / "out"
    cmd = [sys.executable, *_job_args(corpus, out), "--engine", "local"]
    res = subprocess.run(
        cmd, capture_output=True, text=True, env=_env(tmp), cwd=tmp, timeout=JOB_TIMEOUT
    )
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["engine"]["engine"] == "local" and report["spark"]["jobs"] == 0
    return out


def _submit(
    cluster: Cluster, dist: Path, corpus: Path, out: Path, ui_port: int, engine: str = "spark"
) -> Path:
    """spark-submit the dedup job in client mode as README "Running on a cluster" does, on
    ``engine`` (``spark``: the Spark stages, whose executors the test kills); returns the
    driver's log (stdout and stderr)."""
    cmd = [
        str(SPARK_HOME / "bin" / "spark-submit"),
        *("--master", cluster.url, "--properties-file", str(ROOT / "conf" / "spark-cluster.conf")),
        # client mode: the driver runs here, with the runtime env the archive was packed from
        *("--conf", f"spark.pyspark.driver.python={ROOT / 'build' / 'env' / 'bin' / 'python'}"),
        # this cluster has 2 cores: 2x, per the conf's rule of thumb
        *("--conf", "spark.sql.shuffle.partitions=4"),
        *("--conf", f"spark.ui.port={ui_port}", "--driver-java-options", LOG4J),
        *("--archives", f"{dist / ENV_ARCHIVE}#environment", "--py-files", str(dist / PY_FILES)),
        *_job_args(corpus, out),
        # reliable lineage cuts, and clustering rounds (not the driver) to cut lineage in
        *("--checkpoint-dir", str(out.parent / "checkpoints"), "--max-driver-edges", "0"),
        *("--engine", engine),
    ]
    log = out.parent / f"{out.name}-{engine}-driver.log"
    with open(log, "wb") as fh:
        # from a directory without ./environment or neardup_udfs in it
        proc = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=cluster.env,
            cwd=out.parent,
            start_new_session=True,
        )
    cluster.others.append(proc)
    return log


def _driver(cluster: Cluster) -> subprocess.Popen[bytes]:
    return cluster.others[-1]


def _frames(out: Path) -> dict[str, pd.DataFrame]:
    return {
        name: pq.read_table(out / name).to_pandas().sort_values("doc_id", ignore_index=True)
        for name in ("clusters", "docs")
    }


def _assert_same_result(out: Path, reference: Path, in_rounds: bool = True) -> None:
    """``out`` holds the reference's clusters, docs and counts; ``in_rounds``: its run
    clustered in rounds (--max-driver-edges 0), the reference on the driver."""
    assert (out / "_MANIFEST.json").exists()
    got, want = _frames(out), _frames(reference)
    for name in want:
        assert len(want[name]) > 0
        pd.testing.assert_frame_equal(got[name], want[name], check_exact=True)
    counts = [json.loads((d / "_MANIFEST.json").read_text())["counts"] for d in (out, reference)]
    how = ("rounds", "driver_edges")
    assert {k: v for k, v in counts[0].items() if k not in how} == {
        k: v for k, v in counts[1].items() if k not in how
    }
    if in_rounds:
        assert counts[0]["rounds"] >= 1 and counts[0]["driver_edges"] == 0
    assert counts[1]["clusters"] >= 20  # the planted families were found: not a vacuous match


# --- Python workers, seen from /proc ---------------------------------------------------------


@dataclass
class PythonWorker:
    exe: str  # argv[0]
    cwd: str
    pythonpath: str
    site_packages: set[str] = field(default_factory=set)  # mapped .so files in site-packages


def _python_workers(cluster: Cluster, seen: dict[int, PythonWorker]) -> None:
    """Add (or update) every Python worker process the cluster's workers run now."""
    for pid in _tree(*(w.proc.pid for w in cluster.workers)):
        args = _cmdline(pid)
        if "pyspark.daemon" not in args and "pyspark.worker" not in args:
            continue
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
            env = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        pythonpath = next((v[11:] for v in env.split("\0") if v.startswith("PYTHONPATH=")), "")
        w = seen.setdefault(pid, PythonWorker(args[0], cwd, pythonpath))
        paths = {line.split()[-1] for line in maps.splitlines() if "/site-packages/" in line}
        w.site_packages.update(p for p in paths if SHARED_OBJECT.search(p))


def _workers_of(cluster: Cluster, seen: dict[int, PythonWorker]) -> set[str]:
    """The cluster workers (``worker1``, ...) whose executors have run a Python worker
    (``?`` for one running outside the cluster's directories: the test then fails on it)."""
    cwds = [Path(w.cwd) for w in list(seen.values())]
    return {
        c.relative_to(cluster.root).parts[0] if c.is_relative_to(cluster.root) else "?"
        for c in cwds
    }


# --- the tests ------------------------------------------------------------------------------


def test_archive_holds_a_runtime_env_without_pyspark(dist: Path) -> None:
    with tarfile.open(dist / ENV_ARCHIVE) as tar:
        members = {m.name: m for m in tar.getmembers()}
    (init,) = [
        n
        for n in members
        if re.fullmatch(r"lib/python3\.\d+/site-packages/neardup_udfs/__init__\.py", n)
    ]
    site = init.removesuffix("/neardup_udfs/__init__.py")
    for package in ("neardup_udfs", "numpy", "pandas", "pyarrow", "numba", "xxhash"):
        assert f"{site}/{package}/__init__.py" in members, package
    assert not [n for n in members if n.startswith((f"{site}/pyspark", f"{site}/py4j"))]
    # nor in the env it packs: make package neither builds (1.5 GB) nor installs pyspark
    assert not list((ROOT / "build" / "env").glob("lib/python3.*/site-packages/pyspark*"))
    assert not [n for n in members if n.startswith(f"{site}/pytest")]  # no dev tools
    # venv-pack's known limit: the interpreter is a link to the Python that built the env
    python = members["bin/python3"]
    assert python.issym() and Path(python.linkname).is_absolute(), python.linkname
    with zipfile.ZipFile(dist / PY_FILES) as z:
        names = z.namelist()
    assert "neardup_udfs/__init__.py" in names and "neardup_udfs/data/go_unicode_15.json" in names
    assert all(n.startswith("neardup_udfs/") and "__pycache__" not in n for n in names)


def _stage(log: str) -> str | None:
    """The last dedup stage the driver's log says started."""
    started = re.findall(r"neardup\.dedup stage (\S+): start", log)
    return started[-1] if started else None


def _busy_executors(ui_port: int) -> tuple[list[str], list[str]]:
    """The application's live executors and those running a task now (driver REST API)."""
    try:
        base = f"http://127.0.0.1:{ui_port}/api/v1/applications"
        app = _get_json(base)[0]["id"]
        executors = _get_json(f"{base}/{app}/executors")
    except (OSError, ValueError, IndexError, KeyError):  # the driver's UI is not up yet
        return [], []
    live = [e for e in executors if e["id"] != "driver" and e["isActive"]]
    return [e["id"] for e in live], [e["id"] for e in live if e["activeTasks"] > 0]


def test_dedup_on_the_cluster_uses_the_archive_and_survives_a_worker_killed_mid_job(
    cluster: Cluster, dist: Path, corpus: Path, local_run: Path, tmp_path: Path
) -> None:
    """One cluster run checks three promises: the executors run the shipped archive (on
    every worker), a worker killed mid-job costs recomputation, not the result, and so does
    a second one killed after the clustering rounds' first reliable checkpoint; the result
    equals the local engine's. A rerun into the same output directory then replaces it."""
    out = tmp_path / "cluster-run"
    checkpoints = tmp_path / "checkpoints"
    ui_port = _free_ports(1)[0]
    log = _submit(cluster, dist, corpus, out, ui_port)
    driver = _driver(cluster)
    seen: dict[int, PythonWorker] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            _python_workers(cluster, seen)
            stop.wait(0.3)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    killed: tuple[str, str, str] | None = None  # (worker, executor, stage)
    late: tuple[str, str, str] | None = None  # the second kill, after a reliable checkpoint
    deadline = time.monotonic() + JOB_TIMEOUT
    try:
        # Wait until the workers run executors and Python workers, and the input is read
        # (and persisted), then kill a worker whose executor is running a task, while the
        # stage is one Spark can recompute.
        while driver.poll() is None and time.monotonic() < deadline:
            stage = _stage(log.read_text(errors="replace"))
            if stage not in (None, "read"):
                if stage not in RECOMPUTABLE:
                    break  # too late: no chance came (the assert below fails the test)
                live, busy = _busy_executors(ui_port)
                victim = next(
                    (w for w in cluster.workers if busy and busy[0] in w.executor_ids()), None
                )
                ran_python = len(_workers_of(cluster, seen) - {"?"}) >= 2
                if len(live) == 3 and victim is not None and ran_python:
                    cluster.kill_worker(victim)
                    killed = (victim.name, busy[0], stage)
                    break
            time.sleep(0.2)
        text = log.read_text(errors="replace")
        assert killed, f"no executor was busy during stages {RECOMPUTABLE}\n{text[-3000:]}"
        # Then, once the cluster stage has written a reliable checkpoint, kill another
        # worker: the rounds go on reading what it computed before, from the checkpoints.
        while driver.poll() is None and time.monotonic() < deadline:
            stage = _stage(log.read_text(errors="replace"))
            written = checkpoints.is_dir() and any(p.is_file() for p in checkpoints.rglob("*"))
            if stage == "cluster" and written:
                live, _ = _busy_executors(ui_port)
                victim = next(
                    (w for w in cluster.workers if w.proc.poll() is None and live
                     and live[0] in w.executor_ids()), None,
                )  # fmt: skip
                if victim is not None:
                    cluster.kill_worker(victim)
                    late = (victim.name, live[0], stage)
                    break
            time.sleep(0.2)
        text = log.read_text(errors="replace")
        assert late, f"no reliable checkpoint seen in the cluster stage\n{text[-3000:]}"
        # mid-job: the job had not finished (its manifest is written last) ...
        assert driver.poll() is None and not (out / "_MANIFEST.json").exists(), (killed, late)
        rc = driver.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        stop.set()
        watcher.join()
    text = log.read_text(errors="replace")
    assert rc == 0, f"killed {killed}, then {late}\n{text[-4000:]}"

    # The executors ran the archive's interpreter, unpacked in their own working directory,
    # and its packages; none ran this test's venv (which PYSPARK_PYTHON names). pyspark is not
    # in the archive: it came from the Spark installation's python/lib/pyspark.zip.
    assert seen, f"no Python worker seen on the cluster\n{text[-2000:]}"
    for w in seen.values():
        assert w.exe == "./environment/bin/python", w
        assert w.cwd.startswith(str(cluster.root / "worker")), w
        assert f"{SPARK_HOME}/python/lib/pyspark.zip" in w.pythonpath.split(":"), w
        for so in w.site_packages:
            assert so.startswith(f"{w.cwd}/environment/lib/"), (so, w.cwd)
    loaded = {so for w in seen.values() for so in w.site_packages}
    assert any("/site-packages/numpy/" in so for so in loaded), loaded  # the UDFs ran there
    assert any("/site-packages/pyarrow/" in so for so in loaded), loaded

    # ... the driver saw the executor go, Spark recomputed what it held (its cached
    # partitions, its shuffle output), and a later stage ran after the killed one
    assert f"Lost executor {killed[1]}" in text, text[-3000:]
    recomputed = r"No more replicas available for rdd_|FetchFailed|Resubmitted"
    assert re.search(recomputed, text), text[-3000:]
    stages = re.findall(r"neardup\.dedup stage (\S+): start", text)
    assert stages.index(killed[2]) < len(stages) - 1
    # the second: lost after the cluster stage's reliable checkpoints, and the rounds and
    # everything after them still ran (report.json says the cuts were reliable)
    assert f"Lost executor {late[1]}" in text, text[-3000:]
    assert re.search(r"neardup\.anchored round [0-9]+:", text), text[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["spark"]["lineage_cuts"] == "checkpoint", report["spark"]
    state = cluster.state()
    assert sum(w["state"] == "ALIVE" for w in state["workers"]) == 1, state["workers"]
    _assert_same_result(out, local_run)

    # a rerun into the finished output directory (on the one worker left) replaces it; it
    # runs the driver engine (the executors read, the driver settles): the same result
    first = (out / "_MANIFEST.json").stat().st_mtime_ns
    again = _submit(cluster, dist, corpus, out, _free_ports(1)[0], engine="driver")
    rc = _driver(cluster).wait(timeout=JOB_TIMEOUT)
    assert rc == 0, again.read_text(errors="replace")[-3000:]
    assert (out / "_MANIFEST.json").stat().st_mtime_ns > first
    report = json.loads((out / "report.json").read_text())
    assert report["engine"]["engine"] == "driver", report["engine"]
    _assert_same_result(out, local_run, in_rounds=False)
