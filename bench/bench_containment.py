"""Benchmark of containment dedup: the dedup job (jobs/dedup.py) with ``--containment 0.8``
removes planted excerpts of real documents, and nothing that is not contained, at a bounded
cost.

    .venv/bin/python bench/bench_containment.py [--docs N] [--excerpts N] [--seed S]
        [--dense] [--build-only] [--runs R] [--timeout S]

Targets: recall >= 0.95 of the planted excerpts whose exact containment in their source is
>= 0.85; no document removed for containment whose exact containment in the document kept in
its place is below 0.8; the job with containment at most 2x the job without it on the dense
50,000-document corpus (``--dense``).

1. corpus (``lib.containment_corpus``, seeded by ``--seed``): ``--docs`` real texts of
   ../shared/data/text (Debian copyright files, man pages rendered as text, fortunes) and
   ``--excerpts`` planted excerpts, each a contiguous run of sentences of a source document
   of >= 100 words covering U(0.2, 0.9) of its words, 30 % with 1-3 words replaced or
   deleted, 20 % wrapped in HTML (title, navigation line, paragraphs); the source stays in
   the corpus; ids a seeded permutation. out/bench_containment/corpus.jsonl, truth.jsonl
   (one line per excerpt), origins.json, corpus.meta.json. ``--build-only``: build it and
   print the exact containments, no Spark;
2. ground truth, exact: every document's word-shingle set as the job makes it (the default
   pipeline of ``neardup_udfs.config.load_config``: its normalization ``web``, then
   ``kernels.words_jit.shingle_sets_batch`` with its w), containment C(A in B) =
   |S(A) & S(B)| / |S(A)|;
3. two whole processes, one after the other (``lib.processes``: spark-submit --master
   local[2] --driver-memory 2g, Spark's defaults otherwise, PYSPARK_PYTHON = this python;
   logs out/bench_dense/logs/containment-{off,on}-0.log): jobs/dedup.py on the corpus
   (jsonl, id column doc_id, text column text, the job's default configuration, ``--outputs
   docs,clusters,rejects,samples,pairs``), without containment (output
   out/bench_containment/off) and with ``--containment 0.8`` (out/bench_containment/on);
4. scores, from clusters/ (parquet doc_id, cluster_id, is_representative, similarity,
   relation; a document is removed when it is in clusters/ and not its representative):
   recall = share of the planted excerpts with C(excerpt in source) >= 0.85 and at least
   ``containment_min_shingles`` (20) shingles that are removed (relation containment or
   jaccard), also without the size floor, per kind (plain, edited, HTML) and share of the
   source, and the same for the run without containment; what the missed ones look like
   (their source kept, or removed in the excerpt's favour); excerpts below 0.85 removed
   (fine); precision = every document removed with relation containment, its exact
   C(document in cluster_id): how many below 0.8 (target 0), the smallest, the largest
   difference from the job's similarity column, and rule checks (the kept document has
   more shingles, is kept itself, the removed one has >= 20 shingles); documents removed
   for containment that are not planted excerpts (background contained in background):
   how many, their smallest exact containment. Wall seconds of both runs and their ratio.
   A table, and JSON to out/bench_containment/result.json;

``--dense``: the cost on the dense corpus of bench/bench_dense.py (``lib.dense_corpus``,
50,000 documents, out/bench_dense/corpus-50000.jsonl, built by its builder when absent or
stale): the job without and with ``--containment 0.8`` (its default outputs), ``--runs``
(3) times each, alternated (off, on, off, on, ...), medians and their ratio, the per-pair
ratios; the containment removals of the last run checked exactly as above (texts of those
documents only). JSON to out/bench_containment/result-dense.json.

Both modes record a digest of the job's sources (jobs/dedup.py, neardup_udfs/**/*.py) and
warn when it differs at the end: figures measured while the tree was edited mix versions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow.parquet as pq
from lib import containment_corpus as cc
from lib import dense_corpus
from lib.corpora import SHARED_DATA
from lib.processes import SPARK_ARGS, Run, log, spark_submit, timed_process
from lib.project import ROOT
from lib.tables import print_table

from neardup_udfs.config import load_config
from neardup_udfs.kernels.words_jit import shingle_sets_batch

WORK = cc.WORK
T_REMOVE = 0.8  # the job's --containment
T_RECALL = 0.85  # recall is measured on excerpts at least this contained in their source
MIN_SHINGLES = 20  # the job's containment_min_shingles default
DENSE_DOCS = 50_000
OUTPUTS = "docs,clusters,rejects,samples,pairs"
SHARE_BUCKETS = ((0.0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0))

U64 = npt.NDArray[np.uint64]


# --- exact containment ---------------------------------------------------------------------


def pipeline() -> Any:
    """The job's default pipeline (what it runs without --config and flags)."""
    return load_config(input="x", output="y").pipeline()


