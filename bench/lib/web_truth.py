"""The web bench's ground truth (the exact Jaccard of every family pair and of every pair
anywhere at or above a floor) and the dedup job's clusters scored against it."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib.planted_families import Corpus
from lib.visible_text import jaccard

THRESHOLD = 0.7
FLOOR = 0.5  # every pair with J >= FLOOR is in the ground truth


@dataclass
class Truth:
    sets: list[frozenset[int]]  # each document's shingles (as ids)
    pairs: dict[tuple[int, int], float]  # (i, j), i < j: every family pair, every J >= floor
    floor: float
    boilerplate: frozenset[int] = frozenset()  # the shingles of ``Corpus.boilerplate``

    def at_least(self, t: float) -> list[tuple[int, int]]:
        if t < self.floor:
            raise ValueError(f"the truth holds the pairs with J >= {self.floor} only")
        return sorted(p for p, j in self.pairs.items() if j >= t)


def similar_pairs(sets: Sequence[frozenset[int]], floor: float) -> dict[tuple[int, int], float]:
    """Every pair (i < j) with exact Jaccard >= ``floor``, by prefix filtering: with the
    shingles of each set in one global order (rarest first), two sets with J >= t share a
    shingle among the first ``|x| - ceil(t |x|) + 1`` of each. Candidates from an inverted
    index of those prefixes, then the exact Jaccard of each."""
    df: Counter[int] = Counter()
    for s in sets:
        df.update(s)
    index: dict[int, list[int]] = defaultdict(list)
    out: dict[tuple[int, int], float] = {}
    for x, s in enumerate(sets):
        if not s:
            continue
        ordered = sorted(s, key=lambda t: (df[t], t))
        prefix = ordered[: len(ordered) - math.ceil(floor * len(ordered) - 1e-9) + 1]
        candidates: set[int] = set()
        for t in prefix:
            candidates.update(index[t])
            index[t].append(x)
        for y in candidates:
            j = jaccard(sets[y], s)
            if j >= floor:
                out[(y, x)] = j
    return out


def ground_truth(corpus: Corpus, floor: float = FLOOR) -> Truth:
    ids: dict[str, int] = {}
    sets = [
        frozenset(ids.setdefault(s, len(ids)) for s in sorted(corpus.shingles(d.visible)))
        for d in corpus.docs
    ]
    pairs = similar_pairs(sets, floor)
    for a, b in corpus.pairs_of_families():
        pairs[(a, b)] = jaccard(sets[a], sets[b])
    boiler = frozenset(ids[s] for s in corpus.shingles(corpus.boilerplate) if s in ids)
    return Truth(sets, pairs, floor, boiler)


def truth_counts(corpus: Corpus, truth: Truth, threshold: float) -> dict[str, Any]:
    fam = set(corpus.pairs_of_families())
    strong = truth.at_least(threshold + 0.05)
    floor = truth.at_least(truth.floor)
    return {
        "family_pairs": len(fam),
        f"pairs_j{threshold_tag(truth.floor)}": len(floor),
        f"cross_family_pairs_j{threshold_tag(truth.floor)}": sum(1 for p in floor if p not in fam),
        f"pairs_j{threshold_tag(threshold + 0.05)}": len(strong),
        f"family_pairs_below_j{threshold_tag(truth.floor)}": sum(
            1 for p in fam if truth.pairs[p] < truth.floor
        ),
    }


def threshold_tag(t: float) -> str:
    return f"{round(t * 100):03d}"


# --- scoring ---------------------------------------------------------------------------------


def read_clusters(out: Path) -> dict[str, tuple[str, bool]]:
    """doc_id -> (cluster_id, is_representative) from the job's ``clusters/``."""
    import pyarrow.dataset as ds

    table = ds.dataset(str(out / "clusters"), format="parquet").to_table(
        columns=["doc_id", "cluster_id", "is_representative"]
    )
    cols = table.to_pydict()
    return {
        d: (c, bool(r))
        for d, c, r in zip(
            cols["doc_id"], cols["cluster_id"], cols["is_representative"], strict=True
        )
    }


def score(
    corpus: Corpus,
    truth: Truth,
    out: Path | None,
    threshold: float = THRESHOLD,
    clusters: dict[str, tuple[str, bool]] | None = None,
) -> dict:
    """The figures of one job output directory ``out`` (or of its ``clusters``, restricted to
    this corpus's documents) against ``truth`` (bench/bench_web.py's docstring)."""
    if clusters is None:
        assert out is not None
        clusters = read_clusters(out)
    place = {d.doc_id: i for i, d in enumerate(corpus.docs)}
    n = len(corpus.docs)
    kept = [False] * n
    cluster: list[str | None] = [None] * n
    removed = precise05 = precise_t = unrelated = 0
    unrelated_kinds: Counter[str] = Counter()  # of those sharing at most the banner
    for doc_id, (cid, rep) in clusters.items():
        i = place[doc_id]
        kept[i] = rep
        cluster[i] = cid
        if rep:
            continue
        removed += 1
        r = place[cid]
        a, b = truth.sets[i], truth.sets[r]
        j = jaccard(a, b) if (a or b) and a != b else 1.0
        precise05 += j >= FLOOR
        precise_t += j >= threshold
        shared = a & b
        unrelated += not shared
        if not (shared - truth.boilerplate):
            unrelated_kinds[f"{corpus.docs[i].kind}<-{corpus.docs[r].kind}"] += 1
    strong = truth.at_least(threshold + 0.05)
    both_kept = sum(1 for a, b in strong if kept[a] and kept[b])
    together = sum(1 for a, b in strong if cluster[a] is not None and cluster[a] == cluster[b])
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a, b in strong:
        key = "+".join(sorted((corpus.docs[a].kind, corpus.docs[b].kind)))
        by_kind[key][0] += 1
        by_kind[key][1] += not (kept[a] and kept[b])
    t = threshold_tag(threshold + 0.05)
    return {
        "kept": sum(kept),
        "removed": removed,
        "rejected": n - len(clusters),
        f"pairs_j{t}": len(strong),
        "resolved": _share(len(strong) - both_kept, len(strong)),
        "one_cluster": _share(together, len(strong)),
        "removal_precision": _share(precise05, removed, 1.0),
        "removal_precision_at_t": _share(precise_t, removed, 1.0),
        "removed_unrelated": unrelated,
        "removed_unrelated_but_banner": sum(unrelated_kinds.values()),
        "removed_unrelated_but_banner_kinds": dict(sorted(unrelated_kinds.items())),
        "resolved_by_kinds": {k: _share(v[1], v[0]) for k, v in sorted(by_kind.items())},
    }


def _share(num: int, den: int, empty: float = 0.0) -> float:
    return round(num / den, 5) if den else empty
