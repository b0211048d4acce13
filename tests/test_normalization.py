"""Pipelines with a normalization: ids, what every text-taking method reads, and what the web
normalization does to HTML-wrapped and CJK near-copies (no JVM here)."""

from __future__ import annotations

import numpy as np
import pytest

from neardup_udfs.index.store import IndexManifest, new_manifest, pipeline_of
from neardup_udfs.kernels.web_text import normalize_web
from neardup_udfs.kernels.words_jit import pair_jaccard_batch
from neardup_udfs.normalization import NONE, Normalization, for_preset
from neardup_udfs.presets import PresetError, resolve

PLAIN = (
    "The harbour storm closed the north road on Tuesday night.\n"
    "Crews cleared the fallen trees by morning and the ferry ran again at noon.\n"
    "The council thanked the volunteers who kept the shelter open all night."
)
WRAPPED = "<html><body><p>" + PLAIN.replace("\n", "</p><p>") + "</p></body></html>"
RESAVED = (
    "<!DOCTYPE html><html><head><title>Storm</title>"
    "<style>body{font-family:sans-serif;margin:0}.nav a{color:#333;padding:4px}</style>"
    "<script>window.dataLayer=[];function track(e){dataLayer.push(e)}</script></head><body>"
    "<p>" + PLAIN.replace("\n", "</p>\n<p>") + "</p>"
    "<noscript>Enable JavaScript to see comments</noscript></body></html>"
)
ZH = "我们的目标是为每个人提供一个自由的操作系统，并且在任何时候都尊重用户的自由与隐私。"
ZH_EDIT = ZH.replace("自由的", "开放的", 1)


def test_ids_prefix_the_normalization_and_none_adds_nothing() -> None:
    assert resolve("semblance").id == "semblance/1"  # the reference presets, as called directly
    assert resolve("semblance", normalize="none").id == "semblance/1"
    assert resolve("semblance", normalize="web", k=125, bands=25, rows=5).id == (
        "web/1+semblance/1;bands=25,k=125,rows=5"
    )
    assert resolve("semblance-simhash", normalize="web").id == "web/1+semblance-simhash/1"
    assert resolve("ditto/2", normalize="web").id == "web/1;cjk=0+ditto/2"
    assert resolve("fingerprint", normalize="web").id == "web/1;cjk=0+fingerprint/1"
    assert resolve("ditto/2", normalize="web").version == "ditto/2"  # the preset's version


