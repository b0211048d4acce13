"""Benchmark: web text in, right answers out (HTML pages and CJK text through the dedup job).

    python bench/bench_web.py [--corpus web|zh|ja|all] [--normalize web|none] [--json PATH]
                              [--out DIR] [--threshold T] [--docs N] [--build-only]

Three corpora of planted near-duplicate families, with exact ground truth computed on text
extracted independently of the job (``lib.visible_text``, built on ``html.parser``; not
``neardup_udfs.kernels.web_text``):

``web``
    the distinct ``text/html`` responses of the WARC files under ../shared/data/crawl
    (decoded as UTF-8 with replacement, so the few GB2312 / windows-1251 pages keep their
    mojibake; pages whose visible text has at least 80 words and differs from every earlier
    page's). Families: each page itself (its original HTML) with 1-4 near copies of its
    visible text, or alone; and passages of 80-400 words cut from the pages' visible text
    (at line boundaries, at most a third of their page), written as plain text (half of
    them) or in one of the two HTML forms below, with 1-4 near copies, or alone. A copy is
    the visible words edited (a few words substituted, two sentences swapped, a header or
    footer line added, spaces doubled), emitted as plain text, as minimal markup
    (``<html><body><p>..</p></body></html>``) or "re-saved as an archiving crawler saves
    pages": a full HTML document that inlines the largest real ``<style>`` and ``<script>``
    of the crawl (the same for every re-saved document, as in the reported bug where
    unrelated archived pages looked alike), with links rewritten to
    ``http://archive.example/web/...`` and the same archive banner ``<div>`` on top.
``zh`` / ``ja``
    paragraphs of the Debian packages manpages-zh (/usr/share/man/zh_CN, zh_TW: one of the
    two variants of each page) and manpages-ja (/usr/share/man/ja): troff stripped by
    ``lib.man_corpus.troff_paragraphs``; paragraphs mostly CJK (at least 5 CJK characters and a
    quarter of the characters other than whitespace); paragraphs found on several pages
    (headings, translation credits) dropped; documents of 200-1,500 characters of
    consecutive paragraphs. Families: a base and 1-4 copies with character edits (a few
    characters substituted, inserted or deleted, two sentences swapped, a line added, a line
    re-wrapped), a third of the copies wrapped in minimal HTML; or a base alone.

A passage or CJK base is skipped when half of its shingles already occur in another page or
another base, so that families rarely overlap (the crawl's own near-duplicate pages do); every
overlap left is in the ground truth anyway.
Document ids are a seeded permutation (the job's ``min_id`` representative is no systematic
family member). Everything is seeded (``--seed``).

Ground truth: web, word 3-shingles of the visible text, tokens the lowercase runs of Unicode
letters and digits (a page whose visible text is mostly CJK: as for CJK); CJK, character
4-grams of the visible text without whitespace. The exact Jaccard of every pair within a
family and of every pair anywhere with J >= 0.5 (an inverted index over prefix-filtered
shingles: no all-pairs loop).

Scores, from the job's ``clusters/`` (parquet ``doc_id``, ``cluster_id``,
``is_representative``; a document is kept iff it is its cluster's representative, removed
iff it is in ``clusters/`` and is not, rejected (and not kept) iff it is absent):

- ``resolved``: of the pairs with J >= threshold + 0.05, the share not both kept;
- ``one_cluster``: of those pairs, the share with both documents in one cluster;
- ``removal_precision``: of the removed documents, the share whose J with their cluster's
  representative (the document kept in their place) is >= 0.5; ``removal_precision_at_t``
  the share >= the threshold; ``removed_unrelated`` the removed documents that share no
  shingle of visible text with their representative, ``removed_unrelated_but_banner`` those
  that share none but the archive banner's (every re-saved document has the banner), by
  kinds (``removed<-representative``);
- ``resolved_by_kinds``: ``resolved`` by the kinds of the pair's two documents.

``--build-only`` writes the corpora (``DIR/corpora/NAME.jsonl``: ``id``, ``text``, the job's
input; ``NAME.meta.jsonl``: family, kind, role, source, edits, visible text;
``NAME.truth.tsv``: the ground-truth pairs) and prints their sizes and pair counts, with no
Spark. Otherwise the corpora are written the same way and the dedup job (``jobs/dedup.py``
``run``, default configuration, ``threshold``) runs over each, once per ``--normalize``
given (repeatable; passed to ``load_config`` as ``normalize=`` only when given, so that the
bench also runs against a job without that setting), into ``DIR/runs/NAME-SETTING``; one
JSON line per corpus and setting. Default DIR: out/bench_web.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lib.man_corpus import MAN_SOURCES, build_cjk, man_files
from lib.planted_families import CORPORA, SEED, TARGET, Corpus
from lib.project import ROOT
from lib.web_corpus import CRAWL, build_web, warc_files, warc_html
from lib.web_truth import FLOOR, THRESHOLD, Truth, ground_truth, read_clusters, score, truth_counts

WORK = ROOT / "out" / "bench_web"


# --- corpora, files, runs ---------------------------------------------------------------------


def build(name: str, seed: int = SEED, target: int | None = None) -> Corpus:
    """Corpus ``name`` from the machine's data (the WARC samples; the Debian man pages)."""
    if name == "web":
        files = warc_files()
        if not files:
            raise SystemExit(f"no WARC files under {CRAWL}")
        return build_web(warc_html(files), seed, TARGET["web"] if target is None else target)
    files = man_files(name)
    if not files:
        package = MAN_SOURCES[name][0]
        raise SystemExit(f"no man pages of {package}: apt-get install -y {package}")
    return build_cjk(name, files, seed, target)