def shingle_sets(texts: Sequence[str], p: Any) -> list[U64]:
    """Each text's word-shingle set as the job makes it: sorted unique uint64."""
    normalized = p.normalize_batch(list(texts))
    hashes, offsets = shingle_sets_batch(normalized, p.param("w"))
    return [hashes[offsets[i] : offsets[i + 1]] for i in range(len(texts))]


def containment(a: U64, b: U64) -> float:
    """|a & b| / |a| (0 when a is empty) of two sorted unique sets."""
    if len(a) == 0:
        return 0.0
    return int(np.intersect1d(a, b, assume_unique=True).size) / len(a)


def source_digest() -> str:
    """A digest of the job's sources (jobs/dedup.py and the package's .py files): a bench
    whose digest differs at its end ran on sources edited meanwhile (the figures mix them)."""
    h = hashlib.sha256()
    for path in sorted([ROOT / "jobs" / "dedup.py", *(ROOT / "neardup_udfs").rglob("*.py")]):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


# --- the job -----------------------------------------------------------------------------------


def job_command(corpus: Path, out: Path, contained: float | None, outputs: str | None) -> list[str]:
    cmd = [
        spark_submit(),
        *SPARK_ARGS,
        str(ROOT / "jobs" / "dedup.py"),
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
    if outputs:
        cmd += ["--outputs", outputs]
    if contained is not None:
        cmd += ["--containment", f"{contained:g}"]
    return cmd


def run_job(
    name: str,
    corpus: Path,
    out: Path,
    contained: float | None,
    outputs: str | None,
    index: int,
    args: argparse.Namespace,
) -> Run:
    shutil.rmtree(out, ignore_errors=True)
    return timed_process(
        name, job_command(corpus, out, contained, outputs), index, args, args.timeout
    )


def log_tail(path: Path, lines: int = 12) -> list[str]:
    text = path.read_text("utf-8", "replace").splitlines()
    return [line for line in text if line.strip()][-lines:]


@dataclass
class Outcome:
    """A run's clusters/: per document (cluster_id, is_representative, relation)."""

    rows: dict[str, tuple[str, bool, str | None, float]]
    has_relation: bool
    report: dict[str, Any]

    def status(self, doc_id: str) -> str:
        """kept | containment | jaccard | removed (no relation column) | absent."""
        row = self.rows.get(doc_id)
        if row is None:
            return "absent"
        if row[1]:
            return "kept"
        return row[2] or ("removed" if not self.has_relation else "jaccard")

    def removed(self, doc_id: str) -> bool:
        return self.status(doc_id) not in ("kept", "absent")

    def cluster(self, doc_id: str) -> str | None:
        row = self.rows.get(doc_id)
        return row[0] if row else None


def read_outcome(out: Path) -> Outcome:
    table = pq.read_table(out / "clusters")
    has_relation = "relation" in table.column_names
    cols = {c: table.column(c).to_pylist() for c in table.column_names}
    n = table.num_rows
    relation = cols["relation"] if has_relation else [None] * n
    similarity = cols.get("similarity", [float("nan")] * n)
    rows = {
        d: (c, bool(r), rel, s)
        for d, c, r, rel, s in zip(
            cols["doc_id"], cols["cluster_id"], cols["is_representative"], relation, similarity,
            strict=True,
        )
    }  # fmt: skip
    report_path = out / "report.json"
    report = json.loads(report_path.read_text("utf-8")) if report_path.exists() else {}
    return Outcome(rows, has_relation, report)


# --- scoring ---------------------------------------------------------------------------------


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 5) if whole else None


