"""Every Spark job once through ``spark-submit``, in a JVM of its own, exactly as the Makefile
and README run it: the properties file, the log4j configuration, the job's TOML (and the quick
JVM options of every JVM the tests start). The fast tier
runs the same jobs in process (``run(spark, cfg)``); this tier checks what only a real
submission has: the entry point's argument parsing, the session the job builds for itself, its
exit status, and what it prints.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from spark_settings import QUICK_JVM

pytestmark = [pytest.mark.e2e, pytest.mark.spark, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
SUBMIT_TIMEOUT = 600  # seconds; a loaded 2-core machine submits one job in 20-60 s


def submit(job: str, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """``spark-submit jobs/<job>.py ARGS`` as ``make <job>`` runs it; fails unless it exits
    with ``expect``."""
    cmd = [
        str(Path(sys.executable).parent / "spark-submit"),
        *("--properties-file", str(ROOT / "conf" / "spark-local.conf")),
        "--driver-java-options",  # the tier's JVMs: spark_settings.QUICK_JVM
        f"-Dlog4j2.configurationFile=file:{ROOT / 'conf' / 'log4j2.properties'} {QUICK_JVM}",
        str(ROOT / "jobs" / f"{job}.py"),
        *args,
    ]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=SUBMIT_TIMEOUT)
    assert res.returncode == expect, f"{job}: exit {res.returncode}\n{res.stderr[-3000:]}"
    return res


@pytest.fixture(scope="module")
def dedup_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``make run``: the dedup job on samples/ (its output directory and what it printed)."""
    out = tmp_path_factory.mktemp("submit") / "run"
    res = submit("dedup", "--config", str(ROOT / "conf/dedup.toml"), "--input", str(SAMPLES),
                 "--output", str(out))  # fmt: skip
    return out, res.stdout


def test_dedup_submit_is_make_run(dedup_out: tuple[Path, str]) -> None:
    out, stdout = dedup_out
    n = len(list(SAMPLES.iterdir()))
    assert re.search(rf"^input documents +{n}$", stdout, re.M), stdout
    manifest = json.loads((out / "_MANIFEST.json").read_text())
    counts = manifest["counts"]
    assert counts["kept"] + counts["removed"] + counts["rejected"] == n
    assert counts["clusters"] >= 3 and counts["removed"] >= 3  # the samples' families
    # nobody chose adaptive execution: a small input runs without it
    assert manifest["spark"]["adaptive"] is False
    assert manifest["spark"]["adaptive_from"] == "input size"
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_spans_submit_on_the_dedup_clusters(dedup_out: tuple[Path, str], tmp_path: Path) -> None:
    """``make spans``: winnowing spans of every pair of the clusters ``make run`` found."""
    out = tmp_path / "spans"
    submit("spans", "--config", str(ROOT / "conf/spans.toml"), "--input", str(SAMPLES),
           "--pairs", str(dedup_out[0] / "clusters"), "--output", str(out))  # fmt: skip
    summary = pq.read_table(out / "pair_summary").to_pylist()
    assert summary and all(r["a_id"] != r["b_id"] for r in summary)
    assert (out / "_MANIFEST.json").exists()


def test_boilerplate_submit(tmp_path: Path) -> None:
    """``make boilerplate``: passages shared by several samples, and the cleaned texts."""
    out = tmp_path / "boilerplate"
    submit("boilerplate", "--config", str(ROOT / "conf/boilerplate.toml"),
           "--input", str(SAMPLES), "--output", str(out))  # fmt: skip
    top = pq.read_table(out / "boilerplate_top").to_pylist()
    assert top and all(r["docs"] >= 3 for r in top)
    assert (out / "_MANIFEST.json").exists()


def test_fingerprint_submit(tmp_path: Path) -> None:
    res = submit("fingerprint", "--input", str(SAMPLES), "--output", str(tmp_path / "out"))
    n = len(list(SAMPLES.iterdir()))
    assert f"{n} document(s): {n} fingerprinted, 0 rejected (ditto/2)" in res.stdout


def test_images_submit(tmp_path: Path) -> None:
    """``make images`` on the pHash golden images: the resized and recompressed copies of an
    image end in its cluster."""
    src = tmp_path / "images"
    shutil.copytree(ROOT / "tests" / "golden" / "phash-images", src)
    out = tmp_path / "out"
    submit("images", "--config", str(ROOT / "conf/images.toml"), "--input", str(src),
           "--output", str(out))  # fmt: skip
    clusters = pq.read_table(out / "clusters").to_pylist()
    families: dict[str, set[str]] = {}
    for r in clusters:
        families.setdefault(r["cluster_id"], set()).add(Path(r["path"]).name)
    circle = next(f for f in families.values() if "circle_128.png" in f)
    assert "circle_resized_64.png" in circle
    assert (out / "_MANIFEST.json").exists()


