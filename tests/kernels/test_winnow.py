"""semblance winnowing (Hashes, Text, Overlaps, Index) against the goldens and naive oracles."""

from __future__ import annotations

import doctest
from typing import Any

import numpy as np
import pytest
import xxhash
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from semblance_golden import assert_fp_golden, inputs, semblance

from neardup_udfs.kernels import winnow
from neardup_udfs.kernels.winnow import (
    MAX_RESULTS,
    Index,
    Match,
    Overlap,
    Region,
    Span,
    fingerprints,
    hashes,
    overlaps,
    regions,
    text,
    text_batch,
)

PARAMS = [(4, 4), (5, 4), (8, 6)]  # the (k, w) pairs of the goldens


# --- naive oracles: the definitions, written out ----------------------------------------------


def naive_winnow(seq: list[int], w: int) -> list[tuple[int, int]]:
    """Every window's rightmost minimum, reported once when it first wins a window."""
    out: list[tuple[int, int]] = []
    for s in range(len(seq) - w + 1):
        window = seq[s : s + w]
        lowest = min(window)
        r = s + max(i for i, v in enumerate(window) if v == lowest)
        if not out or out[-1][0] != r:
            out.append((r, seq[r]))
    return out


def naive_text(data: bytes, k: int, w: int) -> list[tuple[int, int]]:
    grams = [xxhash.xxh64_intdigest(data[i : i + k]) for i in range(len(data) - k + 1)]
    return naive_winnow(grams, w)


def pairs(fp: winnow.Fingerprints) -> list[tuple[int, int]]:
    return list(zip(fp.pos.tolist(), fp.hash.tolist(), strict=True))


def naive_overlaps(a: bytes, b: bytes, k: int, w: int, budget: int) -> list[Span]:
    """semblance's Overlaps loop, one match at a time (diagonal runs, j continuation, budget)."""
    pos_a: dict[int, list[int]] = {}
    for p, h in naive_text(a, k, w):
        pos_a.setdefault(h, []).append(p)
    active: dict[int, list[int]] = {}
    out: list[Span] = []
    stop = False
    for j, (pb, h) in enumerate(naive_text(b, k, w)):
        for pa in pos_a.get(h, []):
            if budget <= 0:
                stop = True
                break
            budget -= 1
            run = active.get(pa - pb)
            if run is not None and run[3] == j - 1:
                run[2], run[3] = pa, j
            else:
                if run is not None:
                    out.append(Span(run[0], run[1], run[2] + k - run[0]))
                active[pa - pb] = [pa, pb, pa, j]
        if stop:
            break
    out += [Span(r[0], r[1], r[2] + k - r[0]) for r in active.values()]
    return sorted(out, key=lambda s: (s.pos_a, s.pos_b))


class NaiveIndex:
    """The Index written as plainly as possible: a list of (id, text) kept in add order."""

    def __init__(self, k: int, w: int) -> None:
        self.k, self.w = k, w
        self.docs: list[tuple[str, bytes]] = []

    def add(self, id: str, data: bytes) -> None:
        self.docs.append((id, data))

    def remove(self, id: str) -> bool:
        present = any(d[0] == id for d in self.docs)
        self.docs = [d for d in self.docs if d[0] != id]
        return present

    def postings(self) -> dict[int, list[tuple[str, int]]]:
        out: dict[int, list[tuple[str, int]]] = {}
        for id, data in self.docs:
            for p, h in naive_text(data, self.k, self.w):
                out.setdefault(h, []).append((id, p))
        return out

    def doc_freq(self, h: int) -> int:
        return len(
            {id for id, t in self.docs if h in {x for _, x in naive_text(t, self.k, self.w)}}
        )

    def overlap(self, data: bytes) -> list[Overlap]:
        query = {h for _, h in naive_text(data, self.k, self.w)}
        counts: dict[str, int] = {}
        for id in dict.fromkeys(d[0] for d in self.docs):
            mine = {
                h
                for doc_id, t in self.docs
                if doc_id == id
                for _, h in naive_text(t, self.k, self.w)
            }
            if query & mine:
                counts[id] = len(query & mine)
        return [Overlap(i, n) for i, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]

    def matches(self, data: bytes, budget: int = MAX_RESULTS) -> list[Match]:
        postings = self.postings()
        active: dict[tuple[str, int], list[int]] = {}
        out: list[Match] = []
        stop = False
        for j, (q, h) in enumerate(naive_text(data, self.k, self.w)):
            for id, d in postings.get(h, []):
                if budget <= 0:
                    stop = True
                    break
                budget -= 1
                run = active.get((id, d - q))
                if run is not None and run[3] == j - 1:
                    run[2], run[3] = q, j
                else:
                    if run is not None:
                        out.append(Match(id, run[0], run[1], run[2] + self.k - run[0]))
                    active[(id, d - q)] = [q, d, q, j]
            if stop:
                break
        out += [Match(key[0], r[0], r[1], r[2] + self.k - r[0]) for key, r in active.items()]
        return sorted(out, key=lambda m: (m.id, m.query_pos, m.doc_pos, m.length))

    def cover(self, data: bytes, min_docs: int, min_run: int) -> list[Region]:
        runs: list[list[int]] = [[]]
        for p, h in naive_text(data, self.k, self.w):
            if self.doc_freq(h) >= min_docs:
                runs[-1].append(p)
            elif runs[-1]:
                runs.append([])
        return [
            Region(r[0], r[-1] + self.k - r[0]) for r in runs if r and len(r) >= max(min_run, 1)
        ]


