"""stages.passages (keep one copy of each repeated passage) against an independent oracle
built on the winnow kernel: ``Index.cover`` regions, their fingerprint-hash signatures,
maximal signatures, keepers by rule, and cleaned texts by ``remove_ranges``; plus what the
semantics guarantee of every output, and the same result whatever the partitioning."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from neardup_udfs.kernels import winnow
from neardup_udfs.stages.passages import (
    keep_counts,
    keep_one,
    passage_docs,
    region_signatures,
    representative_keys,
)
from neardup_udfs.stages.winnowing import cover_regions, doc_freq, fingerprints, remove_regions
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark

K, W, MIN_DOCS, MIN_RUN = 12, 6, 2, 3
# the first 12 articles of more than 300 characters of the Lee news corpus (gensim's lee.cor,
# read as Latin-1), one a line
LEE = Path(__file__).resolve().parents[1] / "data" / "text" / "lee_news_12.txt"

# --- a small site: a template header and footer, a quoted report, overlapping quotes ---
HEADER = "Riverside Gazette · Nachrichten, Café & Kultur · 河畔新聞 — today's edition\n"
FOOTER = (
    "\nCopyright the Riverside Gazette. All rights reserved. Write to the newsroom at "
    "desk@example.org or call the front office during business hours.\n"
)
REPORT = [
    "The council voted on Tuesday night to close the old footbridge for repairs. ",
    "Engineers found rust in two of the main cables during the spring inspection. ",
    "Work is expected to take eleven weeks and cost about four hundred thousand euros. ",
    "Cyclists will be sent over the rail bridge further downstream until then. ",
    "The ferry service will run every twenty minutes on weekdays while it is shut. ",
]
LETTER = [
    "Dear editor, the ferry is a fine idea but it should also stop at the market pier. ",
    "Many older people on the east bank cannot walk as far as the rail bridge. ",
    "A stop at the pier would save them a long detour with their shopping bags. ",
    "I hope the council will think about this before the timetable is printed. ",
]
POEM = (
    "Über allen Gipfeln ist Ruh, in allen Wipfeln spürest du kaum einen Hauch; "
    "die Vögelein schweigen im Walde. Warte nur, balde ruhest du auch."
)
BODIES = {
    "p0": "Lunch menus at the primary schools will change next month after parents asked "
    "for more vegetables and less sugar in the puddings.",
    "p1": "A letter from the mayor on the footbridge closure, sent to every household on the "
    "east bank of the river this morning.",
    "p2": "Readers wrote in about the bridge; most of them want the ferry to run later in the "
    "evening and on Sundays too.",
    "p3": "Our transport correspondent asks whether the rail bridge can take the extra bikes "
    "at the busiest times of the day.",
    "p4": "Im Stadtpark blühen die Kirschbäume früher als sonst; der Gärtner führt am "
    "Samstag durch die Anlage.",
    "p5": "東京の友人から届いた手紙には、桜がもう満開だと書いてあった。"
    "川沿いの道は人でいっぱいだという。",
    "p6": "The chess club meets in the library on Thursdays; beginners are welcome and boards "
    "are provided by the club.",
    "p7": "Résumé de la semaine : la médiathèque ouvre ses portes le dimanche à partir du mois "
    "prochain, à l'essai.",
}
# unique lines that end each copied passage (a run of shared fingerprints stops there)
SIGNOFFS = {
    "p0": "Filed by the education desk after the governors met.",
    "p1": "Reporting by Anna Kowalski at the town hall; edited by Tom.",
    "p2": "Printed with the permission of the council press office.",
    "p3": "Quoted from yesterday's front page, with our thanks to the author.",
    "p4": "Gedicht von Goethe, gelesen beim Frühlingsfest der Grundschule.",
    "p5": "読者からの投書を一部抜粋して掲載しました。ご意見をお寄せください。",
    "p6": "Two readers sent us nearly the same letter this week; both are printed below.",
    "p7": "Poème lu en allemand par la chorale, avec une traduction française.",
}


def site_docs() -> list[tuple[str, str]]:
    """Pages of one site: the header on p0-p5, the footer on p0-p6, a council report whole
    in p1 and p2 and its first sentences in p3 (a part of a longer copy), two overlapping
    cuts of a reader's letter (sentences 1-3 in p4 and p6, 2-4 in p5 and p7; neither holds
    the other), a German poem in p4 and p7. Each copy ends with a line of its own page."""
    r, let, so = REPORT, LETTER, SIGNOFFS
    parts = {
        "p0": [HEADER, BODIES["p0"], "\n", so["p0"], FOOTER],
        "p1": [HEADER, BODIES["p1"], "\n", *r, "\n", so["p1"], FOOTER],
        "p2": [HEADER, so["p2"], "\n", *r, "\n", BODIES["p2"], FOOTER],
        "p3": [HEADER, BODIES["p3"], "\n« ", r[0], r[1], "»\n", so["p3"], FOOTER],
        "p4": [HEADER, BODIES["p4"], "\n", POEM, "\n", so["p4"], "\n", *let[:3], "\n", FOOTER],
        "p5": [HEADER, BODIES["p5"], "\n“", *let[1:], "”\n", so["p5"], FOOTER],
        "p6": [so["p6"], "\n", *let[:3], "\n", BODIES["p6"], FOOTER],
        "p7": [BODIES["p7"], "\n", POEM, "\n", so["p7"], "\n", *let[1:]],
    }
    return [(d, "".join(p)) for d, p in parts.items()]


# earliest: p5 first, p3 and p6 tie (by id), p0 and p2 have no date (last)
ORDERS = {"p0": None, "p1": 20, "p2": None, "p3": 12, "p4": 30, "p5": 5, "p6": 12, "p7": 1}


# --- the oracle: pure Python on the winnow kernel ---


def signed64(h: int) -> int:
    return h - (1 << 64) if h >= 1 << 63 else h


@dataclass(frozen=True)
class Decided:
    """One region as the oracle decides it."""

    doc_id: str
    start: int
    length: int
    kept_by: str | None
    kept: bool
    holders: int
    maximal: bool


def rule_key(rule: str, texts: dict[str, str], orders: dict[str, Any]) -> Callable[[str], Any]:
    def key(d: str) -> Any:
        ident = d.encode()  # ids compare byte-wise
        if rule == "earliest":
            o = orders.get(d)
            return (o is None, o if o is not None else 0, ident)
        if rule == "longest":
            return (-len(texts[d].encode()), ident)
        return (ident,)

    return key


def oracle(
    docs: list[tuple[str, str]],
    rule: str = "min_id",
    max_keep_docs: int | None = None,
    groups: dict[str, str] | None = None,
    orders: dict[str, Any] | None = None,
    kgram: int = K,
    window: int = W,
    min_docs: int = MIN_DOCS,
    min_run: int = MIN_RUN,
) -> tuple[list[Decided], dict[str, int], dict[str, str], dict[tuple[str, int], frozenset[int]]]:
    """(decided regions, keep counts, cleaned texts, signature per (doc, start))."""
    texts = dict(docs)
    group_of = groups or {d: "" for d, _ in docs}
    indexes: dict[str, winnow.Index] = {}
    for d, t in docs:
        indexes.setdefault(group_of[d], winnow.Index(kgram, window)).add(d, t)
    regions: list[tuple[str, int, int, frozenset[int]]] = []
    for d, t in docs:
        fp = winnow.text(t, kgram, window)
        pairs = list(zip(fp.pos.tolist(), fp.hash.tolist(), strict=True))
        for r in indexes[group_of[d]].cover(t, min_docs, min_run):
            end = r.pos + r.length - kgram
            sig = frozenset(signed64(h) for p, h in pairs if r.pos <= p <= end)
            regions.append((d, r.pos, r.length, sig))
    holders: dict[tuple[str, frozenset[int]], set[str]] = defaultdict(set)
    for d, _, _, sig in regions:
        holders[(group_of[d], sig)].add(d)
    maximal = {(g, s): not any(g2 == g and s < s2 for g2, s2 in holders) for g, s in holders}
    key = rule_key(rule, texts, orders or {})
    keeper: dict[tuple[str, frozenset[int]], str | None] = {}
    for gs, ds in holders.items():
        limited = max_keep_docs is None or len(ds) <= max_keep_docs
        keeper[gs] = min(ds, key=key) if maximal[gs] and limited else None
    decided = []
    for d, start, length, sig in regions:
        gs = (group_of[d], sig)
        decided.append(
            Decided(d, start, length, keeper[gs], keeper[gs] == d, len(holders[gs]), maximal[gs])
        )
    tops = [gs for gs, m in maximal.items() if m]
    overlapping = {a for a in tops for b in tops if a != b and a[0] == b[0] and a[1] & b[1]}
    counts = {
        "maximal_regions": len(tops),
        "kept_regions": sum(r.kept for r in decided),
        "removed_regions": sum(not r.kept for r in decided),
        "removed_everywhere": sum(keeper[gs] is None for gs in tops),
        "overlapping_regions": len(overlapping),
    }
    cleaned = {}
    for d, t in docs:
        cuts = [(r.start, r.length) for r in decided if r.doc_id == d and not r.kept]
        cleaned[d] = winnow.remove_ranges(t.encode(), cuts)[0].decode()
    sigs = {(d, s): sig for d, s, _, sig in regions}
    return sorted(decided, key=lambda r: (r.doc_id, r.start)), counts, cleaned, sigs


# --- the Spark side ---


@dataclass
class Result:
    decided: list[Decided]
    counts: dict[str, int]
    cleaned: dict[str, str]
    signed: dict[tuple[str, int], frozenset[int]]
    cover: list[tuple[str, int, int]]


def spark_keep(
    spark,  # type: ignore[no-untyped-def]
    docs: list[tuple[str, str]],
    rule: str = "min_id",
    max_keep_docs: int | None = None,
    groups: dict[str, str] | None = None,
    orders: dict[str, Any] | None = None,
    partitions: int = 2,
) -> Result:
    rows = [(d, t, (groups or {}).get(d, "g"), (orders or {}).get(d)) for d, t in docs]
    frame = spark.createDataFrame(rows, "doc_id string, text string, grp string, seen int")
    frame = frame.repartition(partitions)
    group = "grp" if groups is not None else None
    fps = fingerprints(frame, K, W)
    if group is not None:
        fps = fps.join(frame.select("doc_id", group), "doc_id")
    fps = fps.persist()  # read four times below
    freq = doc_freq(fps, group)
    signed = region_signatures(fps, freq, K, MIN_DOCS, MIN_RUN, group)
    ranks = representative_keys(frame, rule, "seen")
    passages = keep_one(signed, ranks, group, max_keep_docs)
    regions = passages.regions.persist()
    try:
        decided = [
            Decided(r.doc_id, r.start, r.length, r.kept_by, r.kept, r.holders, r.maximal)
            for r in regions.collect()
        ]
        removed = regions.where(~F.col("kept"))
        cleaned = {r.doc_id: r.text for r in remove_regions(frame, removed).collect()}
        sig_rows = signed.collect()
        cover = cover_regions(fps, freq, K, MIN_DOCS, MIN_RUN, group).collect()
        counts = keep_counts(passages)
    finally:
        regions.unpersist()
        fps.unpersist()
    return Result(
        sorted(decided, key=lambda r: (r.doc_id, r.start)),
        counts,
        cleaned,
        {(r.doc_id, r.start): frozenset(r.signature) for r in sig_rows},
        sorted((r.doc_id, r.start, r.length) for r in cover),
    )


def assert_equal_to_oracle(got: Result, want: tuple) -> None:  # type: ignore[type-arg]
    decided, counts, cleaned, sigs = want
    assert got.decided == decided
    assert got.counts == counts
    assert got.cleaned == cleaned
    assert got.signed == sigs


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str]]:
    return site_docs()


@pytest.fixture(scope="module")
def min_id_run(spark, docs) -> Result:  # type: ignore[no-untyped-def]
    return spark_keep(spark, docs)


def test_the_site_exercises_every_case(docs) -> None:  # type: ignore[no-untyped-def]
    """The oracle finds in the site: signatures held by many documents, a non-maximal one
    (a part of a longer copy), overlapping maximal ones, documents holding nothing kept."""
    decided, counts, cleaned, sigs = oracle(docs)
    assert max(r.holders for r in decided) == 7  # the footer
    assert any(not r.maximal for r in decided)
    assert counts["overlapping_regions"] >= 2
    letter = [r for r in decided if r.doc_id in ("p4", "p5") and "older people" in _cut(docs, r)]
    assert len(letter) == 2 and all(r.maximal and r.kept for r in letter)
    a, b = (sigs[(r.doc_id, r.start)] for r in letter)
    assert a & b and not a <= b and not b <= a  # the two cuts of the letter overlap
    assert 0 < counts["kept_regions"] < len(decided)
    assert counts["removed_everywhere"] == 0
    assert any(cleaned[d] != t for d, t in docs) and any(r.kept for r in decided)
    assert any(ord(c) > 0x7F for t in cleaned.values() for c in t)


def test_signatures_are_the_cover_regions_run_hashes(docs, min_id_run) -> None:  # type: ignore[no-untyped-def]
    index = winnow.Index(K, W)
    for d, t in docs:
        index.add(d, t)
    want = sorted((d, r.pos, r.length) for d, t in docs for r in index.cover(t, MIN_DOCS, MIN_RUN))
    assert min_id_run.cover == want
    assert sorted((r.doc_id, r.start, r.length) for r in min_id_run.decided) == want
    assert min_id_run.signed == oracle(docs)[3]


def test_keep_one_min_id_equals_the_oracle(docs, min_id_run) -> None:  # type: ignore[no-untyped-def]
    assert_equal_to_oracle(min_id_run, oracle(docs))


@pytest.mark.parametrize("rule", ["earliest", "longest"])
def test_keep_one_other_rules_equal_the_oracle_and_move_the_keeper(
    spark, docs, min_id_run, rule
) -> None:  # type: ignore[no-untyped-def]
    got = spark_keep(spark, docs, rule, orders=ORDERS)
    want = oracle(docs, rule, orders=ORDERS)
    assert_equal_to_oracle(got, want)
    by_min_id = {(r.doc_id, r.start): r.kept_by for r in min_id_run.decided}
    moved = [r for r in got.decided if r.kept_by != by_min_id[(r.doc_id, r.start)]]
    assert moved, f"{rule} keeps every region where min_id does"
    assert got.cleaned != min_id_run.cleaned


def test_earliest_puts_missing_orders_last_and_ties_to_the_smallest_id(
    spark, docs, min_id_run
) -> None:  # type: ignore[no-untyped-def]
    """The footer (p0-p6): p5 (5) comes before p3 and p6 (12), p0 and p2 (no date) last;
    min_id would keep p0's. Without p5 the earliest holders tie at 12: p3 (the smaller id)."""
    got = spark_keep(spark, docs, "earliest", orders=ORDERS)
    assert footer_keepers(docs, got) == {"p5"}
    assert footer_keepers(docs, min_id_run) == {"p0"}
    rest = [(d, t) for d, t in docs if d not in ("p5", "p7")]
    tied = spark_keep(spark, rest, "earliest", orders=ORDERS)
    assert tied.decided == oracle(rest, "earliest", orders=ORDERS)[0]
    assert footer_keepers(rest, tied) == {"p3"}


