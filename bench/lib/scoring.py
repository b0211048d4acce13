"""Found near-duplicates scored against the exact ground truth (``lib.truth``): recall and
precision of found pairs (``quality``, on an ``EvalSet``), and of a dedup job's clusters the
removal precision and the residual duplication (``score``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from lib.corpora import I64, Docs
from lib.truth import T_075, THRESHOLD, U64, Truth
from neardup_udfs.presets import Pipeline, resolve
from neardup_udfs.stages.verify import estimate_margin


class ScoredRun(Protocol):
    """What ``quality`` reads of a MinHash run of the job (bench_dedup's ``JobRun``)."""

    method: str
    pipeline: Pipeline
    verification: str


@dataclass(frozen=True)
class Quality:
    found: int
    truth_07: int
    truth_075: int
    hit_07: int
    hit_075: int
    fp_near: int  # false positives with 0.6 <= J < 0.7
    fp_far: int  # false positives with J < 0.6, at least one document with shingles
    fp_empty_same: int  # both documents without shingles, same token text (exact duplicates)
    fp_empty_diff: int  # both documents without shingles, different texts
    misses: dict[str, int] = field(default_factory=dict)  # why pairs J >= 0.75 were missed

    @property
    def recall_07(self) -> float:
        return self.hit_07 / self.truth_07 if self.truth_07 else 1.0

    @property
    def recall_075(self) -> float:
        return self.hit_075 / self.truth_075 if self.truth_075 else 1.0

    @property
    def precision(self) -> float:
        return self.hit_07 / self.found if self.found else 1.0

    def figures(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "truth_ge_0.7": self.truth_07,
            "truth_ge_0.75": self.truth_075,
            "recall_ge_0.7": round(self.recall_07, 4),
            "recall_ge_0.75": round(self.recall_075, 4),
            "precision": round(self.precision, 4),
            "fp_0.6_to_0.7": self.fp_near,
            "fp_below_0.6": self.fp_far,
            "fp_no_shingles_same_tokens": self.fp_empty_same,
            "fp_no_shingles_different": self.fp_empty_diff,
            **({"misses_ge_0.75": self.misses} if self.misses else {}),
        }


def _estimate_dropped(run: ScoredRun, estimate: float) -> bool:
    """Whether the run's verification rejected a pair on its signature estimate alone."""
    if run.verification == "estimate":
        return estimate < THRESHOLD
    if run.verification == "hybrid":
        return estimate < THRESHOLD - estimate_margin(run.pipeline.param("k"))
    return False


def quality(found: I64, ev: EvalSet, run: ScoredRun | None = None) -> Quality:
    """Recall (J >= 0.7, J >= 0.75) and precision (found pairs with J >= 0.7) of ``found``.

    With a MinHash ``run``: each missed pair with J >= 0.75 is classified against that run's
    pipeline (its banding): "lsh" (no common band key, never a candidate), "estimate" (a
    candidate rejected on its signature estimate by estimate or hybrid verification),
    "other" (neither: e.g. a hot bucket's star).
    """
    truth = ev.truth
    t075 = truth.at_least(*T_075)
    hit = np.isin(found, truth.codes)
    near = far = empty_same = empty_diff = 0
    for code in found[~hit].tolist():
        a, b = divmod(code, truth.n)
        sa, sb = ev.sets[a], ev.sets[b]
        if not len(sa) and not len(sb):
            if ev.token_key(a) == ev.token_key(b):
                empty_same += 1
            else:
                empty_diff += 1
            continue
        common = len(np.intersect1d(sa, sb, assume_unique=True))
        if common / (len(sa) + len(sb) - common) >= 0.6:
            near += 1
        else:
            far += 1
    misses: Counter[str] = Counter()
    if run is not None and run.method == "minhash":
        sigs, keys = ev.minhash(run.pipeline)
        for code in t075[~np.isin(t075, found)].tolist():
            a, b = divmod(code, truth.n)
            if not np.any(keys[a] == keys[b]):
                misses["lsh"] += 1
            elif _estimate_dropped(run, float(np.mean(sigs[a] == sigs[b]))):
                misses["estimate"] += 1
            else:
                misses["other"] += 1
    return Quality(
        found=len(found),
        truth_07=len(truth.codes),
        truth_075=len(t075),
        hit_07=int(hit.sum()),
        hit_075=int(np.isin(t075, found).sum()),
        fp_near=near,
        fp_far=far,
        fp_empty_same=empty_same,
        fp_empty_diff=empty_diff,
        misses=dict(misses),
    )


@dataclass
class EvalSet:
    """Documents to score, with their exact ground truth."""

    name: str
    docs: Docs
    sets: list[U64]
    truth: Truth
    index: dict[str, int] = field(init=False)
    results: dict[str, Quality] = field(default_factory=dict)
    _sketches: dict[str, tuple[U64, U64]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {d: i for i, (d, _) in enumerate(self.docs)}

    def token_key(self, i: int) -> str:
        return resolve("semblance").exact_keys([self.docs[i][1]])[0]

    def minhash(self, pipeline: Pipeline) -> tuple[U64, U64]:
        """A pipeline's MinHash signatures and band keys of every document (computed once)."""
        if pipeline.id not in self._sketches:
            sigs = pipeline.signature_batch([t for _, t in self.docs])
            self._sketches[pipeline.id] = (sigs, pipeline.band_keys_batch(sigs))
        return self._sketches[pipeline.id]


def _jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if not len(a) or not len(b):
        return 0.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def score(spark: Any, out: Path, ids: list[str], sets: list[np.ndarray], truth: Any) -> dict:
    place = {d: i for i, d in enumerate(ids)}
    rows = spark.read.parquet(str(out / "clusters")).collect()
    kept = np.zeros(len(ids), dtype=bool)
    removed, precise, exact = 0, 0, 0
    for r in rows:
        i = place[r.doc_id]
        if r.is_representative:
            kept[i] = True
            continue
        if not len(sets[i]):
            continue  # no shingles: only ever an exact duplicate
        removed += 1
        j = _jaccard(sets[i], sets[place[r.cluster_id]])
        same = np.array_equal(sets[i], sets[place[r.cluster_id]])
        exact += same
        precise += same or j >= THRESHOLD
    strong = truth.at_least(3, 4)  # J >= 0.75
    a, b = strong // truth.n, strong % truth.n
    both_kept = int(np.count_nonzero(kept[a] & kept[b]))
    return {
        "removed_with_shingles": removed,
        "removed_exact_copies": exact,
        "removal_precision": round(precise / removed, 5) if removed else 1.0,
        "pairs_j075": len(strong),
        "residual_both_kept": both_kept,
        "residual_share": round(both_kept / len(strong), 5) if len(strong) else 0.0,
    }
