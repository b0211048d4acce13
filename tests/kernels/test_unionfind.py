"""semblance's cluster.Set (kernels.unionfind): goldens, representatives, and connected
components.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import CORPUS, ORDER, PRIMS, SIGS

from neardup_udfs.kernels.lsh_index import Index
from neardup_udfs.kernels.minhash import jaccard
from neardup_udfs.kernels.unionfind import ClusterSet


def test_dedup_pipeline_clusters_threshold_half_golden() -> None:
    # semblance cluster/example_test.go: per document in order, register it, query the index
    # (earlier documents only), union every candidate with raw Jaccard >= 0.5 (no degenerate
    # check: all empty-set signatures are 'identical'), then add the document.
    ix = Index(16, 8)
    cs = ClusterSet()
    for id in ORDER:
        sig = SIGS[id]
        cs.add(id)
        for cand in ix.query(sig):
            if jaccard(sig, SIGS[cand]) >= 0.5:
                cs.union(cand, id)
        ix.add(id, sig)
    assert cs.clusters() == CORPUS["dedup_pipeline_clusters_threshold0.5"]


# --- cluster.Set ---------------------------------------------------------------------------------


def test_cluster_basics_golden() -> None:
    cs = ClusterSet()
    cs.add("lonely")
    cs.union("a", "b")
    cs.union("c", "d")
    cs.union("b", "c")
    assert cs.clusters() == PRIMS["cluster_basics_clusters"]
    assert len(cs) == 5
    assert cs.find("d") == ("a", True) and cs.find("lonely") == ("lonely", True)
    assert cs.find("nobody") == ("", False)
    assert cs.same("b", "d") and not cs.same("a", "lonely") and not cs.same("a", "nobody")
    cs.add("a")  # no-op for a known id
    assert len(cs) == 5


def test_cluster_representative_is_earliest_added() -> None:
    cs = ClusterSet()
    cs.union("m", "n")
    cs.add("q")
    cs.union("o", "p")
    cs.union("p", "m")
    assert cs.clusters() == [["m", "n", "o", "p"], ["q"]]
    assert cs.find("p") == ("m", True)
    cs2 = ClusterSet()
    for id in ("first", "second", "third"):
        cs2.add(id)
    cs2.union("second", "third")
    cs2.union("third", "first")
    assert cs2.find("second") == ("first", True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=15))
def test_cluster_set_matches_connected_components(pairs: list[tuple[int, int]]) -> None:
    cs = ClusterSet()
    order: list[str] = []
    adj: dict[str, set[str]] = {}
    for a, b in pairs:
        sa, sb = f"n{a}", f"n{b}"
        cs.union(sa, sb)
        for s in (sa, sb):
            if s not in order:
                order.append(s)
        adj.setdefault(sa, set()).add(sb)
        adj.setdefault(sb, set()).add(sa)
    comps: dict[str, set[str]] = {}
    for s in order:
        if s in comps:
            continue
        stack, comp = [s], {s}
        while stack:
            for t in adj[stack.pop()]:
                if t not in comp:
                    comp.add(t)
                    stack.append(t)
        for t in comp:
            comps[t] = comp
    want: list[list[str]] = []
    for s in order:
        group = [t for t in order if t in comps[s]]
        if group[0] == s:
            want.append(group)
    assert cs.clusters() == want
    for s in order:
        assert cs.find(s) == ([t for t in order if t in comps[s]][0], True)