# --- goldens ------------------------------------------------------------------------------------


def fp_lines(fps: list[tuple[int, int]]) -> list[str]:
    return [f"{p}:{h:016x}" for p, h in fps]


@pytest.mark.parametrize(("k", "w"), PARAMS)
def test_text_golden(k: int, w: int) -> None:
    for doc_id, data in inputs():
        want = semblance()["per_input"][doc_id][f"winnow_k{k}_w{w}"]
        assert_fp_golden(fp_lines(pairs(text(data, k, w))), want, doc_id)


@pytest.mark.parametrize(("k", "w"), PARAMS)
def test_text_batch_golden(k: int, w: int) -> None:
    ids, docs = zip(*inputs(), strict=True)
    batch = text_batch(list(docs), k, w)
    assert np.all(np.diff(batch.doc) >= 0)
    for d, doc_id in enumerate(ids):
        rows = batch.doc == d
        got = list(zip(batch.pos[rows].tolist(), batch.hash[rows].tolist(), strict=True))
        want = semblance()["per_input"][doc_id][f"winnow_k{k}_w{w}"]
        assert_fp_golden(fp_lines(got), want, doc_id)


def test_primitive_goldens() -> None:
    prim = semblance()["primitives"]
    fox = fp_lines(pairs(text("the quick brown fox", 4, 4)))
    assert fox == prim["winnow_golden_the_quick_brown_fox_k4_w4"]
    assert MAX_RESULTS == prim["winnow_max_results"] == 1 << 20
    rep = "a" * 2000
    spans = overlaps(rep, rep, 5, 4)
    assert len(spans) == prim["winnow_overlaps_cap_repeat_a2000_k5_w4_count"] == 2519
    assert spans == sorted(spans)
    # The index path runs the same capped scan: one document gives the same runs.
    ix = Index(5, 4)
    ix.add("doc", rep)
    got = ix.matches(rep)
    assert sorted((m.doc_pos, m.query_pos, m.length) for m in got) == [
        (s.pos_a, s.pos_b, s.length) for s in spans
    ]


def test_pair_overlaps_golden() -> None:
    docs = dict(inputs())
    for pair in semblance()["pairs"]:
        got = [
            f"{s.pos_a},{s.pos_b},{s.length}"
            for s in overlaps(docs[pair["a"]], docs[pair["b"]], 8, 6)
        ]
        assert got == (pair["winnow_overlaps_k8_w6_posA_posB_len"] or []), (pair["a"], pair["b"])


@pytest.fixture(scope="module")
def corpus_index() -> Index:
    """The golden corpus index: every input in file order except the empty one."""
    ix = Index(8, 6)
    for doc_id, data in inputs():
        if doc_id != "empty":
            ix.add(doc_id, data)
    return ix


def test_corpus_overlap_golden(corpus_index: Index) -> None:
    want = semblance()["corpus"]["winnow_index_k8_w6_overlap"]
    for doc_id, data in inputs():
        got = [f"{o.id}={o.shared}" for o in corpus_index.overlap(data)]
        assert got == (want[doc_id] or []), doc_id