@pytest.mark.parametrize(
    ("name", "normalize", "message"),
    [
        (
            "semblance",
            "html",
            "preset 'semblance': unknown normalization 'html' (known: web, none)",
        ),
        ("phash", "web", "preset 'phash' reads images: normalization 'web' is for text"),
    ],
)
def test_bad_normalizations_name_themselves(name: str, normalize: str, message: str) -> None:
    with pytest.raises(PresetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve(name, normalize=normalize)


def test_only_word_token_presets_get_cjk_tokens() -> None:
    assert for_preset("web", word_tokens=True) == Normalization("web", cjk=True)
    assert for_preset("web", word_tokens=False) == Normalization("web", cjk=False)
    assert for_preset("none", word_tokens=True) == NONE and not NONE.active
    ditto = resolve("ditto/2", normalize="web")
    assert ditto.normalize_batch([ZH]) == [normalize_web(ZH, cjk=None)] == [ZH]


@pytest.mark.parametrize("name", ["semblance", "semblance-simhash", "ditto/2", "anchor"])
def test_every_method_reads_the_normalized_text(name: str) -> None:
    """Each text-taking method of a web pipeline equals the plain pipeline on the normalized
    text, and ``normalized=True`` means the text is taken as it is."""
    web, plain = resolve(name, normalize="web"), resolve(name)
    texts = [RESAVED, WRAPPED, ZH, "", "Jane Doe <jdoe@example.org>, if a < b"]
    normal = web.normalize_batch(texts)
    scheme = "chars" if web.normalization.cjk else None
    assert normal == [normalize_web(t, cjk=scheme) for t in texts]
    if web.kind == "minhash":
        assert np.array_equal(web.signature_batch(texts), plain.signature_batch(normal))
        assert np.array_equal(
            web.signature_batch(normal, normalized=True), plain.signature_batch(normal)
        )
    else:
        assert np.array_equal(web.fingerprint_batch(texts), plain.fingerprint_batch(normal))
        assert np.array_equal(
            web.fingerprint_batch(normal, normalized=True), plain.fingerprint_batch(normal)
        )
        fps, errors = web.fingerprint_batch_checked(texts)
        assert np.array_equal(fps, plain.fingerprint_batch(normal)) and errors == [None] * 5
        assert web.fingerprint(RESAVED) == plain.fingerprint(normal[0])
    assert web.exact_keys(texts) == plain.exact_keys(normal)
    assert web.exact_keys(normal, normalized=True) == plain.exact_keys(normal)


def test_bytes_are_read_as_utf8_with_replacement() -> None:
    web = resolve("semblance", normalize="web")
    assert web.normalize_batch([b"<p>caf\xc3\xa9 \xff</p>"]) == ["caf\u00e9 \ufffd"]


def test_a_wrapped_or_resaved_copy_is_the_same_document() -> None:
    web, plain = resolve("semblance", normalize="web"), resolve("semblance")
    # without normalization the markup and the stylesheet are words of the document
    raw = pair_jaccard_batch([PLAIN, PLAIN], [WRAPPED, RESAVED], 3)
    assert raw.max() < 0.7  # below the default threshold
    assert len(set(web.exact_keys([PLAIN, WRAPPED, RESAVED]))) == 1
    assert len(set(plain.exact_keys([PLAIN, WRAPPED, RESAVED]))) == 3
    ditto = resolve("ditto/2", normalize="web")
    fps = ditto.fingerprint_batch([PLAIN, WRAPPED, RESAVED])
    assert len(set(fps.tolist())) == 1  # ditto strips tags itself; the stage drops style/script


def test_one_changed_han_character_changes_a_few_shingles() -> None:
    web = resolve("semblance", normalize="web")
    a, b = web.normalize_batch([ZH, ZH_EDIT])
    assert pair_jaccard_batch([a], [b], 3)[0] >= 0.75  # three characters replaced
    # semblance's own tokens: each clause between punctuation is one word
    assert pair_jaccard_batch([ZH], [ZH_EDIT], 3)[0] == 0.0
    # (two clause-words: no 3-shingle at all); with character tokens the signatures agree
    assert np.mean(web.signature_batch([ZH])[0] == web.signature_batch([ZH_EDIT])[0]) > 0.6


def test_index_manifests_record_the_normalization() -> None:
    web = resolve("semblance", normalize="web", k=125, bands=25, rows=5)
    m = new_manifest("semblance", web, 3)
    assert (m.normalization, m.pipeline_id) == ("web", web.id)
    back = IndexManifest.from_json(m.to_json(), "x")
    assert pipeline_of(back) == web
    # a manifest written before normalization existed has no such key: it is "none"
    old = m.to_json().replace('"normalization": "web",', "").replace(web.id, "semblance/1")
    assert '"normalization"' not in old
    legacy = IndexManifest.from_json(old, "x")
    assert legacy.normalization == "none" and pipeline_of(legacy).id.startswith("semblance/1;")


def test_udf_results_never_go_through_a_fixed_width_string_array() -> None:
    """The UDFs' scatter of strings into a batch: 2,000 texts beside one of 100,000
    characters stay 2,000 Python strings (pandas' masked assignment would allocate 2,000 x
    100,000 x 4 bytes = 800 MB; a real batch with a 2 MB man page asked for 15 GiB)."""
    import tracemalloc

    from neardup_udfs.udfs import scatter

    values = ["x" * 100_000] + ["short text"] * 1_999
    present = np.ones(2_001, dtype=bool)
    present[7] = False
    tracemalloc.start()
    try:
        out = scatter(values, present)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, peak
    assert out.dtype == object and out[7] is None and out[0] == values[0]
    assert out.tolist() == values[:7] + [None] + values[7:]