def footer_keepers(docs: list[tuple[str, str]], got: Result) -> set[str | None]:
    """The keepers of the regions that hold the footer."""
    return {r.kept_by for r in got.decided if "All rights reserved" in _cut(docs, r)}


def test_max_keep_docs_removes_crowded_regions_everywhere(spark, docs) -> None:  # type: ignore[no-untyped-def]
    """At most 2 holders: the footer (7 pages) goes everywhere, the quotes (2 pages each)
    keep a copy."""
    got = spark_keep(spark, docs, max_keep_docs=2)
    want = oracle(docs, max_keep_docs=2)
    assert_equal_to_oracle(got, want)
    assert got.counts["removed_everywhere"] >= 1  # the footer, in 7 pages
    assert footer_keepers(docs, got) == {None}
    for r in got.decided:
        if r.holders > 2:
            assert not r.kept and r.kept_by is None
    assert any(r.kept and r.holders == 2 for r in got.decided)  # the limit is inclusive
    assert "All rights reserved" not in "".join(got.cleaned.values())
    assert any(r.kept for r in got.decided)  # the quotes still keep a copy


def test_groups_compete_only_within_their_group(spark, docs) -> None:  # type: ignore[no-untyped-def]
    groups = {d: ("east" if d in ("p0", "p2", "p4", "p6") else "west") for d, _ in docs}
    got = spark_keep(spark, docs, "longest", groups=groups)
    want = oracle(docs, "longest", groups=groups)
    assert_equal_to_oracle(got, want)
    kept = [r.doc_id for r in got.decided if r.kept and "All rights" in _cut(docs, r)]
    assert sorted(groups[d] for d in kept) == ["east", "west"]  # one footer kept per group