def test_corpus_matches_golden(corpus_index: Index) -> None:
    want = semblance()["corpus"]["winnow_index_k8_w6_matches_id_qpos_dpos_len"]
    for doc_id, data in inputs():
        got = [f"{m.id},{m.query_pos},{m.doc_pos},{m.length}" for m in corpus_index.matches(data)]
        expected = want[doc_id]
        if isinstance(expected, dict):
            assert len(got) == expected["count"], doc_id
            assert got[:20] == expected["first_20"], doc_id
        else:
            assert got == (expected or []), doc_id


def test_corpus_cover_golden(corpus_index: Index) -> None:
    want = semblance()["corpus"]["winnow_index_k8_w6_cover_mindocs2_minrun5_pos_len"]
    for doc_id, data in inputs():
        got = [f"{r.pos},{r.length}" for r in corpus_index.cover(data, 2, 5)]
        assert got == (want[doc_id] or []), doc_id


# --- the reference's documented examples (winnow/example_test.go) -----------------------------


def test_example_shared_passage() -> None:
    k, w = 8, 6
    a = "original reporting: the council voted 7-2 to approve the marina expansion late tuesday."
    b = "REPOST >> the council voted 7-2 to approve the marina expansion (saw this yesterday)"
    pos_in_a = {h: p for p, h in pairs(text(a, k, w))}
    hits = [pos_in_a[h] for _, h in pairs(text(b, k, w)) if h in pos_in_a]
    assert a[hits[0] : hits[-1] + k] == "e council voted 7-2 to approve the marina expansion"


def test_example_index() -> None:
    ix = Index(8, 6)
    ix.add(
        "wire-story",
        "City council approves the marina expansion project after a seven to two vote late "
        "Tuesday.",
    )
    ix.add(
        "gardening",
        "This week in the garden: pruning roses and preparing beds for the coming autumn frost.",
    )
    suspect = (
        "BREAKING (via tipster): approves the marina expansion project after a seven to two "
        "vote — developing."
    )
    assert ix.overlap(suspect)[0] == Overlap("wire-story", 14)
    m = ix.matches(suspect)[0]
    raw = suspect.encode()
    assert raw[m.query_pos : m.query_pos + m.length] == (
        b" approves the marina expansion project after a seven to two vo"
    )


def test_example_cover() -> None:
    footer = "\n--\nPosted to rec.boats.paddle - archived by the list server."
    first = "Anyone tried the new kevlar hull on whitewater? Curious about durability."
    ix = Index(8, 6)
    ix.add("post1", first + footer)
    ix.add("post2", "Selling a two-seat canoe, barely used, pickup only near the lake." + footer)
    ix.add(
        "post3", "Trip report: three days on the river with perfect weather throughout." + footer
    )
    doc = first + footer
    assert [doc[r.pos : r.pos + r.length] for r in ix.cover(doc, 3, 5)] == [
        "-\nPosted to rec.boats.paddle - archived by the list ser"
    ]


def test_example_overlaps() -> None:
    a = "the quarterly report shows that revenue climbed twelve percent across every region"
    b = "as we noted last week, revenue climbed twelve percent across every region this year"
    s = overlaps(a, b, 8, 6)[0]
    assert b[s.pos_b : s.pos_b + s.length] == "venue climbed twelve percent across every r"


# --- oracle properties ----------------------------------------------------------------------------

# Few distinct values force ties (equal minima) and repeated k-grams.
small_hashes = st.lists(st.integers(0, 4), max_size=60)
any_hashes = st.lists(st.integers(0, 2**64 - 1), max_size=60)
repetitive_bytes = st.lists(st.sampled_from([b"a", b"ab", b"\xff", b"\xe2\x82", b" "])).map(
    b"".join
)
some_bytes = st.one_of(st.binary(max_size=120), repetitive_bytes)
sizes = st.integers(1, 12)


@given(st.one_of(small_hashes, any_hashes), sizes)
def test_hashes_matches_naive_oracle(seq: list[int], w: int) -> None:
    assert pairs(hashes(seq, w)) == naive_winnow(seq, w)
    as_array = hashes(np.array(seq, dtype=np.uint64), w)
    assert pairs(as_array) == naive_winnow(seq, w)


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40), sizes)
def test_hashes_reads_int64_as_twos_complement(seq: list[int], w: int) -> None:
    unsigned = [v & (2**64 - 1) for v in seq]
    want = naive_winnow(unsigned, w)
    assert pairs(hashes(np.array(seq, dtype=np.int64), w)) == want
    assert pairs(hashes(seq, w)) == want


