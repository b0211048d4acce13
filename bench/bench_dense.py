"""Benchmark on duplicate-dense corpora (issues 20 and 39): the dedup job (jobs/dedup.py)
against what a user would pick instead (an exact single-core baseline, datatrove's MinHash
dedup, Spark MLlib's MinHashLSH), each a whole process, scored against exact all-pairs Jaccard.

    .venv/bin/python bench/bench_dense.py [--corpus long|short] [--systems job,exact,...]
        [--docs N] [--runs R] [--with-conf] [--plan] [--timeout S] [--mllib-runs R]
        [--mllib-timeout S]

1. corpus, ``--corpus``:
   long (the default, issue 20; ``lib.dense_corpus``, seeded by ``--seed``): ``--docs``
   documents in families of heavy-tailed sizes
   (a Zipf law, P(s) ~ s^-ZIPF_ALPHA for 1 <= s <= docs / 10: most families are single
   documents or a handful, a few have thousands). A family starts from a real text of
   ../shared/data/text (a Debian copyright file or a man page cut to 200-3000 words at a line
   boundary, or random fortunes concatenated); every further member is a random EARLIER
   member of its family with a few clause-level edits (a line of another real text inserted,
   a line or sentence deleted, words substituted), so members are edited from each other in
   chains: neighbours stay near duplicates while a family's far ends drift below the
   threshold, as in real licence and boilerplate families. Written as JSON lines
   {"doc_id", "text"} to out/bench_dense/corpus-N.jsonl (reused when its .meta.json records
   the same parameters). ``--plan``: only print the family sizes for ``--docs`` (no texts,
   no Spark);
   short (issue 39; ``lib.short_corpus``, its recipe and seed fixed there; ``--docs`` and
   ``--seed`` do not apply): every paragraph of the Debian copyright files and every
   fortune, unedited (natural families: licence stanzas repeat across packages), shuffled,
   out/bench_dense/short-corpus.jsonl; its outputs go to out/bench_dense/short/;
2. ground truth: exact Jaccard of the word 3-shingle sets (lib.truth.shingle_sets, the
   job's own kernel; lib.truth.exact_pairs, prefix-filtered all pairs on one core), timed;
3. ``--systems`` (comma-separated, default job,mllib), one after another, never two at
   once, each timed as a whole process (wall seconds, start-up included), ``--runs`` times
   (medians reported); a run is every system once, in the order job, job-spark, job-1core,
   floor, exact, datatrove, mllib (then job-conf):
   a. job: jobs/dedup.py --config conf/dedup.toml, ``spark-submit --master local[2]
      --driver-memory 2g`` and no properties file, jsonl input with id column doc_id, output
      <out>/job (with ``--with-conf`` once more with ``--properties-file
      conf/spark-local.conf``, output <out>/job-conf); job-spark: the same with ``--engine
      spark`` (the Spark stages a cluster runs); job-1core: the same with ``--master
      local[1]`` (the default engine on one core: the scaling ratio); floor: bench/io_floor.py,
      Spark reading the JSON lines and writing them as Parquet with the job's flags and
      nothing else (what any Spark shell pays before deduplicating);
   b. exact: lib/exact_baseline.py (frozen; its git commit is printed beside its figures):
      pure Python on one core, exact all pairs J >= 0.7 of word 3-shingles by prefix
      filtering, then a greedy pass in ascending doc_id keeping a document and removing its
      undecided neighbours; kept ids to <out>/exact/kept.txt, removed<TAB>kept to
      <out>/exact/removed.tsv;
   c. datatrove: lib/datatrove_run.py run by the python of out/bench-venvs/datatrove
      (lib.datatrove_peer makes it: datatrove 0.10.1, never a project dependency): its
      MinHash dedup with MinhashConfig's defaults (5-grams, 14 buckets x 8 hashes),
      LocalPipelineExecutor with 2 workers (2 tasks for signatures and filter; 14 for
      buckets and 1 for cluster, as datatrove requires), kept ids to <out>/datatrove/kept.txt;
   d. mllib: this script under spark-submit with ``--mllib-only``: lib.mllib.mllib_join,
      the pipeline bench_dedup.run_mllib times (word 3-shingles, HashingTF binary 2^30,
      MinHashLSH with 4 tables, approxSimilarityJoin at Jaccard distance 0.3), its pairs
      written to <out>/mllib; ``--mllib-runs`` times (default ``--runs``), ended past
      ``--mllib-timeout`` seconds: then the job's speed-up is shown as a lower bound
      (MLlib/job >= the seconds MLlib ran / the job's);
4. scores (read from the outputs, no JVM), the same way for job, exact and datatrove
   (lib.scoring.score): recall = share of the pairs with exact J >= 0.75 not both kept;
   removal precision = share of the removed documents (with shingles) whose exact J with
   the document kept in their place is >= 0.7: the job's representative (clusters/), the
   exact baseline's kept_id; datatrove does not say which kept document replaced a removed
   one, so its removed document is scored against its nearest kept document (highest exact
   J among the pairs J >= 0.7 of the ground truth, ties to the first): precise when SOME
   kept document has J >= 0.7 with it. The job's share of pairs in one output cluster;
   MLlib: recall = pairs found, pair precision (lib.scoring.quality);
5. ratios, each within one run (system seconds / the job's seconds of the same run; the
   median of those): baseline/job, datatrove/job, mllib/job, engine spark/default,
   local[1]/local[2], I/O floor/job; a table and one JSON line on
   stdout. Logs of every process: out/bench_dense/logs/ (short- before the system's name
   for the short corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from lib import datatrove_peer, short_corpus
from lib.corpora import SHARED_DATA
from lib.dense_corpus import MAX_FAMILY, SEED, ZIPF_ALPHA, Corpus, family_sizes, load_or_build
from lib.mllib import mllib_join, mllib_tables
from lib.processes import SPARK_ARGS, Run, log, spark_submit, timed_process
from lib.project import ROOT
from lib.scoring import EvalSet, quality, score
from lib.tables import print_table
from lib.truth import exact_pairs, shingle_sets

WORK = ROOT / "out" / "bench_dense"
SIZE_BUCKETS = ((1, 1), (2, 3), (4, 10), (11, 100), (101, 1000), (1001, 10**9))
TABLES = mllib_tables()  # 4
SYSTEMS = ("job", "job-spark", "job-1core", "floor", "exact", "datatrove", "mllib")
"""The order of a run (job-conf: last)."""
EXACT_BASELINE = ROOT / "bench" / "lib" / "exact_baseline.py"
RATIO_NAMES = {"exact": "baseline/job", "datatrove": "datatrove/job", "mllib": "mllib/job",
               "job-spark": "engine spark/default", "job-1core": "local[1]/local[2]",
               "floor": "I/O floor/job"}  # fmt: skip


# --- the corpus ----------------------------------------------------------------------------


def bucket_name(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}+" if hi >= 10**9 else f"{lo}-{hi}"


def size_table(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """Families, documents and within-family pairs per family-size bucket."""
    rows = []
    for lo, hi in SIZE_BUCKETS:
        s = [x for x in sizes if lo <= x <= hi]
        rows.append(
            {
                "size": bucket_name(lo, hi),
                "families": len(s),
                "docs": sum(s),
                "family_pairs": sum(x * (x - 1) // 2 for x in s),
            }
        )
    return rows


def plan(n: int, seed: int) -> dict[str, Any]:
    sizes = family_sizes(n, seed)
    return {
        "docs": n,
        "families": len(sizes),
        "largest": sorted(sizes, reverse=True)[:12],
        "mean_size": round(n / len(sizes), 2),
        "buckets": size_table(sizes),
    }


# --- the Spark processes ---------------------------------------------------------------------


def _log_tail(path: Path, lines: int = 8) -> list[str]:
    text = path.read_text("utf-8", "replace").splitlines()
    return [line for line in text if line.strip()][-lines:]


def job_command(corpus: Path, out: Path, system: str = "job") -> list[str]:
    """The dedup job as ``system`` runs it: ``job`` (Spark's defaults, local[2]),
    ``job-conf`` (the shipped properties file), ``job-spark`` (``--engine spark``),
    ``job-1core`` (``--master local[1]``)."""
    conf = ["--properties-file", str(ROOT / "conf" / "spark-local.conf")]
    args = list(SPARK_ARGS)
    if system == "job-1core":
        args[args.index("--master") + 1] = "local[1]"
    return [
        spark_submit(),
        *args,
        *(conf if system == "job-conf" else []),
        str(ROOT / "jobs" / "dedup.py"),
        "--config",
        str(ROOT / "conf" / "dedup.toml"),
        "--input",
        str(corpus),
        "--input-format",
        "jsonl",
        "--id-col",
        "doc_id",
        "--text-col",
        "text",
        "--output",
        str(out),
        *(["--engine", "spark"] if system == "job-spark" else []),
    ]


def floor_command(corpus: Path, out: Path) -> list[str]:
    """bench/io_floor.py: Spark reads the JSON lines and writes them as Parquet, nothing else
    (the JVM, the session, schema inference, one read, one write) with the job's flags."""
    return [spark_submit(), *SPARK_ARGS, str(ROOT / "bench" / "io_floor.py"), str(corpus),
            str(out)]  # fmt: skip


def mllib_command(corpus: Path, out: Path) -> list[str]:
    me = str(Path(__file__).resolve())
    return [spark_submit(), *SPARK_ARGS, me, "--mllib-only", str(corpus), str(out)]


def exact_command(corpus: Path, out: Path) -> list[str]:
    """The frozen exact baseline: stdlib Python, one process, one core."""
    return [
        sys.executable,
        str(EXACT_BASELINE),
        "--input",
        str(corpus),
        "--output",
        str(out / "kept.txt"),
        "--removed",
        str(out / "removed.tsv"),
        "--threshold",
        "0.7",
        "--order",
        "min_id",
    ]


def exact_baseline_commit() -> str:
    """The exact baseline's last commit (short hash), or "uncommitted" while the file has
    changes git has not committed (or git cannot tell)."""
    rel = str(EXACT_BASELINE.relative_to(ROOT))

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else "?"

    status = git("status", "--porcelain", "--", rel)
    commit = git("log", "-1", "--format=%h", "--", rel)
    return "uncommitted" if status or not commit or commit == "?" else commit


def mllib_only(corpus: Path, out: Path) -> int:
    """Under spark-submit: lib.mllib.mllib_join on ``corpus`` (a session with Spark's
    defaults and spark-submit's flags), its own timing and count to ``out``.json."""
    import lib
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    # the shingle UDF travels by value: Python workers need not import the bench library
    cloudpickle.register_pickle_by_value(lib)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.appName("neardup-bench-dense-mllib").getOrCreate()
    try:
        started = time.perf_counter()
        hashed, count = mllib_join(spark, corpus, out, TABLES, id_col="doc_id")
        seconds = time.perf_counter() - started
        hashed.unpersist()
    finally:
        spark.stop()
    info = {"tables": TABLES, "docs_with_shingles": count, "pipeline_seconds": round(seconds, 2)}
    out.with_suffix(".json").write_text(json.dumps(info), "utf-8")
    return 0


# --- scoring -------------------------------------------------------------------------------


class _Frame:
    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df

    def collect(self) -> list[Any]:
        return list(self.df.itertuples(index=False, name="Row"))


class ParquetReader:
    """The slice of SparkSession that lib.scoring.score reads the job's clusters/ with
    (``spark.read.parquet(path).collect()``), on pyarrow: the scoring needs no JVM."""

    @property
    def read(self) -> ParquetReader:
        return self

    def parquet(self, path: str) -> _Frame:
        return _Frame(pq.read_table(path).to_pandas())


@dataclass
class Truth:
    ev: EvalSet
    shingle_seconds: float
    pairs_seconds: float


def ground_truth(corpus: Corpus) -> Truth:
    # untimed: compile the all-pairs kernel (numba, no cache) on two tiny sets
    exact_pairs(shingle_sets(["a b c d e", "a b c d f"]))
    started = time.perf_counter()
    sets = shingle_sets([t for _, t in corpus.docs])
    shingled = time.perf_counter() - started
    truth = exact_pairs(sets)
    ev = EvalSet("dense", corpus.docs, sets, truth)
    log(
        f"truth: {len(truth.codes)} pairs J >= 0.7, {len(truth.at_least(3, 4))} J >= 0.75; "
        f"shingles {shingled:.1f} s, all pairs {truth.seconds:.1f} s (one core)"
    )
    return Truth(ev, shingled, truth.seconds)


def _has_families(corpus: Corpus) -> bool:
    """Generated families (the long corpus); the short corpus has natural ones only."""
    return corpus.meta.get("families") is not None


def _bucket_of(corpus: Corpus) -> np.ndarray:
    """Each document's family-size bucket (index into SIZE_BUCKETS)."""
    sizes = np.bincount(corpus.family)[corpus.family]
    highs = np.array([hi for _, hi in SIZE_BUCKETS])
    return np.searchsorted(highs, sizes)


def family_truth(corpus: Corpus, t: Truth) -> list[dict[str, Any]]:
    """Per family-size bucket: within-family pairs and the share with J >= 0.75 (how far the
    chains drift); then the pairs J >= 0.75 across families (shared real passages)."""
    n = t.ev.truth.n
    strong = t.ev.truth.at_least(3, 4)
    a, b = strong // n, strong % n
    same = corpus.family[a] == corpus.family[b]
    bucket = _bucket_of(corpus)[a]
    sizes = np.bincount(corpus.family).tolist()
    rows = []
    for k, row in enumerate(size_table(sizes)):
        hits = int(np.count_nonzero(same & (bucket == k)))
        share = hits / row["family_pairs"] if row["family_pairs"] else None
        rows.append(row | {"pairs_j075": hits, "share_j075": share})
    cross = int(np.count_nonzero(~same))
    rows.append({"size": "across families", "pairs_j075": cross})
    return rows


def _recall_by_bucket(corpus: Corpus, t: Truth, resolved: np.ndarray) -> dict[str, Any]:
    """Recall (J >= 0.75) of ``resolved`` (one bool per pair of truth.at_least(3, 4)) per
    family-size bucket of within-family pairs, and across families."""
    n = t.ev.truth.n
    strong = t.ev.truth.at_least(3, 4)
    a, b = strong // n, strong % n
    same = corpus.family[a] == corpus.family[b]
    bucket = _bucket_of(corpus)[a]
    out: dict[str, Any] = {}
    for k, (lo, hi) in enumerate(SIZE_BUCKETS):
        mask = same & (bucket == k)
        if mask.any():
            out[bucket_name(lo, hi)] = round(float(resolved[mask].mean()), 5)
    if (~same).any():
        out["across"] = round(float(resolved[~same].mean()), 5)
    return out


def score_job(out: Path, corpus: Corpus, t: Truth) -> dict[str, Any]:
    ev = t.ev
    reader = ParquetReader()
    ids = [d for d, _ in corpus.docs]
    s = score(reader, out, ids, ev.sets, ev.truth)
    clusters = reader.parquet(str(out / "clusters")).df
    place = clusters["doc_id"].map(ev.index).to_numpy(dtype=np.int64)
    kept = np.zeros(len(ids), dtype=bool)
    kept[place[clusters["is_representative"].to_numpy(dtype=bool)]] = True
    cluster = np.arange(len(ids), dtype=np.int64)  # a document in no cluster: its own
    cluster[place] = pd.factorize(clusters["cluster_id"])[0] + len(ids)
    strong = ev.truth.at_least(3, 4)
    a, b = strong // ev.truth.n, strong % ev.truth.n
    resolved = ~(kept[a] & kept[b])
    assert int(np.count_nonzero(~resolved)) == s["residual_both_kept"]
    same = float(np.mean(cluster[a] == cluster[b])) if len(strong) else 1.0
    report = json.loads((out / "report.json").read_text("utf-8"))
    by_size = _recall_by_bucket(corpus, t, resolved) if _has_families(corpus) else None
    return {
        "recall_j075": round(1 - s["residual_share"], 5),
        "same_cluster_j075": round(same, 5),
        "removal_precision": s["removal_precision"],
        "kept": int(np.count_nonzero(kept)),
        "removed_with_shingles": s["removed_with_shingles"],
        "removed_exact_copies": s["removed_exact_copies"],
        "residual_both_kept": s["residual_both_kept"],
        **({"recall_by_family_size": by_size} if by_size is not None else {}),
        "job_counts": report.get("counts"),
        "stage_seconds": report.get("seconds"),
        "pipeline": report.get("pipeline", {}).get("id"),
    }


class ClusterRow(NamedTuple):
    doc_id: str
    cluster_id: str  # the id of the document kept in its place (its own when kept)
    is_representative: bool


class RowsReader:
    """The slice of SparkSession that lib.scoring.score reads clusters with, serving rows
    made here (doc_id, cluster_id = the kept document's id, is_representative) for the
    systems that write no clusters/."""

    def __init__(self, rows: list[ClusterRow]) -> None:
        self.rows = rows

    @property
    def read(self) -> RowsReader:
        return self

    def parquet(self, path: str) -> RowsReader:
        return self

    def collect(self) -> list[ClusterRow]:
        return self.rows


def _score_kept(
    corpus: Corpus, t: Truth, kept_ids: Sequence[str], kept_in_place: dict[str, str]
) -> dict[str, Any]:
    """lib.scoring.score of a system given as its kept ids and, for each removed id, the
    id of the document kept in its place; recall by family size as for the job."""
    ev = t.ev
    ids = [d for d, _ in corpus.docs]
    rows = [ClusterRow(d, d, True) for d in kept_ids]
    rows += [ClusterRow(r, k, False) for r, k in kept_in_place.items()]
    s = score(RowsReader(rows), Path("."), ids, ev.sets, ev.truth)
    kept = np.zeros(len(ids), dtype=bool)
    kept[[ev.index[d] for d in kept_ids]] = True
    strong = ev.truth.at_least(3, 4)
    a, b = strong // ev.truth.n, strong % ev.truth.n
    resolved = ~(kept[a] & kept[b])
    assert int(np.count_nonzero(~resolved)) == s["residual_both_kept"]
    out = {
        "recall_j075": round(1 - s["residual_share"], 5),
        "removal_precision": s["removal_precision"],
        "kept": len(kept_ids),
        "removed": len(kept_in_place),
        "removed_with_shingles": s["removed_with_shingles"],
        "removed_exact_copies": s["removed_exact_copies"],
        "residual_both_kept": s["residual_both_kept"],
    }
    if _has_families(corpus):
        out["recall_by_family_size"] = _recall_by_bucket(corpus, t, resolved)
    return out


def _own_figures(log_path: Path) -> dict[str, Any]:
    """The last JSON line of a process's log (the exact baseline prints its counts so)."""
    for line in reversed(log_path.read_text("utf-8", "replace").splitlines()):
        if line.startswith("{"):
            try:
                return dict(json.loads(line))
            except ValueError:
                break
    return {}


def score_exact(out: Path, corpus: Corpus, t: Truth, log_path: Path) -> dict[str, Any]:
    kept = [d for d in (out / "kept.txt").read_text("utf-8").split("\n") if d]
    removed = {}
    for line in (out / "removed.tsv").read_text("utf-8").split("\n"):
        if line:
            r, k = line.split("\t")
            removed[r] = k
    own = _own_figures(log_path)
    return _score_kept(corpus, t, kept, removed) | {
        "pairs_found": own.get("pairs"),
        "own_seconds": own.get("seconds"),
        "commit": exact_baseline_commit(),
    }


def nearest_kept(t: Truth, kept: np.ndarray) -> np.ndarray:
    """For each document, its nearest kept document (position): the highest exact J among
    the ground truth's pairs J >= 0.7 with a kept document, ties to the lowest position;
    -1 when no kept document has J >= 0.7 with it."""
    truth = t.ev.truth
    a, b = truth.codes // truth.n, truth.codes % truth.n
    j = truth.inter / truth.union
    me = np.concatenate([a, b])
    other = np.concatenate([b, a])
    jj = np.concatenate([j, j])
    use = kept[other] & ~kept[me]
    me, other, jj = me[use], other[use], jj[use]
    order = np.lexsort((other, -jj, me))
    me, other = me[order], other[order]
    first = np.ones(len(me), dtype=bool)
    first[1:] = me[1:] != me[:-1]
    best = np.full(truth.n, -1, dtype=np.int64)
    best[me[first]] = other[first]
    return best


def score_datatrove(out: Path, corpus: Corpus, t: Truth) -> dict[str, Any]:
    """datatrove's kept ids scored as the others; its removed documents against their
    nearest kept document (``nearest_kept``); one with no kept document at J >= 0.7 is
    scored against the first kept document, J < 0.7 by the ground truth: not precise."""
    ev = t.ev
    ids = [d for d, _ in corpus.docs]
    kept_ids = datatrove_peer.read_kept(out / "kept.txt")
    kept = np.zeros(len(ids), dtype=bool)
    kept[[ev.index[d] for d in kept_ids]] = True
    best = nearest_kept(t, kept)
    fallback = kept_ids[0]
    removed = {ids[i]: (ids[best[i]] if best[i] >= 0 else fallback) for i in np.flatnonzero(~kept)}
    info = datatrove_peer.run_info(out)
    return _score_kept(corpus, t, kept_ids, removed) | {
        "removed_without_kept_near": int(np.count_nonzero(best[~kept] < 0)),
        "config": info.get("config"),
        "tasks": info.get("tasks"),
        "own_seconds": info.get("seconds"),
        "versions": info.get("versions"),
    }


def score_mllib(out: Path, corpus: Corpus, t: Truth) -> dict[str, Any]:
    ev = t.ev
    pairs = pq.read_table(str(out), columns=["a", "b"]).to_pandas()
    a = pairs["a"].map(ev.index).to_numpy(dtype=np.int64)
    b = pairs["b"].map(ev.index).to_numpy(dtype=np.int64)
    found = np.unique(np.minimum(a, b) * ev.truth.n + np.maximum(a, b))
    q = quality(found, ev)
    strong = ev.truth.at_least(3, 4)
    info = json.loads(out.with_suffix(".json").read_text("utf-8"))
    out = {
        "recall_j075": round(q.recall_075, 5),
        "recall_j07": round(q.recall_07, 5),
        "pair_precision": round(q.precision, 5),
        "pairs_found": q.found,
        **info,
    }
    if _has_families(corpus):
        out["recall_by_family_size"] = _recall_by_bucket(corpus, t, np.isin(strong, found))
    return out


# --- report --------------------------------------------------------------------------------


def _median(runs: Sequence[Run]) -> float | None:
    ok = [r.seconds for r in runs if r.rc == 0]
    return statistics.median(ok) if ok and len(ok) == len(runs) else None


def _run_cell(r: Run) -> str:
    failed = {-1: "timeout", -2: "disk floor"}
    return f"{r.seconds:.1f}" if r.rc == 0 else failed.get(r.rc, f"exit {r.rc}")


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def ratios_over_job(runs: dict[str, list[Run]]) -> dict[str, dict[str, Any]]:
    """Per system, its seconds over the job's within each run (both run in the same round,
    one after the other): ``per_run`` (None where either failed), ``at_least`` (True for a
    run the system did not finish within its timeout: a lower bound), ``median`` of the
    runs that finished, and ``lower_bound``: the smallest ratio when every run of the system
    timed out (it would have taken at least that long)."""
    out: dict[str, dict[str, Any]] = {}
    job = runs.get("job")
    if not job:
        return out
    for system, rs in runs.items():
        if system in ("job", "job-conf") or not rs:
            continue
        per_run: list[float | None] = []
        at_least: list[bool] = []
        for j, r in zip(job, rs, strict=False):
            ok = j.rc == 0 and (r.rc == 0 or r.rc == -1)
            per_run.append(round(r.seconds / j.seconds, 3) if ok else None)
            at_least.append(ok and r.rc == -1)
        done = [x for x, low in zip(per_run, at_least, strict=True) if x is not None and not low]
        lows = [x for x, low in zip(per_run, at_least, strict=True) if x is not None and low]
        out[system] = {
            "name": RATIO_NAMES.get(system, f"{system}/job"),
            "per_run": per_run,
            "at_least": at_least,
            "median": round(statistics.median(done), 3) if done else None,
            "lower_bound": round(min(lows), 3) if lows and not done else None,
        }
    return out


def _ratio_cell(r: dict[str, Any] | None) -> str:
    if not r:
        return "-"
    runs = " ".join(
        "-" if x is None else (f">={x:.2f}" if low else f"{x:.2f}")
        for x, low in zip(r["per_run"], r["at_least"], strict=True)
    )
    if r["median"] is not None:
        return f"{r['median']:.2f} ({runs})" if len(r["per_run"]) > 1 else f"{r['median']:.2f}"
    if r["lower_bound"] is not None:
        return f">= {r['lower_bound']:.2f}"
    return runs


def _label(system: str, sc: dict[str, Any]) -> str:
    if system == "exact":
        return f"exact baseline @ {sc.get('commit') or exact_baseline_commit()}"
    return system


def _corpus_lines(kind: str, corpus: Corpus) -> None:
    n = len(corpus.docs)
    if kind == "short":
        print(short_corpus.describe(corpus.meta))
        return
    print(
        f"dense corpus: {n} docs, {corpus.nbytes / 1e6:.1f} MB, {corpus.meta['families']} "
        f"families (Zipf {ZIPF_ALPHA}, at most {int(n * MAX_FAMILY)}), first texts "
        f"{corpus.meta['first_texts']}, edits {corpus.meta['edits']}, exact copies "
        f"{corpus.meta['exact_copies']}"
    )


def report(
    args: argparse.Namespace,
    corpus: Corpus,
    t: Truth,
    runs: dict[str, list[Run]],
    scores: dict[str, dict[str, Any] | None],
) -> dict[str, Any]:
    n = len(corpus.docs)
    families = _has_families(corpus)
    fam = family_truth(corpus, t) if families else None
    strong = len(t.ev.truth.at_least(3, 4))
    medians = {k: _median(v) for k, v in runs.items()}
    ratios = ratios_over_job(runs)
    commit = exact_baseline_commit() if "exact" in runs else None
    _corpus_lines(args.corpus, corpus)
    print(
        f"ground truth (exact J of word 3-shingle sets, one core): {len(t.ev.truth.codes)} pairs"
        f" J >= 0.7, {strong} J >= 0.75; shingling {t.shingle_seconds:.1f} s + all pairs "
        f"(prefix filtering) {t.pairs_seconds:.1f} s = {t.shingle_seconds + t.pairs_seconds:.1f}"
        " s"
    )
    if fam is not None:
        print_table(
            "families (within-family pairs with J >= 0.75: the chains' drift)",
            ["size", "families", "docs", "family pairs", "pairs J>=.75", "share"],
            [
                (
                    r["size"],
                    r.get("families", "-"),
                    r.get("docs", "-"),
                    r.get("family_pairs", "-"),
                    r["pairs_j075"],
                    _fmt(r.get("share_j075")),
                )
                for r in fam
            ],
        )
    rows = []
    for system, rs in runs.items():
        sc = scores.get(system) or {}
        rows.append(
            (
                _label(system, sc),
                _fmt(medians[system], 1),
                " ".join(_run_cell(r) for r in rs),
                _ratio_cell(ratios.get(system)),
                _fmt(sc.get("recall_j075")),
                _fmt(sc.get("same_cluster_j075")),
                _fmt(sc.get("removal_precision")),
                _fmt(sc.get("pair_precision")),
                sc.get("kept", "-"),
                sc.get("removed_with_shingles", sc.get("pairs_found", "-")),
            )
        )
    print_table(
        f"{args.corpus} corpus: whole processes one after another ({n} docs; Spark: "
        f"{' '.join(SPARK_ARGS)}; MLlib L={TABLES}); recall over {strong} pairs J >= 0.75",
        ["system", "wall s (median)", "runs", "system/job (per run)", "recall"]
        + ["same cluster", "removal precision", "pair precision", "kept", "removed / pairs"],
        rows,
    )
    if ratios:
        print(
            "ratios within one run: "
            + "; ".join(f"{r['name']} {_ratio_cell(r)}" for r in ratios.values())
            + (f" (exact baseline at commit {commit})" if commit else "")
        )
    buckets = [*(bucket_name(lo, hi) for lo, hi in SIZE_BUCKETS), "across"]
    by_size = [
        (system, *(_fmt(sc["recall_by_family_size"].get(k)) for k in buckets))
        for system, sc in scores.items()
        if sc and "recall_by_family_size" in sc
    ]
    if by_size:
        print_table(
            "recall J >= 0.75 by family size (within-family pairs; across = other pairs)",
            ["system", *buckets],
            by_size,
        )
    print(
        "recall: job, exact, datatrove = pairs not both kept (lib.scoring.score); same "
        "cluster = pairs in one output cluster of the job; MLlib = pairs found. removal "
        "precision: removed documents (with shingles) whose exact J with the document kept in "
        "their place is >= 0.7 (datatrove: with their nearest kept document, it names none). "
        "pair precision: MLlib pairs with exact J >= 0.7"
    )
    corpus_info = {
        k: v
        for k, v in corpus.meta.items()
        if k not in ("family", "params", "shape") and not (k == "families" and v is None)
    }
    figures: dict[str, Any] = {
        "bench": "dense",
        "corpus_kind": args.corpus,
        "args": vars(args),
        "machine": {"nproc": os.cpu_count(), "load_1_5_15": [round(x, 2) for x in os.getloadavg()]},
        "corpus": {
            "path": str(corpus.path),
            "docs": n,
            "mb": round(corpus.nbytes / 1e6, 2),
            **corpus_info,
            **({"shape": corpus.meta["shape"]} if "shape" in corpus.meta else {}),
            "params": corpus.meta["params"],
        },
        **({"families": fam} if fam is not None else {}),
        "truth": {
            "pairs_j07": len(t.ev.truth.codes),
            "pairs_j075": strong,
            "shingle_seconds": round(t.shingle_seconds, 2),
            "all_pairs_seconds": round(t.pairs_seconds, 2),
        },
        "spark_args": list(SPARK_ARGS),
        "exact_baseline_commit": commit,
        "runs": {
            k: [{"seconds": round(r.seconds, 2), "rc": r.rc, "load_1m": list(r.load)} for r in v]
            for k, v in runs.items()
        },
        "median_seconds": {k: (round(v, 2) if v else None) for k, v in medians.items()},
        "over_job_per_run": ratios,
        "scores": scores,
    }
    print(json.dumps(figures, default=str))
    return figures


# --- main ----------------------------------------------------------------------------------


def _systems(value: str) -> list[str]:
    chosen = [s.strip() for s in value.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SYSTEMS))
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown systems {unknown}: choose among {SYSTEMS}")
    return [s for s in SYSTEMS if s in chosen]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--corpus",
        choices=("long", "short"),
        default="long",
        help="long: the generated dense corpus of --docs documents (issue 20); short: the "
        "short real texts of lib.short_corpus (issue 39)",
    )
    p.add_argument(
        "--systems",
        type=_systems,
        default=["job", "mllib"],
        help=f"comma-separated, among {','.join(SYSTEMS)} (default job,mllib)",
    )
    p.add_argument("--docs", type=int, default=50_000, help="documents in the long corpus")
    p.add_argument("--seed", type=int, default=SEED, help="the long corpus's seed")
    p.add_argument("--runs", type=int, default=1, help="timed runs of each process (medians)")
    p.add_argument(
        "--with-conf",
        action="store_true",
        help="also time the job with --properties-file conf/spark-local.conf",
    )
    p.add_argument(
        "--timeout", type=float, help="seconds: end a process still running then (failed)"
    )
    p.add_argument(
        "--min-free-gb",
        type=float,
        default=10.0,
        help="end a process when Spark's local dir's disk has less free (default 10)",
    )
    p.add_argument(
        "--mllib-runs",
        type=int,
        help="timed runs of MLlib (default --runs): at 50,000 documents one takes hours",
    )
    p.add_argument(
        "--mllib-timeout",
        type=float,
        help="seconds for MLlib (default --timeout); past it the table shows the job's "
        "speed-up as a lower bound (MLlib/job >= timeout / job)",
    )
    p.add_argument("--plan", action="store_true", help="only print the family sizes")
    p.add_argument(
        "--mllib-only",
        nargs=2,
        metavar=("CORPUS", "OUT"),
        type=Path,
        help="internal: under spark-submit, MLlib on CORPUS, pairs to OUT",
    )
    args = p.parse_args(argv)
    if args.mllib_only:
        return mllib_only(*args.mllib_only)
    if args.plan:
        print(json.dumps(plan(args.docs, args.seed)))
        return 0
    if not SHARED_DATA.is_dir():
        print(f"bench_dense: skipped: {SHARED_DATA} is absent (real texts needed)")
        return 0
    if args.corpus == "short":
        corpus, work, prefix = short_corpus.load_or_build(), WORK / "short", "short-"
    else:
        corpus, work, prefix = load_or_build(args.docs, args.seed), WORK, ""
    if "datatrove" in args.systems:
        datatrove_peer.ensure_venv()  # untimed: the install is not part of a run
    t = ground_truth(corpus)
    systems = list(args.systems) + (["job-conf"] if args.with_conf else [])
    outs = {s: work / s for s in systems}
    runs: dict[str, list[Run]] = {s: [] for s in systems}
    for i in range(args.runs):
        for system in systems:
            out = outs[system]
            shutil.rmtree(out, ignore_errors=True)
            out.with_suffix(".json").unlink(missing_ok=True)
            timeout = args.timeout
            if system == "mllib":
                if i >= (args.runs if args.mllib_runs is None else args.mllib_runs):
                    continue
                cmd = mllib_command(corpus.path, out)
                timeout = args.timeout if args.mllib_timeout is None else args.mllib_timeout
            elif system == "exact":
                out.mkdir(parents=True)
                cmd = exact_command(corpus.path, out)
            elif system == "datatrove":
                cmd = datatrove_peer.command(corpus.path, out, out / "kept.txt")
            elif system == "floor":
                cmd = floor_command(corpus.path, out)
            else:
                cmd = job_command(corpus.path, out, system)
            runs[system].append(timed_process(prefix + system, cmd, i, args, timeout))
    scores: dict[str, dict[str, Any] | None] = {}
    for system in systems:
        last = runs[system][-1]
        if last.rc != 0:
            scores[system] = {"failed": last.rc, "log_tail": _log_tail(last.log)}
        elif system == "mllib":
            scores[system] = score_mllib(outs[system], corpus, t)
        elif system == "exact":
            scores[system] = score_exact(outs[system], corpus, t, last.log)
        elif system == "datatrove":
            scores[system] = score_datatrove(outs[system], corpus, t)
        elif system == "floor":
            scores[system] = None  # it removes nothing: a time, not a result
        else:
            scores[system] = score_job(outs[system], corpus, t)
    report(args, corpus, t, runs, scores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