def check_containment_removals(
    outcome: Outcome, sets: dict[str, U64], planted: set[str], origins: dict[str, str]
) -> dict[str, Any]:
    """Every document removed with relation containment against its cluster_id document,
    exactly; then those that are not planted excerpts."""
    removed = [(d, row) for d, row in outcome.rows.items() if row[2] == "containment"]
    scores: list[float] = []
    below: list[dict[str, Any]] = []
    not_more, equal, kept_not_kept, small = 0, 0, 0, 0
    not_more_examples: list[dict[str, Any]] = []
    diff = 0.0
    background: list[tuple[str, str, float]] = []
    for d, (k, _, _, similarity) in removed:
        c = containment(sets[d], sets[k])
        scores.append(c)
        if similarity is not None and not np.isnan(similarity):
            diff = max(diff, abs(c - similarity))
        if c < T_REMOVE:
            below.append({"doc": d, "kept": k, "exact": round(c, 4), "job": similarity})
        if len(sets[k]) <= len(sets[d]):
            not_more += 1
            equal += len(sets[k]) == len(sets[d])
            if len(not_more_examples) < 5:
                not_more_examples.append(
                    {
                        "doc": d,
                        "kept": k,
                        "shingles": len(sets[d]),
                        "kept_shingles": len(sets[k]),
                        "exact": round(c, 4),
                        "kept_in_doc": round(containment(sets[k], sets[d]), 4),
                    }
                )
        kept_not_kept += outcome.status(k) != "kept"
        small += len(sets[d]) < MIN_SHINGLES
        if d not in planted:
            background.append((d, k, c))
    bg_scores = [c for _, _, c in background]
    return {
        "removed_for_containment": len(removed),
        "below_0_8": len(below),
        "below_0_8_examples": below[:10],
        "exact_min": round(min(scores), 5) if scores else None,
        "exact_median": round(statistics.median(scores), 5) if scores else None,
        "max_abs_diff_from_job_similarity": round(diff, 6),
        "kept_doc_not_more_shingles": not_more,  # the rule: a container has more shingles
        "kept_doc_same_shingles": equal,
        "kept_doc_not_more_examples": not_more_examples,
        "kept_doc_not_representative": kept_not_kept,
        "removed_under_min_shingles": small,
        "not_planted": {
            "count": len(background),
            "exact_min": round(min(bg_scores), 5) if bg_scores else None,
            "in_an_excerpt": sum(k in planted for _, k, _ in background),
            "examples": [
                {"doc": origins.get(d, d), "in": origins.get(k, k), "exact": round(c, 4)}
                for d, k, c in sorted(background, key=lambda x: x[2])[:8]
            ],
        },
    }


def _kinds(e: cc.Excerpt) -> list[str]:
    """The rows of the recall table an excerpt counts in (edited and html: any excerpt with
    word edits, any in HTML; plain: neither)."""
    kinds = ["all"]
    kinds += ["edited"] * e.edited + ["html"] * e.html + ["edited+html"] * (e.edited and e.html)
    if not (e.edited or e.html):
        kinds.append("plain")
    lo, hi = next((lo, hi) for lo, hi in SHARE_BUCKETS if e.share < hi)
    kinds.append(f"share {lo:.1f}-{hi:.1f}")
    return kinds