def test_hashes_across_chunks() -> None:
    """Sequences longer than one chunk, including a long plateau of equal minima."""
    rng = np.random.default_rng(7)
    n = 3 * fingerprints._CHUNK + 17
    for seq in (rng.integers(0, 50, n, dtype=np.uint64), np.zeros(n, dtype=np.uint64)):
        for w in (1, 5, 64):
            assert pairs(hashes(seq, w)) == naive_winnow(seq.tolist(), w)


@given(some_bytes, st.integers(1, 40), sizes)
@example(bytes(range(90)), 33, 3)  # k >= 32: XXH64's four-lane path, every run
@example(bytes(range(90)), 8, 2)
def test_text_matches_naive_oracle(data: bytes, k: int, w: int) -> None:
    got = pairs(text(data, k, w))
    assert got == naive_text(data, k, w)
    for p, h in got:
        assert h == xxhash.xxh64_intdigest(data[p : p + k])


@given(st.text(max_size=60), st.integers(1, 10), sizes)
def test_str_is_its_utf8_bytes(s: str, k: int, w: int) -> None:
    assert pairs(text(s, k, w)) == naive_text(s.encode("utf-8"), k, w)


def test_lone_surrogates_are_their_three_byte_form() -> None:
    s = "ab\ud800cd\udfffef"
    assert pairs(text(s, 3, 2)) == naive_text(s.encode("utf-8", "surrogatepass"), 3, 2)


@given(st.lists(some_bytes, max_size=8), st.integers(1, 36), sizes)
def test_text_batch_equals_text_per_document(docs: list[bytes], k: int, w: int) -> None:
    batch = text_batch(docs, k, w)
    got = list(zip(batch.doc.tolist(), batch.pos.tolist(), batch.hash.tolist(), strict=True))
    want = [(d, p, h) for d, data in enumerate(docs) for p, h in naive_text(data, k, w)]
    assert got == want
    assert batch.doc.dtype == np.int64 and batch.pos.dtype == np.int64
    assert batch.hash.dtype == np.uint64


def test_text_batch_across_chunks() -> None:
    rng = np.random.default_rng(11)
    docs = [bytes(rng.integers(97, 100, int(n), dtype=np.uint8)) for n in rng.integers(0, 9000, 12)]
    docs += [b"", b"a" * 40000, b"xy"]
    batch = text_batch(docs, 5, 7)
    for d, data in enumerate(docs):
        rows = batch.doc == d
        got = list(zip(batch.pos[rows].tolist(), batch.hash[rows].tolist(), strict=True))
        assert got == pairs(text(data, 5, 7)) == naive_text(data, 5, 7)


@given(
    st.binary(max_size=40),
    st.binary(max_size=40),
    st.binary(max_size=40),
    st.binary(min_size=1, max_size=80),
    st.integers(1, 10),
    st.integers(1, 10),
)
def test_shared_substring_shares_a_fingerprint(
    pre_a: bytes, pre_b: bytes, post: bytes, shared: bytes, k: int, w: int
) -> None:
    """Any common substring of at least w + k - 1 bytes shares a fingerprint hash."""
    assume(len(shared) >= w + k - 1)
    a, b = pre_a + shared + post, pre_b + shared
    common = set(text(a, k, w).hash.tolist()) & set(text(b, k, w).hash.tolist())
    assert common
    assert overlaps(a, b, k, w)


@given(some_bytes, some_bytes, st.integers(1, 8), st.integers(1, 6), st.sampled_from([1, 3, 17]))
def test_overlaps_matches_naive_oracle(a: bytes, b: bytes, k: int, w: int, budget: int) -> None:
    assert overlaps(a, b, k, w) == naive_overlaps(a, b, k, w, MAX_RESULTS)
    assert overlaps(a, b, k, w, max_results=budget) == naive_overlaps(a, b, k, w, budget)


