"""End-to-end benchmark of the Spark dedup job (jobs/dedup.py), with Spark MLlib's MinHashLSH
as the baseline and exact all-pairs Jaccard as the ground truth.

    .venv/bin/python bench/bench_dedup.py [--scale N] [--base B]

Everything runs in this one process with one SparkSession (local[2]):

1. corpora: the real texts of ../shared/data/text (Debian copyright files, fortunes, man
   pages; raw bytes decoded as UTF-8 with replacement) and a scaled corpus of ``--scale``
   documents in near-duplicate families: a source text per family (as many random real
   lines as a random real text has) and 1 + Poisson(1) copies of it with seeded
   random edits (see ``lib.corpora``: ``scaled_corpus``, ``mutate``);
2. the dedup job with its defaults, MinHash (preset semblance, threshold 0.7 -> recall-first
   banding 25 x 5 of 125 slots, hybrid verification) and SimHash (ditto/2, k=3), on both:
   end-to-end wall time and docs/s;
3. MLlib MinHashLSH + approxSimilarityJoin on the same documents, same word 3-shingles,
   same Jaccard threshold;
4. recall and precision of both against exact all-pairs Jaccard of the word 3-shingle sets;
5. scaling: 1x, 2x, 4x a base size, and a corpus of identical documents;
6. (unless --no-semblance) the job once more with semblance's own shape and the signature
   estimate (SEMBLANCE: banding "semblance" = 16 x 8, estimate verification), the previous
   default, on the real texts and the sample.

Prints a table and one JSON line. docs/benchmarks.md records a run. Working files (corpora,
job outputs) go to out/bench_dedup/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash
from lib.corpora import (
    I64,
    SEED,
    SHARED_DATA,
    TEXT_DATA,
    WORK,
    CorpusFile,
    Docs,
    Scaled,
    load_real,
    scaled_corpus,
    write_corpus,
)
from lib.mllib import TARGET_RECALL_075, mllib_join, mllib_tables
from lib.progress import log
from lib.scoring import EvalSet, quality
from lib.spark import machine, start_spark
from lib.tables import print_table
from lib.timing import best_of
from lib.truth import SHINGLE_W, THRESHOLD, exact_pairs, shingle_sets
from pyspark.ml.functions import vector_to_array
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs.config import DedupConfig, load_config
from neardup_udfs.kernels.words_jit import word_shingles_batch
from neardup_udfs.presets import Pipeline, resolve
from neardup_udfs.runs import dedup as dedup_job
from neardup_udfs.udfs import exact_key_udf, fingerprint_udf

COPYRIGHT_TRUTH_W5 = TEXT_DATA / "debian_copyright" / "groundtruth_jaccard_w5_ge0.5.tsv"

MLLIB_SAMPLE = 50_000
EVAL_SAMPLE = 5_000
OUTPUTS = ("docs", "clusters", "pairs", "rejects")
# The reference's own MinHash configuration (the job's default until 2026-11-30): semblance's
# closest-threshold banding (16 x 8 of 128 slots) and the signature estimate.
SEMBLANCE: dict[str, Any] = {"banding": "semblance", "verification": "estimate"}
TARGET_DOCS, TARGET_BYTES = 500_000, 500_000_000
TARGET_PRECISION, TARGET_MLLIB_RECALL_07 = 0.99, 0.95


# --- corpora ------------------------------------------------------------------------------


def warmup_docs(real: Docs) -> Docs:
    """About 200 real texts and 40 edited copies of them: enough near-duplicate pairs that an
    untimed warm-up run reaches every code path of the job, hybrid's exact Jaccard included."""
    picked = real[:: max(1, len(real) // 200)]
    return picked + scaled_corpus(picked, 40, seed=SEED + 2).docs


# --- exact all-pairs Jaccard (the ground truth) ----------------------------------------------


def check_against_shipped_truth(copyright: Docs) -> dict[str, Any]:
    """Self-check of ``exact_pairs``: recompute the shipped copyright ground truth (lowercase
    ``\\w+`` word 5-grams, J >= 0.5) and compare the pair sets."""
    words = re.compile(r"\w+")
    sets = []
    for _, text in copyright:
        tok = words.findall(text.lower())
        grams = {
            xxhash.xxh64_intdigest(" ".join(tok[i : i + 5]).encode()) for i in range(len(tok) - 4)
        }
        sets.append(np.array(sorted(grams), dtype=np.uint64))
    truth = exact_pairs(sets, (1, 2))
    names = [doc_id.removeprefix("copyright/") for doc_id, _ in copyright]
    ours = {tuple(sorted((names[c // truth.n], names[c % truth.n]))) for c in truth.codes.tolist()}
    shipped = set()
    for line in COPYRIGHT_TRUTH_W5.read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            _, a, b = line.split("\t")
            shipped.add(tuple(sorted((a, b))))
    return {
        "shipped_pairs": len(shipped),
        "recomputed_pairs": len(ours),
        "identical": ours == shipped,
        "only_shipped": len(shipped - ours),
        "only_recomputed": len(ours - shipped),
    }


# --- found pairs and quality ---------------------------------------------------------------


def _group_codes(groups: Iterable[Sequence[int]], n: int) -> I64:
    parts = []
    for g in groups:
        if len(g) > 1:
            arr = np.sort(np.asarray(g, dtype=np.int64))
            a, b = np.triu_indices(len(arr), 1)
            parts.append(arr[a] * n + arr[b])
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _edge_codes(a: Sequence[int], b: Sequence[int], n: int) -> I64:
    x, y = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    return np.unique(np.minimum(x, y) * n + np.maximum(x, y))


def cluster_pairs(spark: SparkSession, out: Path, index: dict[str, int]) -> I64:
    """Pairs of evaluated documents in the same output cluster (``clusters/``)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for r in spark.read.parquet(str(out / "clusters")).select("doc_id", "cluster_id").collect():
        if r.doc_id in index:
            groups[r.cluster_id].append(index[r.doc_id])
    return _group_codes(groups.values(), len(index))


def edge_pairs(
    spark: SparkSession, out: Path, index: dict[str, int], leader: dict[str, str]
) -> I64:
    """Pairs the job asserted directly: verified edges (``pairs/``, between exact-duplicate
    leaders) expanded to every member of both groups, plus pairs inside exact-duplicate groups.

    ``leader`` maps every document of the corpus to its exact group's smallest id, as the
    job's exact stage does (same canonical form, ``Pipeline.exact_keys``).
    """
    members: dict[str, list[int]] = defaultdict(list)
    for doc_id, lead in leader.items():
        if doc_id in index:
            members[lead].append(index[doc_id])
    parts = [_group_codes(members.values(), len(index))]
    for r in spark.read.parquet(str(out / "pairs")).select("a", "b").collect():
        ma, mb = members.get(r.a), members.get(r.b)
        if ma and mb:
            a, b = np.repeat(ma, len(mb)), np.tile(mb, len(ma))
            parts.append(_edge_codes(a, b, len(index)))
    return np.unique(np.concatenate(parts))


def exact_leaders(corpus: CorpusFile, preset: str) -> dict[str, str]:
    """Every document's exact-duplicate leader under ``preset`` (the job's exact stage, with
    the job's default normalization: a text it leaves empty is its own group)."""
    normalize = DedupConfig.__dataclass_fields__["normalize"].default
    texts = [str(t) for t in resolve(preset, normalize=normalize).normalize_batch(
        [t for _, t in corpus.docs]
    )]  # fmt: skip
    if preset == "semblance":
        # Equal token text <=> equal word 3-shingle stream (up to 64-bit hash collisions), and
        # the compiled stream is ~15x faster than the per-document token text; texts of fewer
        # than 3 tokens (empty stream) get the preset's own key.
        hashes, offsets = word_shingles_batch(texts, SHINGLE_W)
        keys = [
            xxhash.xxh3_128_hexdigest(hashes[offsets[i] : offsets[i + 1]].tobytes())
            if offsets[i + 1] > offsets[i]
            else "t" + resolve(preset).exact_keys([texts[i]])[0]
            for i in range(len(texts))
        ]
    else:
        keys = resolve(preset).exact_keys(texts)
    if normalize != "none":
        ids = [d for d, _ in corpus.docs]
        keys = [k if t else f"empty:{d}" for d, t, k in zip(ids, texts, keys, strict=True)]
    lead: dict[str, str] = {}
    for (doc_id, _), key in zip(corpus.docs, keys, strict=True):
        if key not in lead or doc_id < lead[key]:
            lead[key] = doc_id
    return {doc_id: lead[key] for (doc_id, _), key in zip(corpus.docs, keys, strict=True)}


def make_eval(name: str, docs: Docs) -> EvalSet:
    sets = shingle_sets([t for _, t in docs])
    truth = exact_pairs(sets)
    log(
        f"truth {name}: {len(docs)} docs, {len(truth.codes)} pairs J >= 0.7 ({truth.seconds:.1f} s)"
    )
    return EvalSet(name, docs, sets, truth)


def family_sample(scaled: Scaled, limit: int, size: int, seed: int = SEED) -> list[int]:
    """Positions (< ``limit``) of ``size`` documents: all copies of randomly chosen
    families, so that the sample keeps its near-duplicate families (a uniform sample of a
    large corpus keeps almost no pairs)."""
    rng = random.Random(seed + 1)
    by_source: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(scaled.source[:limit].tolist()):
        by_source[s].append(i)
    sources = sorted(by_source)
    rng.shuffle(sources)
    picked: list[int] = []
    for s in sources:
        if len(picked) >= size:
            break
        picked.extend(by_source[s][: size - len(picked)])
    return sorted(picked)


# --- the runs ------------------------------------------------------------------------------


@dataclass
class JobRun:
    label: str
    corpus: CorpusFile
    method: str
    seconds: float
    summary: dedup_job.Summary
    output: Path
    load: tuple[float, float]  # 1-minute load average before and after
    pipeline: Pipeline
    verification: str  # MinHash: exact | estimate; SimHash: distance
    variant: bool = False  # the SEMBLANCE MinHash configuration instead of the defaults

    @property
    def docs_s(self) -> float:
        return self.corpus.n / self.seconds

    @property
    def system(self) -> str:
        return f"neardup {self.method}" + (" semblance 16x8 estimate" if self.variant else "")

    def figures(self) -> dict[str, Any]:
        s = self.summary
        return {
            "corpus": self.corpus.name,
            "method": self.method,
            "pipeline": s.pipeline,
            "verification": self.verification,
            "docs": self.corpus.n,
            "mb": round(self.corpus.nbytes / 1e6, 2),
            "seconds": round(self.seconds, 1),
            "docs_s": round(self.docs_s, 1),
            "mb_s": round(self.corpus.nbytes / 1e6 / self.seconds, 3),
            "exact_duplicates": s.exact_duplicates,
            "candidates": s.candidates,
            "verified": s.verified,
            "clusters": s.clusters,
            "kept": s.kept,
            "removed": s.removed,
            "chained": s.chained,
            "hot_buckets": s.hot_buckets,
            "rounds": s.rounds,
            "stage_seconds": s.seconds,
            "load_1min_before_after": list(self.load),
        }


def run_job(
    spark: SparkSession, corpus: CorpusFile, method: str, label: str, variant: bool = False
) -> JobRun:
    """One end-to-end run of ``jobs/dedup.py``'s ``run`` (read jsonl .. write parquet)."""
    out = WORK / "runs" / label
    shutil.rmtree(out, ignore_errors=True)
    minhash = method == "minhash"
    config = load_config(
        None,
        input=str(corpus.path),
        output=str(out),
        input_format="jsonl",
        id_col="id",
        text_col="text",
        method=method,
        threshold=THRESHOLD if minhash else None,
        outputs=OUTPUTS,
        **(SEMBLANCE if variant else {}),
    )
    log(f"job {label}: {method} on {corpus.name} ({corpus.n} docs)")
    before = os.getloadavg()[0]
    result: list[dedup_job.Summary] = []
    seconds = best_of(lambda: result.append(dedup_job.run(spark, config)), 1)
    load = (before, os.getloadavg()[0])
    check = config.verification if minhash else "distance"
    run = JobRun(label, corpus, method, seconds, result[0], out, load, config.pipeline(), check)
    run.variant = variant
    log(f"job {label}: {seconds:.1f} s, {run.docs_s:.0f} docs/s, stages {result[0].seconds}")
    return run


@dataclass
class MllibRun:
    corpus: CorpusFile
    tables: int
    seconds: float
    with_shingles: int  # documents with at least one shingle (MinHashLSH rejects empty vectors)
    pairs: list[tuple[str, str]]
    load: tuple[float, float]
    buckets: dict[str, int]  # largest bucket, and join rows (sum of squared bucket sizes)

    def figures(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus.name,
            "docs": self.corpus.n,
            "docs_with_shingles": self.with_shingles,
            "num_hash_tables": self.tables,
            "seconds": round(self.seconds, 1),
            "docs_s": round(self.corpus.n / self.seconds, 1),
            "pairs": len(self.pairs),
            "load_1min_before_after": list(self.load),
            "buckets": self.buckets,
        }


def run_mllib(spark: SparkSession, corpus: CorpusFile, label: str, tables: int) -> MllibRun:
    """MinHashLSH + approxSimilarityJoin (self-join, Jaccard distance < 1 - 0.7), read jsonl ..
    write the pairs as parquet, timed end to end like the job (``mllib_join``)."""
    out = WORK / "runs" / label
    shutil.rmtree(out, ignore_errors=True)
    counted: list[int] = []
    kept: list[DataFrame] = []

    def job() -> None:
        hashed, count = mllib_join(spark, corpus.path, out, tables)
        counted.append(count)
        kept.append(hashed)

    log(f"mllib {label}: {tables} tables on {corpus.name} ({corpus.n} docs)")
    before = os.getloadavg()[0]
    seconds = best_of(job, 1)
    load = (before, os.getloadavg()[0])
    pairs = [(r.a, r.b) for r in spark.read.parquet(str(out)).select("a", "b").collect()]
    # untimed: why the join costs what it costs (MLlib has no cap on bucket sizes)
    sizes = (
        kept[0]
        .select(F.posexplode("hashes").alias("table", "h"))
        .select("table", vector_to_array("h")[0].alias("h"))
        .groupBy("table", "h")
        .count()
    )
    row = sizes.agg(F.max("count"), F.sum(F.col("count") * F.col("count"))).first()
    kept[0].unpersist()
    buckets = {"largest": int(row[0] or 0), "join_rows": int(row[1] or 0)} if row else {}
    log(f"mllib {label}: {seconds:.1f} s, {len(pairs)} pairs, buckets {buckets}")
    return MllibRun(corpus, tables, seconds, counted[0], pairs, load, buckets)


# --- scoring -------------------------------------------------------------------------------


def mllib_codes(ev: EvalSet, run: MllibRun) -> I64:
    a, b = [], []
    for x, y in run.pairs:
        if x in ev.index and y in ev.index:
            a.append(ev.index[x])
            b.append(ev.index[y])
    return _edge_codes(a, b, len(ev.docs))


class Leaders:
    """``exact_leaders`` per (corpus, preset), computed once."""

    def __init__(self) -> None:
        self._done: dict[tuple[str, str], dict[str, str]] = {}

    def get(self, corpus: CorpusFile, method: str) -> dict[str, str]:
        preset = "semblance" if method == "minhash" else "ditto/2"
        key = (corpus.name, preset)
        if key not in self._done:
            self._done[key] = exact_leaders(corpus, preset)
        return self._done[key]


def score_runs(
    spark: SparkSession, ev: EvalSet, jobs: Sequence[JobRun], ml: MllibRun, leaders: Leaders
) -> None:
    """Score the job's runs (both readings of "found") and MLlib's on ``ev``."""
    for run in jobs:
        found = cluster_pairs(spark, run.output, ev.index)
        ev.results[f"{run.system} (cluster pairs)"] = quality(found, ev)
        lead = leaders.get(run.corpus, run.method)
        found = edge_pairs(spark, run.output, ev.index, lead)
        ev.results[f"{run.system} (edges + exact dups)"] = quality(found, ev, run)
    ev.results[f"MLlib MinHashLSH L={ml.tables}"] = quality(mllib_codes(ev, ml), ev)


def check_counts(run: JobRun, leaders: Leaders) -> list[str]:
    """Cross-checks of the job's summary: record conservation, and its exact-duplicate count
    against an independent one (same canonical form, computed here without Spark)."""
    problems = []
    s = run.summary
    if s.kept + s.removed + s.rejected != s.input or s.input != run.corpus.n:
        problems.append(f"{run.label}: kept + removed + rejected != input")
    groups = len(set(leaders.get(run.corpus, run.method).values()))
    if s.exact_duplicates != run.corpus.n - groups:
        problems.append(
            f"{run.label}: exact_duplicates {s.exact_duplicates}, independent count "
            f"{run.corpus.n - groups}"
        )
    return problems


# --- report --------------------------------------------------------------------------------


def lsh_curve(variant: bool = False) -> dict[str, Any]:
    """The job's MinHash banding at threshold 0.7 (default, or SEMBLANCE's) and its candidate
    probability per Jaccard similarity, 1 - (1 - J^rows)^bands."""
    options = SEMBLANCE if variant else {}
    pipeline = load_config(None, input="-", output="-", threshold=THRESHOLD, **options).pipeline()
    b, r = pipeline.param("bands"), pipeline.param("rows")
    curve = {f"{j:.2f}": round(1 - (1 - j**r) ** b, 4) for j in (0.6, 0.65, 0.7, 0.75, 0.8, 0.9)}
    return {"bands": b, "rows": r, "lsh_threshold": round(pipeline.threshold, 4), "p": curve}


# --- main ----------------------------------------------------------------------------------


@dataclass
class Corpora:
    parts: dict[str, Docs]
    real: CorpusFile
    scaled: Scaled
    large: CorpusFile
    sample: CorpusFile  # MLlib's sample: a prefix of ``large`` (or all of it)
    prefixes: dict[int, CorpusFile]  # scaling: 1x, 2x, 4x the base
    identical: CorpusFile
    identical_source: str
    warm: CorpusFile
    seconds: float


def build_corpora(args: argparse.Namespace) -> Corpora:
    started = time.perf_counter()
    parts = {k: v[:: args.real_every] for k, v in load_real().items()}
    real_docs = [d for docs in parts.values() for d in docs]
    real = write_corpus("real", real_docs)
    scaled = scaled_corpus(real_docs, args.scale)
    large = write_corpus(f"scaled_{args.scale}", scaled.docs)

    written: dict[int, CorpusFile] = {large.n: large}

    def prefix(n: int) -> CorpusFile:
        n = min(n, large.n)
        if n not in written:
            written[n] = write_corpus(f"prefix_{n}", large.docs[:n])
        return written[n]

    base = args.base or max(1, min(12_500, args.scale // 4))
    prefixes = {n: prefix(n) for n in (base, 2 * base, 4 * base) if n <= large.n}
    distinct = prefixes[base]
    mean = distinct.nbytes / distinct.n
    pick = min(real_docs, key=lambda d: abs(len(d[1].encode("utf-8")) - mean))
    width = len(str(base))
    identical = write_corpus(
        f"identical_{base}", [(f"i{i:0{width}d}", pick[1]) for i in range(base)]
    )
    warm = write_corpus("warmup", warmup_docs(real_docs))
    seconds = time.perf_counter() - started
    log(f"corpora built in {seconds:.1f} s: real {real.n}, scaled {large.n}")
    return Corpora(
        parts,
        real,
        scaled,
        large,
        prefix(min(args.mllib_sample, large.n)),
        prefixes,
        identical,
        pick[0],
        warm,
        seconds,
    )


def warm_up(spark: SparkSession, warm: CorpusFile, tables: int) -> None:
    """Untimed: JVM and plan code paths, Python workers, both presets' JIT kernels, MLlib."""
    run_job(spark, warm, "minhash", "warmup_minhash")
    ditto = resolve("ditto/2")
    text = F.col("text")
    df = spark.read.json(str(warm.path)).repartition(2)
    df = df.select(fingerprint_udf(ditto)(text), exact_key_udf(ditto)(text))
    df.write.format("noop").mode("overwrite").save()
    run_mllib(spark, warm, "warmup_mllib", tables)


@dataclass
class Runs:
    jobs: dict[str, JobRun]
    scaling: dict[int, JobRun]
    mllib: dict[str, MllibRun]


def spark_runs(spark: SparkSession, c: Corpora, tables: int, variant: bool) -> Runs:
    warm_up(spark, c.warm, tables)
    jobs: dict[str, JobRun] = {}
    mllib: dict[str, MllibRun] = {}
    for method in ("minhash", "simhash"):
        jobs[f"real_{method}"] = run_job(spark, c.real, method, f"real_{method}")
    mllib["real"] = run_mllib(spark, c.real, "mllib_real", tables)
    for method in ("minhash", "simhash"):
        jobs[f"large_{method}"] = run_job(spark, c.large, method, f"large_{method}")
    if c.sample is not c.large:
        jobs["sample_minhash"] = run_job(spark, c.sample, "minhash", "sample_minhash")
    mllib["sample"] = run_mllib(spark, c.sample, "mllib_sample", tables)
    if variant:
        for name, corpus in (("real", c.real), ("sample", c.sample)):
            label = f"{name}_minhash_semblance"
            jobs[label] = run_job(spark, corpus, "minhash", label, variant=True)
    scaling: dict[int, JobRun] = {}
    for n, corpus in c.prefixes.items():
        if corpus is c.large:
            scaling[n] = jobs["large_minhash"]
        elif corpus is c.sample:
            scaling[n] = jobs["sample_minhash"]
        else:
            scaling[n] = run_job(spark, corpus, "minhash", f"scale_{n}")
    jobs["identical_minhash"] = run_job(spark, c.identical, "minhash", "identical_minhash")
    return Runs(jobs, scaling, mllib)


def report(
    c: Corpora, runs: Runs, evals: Sequence[EvalSet], figures: dict[str, Any], tables: int
) -> None:
    jobs, ml = runs.jobs, runs.mllib
    all_runs = {**jobs, **{f"scale_{n}": r for n, r in runs.scaling.items()}}
    sample_job = jobs["sample_minhash"] if "sample_minhash" in jobs else jobs["large_minhash"]
    base = min(runs.scaling)
    figures["job_runs"] = {k: r.figures() for k, r in all_runs.items()}
    figures["mllib"] = {k: r.figures() for k, r in ml.items()}
    figures["mllib_over_neardup_seconds"] = {
        "real": round(ml["real"].seconds / jobs["real_minhash"].seconds, 2),
        "sample": round(ml["sample"].seconds / sample_job.seconds, 2),
    }
    figures["quality"] = {
        ev.name: {name: q.figures() for name, q in ev.results.items()} for ev in evals
    }
    figures["truth_seconds"] = {ev.name: round(ev.truth.seconds, 2) for ev in evals}
    figures["scaling_seconds"] = {str(n): round(r.seconds, 1) for n, r in runs.scaling.items()}
    figures["identical_vs_distinct_seconds"] = {
        "identical": round(jobs["identical_minhash"].seconds, 1),
        "distinct": round(runs.scaling[base].seconds, 1),
    }
    large = c.large
    met = large.n >= TARGET_DOCS and large.nbytes >= TARGET_BYTES
    figures["target_scale_met"] = met

    print("neardup dedup job, end to end (read jsonl .. write parquet), local[2], one session")
    m = figures["machine"]
    print(f"machine: nproc {m['nproc']}, 1/5/15-min load at start {m['load_1_5_15']}")
    print(
        f"real texts: {c.real.n} docs, {c.real.nbytes / 1e6:.1f} MB "
        f"({', '.join(f'{k} {len(v)}' for k, v in c.parts.items())})"
    )
    print(
        f"scaled corpus: {large.n} docs, {large.nbytes / 1e6:.1f} MB in {c.scaled.source.max() + 1}"
        f" families (scaled_corpus: 1 + Poisson(1) seeded random edits of a per-family source"
        f" text). Target {TARGET_DOCS} docs / {TARGET_BYTES // 10**6} MB: "
        f"{'met' if met else 'timed by --large-only --scale 500000 (make bench runs it)'}"
    )
    print(f"edits applied (documents): {figures['scaled_recipe']}")
    print(f"identical corpus: {c.identical.n} copies of {c.identical_source}")
    print_table(
        "dedup job runs (seconds = wall time of dedup.run, one run each)",
        ["run", "method", "docs", "MB", "seconds", "docs/s", "exact", "cand", "verified"]
        + ["clusters", "removed", "chained", "hot", "load 1m"],
        [
            (k, r.system.removeprefix("neardup "), r.corpus.n, round(r.corpus.nbytes / 1e6, 1))
            + (r.seconds, round(r.docs_s))
            + (r.summary.exact_duplicates, r.summary.candidates, r.summary.verified)
            + (r.summary.clusters, r.summary.removed, r.summary.chained, r.summary.hot_buckets)
            + (f"{r.load[0]:.1f}/{r.load[1]:.1f}",)
            for k, r in all_runs.items()
        ],
    )
    stages = list(jobs["real_minhash"].summary.seconds)
    print_table(
        "stage seconds",
        ["run", *stages],
        [(k, *(r.summary.seconds.get(s, 0.0) for s in stages)) for k, r in all_runs.items()],
    )
    ratio = figures["mllib_over_neardup_seconds"]
    print_table(
        f"MLlib MinHashLSH (numHashTables={tables}) vs neardup minhash, same documents",
        ["corpus", "docs", "neardup s", "MLlib s", "MLlib/neardup", "MLlib pairs"],
        [
            (r.corpus.name, r.corpus.n, j.seconds, r.seconds, ratio[k], len(r.pairs))
            for k, r, j in (
                ("real", ml["real"], jobs["real_minhash"]),
                ("sample", ml["sample"], sample_job),
            )
        ],
    )
    for ev in evals:
        print_table(
            f"quality on {ev.name} ({len(ev.docs)} docs; truth: exact J of word 3-shingle sets)",
            ["system", "found", "T>=.7", "T>=.75", "R>=.7", "R>=.75", "precision"]
            + ["fp .6-.7", "fp <.6", "fp no-shingle same/diff", "misses >=.75"],
            [
                (name, q.found, q.truth_07, q.truth_075, q.recall_07, q.recall_075, q.precision)
                + (q.fp_near, q.fp_far, f"{q.fp_empty_same}/{q.fp_empty_diff}", q.misses or "")
                for name, q in ev.results.items()
            ],
        )
    identical = jobs["identical_minhash"]
    print_table(
        "scaling (minhash)",
        ["corpus", "docs", "seconds", "docs/s"],
        [(r.corpus.name, n, r.seconds, round(r.docs_s)) for n, r in runs.scaling.items()]
        + [(identical.corpus.name, identical.corpus.n, identical.seconds, round(identical.docs_s))],
    )
    print(f"\njob MinHash banding at 0.7: {figures['neardup_lsh']}")
    if figures["neardup_lsh_semblance"]:
        print(f"semblance 16x8 (estimate verification): {figures['neardup_lsh_semblance']}")
    print(f"MLlib buckets: { {k: r.buckets for k, r in ml.items()} }")
    print(
        "found pairs: 'cluster pairs' = every pair inside one output cluster; 'edges + exact "
        "dups' = verified pairs (pairs/) expanded over exact-duplicate groups, plus the pairs "
        "inside those groups; MLlib = its join's pairs"
    )
    print(
        f"targets: recall(J >= 0.75) >= {TARGET_RECALL_075}, precision >= {TARGET_PRECISION}, "
        f"MLlib recall(J >= 0.7) >= {TARGET_MLLIB_RECALL_07}"
    )
    print(f"problems: {figures['problems'] or 'none'}")


def large_only(args: argparse.Namespace) -> int:
    """``--large-only``: build the scaled corpus and time both methods on it, nothing else.

    For the 500,000-document target: scoring and MLlib at that size do not fit the machine's
    time budget, so the full bench runs at a smaller ``--scale``."""
    started = time.perf_counter()
    real_docs = [d for docs in load_real().values() for d in docs]
    scaled = scaled_corpus(real_docs, args.scale)
    large = write_corpus(f"scaled_{args.scale}", scaled.docs)
    built = time.perf_counter() - started
    log(f"corpus built in {built:.1f} s: {large.n} docs, {large.nbytes / 1e6:.1f} MB")
    figures: dict[str, Any] = {"bench": "dedup_large", "machine": machine(), "args": vars(args)}
    figures["corpus"] = {"docs": large.n, "mb": round(large.nbytes / 1e6, 2)}
    figures["scaled_recipe"] = dict(scaled.recipe.most_common())
    figures["corpus_build_seconds"] = round(built, 1)
    spark = start_spark()
    try:
        warm = write_corpus("warmup", warmup_docs(real_docs))
        run_job(spark, warm, "minhash", "warmup_minhash")
        runs = [run_job(spark, large, m, f"large_{m}") for m in ("minhash", "simhash")]
    finally:
        spark.stop()
    figures["job_runs"] = {r.label: r.figures() for r in runs}
    print_table(
        f"dedup job on the scaled corpus ({large.n} docs, {large.nbytes / 1e6:.1f} MB)",
        ["run", "seconds", "docs/s", "MB/s", "exact", "cand", "verified", "removed", "load 1m"],
        [
            (r.label, r.seconds, round(r.docs_s), round(large.nbytes / 1e6 / r.seconds, 2))
            + (r.summary.exact_duplicates, r.summary.candidates, r.summary.verified)
            + (r.summary.removed, f"{r.load[0]:.1f}/{r.load[1]:.1f}")
            for r in runs
        ],
    )
    print(json.dumps(figures, default=str))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=50_000, help="documents in the scaled corpus")
    p.add_argument("--base", type=int, help="scaling base size (default: min(12,500, scale/4))")
    p.add_argument("--eval-sample", type=int, default=EVAL_SAMPLE)
    p.add_argument("--mllib-sample", type=int, default=MLLIB_SAMPLE)
    p.add_argument("--tables", type=int, help="MLlib numHashTables (default: mllib_tables())")
    p.add_argument("--real-every", type=int, default=1, help="smoke tests: every k-th real text")
    p.add_argument(
        "--no-semblance",
        dest="variant",
        action="store_false",
        help="skip the SEMBLANCE MinHash runs (16 x 8, estimate)",
    )
    p.add_argument(
        "--large-only", action="store_true", help="only time both methods on --scale documents"
    )
    args = p.parse_args(argv)
    if not SHARED_DATA.is_dir():
        print(f"bench_dedup: skipped: {SHARED_DATA} is absent (the real texts are needed)")
        return 0
    if args.large_only:
        return large_only(args)
    started = time.perf_counter()
    tables = args.tables or mllib_tables()
    figures: dict[str, Any] = {"bench": "dedup_e2e", "date": "2026-11-30", "machine": machine()}
    figures["args"] = vars(args)
    figures["neardup_lsh"] = lsh_curve()
    figures["neardup_lsh_semblance"] = lsh_curve(variant=True) if args.variant else None

    c = build_corpora(args)
    figures["corpora"] = {
        f.name: {"docs": f.n, "mb": round(f.nbytes / 1e6, 2)}
        for f in (c.real, c.large, c.sample, c.identical, *c.prefixes.values())
    }
    figures["real_parts"] = {k: len(v) for k, v in c.parts.items()}
    figures["scaled_recipe"] = dict(c.scaled.recipe.most_common())
    figures["identical_doc"] = c.identical_source
    figures["corpus_build_seconds"] = round(c.seconds, 1)

    # the exact ground truth needs no Spark
    figures["truth_self_check"] = check_against_shipped_truth(load_real()["copyright"])
    log(f"truth self-check: {figures['truth_self_check']}")
    positions = family_sample(c.scaled, c.sample.n, args.eval_sample)
    evals = [
        make_eval("copyright", c.parts["copyright"]),
        make_eval("real", c.real.docs),
        make_eval(f"scaled sample {len(positions)}", [c.large.docs[i] for i in positions]),
    ]

    spark = start_spark()
    try:
        runs = spark_runs(spark, c, tables, args.variant)
        leaders = Leaders()
        jobs = runs.jobs
        real_jobs = [jobs["real_minhash"], jobs["real_simhash"]]
        sample_jobs = [jobs.get("sample_minhash", jobs["large_minhash"]), jobs["large_simhash"]]
        if args.variant:
            real_jobs.append(jobs["real_minhash_semblance"])
            sample_jobs.append(jobs["sample_minhash_semblance"])
        score_runs(spark, evals[0], real_jobs, runs.mllib["real"], leaders)
        score_runs(spark, evals[1], real_jobs, runs.mllib["real"], leaders)
        score_runs(spark, evals[2], sample_jobs, runs.mllib["sample"], leaders)
        distinct_runs = {r.label: r for r in [*jobs.values(), *runs.scaling.values()]}
        problems = [m for r in distinct_runs.values() for m in check_counts(r, leaders)]
    finally:
        spark.stop()
    s = runs.jobs["identical_minhash"].summary
    if (s.exact_duplicates, s.kept, s.clusters) != (c.identical.n - 1, 1, 1):
        problems.append(f"identical corpus: {s}")
    if not figures["truth_self_check"]["identical"]:
        problems.append("exact_pairs does not reproduce the shipped copyright ground truth")
    figures["problems"] = problems
    report(c, runs, evals, figures, tables)
    figures["total_seconds"] = round(time.perf_counter() - started, 1)
    print(f"total wall time {figures['total_seconds']:.0f} s")
    print(json.dumps(figures, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
