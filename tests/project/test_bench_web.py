"""The corpus builder and scorer of bench/bench_web.py (bench/lib: visible_text,
planted_families, web_corpus, man_corpus, web_truth) on a tiny build, without Spark: the
corpora of ``bench_web_corpora``, from inputs shipped with the tests.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bench_web_corpora import build_small
from lib.man_corpus import CJK_CHARS, troff_paragraphs
from lib.planted_families import CORPORA, HTML_KINDS, KINDS, Corpus
from lib.visible_text import (
    char_shingles,
    cjk_count,
    jaccard,
    visible_text,
    web_shingles,
    word_shingles,
    word_tokens,
)
from lib.web_truth import FLOOR, THRESHOLD, Truth, ground_truth, score


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[Corpus, Truth]]:
    out = {}
    for name in CORPORA:
        corpus = build_small(name)
        out[name] = (corpus, ground_truth(corpus))
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_extractor_contract() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>T</title><style>p{x:1}</style></head><body>"
        "<script>var a = '<p>no</p>';</script><noscript>no</noscript>"
        "<p>Fish &amp; chips&#33;</p><p>to<b>day</b>  is<br>fine</p><div>a</div>b"
        "<template><p>no</p></template><label>no</label></body></html>"
    )
    assert visible_text(page) == "Fish & chips!\ntoday is\nfine\na\nb"
    assert visible_text("<html><body><p>one</p><p>two</p>") == "one\ntwo"


def test_shingles() -> None:
    assert word_tokens("Hello, wor_ld 42é!") == ["hello", "wor", "ld", "42é"]
    assert word_shingles("a b c d") == {"a b c", "b c d"}
    assert char_shingles("中文 字符\n测试") == {"中文字符", "文字符测", "字符测试"}
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    # the web corpus's truth: a page of mostly CJK text by its characters
    assert web_shingles("广东要闻 main 今天") == char_shingles("广东要闻 main 今天")
    assert web_shingles("a b 中 c") == word_shingles("a b 中 c")


def test_troff() -> None:
    source = (
        '.\\" a comment\n.TH X 1\n.SH 名前\nx \\- 说明\n.PP\n\\fB粗体\\fR 文本\n.BR a , b\n'
        ".de XX\n定义\n..\n.if n \\{\\\n条件\n.\\}\n\n第二段\\(em完\n"
    )
    assert troff_paragraphs(source) == ["名前", "x - 说明", "粗体 文本 a,b", "第二段—完"]


@pytest.mark.parametrize("name", CORPORA)
def test_families(built: dict[str, tuple[Corpus, Truth]], name: str) -> None:
    corpus, _ = built[name]
    assert len(corpus.docs) >= 20
    assert len({d.doc_id for d in corpus.docs}) == len(corpus.docs)
    families = corpus.families()
    assert len(families) >= 3
    for members in families.values():
        assert len(members) >= 2
        assert sum(corpus.docs[i].role == "base" for i in members) == 1
    for d in corpus.docs:
        assert d.kind in KINDS
        assert d.family is not None or d.role == "base"  # a copy is always in a family


@pytest.mark.parametrize("name", CORPORA)
def test_html_copies_extract_to_their_plain_text(
    built: dict[str, tuple[Corpus, Truth]], name: str
) -> None:
    corpus, _ = built[name]
    wrapped = [d for d in corpus.docs if d.kind in ("html", "resaved")]
    assert wrapped
    for d in corpus.docs:
        if d.kind in HTML_KINDS:
            assert d.visible == visible_text(d.text)
            assert _norm(d.visible) == _norm(d.plain), d.doc_id
        else:
            assert d.visible == d.text == d.plain
    if name == "web":
        kinds = {d.kind for d in corpus.docs}
        assert kinds == set(KINDS)
        resaved = [d for d in corpus.docs if d.kind == "resaved"]
        heads = {d.text.split("</title>", 1)[1].split("</head>", 1)[0] for d in resaved}
        assert len(heads) == 1  # the same inlined stylesheet and script in every one
        assert all('href="http://archive.example/web/' in d.text for d in resaved)


@pytest.mark.parametrize("name", ["zh", "ja"])
def test_cjk_documents(built: dict[str, tuple[Corpus, Truth]], name: str) -> None:
    corpus, _ = built[name]
    lo, hi = CJK_CHARS
    for d in corpus.docs:
        text = "".join(d.visible.split())
        assert cjk_count(text) >= 0.2 * len(text), d.doc_id
        if d.role == "base":
            assert lo <= len(d.plain) <= hi
    if name == "zh":  # one variant of a page found in zh_CN and in zh_TW
        sources = {d.source for d in corpus.docs}
        assert sum("/man5/locale.5.gz" in s for s in sources) == 1


@pytest.mark.parametrize("name", CORPORA)
def test_truth_is_exact_jaccard(built: dict[str, tuple[Corpus, Truth]], name: str) -> None:
    corpus, truth = built[name]
    sets = [
        corpus.shingles(visible_text(d.text) if d.kind in HTML_KINDS else d.text)
        for d in corpus.docs
    ]
    family_pairs = corpus.pairs_of_families()
    assert family_pairs
    for a, b in family_pairs:
        assert truth.pairs[(a, b)] == pytest.approx(jaccard(sets[a], sets[b]), abs=1e-12)
    brute = {
        (a, b): j
        for a, b in combinations(range(len(sets)), 2)
        if (j := jaccard(sets[a], sets[b])) >= FLOOR
    }
    found = {p: j for p, j in truth.pairs.items() if j >= FLOOR}
    assert found.keys() == brute.keys()
    assert all(found[p] == pytest.approx(brute[p], abs=1e-12) for p in brute)
    in_family = set(family_pairs)
    assert all(p in in_family for p, j in truth.pairs.items() if j < FLOOR)


def test_deterministic() -> None:
    for name in ("web", "ja"):
        a, b = build_small(name), build_small(name)
        assert [(d.doc_id, d.text) for d in a.docs] == [(d.doc_id, d.text) for d in b.docs]
    assert [d.text for d in build_small("ja", seed=1).docs] != [
        d.text for d in build_small("ja").docs
    ]


def _write_clusters(out: Path, rows: list[tuple[str, str, bool]]) -> None:
    (out / "clusters").mkdir(parents=True)
    doc_id, cluster_id, rep = zip(*rows, strict=True)
    table = pa.table({"doc_id": doc_id, "cluster_id": cluster_id, "is_representative": rep})
    pq.write_table(table, out / "clusters" / "part-00000.parquet")


def test_score(built: dict[str, tuple[Corpus, Truth]], tmp_path: Path) -> None:
    corpus, truth = built["web"]
    ids = [d.doc_id for d in corpus.docs]
    strong = truth.at_least(THRESHOLD + 0.05)
    assert strong

    _write_clusters(tmp_path / "none", [(d, d, True) for d in ids])
    s = score(corpus, truth, tmp_path / "none")
    assert (s["kept"], s["removed"], s["rejected"]) == (len(ids), 0, 0)
    assert s["resolved"] == s["one_cluster"] == 0.0 and s["removal_precision"] == 1.0

    rep = min(ids)
    _write_clusters(tmp_path / "all", [(d, rep, d == rep) for d in ids[:-1]])
    s = score(corpus, truth, tmp_path / "all")
    assert (s["kept"], s["removed"], s["rejected"]) == (1, len(ids) - 2, 1)
    assert s["resolved"] == 1.0 and s["removed_unrelated"] > 0 and s["removal_precision"] < 1
    assert s["removed_unrelated_but_banner"] >= s["removed_unrelated"]
    assert truth.boilerplate and not built["zh"][1].boilerplate

    rows = []
    for members in corpus.families().values():
        leader = min(ids[i] for i in members)
        rows += [(ids[i], leader, ids[i] == leader) for i in members]
    rows += [(d.doc_id, d.doc_id, True) for d in corpus.docs if d.family is None]
    _write_clusters(tmp_path / "families", rows)
    s = score(corpus, truth, tmp_path / "families")
    singletons = sum(1 for d in corpus.docs if d.family is None)
    assert s["kept"] == len(corpus.families()) + singletons
    assert (s["removed"], s["rejected"], s["removed_unrelated"]) == (len(ids) - s["kept"], 0, 0)
    fam = set(corpus.pairs_of_families())
    expected = sum(1 for p in strong if p in fam) / len(strong)
    assert s["one_cluster"] == pytest.approx(expected, abs=1e-5)