@given(some_bytes, st.integers(1, 8), st.integers(1, 6))
def test_overlaps_of_a_text_with_itself(data: bytes, k: int, w: int) -> None:
    spans = overlaps(data, data, k, w)
    fps = text(data, k, w)
    if len(fps.pos):
        # The main diagonal is one run from the first to the last fingerprint.
        first, last = int(fps.pos[0]), int(fps.pos[-1])
        assert Span(first, first, last + k - first) in spans
    for s in spans:  # bounding k-grams are byte-equal
        assert data[s.pos_a : s.pos_a + k] == data[s.pos_b : s.pos_b + k]
        end_a, end_b = s.pos_a + s.length - k, s.pos_b + s.length - k
        assert data[end_a : end_a + k] == data[end_b : end_b + k]


ids = st.sampled_from(["a", "b", "c", "é", "doc-10", "doc-9"])
corpora = st.lists(st.tuples(ids, some_bytes), max_size=6)


@settings(max_examples=60)
@given(corpora, some_bytes, st.integers(1, 6), st.integers(1, 5), st.integers(0, 3))
def test_index_matches_naive_oracle(
    docs: list[tuple[str, bytes]], query: bytes, k: int, w: int, min_docs: int
) -> None:
    ix, oracle = Index(k, w), NaiveIndex(k, w)
    for id, data in docs:
        ix.add(id, data)
        oracle.add(id, data)
    assert len(ix) == len({d[0] for d in docs})
    assert ix.overlap(query) == oracle.overlap(query)
    assert ix.matches(query) == oracle.matches(query)
    assert ix.matches(query, max_results=5) == oracle.matches(query, 5)
    for min_run in (0, 1, 2, 4):
        assert ix.cover(query, min_docs, min_run) == oracle.cover(query, min_docs, min_run)
    for _, h in naive_text(query, k, w):
        assert ix.doc_freq(h) == oracle.doc_freq(h)
    # Removing an id drops all its postings; the cache is rebuilt.
    for id in ("a", "zzz"):
        assert ix.remove(id) == oracle.remove(id)
        assert ix.matches(query) == oracle.matches(query)
        assert ix.cover(query, min_docs, 1) == oracle.cover(query, min_docs, 1)
        assert ix.overlap(query) == oracle.overlap(query)


# --- Index behaviour ----------------------------------------------------------------------------

FOOTER = "\n\n<Posted to the archive. Please read the FAQ before posting. Thanks for reading!>\n"
BODIES = {
    "a": "The lighthouse keeper counted the ships as they passed the narrow strait each morning.",
    "b": "Deep in the ravine the survey team found quartz veins nobody had mapped before today.",
    "c": "Her grandmother's recipe called for wild plums picked before the first frost of autumn.",
}


def test_index_lifecycle_and_cache_invalidation() -> None:
    ix = Index(8, 6)
    assert len(ix) == 0 and ix.overlap("anything at all here") == []
    assert ix.cover("a reasonably long query against an empty index", 1, 1) == []
    for id, body in BODIES.items():
        ix.add(id, body + FOOTER)
    assert len(ix) == 3 and ix.ids() == ["a", "b", "c"] and "b" in ix
    doc = BODIES["a"] + FOOTER
    regions = ix.cover(doc, 3, 5)
    covered = "".join(doc[r.pos : r.pos + r.length] for r in regions)
    assert "FAQ" in covered and "lighthouse" not in covered
    footer_hash = int(text(FOOTER, 8, 6).hash[3])
    assert ix.doc_freq(footer_hash) == 3
    assert ix.doc_freq(np.uint64(footer_hash)) == 3
    assert ix.doc_freq(int(np.uint64(footer_hash).view(np.int64))) == 3
    assert ix.doc_freq(12345) == 0
    assert ix.remove("c") and not ix.remove("c")
    assert ix.doc_freq(footer_hash) == 2 and ix.cover(doc, 3, 5) == []
    ix.add("c", BODIES["c"] + FOOTER)
    assert ix.cover(doc, 3, 5) == regions
    assert ix.cover("short", 1, 1) == []


