"""The column functions of ``neardup_udfs.functions`` on a local SparkSession.

Each golden file's inputs go THROUGH the column functions (``simhash``, ``minhash``,
``band_keys``, ``phash``) in one DataFrame, collected once, and every value is compared
bit for bit with the reference libraries' golden values in tests/golden. The inputs are the
goldens' hex bytes, as a ``binary`` column (every input, invalid UTF-8 too) and, where the
golden has the text, as a ``string`` column. The other tests check that nulls give nulls,
that the functions equal the Python API (``neardup_udfs.signature``, ``fingerprint``,
``Pipeline.band_keys_batch``, ``exact_keys``, ``normalize_batch``), that 64-bit values come
back as the two's-complement ``bigint`` and that a wrong-kind preset is refused.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType

import neardup_udfs
from neardup_udfs import functions as nf
from neardup_udfs.presets import resolve

GOLDEN = Path(__file__).parent / "golden"
IMAGES = GOLDEN / "phash-images"
MASK = 2**64 - 1

# ditto/2 golden field -> (char, word) options, as tests/kernels/test_featurize.py
DITTO_VARIANTS = {
    "fp_default_char4": (4, 0),
    "fp_char3_word1": (3, 1),
    "fp_char4_word2": (4, 2),
    "fp_char5": (5, 0),
    "fp_word2": (0, 2),
}
SEMBLANCE_SIMHASH_W = (1, 2, 3)
PHASH_MAX_PIXELS = 64 * 64  # the 64x64 PNGs are at the limit (hashed), larger ones over it


@cache
def _load(name: str) -> Any:
    return json.loads((GOLDEN / name).read_text("utf-8"))


def _u64(value: Any) -> int:
    """A collected bigint as the unsigned 64-bit value it stands for (it must be a signed
    64-bit int: the two's-complement view)."""
    assert isinstance(value, int) and -(2**63) <= value < 2**63, value
    return value & MASK


def _hex(value: Any) -> str:
    return f"{_u64(value):016x}"


def _hexes(values: Any) -> list[str]:
    assert values is not None
    return [_hex(v) for v in values]


def _signed(value: int) -> int:
    return value - 2**64 if value >= 2**63 else value


def _inputs_frame(spark: Any, doc: dict[str, Any]) -> Any:
    """A golden file's inputs: ``id``, ``data`` (the hex bytes, binary) and ``text`` (the
    golden's text, null where it has none: invalid UTF-8)."""
    rows = [(i["id"], bytearray.fromhex(i["hex"]), i["text"]) for i in doc["inputs"]]
    return spark.createDataFrame(rows, "id string, data binary, text string")


def _by_id(rows: list[Any]) -> dict[str, Any]:
    return {r["id"]: r for r in rows}


# --- one DataFrame per golden file, collected once ------------------------------------------


@pytest.fixture(scope="module")
def ditto_rows(spark: Any) -> dict[str, Any]:
    """generated-ditto.json through ``simhash(..., "ditto/2", char=, word=)``."""
    df = _inputs_frame(spark, _load("generated-ditto.json"))
    columns = []
    for field, (char, word) in DITTO_VARIANTS.items():
        columns.append(nf.simhash("data", "ditto/2", char=char, word=word).alias(f"b_{field}"))
        columns.append(nf.simhash("text", "ditto/2", char=char, word=word).alias(f"s_{field}"))
    out = df.select("id", *columns)
    assert out.schema["b_fp_default_char4"].dataType == LongType()
    return _by_id(out.collect())


@pytest.fixture(scope="module")
def semblance_rows(spark: Any) -> dict[str, Any]:
    """generated-semblance.json through ``minhash``, ``band_keys`` (of the computed and of
    the golden signatures) and ``simhash(..., "semblance-simhash", w=)``."""
    doc = _load("generated-semblance.json")
    golden_sigs = {
        i: [_signed(int(h, 16)) for h in p["minhash_default_signature"]]
        for i, p in doc["per_input"].items()
    }
    rows = [
        (i["id"], bytearray.fromhex(i["hex"]), i["text"], golden_sigs[i["id"]])
        for i in doc["inputs"]
    ]
    df = spark.createDataFrame(rows, "id string, data binary, text string, gold array<bigint>")
    sims = [
        nf.simhash("data", "semblance-simhash", w=w).alias(f"sh_w{w}") for w in SEMBLANCE_SIMHASH_W
    ]
    out = df.select(
        "id",
        nf.minhash("data").alias("sig"),
        nf.minhash("text").alias("s_sig"),
        nf.band_keys("gold").alias("gold_keys"),
        nf.simhash("text", "semblance-simhash").alias("s_sh_w3"),
        *sims,
    ).select("*", nf.band_keys("sig").alias("keys"))
    assert out.schema["sig"].dataType == ArrayType(LongType())
    assert out.schema["keys"].dataType == ArrayType(LongType())
    return _by_id(out.collect())


def _word_cases() -> list[dict[str, Any]]:
    """The reference testdata cases the ``semblance`` preset can make: word shingles."""
    return [c for c in _load("semblance-minhash-testdata-golden.json") if c["mode"] == "words"]


def _case_column(case: dict[str, Any]) -> str:
    return f"w{case['n']}_k{case['k']}_s{case['seed']}"


@pytest.fixture(scope="module")
def testdata_rows(spark: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """semblance-minhash-testdata-golden.json through ``minhash(..., w=, k=, seed=)`` (one
    column per option set), and semblance-simhash-testdata-golden.json through
    ``simhash(..., "semblance-simhash", w=)``."""
    cases = _word_cases()
    df = spark.createDataFrame([(c["name"], c["text"]) for c in cases], "id string, text string")
    shapes = {_case_column(c): (c["n"], c["k"], c["seed"]) for c in cases}
    minhashes = df.select(
        "id",
        *[
            nf.minhash("text", w=w, k=k, seed=seed).alias(name)
            for name, (w, k, seed) in sorted(shapes.items())
        ],
    ).collect()
    sim_cases = _load("semblance-simhash-testdata-golden.json")
    sdf = spark.createDataFrame(
        [(c["name"], c["text"]) for c in sim_cases], "id string, text string"
    )
    ws = sorted({c["w"] for c in sim_cases})
    simhashes = sdf.select(
        "id", *[nf.simhash("text", "semblance-simhash", w=w).alias(f"w{w}") for w in ws]
    ).collect()
    return _by_id(minhashes), _by_id(simhashes)


@pytest.fixture(scope="module")
def text_simhash_rows(spark: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """generated-fingerprint.json through ``simhash(..., "fingerprint")`` and
    generated-anchor-fingerprint.json through ``simhash(..., "anchor")``."""
    found = []
    for name, preset in (
        ("generated-fingerprint.json", "fingerprint"),
        ("generated-anchor-fingerprint.json", "anchor"),
    ):
        df = _inputs_frame(spark, _load(name))
        out = df.select(
            "id",
            nf.simhash("data", preset).alias("b_fp"),
            nf.simhash("text", preset).alias("s_fp"),
        )
        found.append(_by_id(out.collect()))
    return found[0], found[1]


@pytest.fixture(scope="module")
def phash_rows(spark: Any) -> dict[str, Any]:
    """Every golden PNG, a non-image, a truncated PNG and a null through ``phash`` (and
    ``phash(..., max_pixels=4096)``)."""
    names = sorted(json.loads((IMAGES / "IMAGES.json").read_text("utf-8")))
    rows: list[tuple[str, bytearray | None]] = [
        (n, bytearray((IMAGES / n).read_bytes())) for n in names
    ]
    rows += [
        ("not_an_image", bytearray(b"this is plain text, not an image")),
        ("truncated_png", bytearray((IMAGES / "circle_128.png").read_bytes()[:60])),
        ("null", None),
    ]
    df = spark.createDataFrame(rows, "id string, data binary")
    out = df.select(
        "id",
        nf.phash("data").alias("ph"),
        nf.phash(F.col("data"), max_pixels=PHASH_MAX_PIXELS).alias("ph_small"),
    )
    assert out.schema["ph"].dataType == LongType()
    return _by_id(out.collect())


# --- ditto/2 ---------------------------------------------------------------------------------


@pytest.mark.spark
def test_ditto_simhash_of_bytes_equals_golden(ditto_rows: dict[str, Any]) -> None:
    """Every ditto/2 fingerprint variant of every golden input (bytes, invalid UTF-8 too)."""
    doc = _load("generated-ditto.json")
    assert len(ditto_rows) == len(doc["inputs"])
    for doc_id, want in doc["per_input"].items():
        for field in DITTO_VARIANTS:
            got = _hex(ditto_rows[doc_id][f"b_{field}"])
            assert got == want[field], ("ditto/2", field, doc_id, want[field], got)


@pytest.mark.spark
def test_ditto_simhash_of_strings_equals_golden(ditto_rows: dict[str, Any]) -> None:
    """The same values from a string column; the input without text (null) gives null."""
    doc = _load("generated-ditto.json")
    for item in doc["inputs"]:
        row, want = ditto_rows[item["id"]], doc["per_input"][item["id"]]
        for field in DITTO_VARIANTS:
            if item["text"] is None:
                assert row[f"s_{field}"] is None, item["id"]
            else:
                got = _hex(row[f"s_{field}"])
                assert got == want[field], ("ditto/2", field, item["id"], want[field], got)
    assert any(i["text"] is None for i in doc["inputs"])


@pytest.mark.spark
def test_64_bit_values_are_twos_complement_bigints(
    ditto_rows: dict[str, Any], semblance_rows: dict[str, Any]
) -> None:
    """A golden value >= 2**63 comes back as the negative bigint ``value - 2**64`` (and
    ``got & (2**64 - 1)`` is the golden); smaller ones unchanged. Both kinds occur."""
    doc = _load("generated-ditto.json")
    negative = positive = 0
    for doc_id, want in doc["per_input"].items():
        value = int(want["fp_default_char4"], 16)
        got = ditto_rows[doc_id]["b_fp_default_char4"]
        assert got == (value - 2**64 if value >= 2**63 else value), doc_id
        assert got & MASK == value
        negative, positive = negative + (got < 0), positive + (got > 0)
    for doc_id, want in _load("generated-semblance.json")["per_input"].items():
        values = [int(h, 16) for h in want["minhash_default_signature"]]
        got = semblance_rows[doc_id]["sig"]
        assert got == [v - 2**64 if v >= 2**63 else v for v in values], doc_id
        negative += sum(g < 0 for g in got)
    assert negative > 0 and positive > 0


# --- semblance -------------------------------------------------------------------------------


@pytest.mark.spark
def test_semblance_minhash_equals_golden_signatures(semblance_rows: dict[str, Any]) -> None:
    """``minhash`` (preset semblance, k=128) of every golden input, bytes and strings."""
    doc = _load("generated-semblance.json")
    assert len(semblance_rows) == len(doc["inputs"])
    for item in doc["inputs"]:
        doc_id = item["id"]
        want = doc["per_input"][doc_id]["minhash_default_signature"]
        row = semblance_rows[doc_id]
        got = _hexes(row["sig"])
        assert len(got) == 128 and got == want, ("semblance", doc_id, want, got)
        if item["text"] is None:
            assert row["s_sig"] is None, doc_id
        else:
            got = _hexes(row["s_sig"])
            assert got == want, ("semblance", "string", doc_id, want, got)


@pytest.mark.spark
def test_semblance_band_keys_equal_golden(semblance_rows: dict[str, Any]) -> None:
    """``band_keys`` (16 x 8) of the computed signatures and of the golden signatures
    themselves give the golden LSH band keys."""
    doc = _load("generated-semblance.json")
    for doc_id, want in doc["per_input"].items():
        want_keys = want["lsh_band_keys_16x8"]
        row = semblance_rows[doc_id]
        got = _hexes(row["gold_keys"])
        assert len(got) == 16 and got == want_keys, ("semblance", "golden sig", doc_id, got)
        got = _hexes(row["keys"])
        assert got == want_keys, ("semblance", doc_id, want_keys, got)


@pytest.mark.spark
def test_semblance_simhash_equals_golden(semblance_rows: dict[str, Any]) -> None:
    """``simhash(..., "semblance-simhash", w=1, 2, 3)`` of every golden input; the default
    (w=3) from the string column too."""
    doc = _load("generated-semblance.json")
    for item in doc["inputs"]:
        doc_id = item["id"]
        want, row = doc["per_input"][doc_id], semblance_rows[doc_id]
        for w in SEMBLANCE_SIMHASH_W:
            got = _hex(row[f"sh_w{w}"])
            assert got == want[f"simhash_w{w}"], ("semblance-simhash", w, doc_id, got)
        if item["text"] is None:
            assert row["s_sh_w3"] is None, doc_id
        else:
            got = _hex(row["s_sh_w3"])
            assert got == want["simhash_w3"], ("semblance-simhash", "string", doc_id, got)


@pytest.mark.spark
def test_semblance_reference_testdata(
    testdata_rows: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """The reference's own testdata: every word-shingle MinHash case (w, k, seed as the
    case says) and every SketchText case (w as the case says)."""
    minhashes, simhashes = testdata_rows
    cases = _word_cases()
    assert cases and len(minhashes) == len(cases)
    for case in cases:
        got = _hexes(minhashes[case["name"]][_case_column(case)])
        assert got == case["signature"], ("semblance", case["name"], case["signature"], got)
    sim_cases = _load("semblance-simhash-testdata-golden.json")
    assert sim_cases and len(simhashes) == len(sim_cases)
    for case in sim_cases:
        got = _hex(simhashes[case["name"]][f"w{case['w']}"])
        assert got == case["fingerprint"], ("semblance-simhash", case["name"], got)


# --- fingerprint and anchor ------------------------------------------------------------------


@pytest.mark.spark
def test_fingerprint_simhash_equals_golden(
    text_simhash_rows: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """``simhash(..., "fingerprint")`` of every golden input, bytes and strings."""
    rows = text_simhash_rows[0]
    doc = _load("generated-fingerprint.json")
    assert len(rows) == len(doc["inputs"])
    for item in doc["inputs"]:
        doc_id = item["id"]
        want, row = doc["per_input"][doc_id], rows[doc_id]
        got = _u64(row["b_fp"])
        assert got == want["simhash_uint64"], ("fingerprint", doc_id, want["simhash_hex"], got)
        assert f"{got:016x}" == want["simhash_hex"]
        if item["text"] is None:
            assert row["s_fp"] is None, doc_id
        else:
            assert _u64(row["s_fp"]) == want["simhash_uint64"], ("fingerprint", "string", doc_id)


@pytest.mark.spark
def test_anchor_simhash_equals_golden(
    text_simhash_rows: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """``simhash(..., "anchor")`` of every golden input the reference fingerprints, bytes
    and strings; the invalid UTF-8 input (no golden: the reference refuses it) gives the
    documented lossy-decoding value of ``neardup_udfs.fingerprint``, its null text null."""
    rows = text_simhash_rows[1]
    doc = _load("generated-anchor-fingerprint.json")
    assert len(rows) == len(doc["inputs"])
    checked = 0
    for item in doc["inputs"]:
        doc_id = item["id"]
        want, row = doc["per_input"][doc_id]["simhash_hex"], rows[doc_id]
        if want is None:
            data = bytes.fromhex(item["hex"])
            assert _u64(row["b_fp"]) == neardup_udfs.fingerprint(data, "anchor"), doc_id
            assert item["text"] is None and row["s_fp"] is None, doc_id
            continue
        got = _hex(row["b_fp"])
        assert got == want, ("anchor", doc_id, want, got)
        assert _hex(row["s_fp"]) == want, ("anchor", "string", doc_id)
        checked += 1
    assert checked == len(doc["inputs"]) - 1


# --- pHash -----------------------------------------------------------------------------------


@pytest.mark.spark
def test_phash_equals_golden(phash_rows: dict[str, Any]) -> None:
    """``phash`` of every golden PNG (binary column) is the reference's hash."""
    images = json.loads((IMAGES / "IMAGES.json").read_text("utf-8"))
    golden = _load("generated-fingerprint.json")["phash_images"]
    assert sorted(images) == sorted(golden) and len(golden) == 16
    for name, want in golden.items():
        got = _u64(phash_rows[name]["ph"])
        assert got == want["phash_uint64"], ("phash", name, want["phash_hex"], f"{got:016x}")


@pytest.mark.spark
def test_phash_null_for_non_images_nulls_and_images_over_max_pixels(
    phash_rows: dict[str, Any],
) -> None:
    """A non-image, a truncated PNG and a null give null; with ``max_pixels=4096`` an image
    of more pixels gives null and one of at most 4096 (64x64 included) its golden hash."""
    for doc_id in ("not_an_image", "truncated_png", "null"):
        assert phash_rows[doc_id]["ph"] is None, doc_id
        assert phash_rows[doc_id]["ph_small"] is None, doc_id
    images = json.loads((IMAGES / "IMAGES.json").read_text("utf-8"))
    golden = _load("generated-fingerprint.json")["phash_images"]
    over = 0
    for name, meta in images.items():
        width, height = meta["size"]
        got = phash_rows[name]["ph_small"]
        if width * height > PHASH_MAX_PIXELS:
            assert got is None, name
            over += 1
        else:
            assert _u64(got) == golden[name]["phash_uint64"], name
    assert 0 < over < len(images)
    assert any(w * h == PHASH_MAX_PIXELS for w, h in (m["size"] for m in images.values()))


# --- nulls, the Python API, presets ----------------------------------------------------------

HTML = (
    "<html><head><title>Notice</title><style>p {color: red}</style></head><body>"
    "<p>Your Apple ID has been <b>locked</b>.</p><script>var x = 1;</script>"
    "<div>Please   verify your account now!</div></body></html>"
)
API_TEXTS = [
    HTML,
    "The quick, brown fox jumps over the lazy dog.",
    "the quick brown  fox jumps over the lazy dog",  # the same tokens as the previous text
    "The quick brown cat jumps over the lazy dog.",
    "你好世界，今天天气很好。 ΣΟΦΟΣ İstanbul",
    "two words",  # fewer words than one 3-shingle: every slot all-ones
    "",
]
SMALL = {"k": 20, "bands": 4, "rows": 5}


@pytest.fixture(scope="module")
def api_rows(spark: Any) -> list[Any]:
    """``API_TEXTS`` and one null row through every column function, in one collect."""
    rows = [(i, t) for i, t in enumerate(API_TEXTS)] + [(len(API_TEXTS), None)]
    df = spark.createDataFrame(rows, "i int, text string").withColumn(
        "data", F.col("text").cast("binary")
    )
    out = df.select(
        "i",
        nf.simhash("text").alias("ditto"),
        nf.simhash("text", "ditto/2", normalize="web").alias("ditto_web"),
        nf.simhash("data", "ditto/2", normalize="web").alias("ditto_web_bin"),
        nf.simhash("text", "fingerprint").alias("fingerprint"),
        nf.simhash("text", "anchor").alias("anchor"),
        nf.simhash("text", "semblance-simhash", normalize="web").alias("sem_simhash_web"),
        nf.minhash("text").alias("sig"),
        nf.minhash("text", normalize="web", **SMALL).alias("sig_small"),
        nf.exact_key("text").alias("exact"),
        nf.exact_key("text", normalize="web").alias("exact_web"),
        nf.normalize("text").alias("norm_web"),
        nf.normalize("text", "none").alias("norm_none"),
        nf.phash("data").alias("phash"),
    ).select(
        "*",
        nf.band_keys("sig").alias("keys"),
        nf.band_keys("sig_small", **SMALL).alias("keys_small"),
    )
    assert out.schema["exact"].dataType == StringType()
    assert out.schema["norm_web"].dataType == StringType()
    found = sorted(out.collect(), key=lambda r: r["i"])
    assert [r["i"] for r in found] == list(range(len(API_TEXTS) + 1))
    return found


@pytest.mark.spark
def test_nulls_in_give_nulls_out(api_rows: list[Any]) -> None:
    """The null row is null in every column function's output (chained ``band_keys``
    included), while the same functions give values on the rows around it."""
    null_row = api_rows[-1]
    columns = [c for c in null_row.asDict() if c != "i"]
    assert len(columns) == 15
    for column in columns:
        assert null_row[column] is None, column
    for row in api_rows[:-1]:
        for column in columns:
            if column != "phash":  # texts are not images
                assert row[column] is not None, (row["i"], column)


@pytest.mark.spark
def test_simhash_equals_python_fingerprint(api_rows: list[Any]) -> None:
    """``simhash`` equals ``neardup_udfs.fingerprint`` row by row, per preset."""
    for row, text in zip(api_rows, API_TEXTS, strict=False):
        for column, preset in (
            ("ditto", "ditto/2"),
            ("fingerprint", "fingerprint"),
            ("anchor", "anchor"),
        ):
            want = neardup_udfs.fingerprint(text, preset)
            assert _u64(row[column]) == want, (preset, row["i"])
        want = neardup_udfs.fingerprint(text, "semblance-simhash", normalize="web")
        assert _u64(row["sem_simhash_web"]) == want, ("semblance-simhash web", row["i"])


@pytest.mark.spark
def test_simhash_web_normalization_equals_python_fingerprint(api_rows: list[Any]) -> None:
    """``simhash(col, "ditto/2", normalize="web")`` equals ``neardup_udfs.fingerprint(text,
    "ditto/2", normalize="web")`` (string and binary columns), which on the HTML page
    differs from the fingerprint without normalization: the normalization is applied."""
    web = neardup_udfs.fingerprint(HTML, "ditto/2", normalize="web")
    assert web != neardup_udfs.fingerprint(HTML, "ditto/2")
    html_row = api_rows[API_TEXTS.index(HTML)]
    assert _u64(html_row["ditto_web"]) == web
    assert _u64(html_row["ditto_web_bin"]) == web
    assert html_row["ditto_web"] != html_row["ditto"]
    for row, text in zip(api_rows, API_TEXTS, strict=False):
        want = neardup_udfs.fingerprint(text, "ditto/2", normalize="web")
        assert _u64(row["ditto_web"]) == want, row["i"]
        assert _u64(row["ditto_web_bin"]) == want, row["i"]


@pytest.mark.spark
def test_minhash_and_band_keys_equal_python_api(api_rows: list[Any]) -> None:
    """``minhash`` equals ``neardup_udfs.signature`` and ``band_keys`` equals
    ``resolve(...).band_keys_batch``, with the defaults and with k=20, 4 x 5, web; a text
    shorter than one shingle gets every slot -1 (all ones)."""
    rows = api_rows[:-1]
    sigs = np.stack([neardup_udfs.signature(t) for t in API_TEXTS])
    small = np.stack([neardup_udfs.signature(t, normalize="web", **SMALL) for t in API_TEXTS])
    keys = resolve("semblance").band_keys_batch(sigs)
    keys_small = resolve("semblance", **SMALL).band_keys_batch(small)
    assert small.shape == (len(API_TEXTS), 20) and keys_small.shape == (len(API_TEXTS), 4)
    for n, row in enumerate(rows):
        assert row["sig"] == sigs[n].view(np.int64).tolist(), n
        assert row["sig_small"] == small[n].view(np.int64).tolist(), n
        assert row["keys"] == keys[n].view(np.int64).tolist(), n
        assert row["keys_small"] == keys_small[n].view(np.int64).tolist(), n
    for short in ("two words", ""):
        assert rows[API_TEXTS.index(short)]["sig"] == [-1] * 128, short


@pytest.mark.spark
def test_exact_key_and_normalize_equal_python_api(api_rows: list[Any]) -> None:
    """``exact_key`` equals ``Pipeline.exact_keys`` (equal for the two texts with the same
    tokens, different for another); ``normalize`` equals ``normalize_batch`` under ``web``
    and is the identity under ``none``."""
    rows = api_rows[:-1]
    plain = resolve("semblance").exact_keys(API_TEXTS)
    web = resolve("semblance", normalize="web")
    assert [r["exact"] for r in rows] == plain
    assert [r["exact_web"] for r in rows] == web.exact_keys(API_TEXTS)
    assert rows[1]["exact"] == rows[2]["exact"] != rows[3]["exact"]
    assert [r["norm_web"] for r in rows] == web.normalize_batch(API_TEXTS)
    assert rows[0]["norm_web"] != HTML and "<" not in rows[0]["norm_web"]
    assert [r["norm_none"] for r in rows] == API_TEXTS


@pytest.mark.parametrize(
    ("make", "preset"),
    [
        (lambda: nf.minhash("text", preset="ditto/2"), "ditto/2"),
        (lambda: nf.minhash("text", preset="anchor"), "anchor"),
        (lambda: nf.band_keys("sig", preset="fingerprint"), "fingerprint"),
        (lambda: nf.simhash("text", preset="semblance"), "semblance"),
        (lambda: nf.simhash("data", preset="phash"), "phash"),
    ],
)
def test_wrong_kind_preset_raises_when_the_column_is_made(make: Any, preset: str) -> None:
    """A preset of the other kind (or of images) is a ValueError naming it, raised by the
    column function itself, before any Spark job."""
    with pytest.raises(ValueError, match=preset):
        make()


def test_unknown_preset_or_option_raises() -> None:
    """Unknown presets and options are a ``PresetError`` (a ValueError) at column time."""
    with pytest.raises(neardup_udfs.PresetError, match="nope"):
        nf.simhash("text", preset="nope")
    with pytest.raises(neardup_udfs.PresetError, match="'w'"):
        nf.simhash("text", preset="ditto/2", w=3)
    with pytest.raises(ValueError, match="unknown normalization"):
        nf.minhash("text", normalize="html")