def write_corpus(corpus: Corpus, truth: Truth, directory: Path) -> Path:
    """``NAME.jsonl`` (the job's input), ``NAME.meta.jsonl``, ``NAME.truth.tsv``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{corpus.name}.jsonl"
    with (
        open(path, "w", encoding="utf-8") as fh,
        open(directory / f"{corpus.name}.meta.jsonl", "w", encoding="utf-8") as meta,
    ):
        for d in corpus.docs:
            fh.write(json.dumps({"id": d.doc_id, "text": d.text}, ensure_ascii=False) + "\n")
            row = {
                "id": d.doc_id,
                "family": d.family,
                "kind": d.kind,
                "role": d.role,
                "source": d.source,
                "edits": list(d.edits),
                "visible": d.visible,
            }
            meta.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(directory / f"{corpus.name}.truth.tsv", "w", encoding="utf-8") as fh:
        fh.write("a\tb\tjaccard\tsame_family\n")
        for (a, b), j in sorted(truth.pairs.items()):
            da, db = corpus.docs[a], corpus.docs[b]
            same = da.family is not None and da.family == db.family
            fh.write(f"{da.doc_id}\t{db.doc_id}\t{j:.6f}\t{int(same)}\n")
    return path


def describe(corpus: Corpus, truth: Truth, threshold: float) -> dict[str, Any]:
    fams = corpus.families()
    return {
        "corpus": corpus.name,
        "docs": len(corpus.docs),
        "mb": round(sum(len(d.text.encode("utf-8")) for d in corpus.docs) / 1e6, 2),
        "families": len(fams),
        "in_families": sum(len(m) for m in fams.values()),
        "singletons": sum(1 for d in corpus.docs if d.family is None),
        "kinds": dict(sorted(Counter(d.kind for d in corpus.docs).items())),
        **truth_counts(corpus, truth, threshold),
        **corpus.stats,
    }


def run_job(
    corpus_path: Path, out: Path, normalize: str | None, threshold: float | None, **settings: Any
) -> Any:
    """The dedup job's ``run`` over one corpus (Spark started on first use)."""
    global _SPARK
    from lib.spark import start_spark

    from neardup_udfs.config import ConfigError, load_config
    from neardup_udfs.runs import dedup as dedup_job

    if _SPARK is None:
        _SPARK = start_spark()
    extra = {} if normalize is None else {"normalize": normalize}
    try:
        config = load_config(
            None,
            input=str(corpus_path),
            output=str(out),
            input_format="jsonl",
            id_col="id",
            text_col="text",
            threshold=threshold,
            outputs=("docs", "clusters"),
            **extra,
            **settings,
        )
    except ConfigError as e:
        if normalize is None or "normalize" not in str(e):
            raise
        raise SystemExit(f"this job has no normalize={normalize!r} yet: {e}") from e
    return dedup_job.run(_SPARK, config)