def test_index_repeated_ids_and_short_texts() -> None:
    ix = Index(4, 3)
    ix.add("x", "tiny")  # too short for a fingerprint, but the id is registered
    assert len(ix) == 1 and ix.ids() == ["x"]
    ix.add("x", "the same passage of text")
    ix.add("x", "the same passage of text")
    # Each posting counts: the same document twice gives two runs per alignment.
    got = ix.matches("the same passage of text")
    assert got and all(m.id == "x" for m in got)
    oracle = NaiveIndex(4, 3)
    for data in (b"tiny", b"the same passage of text", b"the same passage of text"):
        oracle.add("x", data)
    assert got == oracle.matches(b"the same passage of text")
    assert ix.overlap("the same passage of text") == [
        Overlap("x", len(set(text("the same passage of text", 4, 3).hash.tolist())))
    ]
    assert ix.remove("x") and len(ix) == 0 and ix.matches("the same passage of text") == []


def test_ids_order_bytewise() -> None:
    ix = Index(4, 2)
    for id in ("b", "é", "a", "Z"):
        ix.add(id, "shared words here")
    assert [o.id for o in ix.overlap("shared words here")] == ["Z", "a", "b", "é"]
    assert [m.id for m in ix.matches("shared words here")] == ["Z", "a", "b", "é"]


# --- edge cases and errors ---------------------------------------------------------------------


def test_short_inputs() -> None:
    for data in ("", b"", "a", "abc"):
        assert len(text(data, 4, 1).pos) == 0
    # Exactly w + k - 1 bytes make one window; one byte less makes none.
    assert len(text("abcdefg", 4, 4).pos) == 1 and len(text("abcdef", 4, 4).pos) == 0
    assert len(hashes([], 3).pos) == 0 and len(hashes([1, 2], 3).pos) == 0
    assert overlaps("", "", 4, 4) == [] and overlaps("abcdefgh", "", 2, 2) == []
    assert text_batch([], 4, 4).doc.tolist() == []
    assert text_batch(["", "ab"], 4, 4).pos.tolist() == []


def test_w_one_keeps_every_kgram() -> None:
    data = b"abracadabra \xff\xfe"
    fp = text(data, 3, 1)
    assert fp.pos.tolist() == list(range(len(data) - 2))
    assert fp.hash.tolist() == [xxhash.xxh64_intdigest(data[i : i + 3]) for i in fp.pos.tolist()]
    assert hashes([3, 3, 1], 1).pos.tolist() == [0, 1, 2]


def test_docstring_examples() -> None:
    modules = (winnow, fingerprints, regions)  # the package and its modules with examples
    results = [doctest.testmod(m) for m in modules]
    assert sum(r.failed for r in results) == 0
    assert sum(r.attempted for r in results) >= 5


def test_ties_pick_the_rightmost() -> None:
    assert pairs(hashes([2, 1, 1, 1, 3], 3)) == [(2, 1), (3, 1)]
    assert pairs(hashes([7] * 5, 2)) == [(1, 7), (2, 7), (3, 7), (4, 7)]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: text("abc", 0, 1), "k must be positive, got 0"),
        (lambda: text("abc", 1, 0), "w must be positive, got 0"),
        (lambda: text("abc", 0, 0), "k must be positive"),  # k is checked first, as Go does
        (lambda: text("abc", -3, 2), "k must be positive, got -3"),
        (lambda: hashes([1, 2], 0), "w must be positive, got 0"),
        (lambda: text_batch(["abc"], 2, -1), "w must be positive, got -1"),
        (lambda: overlaps("a", "b", 0, 1), "k must be positive"),
        (lambda: Index(4, 0), "w must be positive"),
        (lambda: Index(0, 4), "k must be positive"),
        (lambda: Index(4, 4).add("", "text"), "id must not be empty"),
        (lambda: Index(4, 4).doc_freq(2**64), "hash must fit in 64 bits"),
        (lambda: hashes([-(2**63) - 1], 1), "hash must fit in 64 bits"),
    ],
)
def test_value_errors(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: text("abc", 1.5, 2),  # type: ignore[arg-type]
        lambda: text("abc", True, 2),
        lambda: text(123, 2, 2),  # type: ignore[arg-type]
        lambda: hashes(np.array([1.0, 2.0]), 1),
        lambda: hashes(np.zeros((2, 2), dtype=np.uint64), 1),
        lambda: Index(4, 4).add(7, "text"),  # type: ignore[arg-type]
        lambda: Index(4, 4).cover("text", "2", 1),  # type: ignore[arg-type]
    ],
)
def test_type_errors(call: Any) -> None:
    with pytest.raises(TypeError, match="winnow: "):
        call()