def _cut(docs: list[tuple[str, str]], r: Decided) -> str:
    return dict(docs)[r.doc_id].encode()[r.start : r.start + r.length].decode("utf-8", "replace")


def test_outputs_keep_what_the_semantics_guarantee(docs, min_id_run) -> None:  # type: ignore[no-untyped-def]
    """Every cleaned text is valid UTF-8 and is its text without its removed regions; each
    maximal signature is kept by exactly one document; a kept region's bytes are still in
    its keeper's cleaned text unless a removed region of the same document touches them
    (cuts widen to whole characters; neighbouring regions may share bytes)."""
    texts = dict(docs)
    got = min_id_run
    for d, t in got.cleaned.items():
        t.encode("utf-8")  # a str from Spark's UTF-8: valid
        assert len(t.encode()) <= len(texts[d].encode())
    keepers: dict[frozenset[int], set[str]] = defaultdict(set)
    for r in got.decided:
        sig = got.signed[(r.doc_id, r.start)]
        assert r.kept == (r.maximal and r.kept_by == r.doc_id)
        if r.maximal:
            keepers[sig].add(r.kept_by or "")
        else:
            assert r.kept_by is None and not r.kept
            assert any(sig < s for s in got.signed.values())
    assert all(len(k) == 1 for k in keepers.values())
    assert len(keepers) == got.counts["maximal_regions"]
    for r in got.decided:
        if not r.kept:
            continue
        data = texts[r.doc_id].encode()
        removed = [x for x in got.decided if x.doc_id == r.doc_id and not x.kept]
        lo, hi = r.start - 4, r.start + r.length + 4  # widened by up to one character
        if all(x.start + x.length <= lo or x.start >= hi for x in removed):
            passage = data[r.start : r.start + r.length]
            assert passage in got.cleaned[r.doc_id].encode(), r
    untouched = {r.doc_id for r in got.decided if not r.kept}
    for d, t in docs:
        if d not in untouched:
            assert got.cleaned[d] == t


