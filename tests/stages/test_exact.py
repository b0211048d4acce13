"""stages.exact: exact-duplicate groups, led by their smallest id, and their keys, under
every text pipeline."""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from dedup_runs import TOKEN_LESS, WORDED, every_text_pipeline

from neardup_udfs.presets import resolve
from neardup_udfs.stages.exact import NO_TOKENS_KEY, exact_groups, exact_keys
from neardup_udfs.stages.normalize import prepare

pytestmark = pytest.mark.spark


def test_exact_groups_lead_by_smallest_id(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [
        ("b", "Hello   World"),
        ("a", "<p>hello world</p>"),
        ("c", "other text"),
        ("d", "hello world"),
    ]
    df = spark.createDataFrame(rows, "doc_id string, text string")
    ditto = resolve("ditto/2")
    got = exact_groups(df, ditto)
    expected = spark.createDataFrame(
        [("a", "a"), ("b", "a"), ("c", "c"), ("d", "a")], "doc_id string, leader string"
    )
    assert_df_equality(
        got.select("doc_id", "leader"), expected, ignore_row_order=True, ignore_nullable=True
    )
    keys = {r.doc_id: r.exact_key for r in got.collect()}  # the group's key, as the kernel's
    assert keys == dict(
        zip([d for d, _ in rows], ditto.exact_keys([t for _, t in rows]), strict=True)
    )
    assert keys["a"] == keys["b"] == keys["d"] != keys["c"]
    # For semblance the canonical form is the token sequence: punctuation does not matter.
    sem = exact_groups(
        spark.createDataFrame(
            [("x", "Hello, world!"), ("y", "hello world")], "doc_id string, text string"
        ),
        resolve("semblance"),
    )
    assert {r.leader for r in sem.collect()} == {"x"}


@every_text_pipeline
def test_token_less_texts_are_exact_duplicates_only_of_the_same_text(
    spark, preset: str, normalize: str
) -> None:  # type: ignore[no-untyped-def]
    """Under every text preset: texts without a token are each their own group unless their
    prepared texts are byte-identical (under web normalization, also a page that shows the
    same text); texts with tokens keep the preset's key."""
    pipe = resolve(preset, normalize=normalize)
    rows = TOKEN_LESS + WORDED
    if normalize == "web":
        rows = [*rows, ("arrows-html", "<p>\u2192 \u2190 \u2194   \u2713</p>")]
    docs = prepare(spark.createDataFrame(rows, "doc_id string, text string"), pipe)
    got = {r.doc_id: r for r in exact_groups(docs, pipe).collect()}
    expected = {d: "arrows-1" if d.startswith("arrows") else d for d, _ in rows}
    assert {d: r.leader for d, r in got.items()} == expected
    token_less = {got[d].exact_key for d, _ in TOKEN_LESS}
    assert len(token_less) == 4 and NO_TOKENS_KEY not in token_less
    assert all(len(k) == 32 and int(k, 16) >= 0 for k in token_less)
    worded = pipe.exact_keys([t for _, t in WORDED])
    assert [got[d].exact_key for d, _ in WORDED] == worded  # unchanged for texts with tokens
    assert dict(exact_keys(docs, pipe).collect()) == {d: r.exact_key for d, r in got.items()}
