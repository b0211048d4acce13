"""The containment stage of the driver and local engines: after the near-duplicate
clusters are settled, a kept document contained in another kept document goes next to it.

Only the documents the Jaccard stage kept take part, each with its own word-shingle set (as
the pipeline normalizes and shingles it), and only when the set has at least
``min_shingles`` elements. The decision order is more shingles first, then the
representative rule, so a container always comes before its excerpts and is preferred over
them whatever the rule; the rule decides only between sets of equal size. A kept document
is removed next to a container that itself stays (``kernels.containment``), and only when
every document already removed in its favour is verified contained in that container as
well, and is smaller than it (equal: earlier by the rule): every removed document is
verified against the document that is kept in its place.

First, a cluster whose kept document lies inside one of its removed near-duplicates with
more shingles is turned round: that member is kept instead, when every other document of
the cluster is verified inside it too (most of a page is often the page's near-duplicate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from neardup_udfs.kernels.containment import (
    contained_pairs,
    containment_order,
    may_take_place,
    required_shared,
    settle_containment,
    shared_counts,
)
from neardup_udfs.schemas import (
    BAND,
    CLUSTER_ID,
    CONTAINMENT,
    IS_REPRESENTATIVE,
    JACCARD,
    RELATION,
    SIMILARITY,
    A,
    B,
)

__all__ = ["ClusterRows", "Contained", "Promoted", "contain_on_driver", "promote"]

I64 = npt.NDArray[np.int64]
ShingleSets = Callable[[I64], tuple[Any, I64, I64]]


@dataclass
class Contained:
    """What :func:`contain_on_driver` decided."""

    clusters: pa.Table  # the clusters, plus ``relation``; removed excerpts moved
    pairs: pa.Table  # a (excerpt), b (container), band (null), similarity, relation
    counts: dict[str, int] = field(default_factory=dict)


def contain_on_driver(
    clusters: pa.Table,
    ids: npt.NDArray[Any],
    leader: npt.NDArray[Any],
    empty: npt.NDArray[np.bool_],
    place: I64,
    shingle_sets: ShingleSets,
    *,
    threshold: float,
    min_shingles: int,
    workers: int = 1,
) -> Contained:
    """The clusters after containment: each kept document at least ``threshold`` contained
    in a kept document with more shingles (equal: earlier by the rule) is removed next to it.

    Args:
        clusters: ``doc_id, cluster_id, is_representative, similarity``, one row per
            document, row i the document ``ids[i]``.
        ids, leader, empty: per row, the id, its exact-duplicate group's leader and whether
            normalization left it no text.
        place: per row, its place in the representative rule's order.
        shingle_sets: rows -> ``(hashes, offsets, slot)`` (``driver.near.SetSource``).
        threshold: the containment threshold, in (0, 1].
        min_shingles: smaller sets take no part.
        workers: the threads the candidate probe may use.

    Returns:
        ``clusters`` with ``relation`` (null: kept; ``jaccard``; ``containment``): a removed
        document's ``cluster_id`` is the container kept in its place and its
        ``similarity`` its own containment in it; ``pairs``: every verified containment pair
        between kept documents, and the pairs that anchor the documents moved with them.
        Every document removed here is verified at least ``threshold`` contained in its
        ``cluster_id``.
    """
    is_rep = clusters.column(IS_REPRESENTATIVE).to_numpy(zero_copy_only=False).astype(bool)
    cluster_of = clusters.column(CLUSTER_ID).to_numpy(zero_copy_only=False)
    score = clusters.column(SIMILARITY).to_numpy(zero_copy_only=False).astype(np.float64)
    promoted = promote(
        ClusterRows.from_jaccard(is_rep, cluster_of, score), ids, leader, empty, place,
        shingle_sets, threshold, min_shingles,
    )  # fmt: skip
    is_rep, cluster_of = promoted.is_rep, promoted.cluster_of
    score, relation = promoted.score, promoted.relation
    rows = np.flatnonzero(is_rep & ~empty)
    hashes, offsets, slot = shingle_sets(rows)  # the source may hold more sets than asked
    sizes = np.diff(offsets)
    row_of = np.full(len(sizes), -1, dtype=np.int64)
    row_of[slot] = rows  # set index -> row (-1: a set not asked for)
    last = np.iinfo(np.int64).max
    rank = containment_order(sizes, np.where(row_of >= 0, place[row_of], last))
    able = slot[sizes[slot] >= min_shingles]
    q, x, shared = contained_pairs(hashes, offsets, rank, threshold, able, able, workers)
    value = shared / np.maximum(sizes[q], 1)
    moved = _members_of(cluster_of, ids, leader, is_rep, row_of[q])
    m_rows, m_edge = moved
    # the documents removed in a candidate's favour must go with it: each verified too
    m_unique, m_at = np.unique(m_rows, return_inverse=True)
    m_hashes, m_offsets, m_slot = shingle_sets(m_unique)
    m_slot = m_slot[m_at]
    both_hashes = np.concatenate([hashes, m_hashes]).astype(np.uint64, copy=False)
    both_offsets = np.concatenate([offsets, offsets[-1] + m_offsets[1:]])
    m_set = len(sizes) + m_slot
    m_sizes = np.diff(m_offsets)[m_slot]
    m_shared = shared_counts(both_hashes, both_offsets, m_set, x[m_edge])
    x_row = row_of[x[m_edge]]
    smaller = (sizes[x[m_edge]] > m_sizes) | (
        (sizes[x[m_edge]] == m_sizes) & (place[x_row] < place[m_rows])
    )  # a document goes only next to one with more shingles (equal: first by the rule)
    m_ok = smaller & (m_sizes >= min_shingles) & (m_shared >= required_shared(m_sizes, threshold))
    allowed = np.ones(len(q), dtype=bool)
    allowed[m_edge[~m_ok]] = False
    rep, got = settle_containment(rank, q, x, value, allowed)

    # every row of a removed cluster moves to the container, with its own containment
    gone = np.flatnonzero(rep >= 0)  # set indices removed here
    container_row = np.full(len(ids), -1, dtype=np.int64)
    container_row[row_of[gone]] = row_of[rep[gone]]
    own_value = np.full(len(ids), np.nan)
    own_value[row_of[gone]] = got[gone]
    rep_row = pd.Index(ids).get_indexer(cluster_of)  # each row's kept document
    target = container_row[rep_row]
    moves = target >= 0
    copies = moves & (leader == leader[rep_row])
    new_cluster = cluster_of.copy()
    new_cluster[moves] = ids[target[moves]]
    new_score = score.copy()
    new_score[copies] = own_value[rep_row[copies]]
    used = rep[q] == x  # the edges a removal rests on
    member_pick = used[m_edge]
    new_score[m_rows[member_pick]] = (m_shared / np.maximum(m_sizes, 1))[member_pick]
    relation[moves] = CONTAINMENT
    kept = is_rep & ~moves
    out = pa.table(
        {
            clusters.column_names[0]: clusters.column(0),
            CLUSTER_ID: pa.array(new_cluster, pa.string()),
            IS_REPRESENTATIVE: pa.array(kept),
            SIMILARITY: pa.array(new_score, pa.float64()),
            RELATION: pa.array(relation, pa.string()),
        }
    )
    out = out.cast(_schema_of(clusters))
    p_a, p_b, p_v = promoted.pairs
    pair_a = np.concatenate([ids[p_a], ids[row_of[q]], ids[m_rows[member_pick]]])
    pair_b = np.concatenate([ids[p_b], ids[row_of[x]], ids[row_of[x[m_edge[member_pick]]]]])
    pair_v = np.concatenate([p_v, value, (m_shared / np.maximum(m_sizes, 1))[member_pick]])
    pairs = pa.table(
        {
            A: pa.array(pair_a, pa.string()),
            B: pa.array(pair_b, pa.string()),
            BAND: pa.nulls(len(pair_a), pa.int32()),
            SIMILARITY: pa.array(pair_v, pa.float64()),
            RELATION: pa.array([CONTAINMENT] * len(pair_a), pa.string()),
        }
    )
    with_container = np.unique(q)
    counts = {
        "containment_pairs": len(q),
        "contained": int((relation == CONTAINMENT).sum()),
        "containment_kept": int((rep[with_container] < 0).sum()),
    }
    return Contained(out, pairs, counts)


@dataclass
class ClusterRows:
    """Clusters as arrays, one entry per document (row)."""

    is_rep: npt.NDArray[np.bool_]
    cluster_of: npt.NDArray[Any]
    score: npt.NDArray[np.float64]
    relation: npt.NDArray[Any]  # None (kept), JACCARD or CONTAINMENT

    @classmethod
    def from_jaccard(
        cls, is_rep: npt.NDArray[np.bool_], cluster_of: npt.NDArray[Any], score: Any
    ) -> ClusterRows:
        """The clusters as the near-duplicate stage leaves them: ``relation`` null for the
        kept rows, ``jaccard`` for the others."""
        relation = np.full(len(is_rep), None, dtype=object)
        relation[~is_rep] = JACCARD
        return cls(is_rep, cluster_of, score, relation)


@dataclass
class Promoted(ClusterRows):
    pairs: tuple[I64, I64, npt.NDArray[np.float64]] = field(
        default_factory=lambda: (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    )  # rows of the containment pairs a promotion rests on: excerpt, container, containment


def promote(
    c: ClusterRows,
    ids: npt.NDArray[Any],
    leader: npt.NDArray[Any],
    empty: npt.NDArray[np.bool_],
    place: I64,
    shingle_sets: ShingleSets,
    threshold: float,
    min_shingles: int,
) -> Promoted:
    """The clusters where a removed near-duplicate contains the kept document: that member
    is kept instead, and every other document of the cluster is removed next to it, when
    the kept one is at least ``threshold`` inside it and has fewer shingles, and every other
    document of the cluster (the kept one's exact copies and near-duplicates; the new kept
    one's own exact copies excepted) is at least ``threshold`` inside it too. Of several
    such members, the one with the most shingles (then first by the rule) is tried. Every
    near member is a candidate: its shingles tell, not its text's length (an HTML excerpt's
    markup can outweigh its page's text).

    ``c``, ``ids``, ``leader``, ``empty`` and ``place`` hold whole clusters, each with its kept
    document; ``place`` need only order the rows of each cluster as the rule does. Each
    cluster is decided from its own rows alone: any set of whole clusters gets the rows it
    would get among all of them (the Spark stage calls this per group of clusters)."""
    rep_row = pd.Index(ids).get_indexer(c.cluster_of)
    near = ~c.is_rep & ~empty & (leader != leader[rep_row])
    cand = np.flatnonzero(near)
    if not len(cand):
        return Promoted(c.is_rep, c.cluster_of, c.score, c.relation)
    reps = np.unique(rep_row[cand])
    members = np.flatnonzero(~c.is_rep & np.isin(rep_row, reps))
    wanted = np.unique(np.concatenate([reps, members]))
    hashes, offsets, slot = shingle_sets(wanted)
    set_at = np.full(len(ids), -1, dtype=np.int64)
    set_at[wanted] = slot
    sizes = np.diff(offsets)
    r_of = rep_row[cand]
    n_r, n_m = sizes[set_at[r_of]], sizes[set_at[cand]]
    larger = may_take_place(n_r, n_m, min_shingles)
    cand, r_of, n_m, n_r = cand[larger], r_of[larger], n_m[larger], n_r[larger]
    shared = shared_counts(hashes, offsets, set_at[r_of], set_at[cand])
    fits = shared >= required_shared(n_r, threshold)
    cand, r_of, n_m, shared, n_r = cand[fits], r_of[fits], n_m[fits], shared[fits], n_r[fits]
    order = np.lexsort((place[cand], -n_m, r_of))  # per cluster: most shingles, then the rule
    first = order[np.r_[True, r_of[order][1:] != r_of[order][:-1]]] if len(order) else order
    chosen_rep, chosen = r_of[first], cand[first]
    c_value = shared[first] / n_r[first]
    # every other document of the cluster must be inside the chosen one too
    new_rep = np.full(len(ids), -1, dtype=np.int64)
    new_rep[chosen_rep] = chosen
    others = members[new_rep[rep_row[members]] >= 0]
    target = new_rep[rep_row[others]]
    others, target = others[others != target], target[others != target]
    copies = leader[others] == leader[target]  # the new kept document's exact copies
    check, check_at = others[~copies], target[~copies]
    o_shared = shared_counts(hashes, offsets, set_at[check], set_at[check_at])
    n_o = sizes[set_at[check]]
    n_at = sizes[set_at[check_at]]
    larger = (n_o > n_at) | ((n_o == n_at) & (place[check] < place[check_at]))
    bad = larger | (n_o < min_shingles) | (o_shared < required_shared(n_o, threshold))
    refused = np.unique(rep_row[check[bad]])
    keep = ~np.isin(chosen_rep, refused)
    chosen_rep, chosen, c_value = chosen_rep[keep], chosen[keep], c_value[keep]
    new_rep[:] = -1
    new_rep[chosen_rep] = chosen
    is_rep, cluster_of = c.is_rep.copy(), c.cluster_of.copy()
    score, relation = c.score.copy(), c.relation.copy()
    moving = np.flatnonzero(new_rep[rep_row] >= 0)  # every row of a promoted cluster
    to = new_rep[rep_row[moving]]
    cluster_of[moving] = ids[to]
    is_rep[chosen_rep], is_rep[chosen] = False, True
    relation[moving], score[moving] = CONTAINMENT, np.nan
    own_copy = moving[(leader[moving] == leader[to]) & (moving != to)]
    relation[own_copy], score[own_copy] = JACCARD, 1.0
    relation[chosen], score[chosen] = None, 1.0
    score[chosen_rep] = c_value
    fine = ~bad & np.isin(rep_row[check], chosen_rep)
    o_value = o_shared / np.maximum(n_o, 1)
    score[check[fine]] = o_value[fine]
    p_a = np.concatenate([chosen_rep, check[fine]])
    p_b = np.concatenate([chosen, check_at[fine]])
    p_v = np.concatenate([c_value, o_value[fine]])
    return Promoted(is_rep, cluster_of, score, relation, (p_a, p_b, p_v))


def _members_of(
    cluster_of: npt.NDArray[Any],
    ids: npt.NDArray[Any],
    leader: npt.NDArray[Any],
    is_rep: npt.NDArray[np.bool_],
    rep_rows: I64,
) -> tuple[I64, I64]:
    """The near (not exact) members of the clusters of ``rep_rows`` (one per verified
    pair): ``(member row, pair index)`` for every member of every pair's excerpt."""
    rep_of_row = pd.Index(ids).get_indexer(cluster_of)
    near = np.flatnonzero(~is_rep & (leader != leader[rep_of_row]))
    near = near[np.argsort(rep_of_row[near], kind="stable")]
    keys = rep_of_row[near]
    lo = np.searchsorted(keys, rep_rows, "left")
    count = np.searchsorted(keys, rep_rows, "right") - lo
    edge = np.repeat(np.arange(len(rep_rows), dtype=np.int64), count)
    first = np.repeat(lo - (np.cumsum(count) - count), count)
    return near[first + np.arange(len(edge), dtype=np.int64)], edge


def _schema_of(clusters: pa.Table) -> pa.Schema:
    """``clusters``' schema plus a nullable ``relation``."""
    return clusters.schema.append(pa.field(RELATION, pa.string()))