def test_same_result_whatever_the_partitioning(spark, docs) -> None:  # type: ignore[no-untyped-def]
    one = spark_keep(spark, docs, "longest", max_keep_docs=5, partitions=1)
    with spark_conf(spark, **{"spark.sql.shuffle.partitions": "7",
                              "spark.sql.adaptive.enabled": "true",
                              "spark.sql.autoBroadcastJoinThreshold": "10485760"}):  # fmt: skip
        four = spark_keep(spark, docs, "longest", max_keep_docs=5, partitions=4)
    assert one == four
    assert_equal_to_oracle(one, oracle(docs, "longest", max_keep_docs=5))


@pytest.mark.parametrize("grouped", [False, True])
def test_passage_docs_count_every_document_holding_the_signature(spark, docs, grouped) -> None:  # type: ignore[no-untyped-def]
    """boilerplate_top's passages against the oracle's regions: each distinct signature is
    held by the documents with a region of that signature or of one containing it (the
    report's first sentences in p3 by p1 and p2 too), in any group, and shown by its first
    region of exactly that signature (the smallest id, then start)."""
    groups = {d: ("east" if d in ("p0", "p2", "p4", "p6") else "west") for d, _ in docs}
    group_of = groups if grouped else None
    frame = spark.createDataFrame(
        [(d, t, groups[d]) for d, t in docs], "doc_id string, text string, grp string"
    )
    fps = fingerprints(frame, K, W)
    if grouped:
        fps = fps.join(frame.select("doc_id", "grp"), "doc_id")
    group = "grp" if grouped else None
    signed = region_signatures(fps, doc_freq(fps, group), K, MIN_DOCS, MIN_RUN, group)
    got = {
        frozenset(r.signature): (r.docs, (r.doc_id, r.start, r.length))
        for r in passage_docs(signed).collect()
    }
    decided, _, _, sigs = oracle(docs, groups=group_of)
    regions = [(r.doc_id, r.start, r.length, sigs[(r.doc_id, r.start)]) for r in decided]
    want = {
        sig: (
            len({d for d, _, _, s in regions if sig <= s}),
            min((d, start, n) for d, start, n, s in regions if s == sig),
        )
        for sig in {s for *_, s in regions}
    }
    assert got == want
    report = [r for r in decided if r.doc_id == "p3" and "footbridge" in _cut(docs, r)]
    held = 2 if grouped else 3  # p1, p3 (west) and p2 (east: no other copy there, no region)
    assert len(report) == 1 and got[sigs[("p3", report[0].start)]][0] == held
    footer = max(n for n, _ in got.values())
    assert footer == 7  # the footer, in both groups


