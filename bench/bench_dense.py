"""Benchmark on a duplicate-dense corpus: the dedup job (jobs/dedup.py) against Spark MLlib's
MinHashLSH, each a whole spark-submit'ed process with Spark's own defaults, scored against
exact all-pairs Jaccard.

    .venv/bin/python bench/bench_dense.py [--docs N] [--runs R] [--with-conf] [--plan]
        [--timeout S] [--mllib-runs R] [--mllib-timeout S]

1. corpus (``lib.dense_corpus``, seeded): ``--docs`` documents in families of heavy-tailed sizes
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
2. ground truth: exact Jaccard of the word 3-shingle sets (lib.truth.shingle_sets, the
   job's own kernel; lib.truth.exact_pairs, prefix-filtered all pairs on one core), timed;
3. one after another, never two at once, each timed as a whole process (wall seconds, JVM
   start included), ``--runs`` times (medians reported), all with ``spark-submit --master
   local[2] --driver-memory 2g`` and no properties file:
   a. the job: jobs/dedup.py --config conf/dedup.toml, jsonl input with id column doc_id,
      output out/bench_dense/job (with ``--with-conf`` once more with ``--properties-file
      conf/spark-local.conf``, output out/bench_dense/job-conf);
   b. MLlib: this script under spark-submit with ``--mllib-only``: lib.mllib.mllib_join,
      the pipeline bench_dedup.run_mllib times (word 3-shingles, HashingTF binary 2^30,
      MinHashLSH with 4 tables, approxSimilarityJoin at Jaccard distance 0.3), its pairs
      written to out/bench_dense/mllib; ``--mllib-runs`` times (default ``--runs``), ended
      past ``--mllib-timeout`` seconds: then the job's speed-up is shown as a lower bound
      (MLlib/job >= the seconds MLlib ran / the job's median);
4. scores (read from the outputs with pyarrow, no JVM): recall = share of the pairs with
   exact J >= 0.75 resolved: for the job, not both documents kept (lib.scoring.score's
   residual; the share in one output cluster is shown too), for MLlib, the pair found; the
   job's removal precision (lib.scoring.score: a removed document's exact J with the
   representative kept in its place >= 0.7); MLlib's pair precision (lib.scoring.quality);
5. a table and one JSON line on stdout. Logs of every Spark process: out/bench_dense/logs/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
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


def job_command(corpus: Path, out: Path, with_conf: bool) -> list[str]:
    conf = ["--properties-file", str(ROOT / "conf" / "spark-local.conf")] if with_conf else []
    return [
        spark_submit(),
        *SPARK_ARGS,
        *conf,
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
    ]


def mllib_command(corpus: Path, out: Path) -> list[str]:
    me = str(Path(__file__).resolve())
    return [spark_submit(), *SPARK_ARGS, me, "--mllib-only", str(corpus), str(out)]


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
    return {
        "recall_j075": round(1 - s["residual_share"], 5),
        "same_cluster_j075": round(same, 5),
        "removal_precision": s["removal_precision"],
        "removed_with_shingles": s["removed_with_shingles"],
        "removed_exact_copies": s["removed_exact_copies"],
        "residual_both_kept": s["residual_both_kept"],
        "recall_by_family_size": _recall_by_bucket(corpus, t, resolved),
        "job_counts": report.get("counts"),
        "stage_seconds": report.get("seconds"),
        "pipeline": report.get("pipeline", {}).get("id"),
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
    return {
        "recall_j075": round(q.recall_075, 5),
        "recall_j07": round(q.recall_07, 5),
        "pair_precision": round(q.precision, 5),
        "pairs_found": q.found,
        "recall_by_family_size": _recall_by_bucket(corpus, t, np.isin(strong, found)),
        **info,
    }


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


def report(
    args: argparse.Namespace,
    corpus: Corpus,
    t: Truth,
    runs: dict[str, list[Run]],
    scores: dict[str, dict[str, Any] | None],
) -> dict[str, Any]:
    n = len(corpus.docs)
    fam = family_truth(corpus, t)
    strong = len(t.ev.truth.at_least(3, 4))
    medians = {k: _median(v) for k, v in runs.items()}
    ml = medians.get("mllib")
    timed_out = runs.get("mllib") and all(r.rc == -1 for r in runs["mllib"])
    # MLlib past its timeout: it would have taken at least as long as its shortest run
    floor = min(r.seconds for r in runs["mllib"]) if timed_out else None
    print(
        f"dense corpus: {n} docs, {corpus.nbytes / 1e6:.1f} MB, {corpus.meta['families']} "
        f"families (Zipf {ZIPF_ALPHA}, at most {int(n * MAX_FAMILY)}), first texts "
        f"{corpus.meta['first_texts']}, edits {corpus.meta['edits']}, exact copies "
        f"{corpus.meta['exact_copies']}"
    )
    print(
        f"ground truth (exact J of word 3-shingle sets, one core): {len(t.ev.truth.codes)} pairs"
        f" J >= 0.7, {strong} J >= 0.75; shingling {t.shingle_seconds:.1f} s + all pairs "
        f"(prefix filtering) {t.pairs_seconds:.1f} s = {t.shingle_seconds + t.pairs_seconds:.1f}"
        " s"
    )
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
        med = medians[system]
        ratio = ml / med if ml and med and system != "mllib" else None
        at_least = floor / med if floor and med and system != "mllib" else None
        rows.append(
            (
                system,
                _fmt(med, 1),
                " ".join(_run_cell(r) for r in rs),
                _fmt(ratio, 2) if at_least is None else f">= {at_least:.2f}",
                _fmt(sc.get("recall_j075")),
                _fmt(sc.get("same_cluster_j075")),
                _fmt(sc.get("removal_precision")),
                _fmt(sc.get("pair_precision")),
                sc.get("removed_with_shingles", sc.get("pairs_found", "-")),
            )
        )
    print_table(
        f"job vs MLlib MinHashLSH (L={TABLES}), whole spark-submit processes, "
        f"{' '.join(SPARK_ARGS)}; recall over {strong} pairs J >= 0.75",
        ["system", "wall s (median)", "runs", "MLlib/job", "recall"]
        + ["same cluster", "removal precision", "pair precision", "removed / pairs"],
        rows,
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
        "recall: job = pairs not both kept (bench_clustering.score); same cluster = pairs in "
        "one output cluster; MLlib = pairs found. removal precision: removed documents whose "
        "exact J with their cluster's representative is >= 0.7. pair precision: MLlib pairs "
        "with exact J >= 0.7"
    )
    figures: dict[str, Any] = {
        "bench": "dense",
        "args": vars(args),
        "machine": {"nproc": os.cpu_count(), "load_1_5_15": [round(x, 2) for x in os.getloadavg()]},
        "corpus": {
            "path": str(corpus.path),
            "docs": n,
            "mb": round(corpus.nbytes / 1e6, 2),
            **{k: v for k, v in corpus.meta.items() if k not in ("family", "params")},
            "params": corpus.meta["params"],
        },
        "families": fam,
        "truth": {
            "pairs_j07": len(t.ev.truth.codes),
            "pairs_j075": strong,
            "shingle_seconds": round(t.shingle_seconds, 2),
            "all_pairs_seconds": round(t.pairs_seconds, 2),
        },
        "spark_args": list(SPARK_ARGS),
        "runs": {
            k: [{"seconds": round(r.seconds, 2), "rc": r.rc, "load_1m": list(r.load)} for r in v]
            for k, v in runs.items()
        },
        "median_seconds": {k: (round(v, 2) if v else None) for k, v in medians.items()},
        "mllib_over_job": {
            k: round(ml / v, 3) for k, v in medians.items() if k != "mllib" and ml and v
        },
        "mllib_over_job_at_least": {
            k: round(floor / v, 3) for k, v in medians.items() if k != "mllib" and floor and v
        },
        "scores": scores,
    }
    print(json.dumps(figures, default=str))
    return figures


# --- main ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=50_000, help="documents in the corpus")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--runs", type=int, default=1, help="timed runs of each process (medians)")
    p.add_argument(
        "--with-conf",
        action="store_true",
        help="also time the job with --properties-file conf/spark-local.conf",
    )
    p.add_argument(
        "--timeout", type=float, help="seconds: end a Spark process still running then (failed)"
    )
    p.add_argument(
        "--min-free-gb",
        type=float,
        default=10.0,
        help="end a Spark process when its local dir's disk has less free (default 10)",
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
    corpus = load_or_build(args.docs, args.seed)
    t = ground_truth(corpus)
    outs = {"job": WORK / "job", "job-conf": WORK / "job-conf", "mllib": WORK / "mllib"}
    systems = ["job", "mllib"] + (["job-conf"] if args.with_conf else [])
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
            else:
                cmd = job_command(corpus.path, out, system == "job-conf")
            runs[system].append(timed_process(system, cmd, i, args, timeout))
    scores: dict[str, dict[str, Any] | None] = {}
    for system in systems:
        last = runs[system][-1]
        if last.rc != 0:
            scores[system] = {"failed": last.rc, "log_tail": _log_tail(last.log)}
            continue
        if system == "mllib":
            scores[system] = score_mllib(outs[system], corpus, t)
        else:
            scores[system] = score_job(outs[system], corpus, t)
    report(args, corpus, t, runs, scores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