def score_excerpts(
    excerpts: Sequence[cc.Excerpt], sets: dict[str, U64], runs: dict[str, Outcome]
) -> dict[str, Any]:
    """Recall per run, per kind, what the missed look like, the removed below 0.85."""
    exact = {e.excerpt_id: containment(sets[e.excerpt_id], sets[e.source_id]) for e in excerpts}
    size = {e.excerpt_id: len(sets[e.excerpt_id]) for e in excerpts}
    strong = [e for e in excerpts if exact[e.excerpt_id] >= T_RECALL]
    eligible = [e for e in strong if size[e.excerpt_id] >= MIN_SHINGLES]
    out: dict[str, Any] = {
        "excerpts": len(excerpts),
        "containment_ge_0_85": len(strong),
        "eligible": len(eligible),
        "under_min_shingles": len(strong) - len(eligible),
        "exact_containment_deciles": [
            round(q, 4) for q in statistics.quantiles(exact.values(), n=10)
        ]
        if len(exact) > 1
        else None,
        "runs": {},
    }
    for name, outcome in runs.items():
        status = {e.excerpt_id: outcome.status(e.excerpt_id) for e in excerpts}
        removed = {d for d, s in status.items() if s not in ("kept", "absent")}
        kinds = ["all", "plain", "edited", "html", "edited+html"]
        kinds += [f"share {lo:.1f}-{hi:.1f}" for lo, hi in SHARE_BUCKETS]
        by_kind: dict[str, list[int]] = {k: [0, 0] for k in kinds}
        for e in eligible:
            for k in _kinds(e):
                by_kind[k][0] += 1
                by_kind[k][1] += e.excerpt_id in removed
        missed = [e for e in eligible if e.excerpt_id not in removed]
        why: Counter[str] = Counter()
        examples = []
        for e in missed:
            src = outcome.status(e.source_id)
            if src == "kept":
                reason = "source kept"
            elif outcome.cluster(e.source_id) == e.excerpt_id:
                reason = f"source removed ({src}) in the excerpt's favour"
            else:
                reason = f"source removed ({src}) for another document"
            why[reason] += 1
            if why[reason] <= 5:  # the first few of every reason
                examples.append(
                    {
                        "excerpt": e.excerpt_id,
                        "source": e.source_id,
                        "origin": e.source_origin,
                        "exact": round(exact[e.excerpt_id], 4),
                        "shingles": size[e.excerpt_id],
                        "share": e.share,
                        "edited": e.edited,
                        "html": e.html,
                        "excerpt_status": status[e.excerpt_id],
                        "why": reason,
                    }
                )
        weak_removed = Counter(
            status[e.excerpt_id]
            for e in excerpts
            if exact[e.excerpt_id] < T_RECALL and e.excerpt_id in removed
        )
        favour = sum(why[r] for r in why if "in the excerpt's favour" in r)
        out["runs"][name] = {
            "recall": _share(sum(e.excerpt_id in removed for e in eligible), len(eligible)),
            # the pair deduplicated either way: the excerpt removed, or its source removed in
            # the excerpt's favour (min_id kept the excerpt of a Jaccard pair)
            "pair_resolved": _share(len(eligible) - len(missed) + favour, len(eligible)),
            "recall_without_size_floor": _share(
                sum(e.excerpt_id in removed for e in strong), len(strong)
            ),
            "removed_by_relation": dict(Counter(status[e.excerpt_id] for e in eligible)),
            "by_kind": {
                k: {"eligible": n, "recall": _share(h, n)} for k, (n, h) in by_kind.items()
            },
            "missed": len(missed),
            "missed_why": dict(why),
            "missed_examples": examples,
            "below_0_85_removed": dict(weak_removed),
        }
    return out


# --- main mode -------------------------------------------------------------------------------


def load_truth(path: Path) -> list[cc.Excerpt]:
    with open(path, encoding="utf-8") as fh:
        return [cc.Excerpt(**json.loads(line)) for line in fh]


def print_corpus_truth(corpus: cc.ContainmentCorpus, sets: dict[str, U64]) -> None:
    rows = []
    for lo, hi in ((0.0, 0.5), (0.5, 0.8), (0.8, 0.85), (0.85, 0.95), (0.95, 1.01)):
        group = [
            e
            for e in corpus.excerpts
            if lo <= containment(sets[e.excerpt_id], sets[e.source_id]) < hi
        ]
        rows.append(
            [
                f"{lo:.2f}-{min(hi, 1.0):.2f}",
                len(group),
                sum(e.edited for e in group),
                sum(e.html for e in group),
                sum(len(sets[e.excerpt_id]) < MIN_SHINGLES for e in group),
            ]
        )
    print_table(
        "planted excerpts by exact containment in their source",
        ["containment", "excerpts", "edited", "html", f"< {MIN_SHINGLES} shingles"],
        rows,
    )