_SPARK: Any = None


def plain_runs(work: Path, threshold: float) -> list[dict[str, Any]]:
    """The real plain texts of ../shared/data/text (lib.corpora.load_real's copyright files,
    fortunes and man pages, in one input) deduplicated with ``web`` and with ``none``, MinHash and
    SimHash: how many documents end in another place, and which."""
    from lib.corpora import load_real

    from neardup_udfs.kernels.web_text import looks_like_html

    docs = [d for collection in load_real().values() for d in collection]
    path = work / "corpora" / "plain.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    html = {d for d, t in docs if looks_like_html(t)}
    rows = []
    for method in ("minhash", "simhash"):
        placed = {}
        for setting in ("web", "none"):
            out = work / "runs" / f"plain-{method}-{setting}"
            t = time.perf_counter()
            t_job = threshold if method == "minhash" else None
            s = run_job(path, out, setting, t_job, method=method)
            placed[setting] = (read_clusters(out), round(time.perf_counter() - t, 1), s)
        web, none = placed["web"][0], placed["none"][0]
        moved = sorted(d for d in none if web.get(d) != none[d])
        rows.append(
            {
                "corpus": "plain",
                "method": method,
                "docs": len(docs),
                "looks_like_html": len(html),
                "kept_web": placed["web"][2].kept,
                "kept_none": placed["none"][2].kept,
                "moved": len(moved),
                "moved_html": sum(1 for d in moved if d in html),
                "moved_ids": moved[:20],
                "seconds_web": placed["web"][1],
                "seconds_none": placed["none"][1],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", choices=[*CORPORA, "all"], default="all")
    p.add_argument(
        "--normalize",
        choices=["web", "none"],
        action="append",
        help="the job's normalize setting (repeatable: one run each); default: not passed",
    )
    p.add_argument("--json", type=Path, help="write the figures here too")
    p.add_argument("--out", type=Path, default=WORK, help=f"working directory ({WORK})")
    p.add_argument("--threshold", type=float, default=THRESHOLD)
    p.add_argument("--docs", type=int, help="documents per corpus (default: web 1200, CJK 1000)")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--build-only", action="store_true", help="write the corpora; no Spark")
    p.add_argument(
        "--plain",
        action="store_true",
        help="instead: web against none on the real plain texts (bench_dedup's corpora)",
    )
    args = p.parse_args(argv)
    if args.plain:
        rows = plain_runs(args.out, args.threshold)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n")
        return 0
    names = CORPORA if args.corpus == "all" else (args.corpus,)
    floor = min(FLOOR, args.threshold + 0.05)
    results: list[dict[str, Any]] = []
    for name in names:
        t0 = time.perf_counter()
        corpus = build(name, args.seed, args.docs)
        truth = ground_truth(corpus, floor)
        path = write_corpus(corpus, truth, args.out / "corpora")
        info = describe(corpus, truth, args.threshold)
        info["build_seconds"] = round(time.perf_counter() - t0, 1)
        if args.build_only:
            print(json.dumps(info, ensure_ascii=False), flush=True)
            results.append(info)
            continue
        for setting in args.normalize or [None]:
            label = setting or "default"
            out = args.out / "runs" / f"{name}-{label}"
            t1 = time.perf_counter()
            summary = run_job(path, out, setting, args.threshold)
            row = {
                "corpus": name,
                "normalize": label,
                "threshold": args.threshold,
                "docs": len(corpus.docs),
                "job_removed": summary.removed,
                "job_seconds": round(time.perf_counter() - t1, 1),
                **score(corpus, truth, out, args.threshold),
            }
            print(json.dumps(row), flush=True)
            results.append(row)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    if _SPARK is not None:
        _SPARK.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
