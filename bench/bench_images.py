"""Benchmark of the images job: throughput on real images, and how well its clusters match
families of edited copies.

    .venv/bin/python bench/bench_images.py [--max-originals N]

Originals: the PNG, JPEG and GIF files of ../shared/data/images (imagededup's UKBench
photos, imagehash's and Pillow's test images, GNOME's 256x256 icons; skipped with a message
when absent), minus any within k bits of an earlier one (so families are distinct). Each
original gets the six edits of the job's tests (x0.5, x2, JPEG q50, 5% crop, grey, text
watermark): a family of seven files.

Figures, one process: images/s of the job (Spark local[2], end to end), of the pHash kernel
alone (one core, no Spark) and of the imagehash library's phash (one core; the baseline:
the usual Python tool, a different pHash); pairwise precision and recall of the job's
clusters against the families; peak memory of a Python worker's batch (``batch_images``
images at the pixel limit) in a subprocess, against the 2 GB budget. Prints tables and one
JSON line; docs/benchmarks.md records a run. Working files go to out/bench_images/.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lib.images import IMAGES, log, originals
from lib.project import ROOT, load
from lib.spark import machine, start_spark
from lib.tables import print_table
from PIL import Image

from neardup_udfs.config import load_images_config
from neardup_udfs.kernels import phash
from neardup_udfs.runs import images as images_job

# the edits the images job's tests apply (tests/image_edits.py)
_edits = load("tests/image_edits.py")
encode, variants = _edits.encode, _edits.variants

WORK = Path(os.environ.get("NEARDUP_BENCH_IMAGES_WORK", ROOT / "out" / "bench_images"))
MEMORY_BUDGET_MB = 2048


def build(origs: list[tuple[str, bytes]]) -> tuple[Path, dict[str, int]]:
    """The corpus folder; file name -> family number."""
    folder = WORK / "corpus"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    family: dict[str, int] = {}
    for i, (_, data) in enumerate(origs):
        im = Image.open(io.BytesIO(data))
        im.load()
        im = im.convert("RGB")
        files = {f"f{i:04d}-orig.png": encode(im)}
        for v, blob in variants(im).items():
            files[f"f{i:04d}-{v}.{'jpg' if v == 'jpeg50' else 'png'}"] = blob
        for name, blob in files.items():
            (folder / name).write_bytes(blob)
            family[name] = i
    return folder, family


def pairs_of(groups: list[list[str]]) -> set[tuple[str, str]]:
    return {p for g in groups for p in itertools.combinations(sorted(g), 2)}


def quality(clusters: list[tuple[str, str]], family: dict[str, int]) -> dict[str, float]:
    by_cluster: dict[str, list[str]] = {}
    for path, cid in clusters:
        by_cluster.setdefault(cid, []).append(path.rsplit("/", 1)[-1])
    by_family: dict[int, list[str]] = {}
    for name, f in family.items():
        by_family.setdefault(f, []).append(name)
    found, truth = pairs_of(list(by_cluster.values())), pairs_of(list(by_family.values()))
    hit = len(found & truth)
    return {
        "precision": round(hit / len(found), 4) if found else 1.0,
        "recall": round(hit / len(truth), 4) if truth else 1.0,
        "pairs_found": len(found),
        "pairs_true": len(truth),
    }


def removals(rows: list[Any], family: dict[str, int], k: int) -> dict[str, Any]:
    """Removed images: how many, the share from their representative's own family, and the
    share within ``k`` bits of it (the distance the job reports)."""
    name = {r.path: r.path.rsplit("/", 1)[-1] for r in rows}
    gone = [r for r in rows if not r.is_representative]
    same = sum(family[name[r.path]] == family[name[r.cluster_id]] for r in gone)
    near = sum(r.distance <= k for r in gone)
    return {
        "removed": len(gone),
        "removal_same_family": round(same / len(gone), 4) if gone else 1.0,
        "removal_within_k": round(near / len(gone), 4) if gone else 1.0,
    }


def kernel_rate(blobs: list[bytes]) -> float:
    t = time.perf_counter()
    phash.phash_images(blobs)
    return len(blobs) / (time.perf_counter() - t)


def imagehash_rate(blobs: list[bytes]) -> float | None:
    try:
        import imagehash
    except ImportError:
        log("imagehash not installed: baseline skipped (make bench installs it)")
        return None
    t = time.perf_counter()
    for b in blobs:
        imagehash.phash(Image.open(io.BytesIO(b)))
    return len(blobs) / (time.perf_counter() - t)


MEMORY_PROBE = """
import resource, sys
from neardup_udfs.kernels import phash
n, path, limit = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
blobs = [open(path, "rb").read() for _ in range(n)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
batch = phash.phash_images(blobs, max_pixels=limit)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert not any(batch.errors), batch.errors
print(before // 1024, after // 1024)
"""


def memory(batch: int, max_pixels: int) -> dict[str, Any]:
    """Peak RSS of a fresh process that hashes ``batch`` JPEGs of ``max_pixels`` pixels
    (the image is made here, so the child holds only what a Python worker would)."""
    import numpy as np

    side = int(max_pixels**0.5)
    rng = np.random.default_rng(0)
    small = Image.fromarray(rng.integers(0, 255, (side // 32, side // 32, 3), dtype=np.uint8))
    path = WORK / "large.jpg"
    path.parent.mkdir(parents=True, exist_ok=True)
    small.resize((side, side)).save(path, "JPEG", quality=85)
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(batch), str(path), str(max_pixels)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    before, after = (int(x) for x in out)
    return {
        "batch_images": batch,
        "pixels_each": side * side,
        "jpeg_mb_each": round(path.stat().st_size / 1e6, 1),
        "peak_rss_mb_before": before,
        "peak_rss_mb": after,
        "budget_mb": MEMORY_BUDGET_MB,
        "within_budget": after < MEMORY_BUDGET_MB,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max-originals", type=int, default=300)
    args = p.parse_args(argv)
    if not IMAGES.is_dir():
        log(f"skipped: no image sets at {IMAGES}")
        return 0
    cfg_defaults = load_images_config(str(ROOT / "conf" / "images.toml"), input="-", output="-")
    results: dict[str, Any] = {"machine": machine()}
    origs = originals(args.max_originals)
    folder, family = build(origs)
    blobs = [(folder / n).read_bytes() for n in sorted(family)]
    results["kernel_images_s"] = round(kernel_rate(blobs), 1)
    base = imagehash_rate(blobs)
    results["imagehash_images_s"] = round(base, 1) if base else None
    spark = start_spark()
    try:
        warm = WORK / "warm"
        shutil.rmtree(warm, ignore_errors=True)
        warm.mkdir(parents=True)
        for name in sorted(family)[:14]:
            shutil.copy(folder / name, warm / name)
        images_job.run(spark, load_images_config(input=str(warm), output=str(WORK / "warm-out")))
        out = WORK / "out"
        cfg = load_images_config(
            str(ROOT / "conf" / "images.toml"), input=str(folder), output=str(out)
        )
        t = time.perf_counter()
        summary = images_job.run(spark, cfg)
        seconds = time.perf_counter() - t
        rows = spark.read.parquet(str(out / "clusters")).collect()
        single = WORK / "out-connected"
        images_job.run(
            spark,
            load_images_config(
                str(ROOT / "conf" / "images.toml"),
                input=str(folder),
                output=str(single),
                clustering="connected",
            ),
        )
        single_rows = spark.read.parquet(str(single / "clusters")).collect()
    finally:
        spark.stop()
    results["job"] = {
        "images": len(family),
        "originals": len(origs),
        "seconds": round(seconds, 1),
        "images_s": round(len(family) / seconds, 1),
        "rejected": summary.rejected,
        "clusters": summary.clusters,
        "stage_seconds": summary.seconds,
        **quality([(r.path, r.cluster_id) for r in rows], family),
        **removals(rows, family, cfg.max_distance),
    }
    results["job_connected"] = {
        **quality([(r.path, r.cluster_id) for r in single_rows], family),
        **removals(single_rows, family, cfg.max_distance),
    }
    results["memory"] = memory(cfg_defaults.batch_images, cfg_defaults.max_pixels)
    j, m = results["job"], results["memory"]
    ratio = (
        round(results["kernel_images_s"] / results["imagehash_images_s"], 2)
        if results["imagehash_images_s"]
        else None
    )
    print_table(
        "images job on real images and their edited copies (k = 10)",
        ["images", "job s", "job img/s", "kernel img/s (1 core)", "imagehash img/s",
         "kernel/imagehash", "precision", "recall"],
        [[j["images"], j["seconds"], j["images_s"], results["kernel_images_s"],
          results["imagehash_images_s"], ratio, j["precision"], j["recall"]]],
    )  # fmt: skip
    print_table(
        "one Python worker's batch at the pixel limit",
        ["images", "pixels each", "RSS MB before", "peak RSS MB", "budget MB"],
        [
            [
                m["batch_images"],
                m["pixels_each"],
                m["peak_rss_mb_before"],
                m["peak_rss_mb"],
                m["budget_mb"],
            ]
        ],
    )
    print(json.dumps(results, sort_keys=True))
    return 0 if m["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