def main_mode(args: argparse.Namespace) -> int:
    corpus = cc.build(args.docs, args.excerpts, args.seed)
    log(cc.describe(corpus.meta) + f" -> {corpus.path}")
    p = pipeline()
    ids = [d for d, _ in corpus.docs]
    sets = dict(zip(ids, shingle_sets([t for _, t in corpus.docs], p), strict=True))
    print(cc.describe(corpus.meta))
    print(f"pipeline (ground truth): {p.id}")
    print_corpus_truth(corpus, sets)
    if args.build_only:
        return 0
    digest = source_digest()
    runs: dict[str, Run] = {}
    outcomes: dict[str, Outcome] = {}
    for name, contained in (("off", None), ("on", T_REMOVE)):
        out = WORK / name
        runs[name] = run_job(f"containment-{name}", corpus.path, out, contained, OUTPUTS, 0, args)
        if runs[name].rc == 0:
            outcomes[name] = read_outcome(out)
    planted = {e.excerpt_id for e in corpus.excerpts}
    result: dict[str, Any] = {
        "bench": "containment",
        "args": vars(args),
        "machine": {"nproc": os.cpu_count(), "load_1_5_15": [round(x, 2) for x in os.getloadavg()]},
        "corpus": {**corpus.meta, "path": str(corpus.path)},
        "pipeline": p.id,
        "sources": sources_field(digest),
        "spark_args": list(SPARK_ARGS),
        "runs": {
            k: {"seconds": round(r.seconds, 2), "rc": r.rc, "log": str(r.log)}
            for k, r in runs.items()
        },
    }
    for name, r in runs.items():
        if r.rc != 0:
            result["runs"][name]["log_tail"] = log_tail(r.log)
    for name, o in outcomes.items():
        job_id = o.report.get("pipeline", {}).get("id", "")
        result["runs"][name]["pipeline"] = job_id
        result["runs"][name]["counts"] = o.report.get("counts")
        result["runs"][name]["relation_column"] = o.has_relation
        if not job_id.startswith(p.id):
            result["runs"][name]["warning"] = f"pipeline {job_id!r} is not the truth's {p.id!r}"
    if runs["off"].rc == 0 and runs["on"].rc == 0:
        result["on_over_off_seconds"] = round(runs["on"].seconds / runs["off"].seconds, 3)
    result["excerpts"] = score_excerpts(corpus.excerpts, sets, outcomes)
    if "on" in outcomes:
        on = outcomes["on"]
        result["precision"] = check_containment_removals(on, sets, planted, corpus.origins)
        result["relations_on"] = dict(Counter(on.status(d) for d in ids))
        if "off" in outcomes:
            off = outcomes["off"]
            result["removed_off_kept_on"] = sum(off.removed(d) and not on.removed(d) for d in ids)
            result["removed_on_kept_off"] = sum(on.removed(d) and not off.removed(d) for d in ids)
        if not on.has_relation:
            result["warning"] = "clusters/ of the containment run has no relation column"
    report_main(result)
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "result.json").write_text(json.dumps(result, indent=1, default=str), "utf-8")
    print(f"\nJSON: {WORK / 'result.json'}")
    return 0 if all(r.rc == 0 for r in runs.values()) else 1


def sources_field(before: str) -> dict[str, Any]:
    after = source_digest()
    field: dict[str, Any] = {"digest": before}
    if after != before:
        field["changed_during_bench"] = after
        log(f"WARNING: the job's sources changed during the bench ({before} -> {after})")
    return field