def test_index_submit_build_then_query(tmp_path: Path) -> None:
    """``jobs/index.py build`` over the samples, then ``query`` with the samples themselves:
    every sample finds itself."""
    index = tmp_path / "index"
    submit("index", "build", "--config", str(ROOT / "conf/dedup.toml"), "--input", str(SAMPLES),
           "--index", str(index), "--batch-id", "samples")  # fmt: skip
    assert json.loads((index / "_INDEX.json").read_text())["documents"] >= 6
    out = tmp_path / "query"
    submit("index", "query", "--config", str(ROOT / "conf/dedup.toml"), "--index", str(index),
           "--queries", str(SAMPLES), "--output", str(out))  # fmt: skip
    results = pq.read_table(out / "results").to_pylist()
    by_query: dict[str, dict[str, float]] = {}
    for r in results:
        by_query.setdefault(r["query_id"], {})[r["doc_id"]] = r["similarity"]
    assert len(by_query) == len(list(SAMPLES.iterdir()))  # every sample was a query
    # each finds itself, or a sample of the same text that the index holds in its place
    assert all(1.0 in found.values() for found in by_query.values()), by_query
    assert sum(q in found for q, found in by_query.items()) >= 8


def test_errors_are_one_line_on_the_submitters_stderr(tmp_path: Path) -> None:
    """spark-submit merges the Python driver's stderr into its stdout: the job's error still
    reaches stderr, as one line, with no traceback; the output over the input is refused
    before anything is written (a config error, before Spark starts, likewise)."""
    src = tmp_path / "P" / "docs"
    shutil.copytree(SAMPLES, src)
    before = sorted(p.name for p in src.iterdir())
    res = submit("dedup", "--input", str(src), "--output", str(tmp_path / "P"), expect=2)
    line = f"dedup.py: error: output '{tmp_path / 'P'}' contains input '{src}'"
    errors = [x for x in res.stderr.splitlines() if "error:" in x]
    assert errors and errors[0].startswith(line) and len(errors) == 1, res.stderr
    assert "Traceback" not in res.stderr + res.stdout and "error:" not in res.stdout
    assert sorted(p.name for p in src.iterdir()) == before
    assert sorted(p.name for p in (tmp_path / "P").iterdir()) == ["docs"]
    res = submit("dedup", "--input", str(src), "--output", "o", "--threshold", "7", expect=2)
    assert "dedup.py: error: config key 'threshold'" in res.stderr and not res.stdout.strip()


def test_dedup_submit_on_local_json_lines_starts_no_spark(tmp_path: Path) -> None:
    """A local-mode job on clean local JSON lines runs on the local engine (report.json: no
    Spark job); one malformed line makes it step aside before it writes anything, and the
    job runs on Spark, the line a reject of its own."""
    rows = [{"id": p.name, "text": p.read_text("utf-8", "replace")} for p in SAMPLES.iterdir()]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "local"
    args = ("--config", str(ROOT / "conf/dedup.toml"), "--input-format", "jsonl", "--id-col", "id")
    res = submit("dedup", *args, "--input", str(src), "--output", str(out))
    report = json.loads((out / "_MANIFEST.json").read_text())
    assert report["engine"]["engine"] == "local" and report["spark"]["jobs"] == 0
    assert report["counts"]["kept"] + report["counts"]["removed"] == len(rows)
    assert re.search(rf"^input documents +{len(rows)}$", res.stdout, re.M), res.stdout
    kept = pq.read_table(out / "docs").column("id").to_pylist()
    assert len(kept) == report["counts"]["kept"]

    broken = tmp_path / "broken.jsonl"
    broken.write_text(src.read_text() + "{not json\n")
    out = tmp_path / "spark"
    submit("dedup", *args, "--input", str(broken), "--output", str(out))
    report = json.loads((out / "_MANIFEST.json").read_text())
    assert report["engine"]["engine"] == "driver" and report["spark"]["jobs"] > 0
    assert report["input"]["rejects_by_reason"] == {"malformed JSON": 1}
    assert sorted(pq.read_table(out / "docs").column("id").to_pylist()) == sorted(kept)
