"""pHash candidate keys at scale (issue 23): the images job's bounded keys (20 tables of
sampled bits, the default at k = 10) against exhaustive comparison, on a fixed corpus made
from the real images of ../shared/data/images.

    .venv/bin/python bench/bench_image_keys.py [--images 100000] [--subset 10000]

The recipe (seed 20261202; the same corpus on every run):

1. Originals: originals(): the PNG/JPEG/GIF files of ../shared/data/images
   and GNOME's 256x256 icons, each more than 10 bits from every earlier one.
2. Sources: source ``i`` is a view of original ``i mod len(originals)``: a random crop
   keeping 35-75 % of each side, mirrored with p = 0.5, scaled so its long side is 128 px.
   Views of one original are different pictures (mostly far more than 10 bits apart;
   where two happen to be near, the exhaustive truth counts them).
3. Families: each source is written as a PNG, followed by 1 + Poisson(3) edited copies,
   each of one or two edits drawn from: scale to a long side of 64-112 px; JPEG at quality
   30-90; WebP at quality 50-90; crop 2-5 % off each side; grey; brightness x0.85-1.15; a
   text watermark. Families follow one another until ``--images`` files exist.
4. The subset: the first ``--subset`` files (whole families: the families come in order).

Measured:

- on the subset, each system one whole ``spark-submit --master local[2] jobs/images.py``
  process with Spark's defaults (outputs hashes/ and pairs/): ``sampled`` (the default
  keys) and ``blocks`` (``--hamming-blocks 11``: ditto's guaranteed keys, no hot bucket);
  candidate and verified pairs, and recall at k = verified pairs of distinct hashes found /
  all pairs of distinct hashes within k (exhaustive comparison of the subset's hashes/);
- on the whole corpus: the pHash of every file (the job's kernel, two processes), then the
  default keys for that many distinct hashes applied in numpy as the job's candidates
  stage applies them (one leader per distinct hash; every pair sharing a table key once;
  checked against the job's own counts on the subset): candidates, verified pairs (target:
  candidates <= 10x verified) and recall at k against exhaustive comparison.
  ``--full-job`` also runs the job itself on the whole corpus (about 50 images/s here).

Prints a table and one JSON line. Working files go to out/bench_image_keys/.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import random
import shutil
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from lib.images import IMAGES, originals
from lib.processes import spark_submit, timed_process
from PIL import Image, ImageDraw, ImageEnhance, ImageOps

from neardup_udfs.kernels import phash, simhash
from neardup_udfs.kernels.hamming_tables import image_scheme

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "out" / "bench_image_keys"
SEED = 20261202
K = 10
SIDE = 128
NO_HOT = str(10**9)


def _poisson(rng: random.Random, lam: float) -> int:
    limit, n, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        n += 1
        p *= rng.random()
    return n


def _fit(im: Image.Image, side: int) -> Image.Image:
    w, h = im.size
    scale = side / max(w, h)
    return im.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.LANCZOS)


def _encode(im: Image.Image, fmt: str = "PNG", **kw: Any) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _edit(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str, dict[str, Any], str]:
    """One or two edits: the image, its format, encoder options, a name for the edits."""
    fmt, kw, names = "PNG", {}, []
    for edit in rng.sample(["scale", "jpeg", "webp", "crop", "grey", "bright", "mark"],
                           rng.choice((1, 2))):  # fmt: skip
        names.append(edit)
        if edit == "scale":
            im = _fit(im, rng.randrange(64, 113))
        elif edit == "jpeg":
            fmt, kw = "JPEG", {"quality": rng.randrange(30, 91)}
        elif edit == "webp":
            fmt, kw = "WEBP", {"quality": rng.randrange(50, 91)}
        elif edit == "crop":
            w, h = im.size
            f = rng.uniform(0.02, 0.05)
            dx, dy = max(1, round(w * f)), max(1, round(h * f))
            im = im.crop((dx, dy, w - dx, h - dy))
        elif edit == "grey":
            im = im.convert("L").convert("RGB")
        elif edit == "bright":
            im = ImageEnhance.Brightness(im).enhance(rng.uniform(0.85, 1.15))
        else:
            im = im.copy()
            w, h = im.size
            ImageDraw.Draw(im).text((w * 0.05, h * 0.75), "(c) crawl", fill=(255, 255, 255))
    return im, fmt, kw, "+".join(names)


def _family(job: tuple[int, bytes]) -> list[tuple[str, bytes]]:
    """Source ``i``'s files: the view as a PNG, then its edited copies."""
    i, original = job
    rng = random.Random(SEED * 1_000_003 + i)
    im = Image.open(io.BytesIO(original))
    im.load()
    im = im.convert("RGB")
    w, h = im.size
    cw, ch = max(8, round(w * rng.uniform(0.35, 0.75))), max(8, round(h * rng.uniform(0.35, 0.75)))
    x, y = rng.randrange(0, w - cw + 1), rng.randrange(0, h - ch + 1)
    view = im.crop((x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        view = ImageOps.mirror(view)
    view = _fit(view, SIDE)
    files = [(f"s{i:06d}-0-view.png", _encode(view))]
    for c in range(1 + _poisson(rng, 3.0)):
        edited, fmt, kw, name = _edit(view, rng)
        ext = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}[fmt]
        files.append((f"s{i:06d}-{c + 1}-{name}.{ext}", _encode(edited, fmt, **kw)))
    return files


def build(n_images: int, subset: int) -> tuple[Path, Path, dict[str, Any]]:
    """The corpus folder and the subset folder (the first ``subset`` files, as links)."""
    folder, sub = WORK / f"corpus-{n_images}", WORK / f"subset-{subset}"
    meta_path = WORK / f"corpus-{n_images}.meta.json"
    if meta_path.exists() and folder.is_dir() and sub.is_dir():
        return folder, sub, json.loads(meta_path.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(sub, ignore_errors=True)
    folder.mkdir(parents=True)
    sub.mkdir(parents=True)
    origs = [data for _, data in originals(10**6)]
    written, sources, names = 0, 0, []
    with Pool(2) as pool:
        while written < n_images:
            jobs = [(sources + j, origs[(sources + j) % len(origs)]) for j in range(2000)]
            for files in pool.map(_family, jobs, chunksize=50):
                sources += 1
                for name, blob in files:
                    (folder / name).write_bytes(blob)
                    names.append(name)
                written += len(files)
                if written >= n_images:
                    break
    for name in names[:subset]:
        (sub / name).symlink_to(folder / name)
    meta = {"images": len(names), "sources": sources, "originals": len(origs),
            "subset": min(subset, len(names)),
            "bytes": sum((folder / n).stat().st_size for n in names)}  # fmt: skip
    meta_path.write_text(json.dumps(meta))
    return folder, sub, meta


def run_job(name: str, src: Path, extra: list[str], args: argparse.Namespace) -> dict[str, Any]:
    out = WORK / name
    cmd = [spark_submit(), "--master", "local[2]", "--driver-memory", "2g"]
    cmd += [str(ROOT / "jobs/images.py"), "--config", str(ROOT / "conf/images.toml")]
    cmd += ["--input", str(src), "--output", str(out), "--outputs", "clusters,hashes,pairs"]
    run = timed_process(name, [*cmd, *extra], 0, args, args.timeout)
    if run.rc != 0:
        return {"seconds": round(run.seconds, 1), "rc": run.rc}
    report = json.loads((out / "report.json").read_text())
    return {"seconds": round(run.seconds, 1), "rc": 0, "out": str(out),
            "candidates": report["counts"]["candidates"],
            "verified": report["counts"]["verified"],
            "hot_buckets": report["counts"]["hot_buckets"],
            "hamming": report.get("hamming")}  # fmt: skip


def _hashes(out: Path) -> dict[str, int]:
    t = pq.read_table(out / "hashes", columns=["path", "phash"]).to_pydict()
    return {p: int(h, 16) for p, h in zip(t["path"], t["phash"], strict=True)}


def truth_pairs(values: np.ndarray) -> set[tuple[int, int]]:
    """Every pair of distinct hash values within K bits (exhaustive, blockwise numpy)."""
    v = np.unique(values.astype(np.uint64))
    found: set[tuple[int, int]] = set()
    for start in range(0, len(v), 512):
        block = v[start : start + 512]
        i, j = np.nonzero(simhash.distances(block[:, None], v[None, :]) <= K)
        for a, b in zip((start + i).tolist(), j.tolist(), strict=True):
            if a < b:
                found.add((int(v[a]), int(v[b])))
    return found


def recall(out: Path, truth: set[tuple[int, int]]) -> dict[str, Any]:
    h = _hashes(out)
    t = pq.read_table(out / "pairs", columns=["a", "b"]).to_pydict()
    found = {tuple(sorted((h[a], h[b]))) for a, b in zip(t["a"], t["b"], strict=True)}
    hit = len(found & truth)
    return {"truth_pairs": len(truth), "found": hit, "recall": round(hit / len(truth), 4)
            if truth else None, "outside_k": len(found - truth)}  # fmt: skip


def _phash_file(path: str) -> int | None:
    try:
        return phash.phash(Path(path).read_bytes())
    except phash.PHashError:
        return None


def hash_all(folder: Path) -> np.ndarray:
    """The pHash of every file under ``folder`` (the job's kernel), two processes."""
    paths = sorted(str(p) for p in folder.iterdir())
    with Pool(2) as pool:
        got = pool.map(_phash_file, paths, chunksize=500)
    return np.array([h for h in got if h is not None], dtype=np.uint64)


def modelled(values: np.ndarray) -> dict[str, Any]:
    """The job's candidates and verified pairs for fingerprints ``values``, in numpy: one
    leader per distinct value, the default keys for that many leaders, every pair sharing
    a table key once (``largest_bucket`` says whether one passed the job's hot-bucket
    size, where the job makes a star instead), the pairs within K bits verified; and recall
    at K against exhaustive comparison."""
    started = time.perf_counter()
    v = np.unique(values.astype(np.uint64))
    scheme = image_scheme(K, images=len(v))
    keys = scheme.keys(v)
    codes: list[np.ndarray] = []
    largest = 0
    for t in range(scheme.tables):
        order = np.argsort(keys[:, t], kind="stable")
        sorted_keys = keys[order, t]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        sizes = np.diff(np.r_[starts, len(v)])
        largest = max(largest, int(sizes.max()))
        for start, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist(), strict=True):
            members = np.sort(order[start : start + size]).astype(np.int64)
            i, j = np.triu_indices(size, 1)
            codes.append(members[i] * len(v) + members[j])
    pairs = np.unique(np.concatenate(codes)) if codes else np.zeros(0, dtype=np.int64)
    a, b = pairs // len(v), pairs % len(v)
    near = simhash.distances(v[a], v[b]) <= K
    found = {(int(v[p]), int(v[q])) for p, q in zip(a[near], b[near], strict=True)}
    truth = truth_pairs(v)
    hit = len(found & truth)
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "images": int(len(values)),
        "distinct": int(len(v)),
        "hamming": scheme.describe(),
        "largest_bucket": largest,
        "candidates": int(len(pairs)),
        "verified": int(near.sum()),
        "recall_at_k": {
            "truth_pairs": len(truth),
            "found": hit,
            "recall": round(hit / len(truth), 4) if truth else None,
        },  # fmt: skip
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--images", type=int, default=100_000)
    p.add_argument("--subset", type=int, default=10_000)
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--min-free-gb", type=float, default=10.0)
    p.add_argument("--full-job", action="store_true", help="also run the job on the whole corpus")
    args = p.parse_args(argv)
    if not IMAGES.is_dir():
        print(f"bench_image_keys: skipped: {IMAGES} is absent (real images needed)")
        return 0
    WORK.mkdir(parents=True, exist_ok=True)
    folder, sub, meta = build(args.images, args.subset)
    figures: dict[str, Any] = {"corpus": meta}
    figures["sampled-subset"] = run_job("sampled-subset", sub, [], args)
    figures["blocks-subset"] = run_job(
        "blocks-subset", sub, ["--hamming-blocks", "11", "--hot-bucket-size", NO_HOT], args
    )
    if args.full_job:
        figures["sampled-all"] = run_job("sampled-all", folder, [], args)
    if figures["sampled-subset"]["rc"] == 0:
        values = np.array(list(_hashes(WORK / "sampled-subset").values()), dtype=np.uint64)
        truth = truth_pairs(values)
        for name in ("sampled-subset", "blocks-subset"):
            if figures[name]["rc"] == 0:
                figures[name]["recall_at_k"] = recall(WORK / name, truth)
        model = modelled(values)  # the numpy model of the job's candidates, checked
        figures["model-subset"] = model
        figures["model_matches_job_on_subset"] = (
            model["candidates"] == figures["sampled-subset"]["candidates"]
            and model["verified"] == figures["sampled-subset"]["verified"]
        )
    figures["model-all"] = modelled(hash_all(folder))
    print(f"corpus: {meta}")
    print(
        f"{'run':<16}{'seconds':>9}{'candidates':>13}{'verified':>11}{'cand/ver':>9}{'recall':>8}"
    )
    names = ("sampled-all", "sampled-subset", "blocks-subset", "model-subset", "model-all")
    for name in (n for n in names if n in figures):
        f = figures[name]
        ratio = f["candidates"] / f["verified"] if f.get("verified") else float("nan")
        rec = f.get("recall_at_k", {}).get("recall")
        shown = "-" if rec is None else rec
        print(f"{name:<16}{f.get('seconds', 0):>9.1f}{f.get('candidates') or 0:>13,}"
              f"{f.get('verified') or 0:>11,}{ratio:>9.2f}{shown:>8}")  # fmt: skip
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