def report_main(result: dict[str, Any]) -> None:
    ex = result["excerpts"]
    runs = result["runs"]
    print_table(
        "runs",
        ["run", "seconds", "exit", "kept", "removed"],
        [
            [
                k,
                r["seconds"],
                r["rc"],
                (r.get("counts") or {}).get("kept", "-"),
                (r.get("counts") or {}).get("removed", "-"),
            ]
            for k, r in runs.items()
        ],
    )
    if "on_over_off_seconds" in result:
        print(f"wall time with / without containment: {result['on_over_off_seconds']:.3f}")
    for name, r in runs.items():
        if "log_tail" in r:
            print(f"\n{name} run failed (exit {r['rc']}), log {r['log']}:")
            print("\n".join("  " + line for line in r["log_tail"]))
    scored = ex["runs"]
    if scored:
        kinds = list(next(iter(scored.values()))["by_kind"])
        rows = []
        for k in kinds:
            if not next(iter(scored.values()))["by_kind"][k]["eligible"]:
                continue
            row: list[Any] = [k, next(iter(scored.values()))["by_kind"][k]["eligible"]]
            row += [scored[n]["by_kind"].get(k, {}).get("recall", "-") for n in scored]
            rows.append(row)
        print_table(
            f"recall: planted excerpts with exact containment >= {T_RECALL} in their source "
            f"and >= {MIN_SHINGLES} shingles, removed (target >= 0.95 with containment)",
            ["excerpts", "eligible", *[f"recall {n}" for n in scored]],
            rows,
        )
        for n, s in scored.items():
            print(
                f"{n}: recall {s['recall']} ({s['removed_by_relation']}), without the size "
                f"floor {s['recall_without_size_floor']}, pair resolved either way (or the "
                f"source removed in the excerpt's favour) {s['pair_resolved']}; missed "
                f"{s['missed']} {s['missed_why']}; excerpts below {T_RECALL} removed: "
                f"{s['below_0_85_removed']}"
            )
    print(
        f"excerpts: {ex['excerpts']}, {ex['containment_ge_0_85']} with containment >= "
        f"{T_RECALL} ({ex['under_min_shingles']} of them under {MIN_SHINGLES} shingles)"
    )
    if "precision" in result:
        pr = result["precision"]
        bg = pr["not_planted"]
        print_table(
            "precision: documents removed with relation containment, exact containment in "
            "their cluster_id document (target: none below 0.8)",
            ["removed", "below 0.8", "min", "median", "max |exact-job|", "rule breaks", "bg"],
            [
                [
                    pr["removed_for_containment"],
                    pr["below_0_8"],
                    pr["exact_min"] if pr["exact_min"] is not None else "-",
                    pr["exact_median"] if pr["exact_median"] is not None else "-",
                    pr["max_abs_diff_from_job_similarity"],
                    pr["kept_doc_not_more_shingles"]
                    + pr["kept_doc_not_representative"]
                    + pr["removed_under_min_shingles"],
                    bg["count"],
                ]
            ],
        )
        print(
            f"rule checks: kept document not more shingles {pr['kept_doc_not_more_shingles']} "
            f"({pr['kept_doc_same_shingles']} as many), not itself kept "
            f"{pr['kept_doc_not_representative']}, removed under {MIN_SHINGLES} shingles "
            f"{pr['removed_under_min_shingles']}"
        )
        print(
            f"not planted, removed for containment (background contained in background): "
            f"{bg['count']}, exact min {bg['exact_min']}, {bg['in_an_excerpt']} in an excerpt"
        )
        for e in bg["examples"][:5]:
            print(f"  {e['exact']:.3f}  {e['doc']}  in  {e['in']}")
        print(f"relations (containment run): {result['relations_on']}")
        if "removed_off_kept_on" in result:
            print(
                f"removed without containment but kept with it: {result['removed_off_kept_on']}; "
                f"removed only with it: {result['removed_on_kept_off']}"
            )
    if "warning" in result:
        print(f"WARNING: {result['warning']}")
    if "changed_during_bench" in result["sources"]:
        print("WARNING: the job's sources changed during the bench: the figures mix versions")


# --- dense mode ------------------------------------------------------------------------------


def dense_path(seed: int) -> Path:
    """The 50,000-document dense corpus, built by lib.dense_corpus when absent or stale."""
    path = dense_corpus.WORK / f"corpus-{DENSE_DOCS}.jsonl"
    meta = path.with_suffix(".meta.json")
    if path.exists() and meta.exists():
        if json.loads(meta.read_text("utf-8")).get("params") == dense_corpus.params(
            DENSE_DOCS, seed
        ):
            log(f"dense corpus reused: {path}")
            return path
    return dense_corpus.load_or_build(DENSE_DOCS, seed).path


def texts_of(path: Path, wanted: set[str]) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["doc_id"] in wanted:
                out[row["doc_id"]] = row["text"]
    return out