def test_representative_keys_order_documents_by_rule(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [("b", "ééé", 3), ("a", "abcdef", None), ("c", "abcdef", 3), ("ab", "x", 1)]
    frame = spark.createDataFrame(rows, "doc_id string, text string, seen int")

    def order(rule: str) -> list[str]:
        keys = representative_keys(frame, rule, "seen").orderBy("rank").collect()
        return [r.doc_id for r in keys]

    assert order("min_id") == ["a", "ab", "b", "c"]
    assert order("earliest") == ["ab", "b", "c", "a"]  # nulls last, ties by id
    assert order("longest") == ["a", "b", "c", "ab"]  # UTF-8 bytes: "ééé" is 6, ties by id
    with pytest.raises(ValueError, match="order_col"):
        representative_keys(frame, "earliest")
    with pytest.raises(ValueError, match="rule"):
        representative_keys(frame, "newest")


def test_news_paragraphs_quoted_across_pages_equal_the_oracle(spark) -> None:  # type: ignore[no-untyped-def]
    """Real news paragraphs (the Lee corpus: "£" is two UTF-8 bytes): each
    page holds a masthead, an article of its own and a cut of the next page's article (the
    middle two thirds or the last two thirds, by parity)."""
    articles = LEE.read_text(encoding="utf-8").splitlines()
    masthead = "Lee Daily — the news in brief · édition spéciale\n\n"
    docs = []
    for i, a in enumerate(articles):
        quoted = articles[(i + 1) % len(articles)]
        n = len(quoted)
        quote = quoted[n // 3 :] if i % 2 else quoted[n // 6 : 5 * n // 6]
        docs.append((f"n{i:02d}", masthead + a + "\n\n" + quote))
    got = spark_keep(spark, docs, "longest", max_keep_docs=1)
    want = oracle(docs, "longest", max_keep_docs=1)
    assert_equal_to_oracle(got, want)
    decided, counts = want[0], want[1]
    assert len(docs) == 12 and counts["maximal_regions"] >= 10
    assert counts["removed_everywhere"] >= 1 and any(not r.maximal for r in decided)