def _median(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return statistics.median(xs) if xs else None


def dense_mode(args: argparse.Namespace) -> int:
    path = dense_path(dense_corpus.SEED)
    digest = source_digest()
    runs: dict[str, list[Run]] = {"off": [], "on": []}
    for i in range(args.runs):
        for name, contained in (("off", None), ("on", T_REMOVE)):
            out = WORK / f"dense-{name}"
            runs[name].append(
                run_job(f"containment-dense-{name}", path, out, contained, None, i, args)
            )
    ok = {k: [r.seconds for r in v if r.rc == 0] for k, v in runs.items()}
    medians = {k: _median(v) for k, v in ok.items()}
    pairs = [
        b.seconds / a.seconds
        for a, b in zip(runs["off"], runs["on"], strict=True)
        if a.rc == 0 and b.rc == 0
    ]
    result: dict[str, Any] = {
        "bench": "containment-dense",
        "args": vars(args),
        "machine": {"nproc": os.cpu_count(), "load_1_5_15": [round(x, 2) for x in os.getloadavg()]},
        "corpus": str(path),
        "sources": sources_field(digest),
        "spark_args": list(SPARK_ARGS),
        "runs": {
            k: [
                {
                    "seconds": round(r.seconds, 2),
                    "rc": r.rc,
                    "load_1m": [round(x, 2) for x in r.load],
                }
                for r in v
            ]
            for k, v in runs.items()
        },
        "median_seconds": {k: round(v, 2) if v else None for k, v in medians.items()},
        "on_over_off_medians": round(medians["on"] / medians["off"], 3)
        if medians["on"] and medians["off"]
        else None,
        "on_over_off_per_pair": [round(x, 3) for x in pairs],
    }
    failed = [r for v in runs.values() for r in v if r.rc != 0]
    if failed:
        result["failed"] = [{"log": str(r.log), "tail": log_tail(r.log)} for r in failed[:2]]
    if runs["on"] and runs["on"][-1].rc == 0 and runs["off"][-1].rc == 0:
        on, off = read_outcome(WORK / "dense-on"), read_outcome(WORK / "dense-off")
        result["counts"] = {"off": off.report.get("counts"), "on": on.report.get("counts")}
        result["relations_on"] = dict(Counter(on.status(d) for d in on.rows))
        needed = {d for d, r in on.rows.items() if r[2] == "containment"}
        needed |= {on.rows[d][0] for d in needed}
        texts = texts_of(path, needed)
        order = sorted(texts)
        sets = dict(zip(order, shingle_sets([texts[d] for d in order], pipeline()), strict=True))
        result["precision"] = check_containment_removals(on, sets, set(), {})
    print_table(
        f"dense corpus ({DENSE_DOCS} docs): wall seconds, runs alternated off/on",
        ["run", *[str(i) for i in range(args.runs)], "median"],
        [
            [k, *[f"{r.seconds:.1f}" + ("" if r.rc == 0 else f" (exit {r.rc})") for r in v],
             result["median_seconds"][k] if result["median_seconds"][k] else "-"]
            for k, v in runs.items()
        ],
    )  # fmt: skip
    print(
        f"with / without containment: medians {result['on_over_off_medians']} (target <= 2), "
        f"per pair {result['on_over_off_per_pair']}"
    )
    if "precision" in result:
        pr = result["precision"]
        print(
            f"containment removals: {pr['removed_for_containment']}, below 0.8: "
            f"{pr['below_0_8']}, exact min {pr['exact_min']}, median {pr['exact_median']}; "
            f"relations {result['relations_on']}"
        )
        print(
            f"rule checks: kept document not more shingles {pr['kept_doc_not_more_shingles']} "
            f"({pr['kept_doc_same_shingles']} as many), not itself kept "
            f"{pr['kept_doc_not_representative']}, removed under {MIN_SHINGLES} shingles "
            f"{pr['removed_under_min_shingles']}, max |exact - job similarity| "
            f"{pr['max_abs_diff_from_job_similarity']}"
        )
    if "changed_during_bench" in result["sources"]:
        print("WARNING: the job's sources changed during the bench: the figures mix versions")
    for f in result.get("failed", []):
        print(f"failed run, log {f['log']}:\n" + "\n".join("  " + line for line in f["tail"]))
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "result-dense.json").write_text(json.dumps(result, indent=1, default=str), "utf-8")
    print(f"\nJSON: {WORK / 'result-dense.json'}")
    return 0 if not failed else 1


# --- main ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=cc.DOCS, help="real background documents")
    p.add_argument("--excerpts", type=int, default=cc.EXCERPTS, help="planted excerpts")
    p.add_argument("--seed", type=int, default=cc.SEED, help="the corpus's seed")
    p.add_argument(
        "--dense",
        action="store_true",
        help=f"the cost ratio on bench_dense's {DENSE_DOCS}-document corpus instead",
    )
    p.add_argument("--runs", type=int, default=3, help="--dense: runs of each (alternated)")
    p.add_argument(
        "--build-only", action="store_true", help="build the corpus, print its truth, no Spark"
    )
    p.add_argument("--timeout", type=float, help="seconds: end a job still running then")
    p.add_argument(
        "--min-free-gb",
        type=float,
        default=10.0,
        help="end a job when Spark's local dir's disk has less free (default 10)",
    )
    args = p.parse_args(argv)
    if not SHARED_DATA.is_dir():
        print(f"bench_containment: skipped: {SHARED_DATA} is absent (real texts needed)")
        return 0
    return dense_mode(args) if args.dense else main_mode(args)


if __name__ == "__main__":
    sys.exit(main())
