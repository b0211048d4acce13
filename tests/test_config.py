"""Dedup configuration: TOML + overrides, validated before Spark starts (no JVM here)."""

from __future__ import annotations

import argparse
import importlib
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from neardup_udfs.config import (
    TABLES,
    ConfigError,
    DedupConfig,
    ImagesConfig,
    load_boilerplate_config,
    load_config,
    load_images_config,
    load_index_config,
)
from neardup_udfs.settings import add_arguments, flag_of, keys_of

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_toml_loads_with_overrides() -> None:
    c = load_config(str(ROOT / "conf/dedup.toml"), input="in", output="out", threshold=0.8)
    assert (c.method, c.preset_name, c.jaccard_threshold) == ("minhash", "semblance", 0.8)
    # recall banding: pairs at J = 0.85 are candidates with p >= 0.995 (18 x 7 = 126 slots)
    assert c.pipeline().id == "web/1+semblance/1;bands=18,k=126,rows=7"
    assert c.verification == "hybrid"
    semblance = load_config(
        str(ROOT / "conf/dedup.toml"), input="i", output="o", threshold=0.8, banding="semblance"
    )
    assert semblance.pipeline().id == "web/1+semblance/1;bands=8,rows=16"  # closest threshold
    custom = load_config(
        input="i", output="o", threshold=0.8, preset_options={"k": 256}, banding="recall"
    )
    assert custom.pipeline().id == "web/1+semblance/1;bands=25,k=250,rows=10"
    s = load_config(
        str(ROOT / "conf/dedup.toml"), input="i", output="o", method="simhash", max_distance=5
    )
    assert (s.preset_name, s.max_distance, s.pipeline().id) == ("ditto/2", 5, "web/1;cjk=0+ditto/2")
    # without normalization the ids are the presets' own, as before normalization existed
    plain = load_config(input="i", output="o", threshold=0.8, normalize="none")
    assert plain.pipeline().id == "semblance/1;bands=18,k=126,rows=7"
    ditto = load_config(input="i", output="o", method="simhash", normalize="none")
    assert ditto.pipeline().id == "ditto/2"
    words = load_config(input="i", output="o", method="simhash", preset="semblance-simhash")
    assert words.pipeline().id == "web/1+semblance-simhash/1"  # word tokens: CJK bigrams
    anchor = load_config(input="i", output="o", method="simhash", preset="anchor")
    assert anchor.pipeline().id == "web/1;cjk=0+anchor/1"  # a reference tokenizer: none


def test_threshold_derives_the_lsh_shape() -> None:
    c = load_config(input="i", output="o", threshold=0.5)
    assert (c.banding, dict(c.pipeline().params)["bands"]) == ("recall", 42)  # 42 x 3
    c = load_config(input="i", output="o", threshold=0.5, banding="semblance")
    assert dict(c.pipeline().params)["bands"] == 32
    c = load_config(input="i", output="o", bands=32, rows=4)
    assert c.pipeline().id == "web/1+semblance/1;bands=32,rows=4"
    # an explicit shape's signatures have bands x rows slots, as the recall shape's do
    c = load_config(input="i", output="o", bands=25, rows=5)
    assert c.pipeline().id == load_config(input="i", output="o").pipeline().id
    assert dict(c.pipeline().params)["k"] == 125


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({}, "config key 'input': an input path (or input_table) is required"),
        ({"input": "i"}, "config key 'output'"),
        ({"input": "i", "output": "o", "normalize": "html"}, "config key 'normalize': 'html'"),
        ({"method": "lsh"}, "config key 'method': 'lsh' is not one of minhash, simhash"),
        ({"input_format": "csv"}, "config key 'input_format'"),
        ({"threshold": 1.2}, "config key 'threshold': must be in (0, 1)"),
        ({"bands": 16}, "config key 'bands': give both bands and rows"),
        ({"bands": 20, "rows": 8}, "config key 'bands': 20 x 8 = 160 slots do not fit the 128"),
        ({"bands": 8, "rows": 0}, "config key 'rows': must be a positive integer"),
        ({"preset_options": {"k": 64}, "bands": 16, "rows": 8}, "--bands B --rows R (keys"),
        ({"method": "simhash", "threshold": 0.5}, "config key 'threshold': applies to method"),
        (
            {"method": "simhash", "max_distance": 64},
            "config key 'max_distance': must be in [0, 63]",
        ),
        ({"preset": "ditto/2"}, "config key 'preset': 'ditto/2' is not a MinHash preset"),
        ({"method": "simhash", "preset": "semblance"}, "is not a SimHash preset"),
        ({"preset": "nope"}, "config key 'preset': unknown preset 'nope'"),
        ({"method": "simhash", "preset": "phash"}, "'phash' reads images; the dedup job reads"),
        ({"verification": "off"}, "config key 'verification': 'off' is for simhash only"),
        ({"banding": "wide"}, "config key 'banding': 'wide' is not one of recall, semblance"),
        ({"representative": "earliest"}, "config key 'order_col'"),
        ({"outputs": ("docs", "html")}, "config key 'outputs': 'html' is not one of"),
        ({"max_rounds": 0}, "config key 'max_rounds': must be a positive integer"),
        ({"max_distance": "3"}, "config key 'max_distance': expected int, got '3'"),
        ({"no_chaining": 1}, "config key 'no_chaining': expected bool"),
        ({"clustering": "single"}, "config key 'clustering': 'single' is not one of anchored"),
        ({"no_chaining": True}, "config key 'no_chaining': applies to clustering 'connected'"),
        ({"chaining_floor": 0.8}, "config key 'chaining_floor': applies to clustering 'conn"),
        ({"max_driver_edges": -1}, "config key 'max_driver_edges': must be >= 0, got -1"),
        ({"preset_options": {"w": 0}}, "option 'w' of preset 'semblance' must be in"),
        ({"colour": "red"}, "unknown config key 'colour'"),
        ({"input_table": "t"}, "config key 'id_col': a table's rows have no file"),
        (
            {"input_table": "t", "id_col": "id", "input": "i", "output": "o"},
            "give input or input_table",
        ),
        ({"input_table": "a b", "id_col": "id"}, "config key 'input_table': 'a b' is not a table"),
        ({"output_table_prefix": "x-"}, "config key 'output_table_prefix': 'x-' does not make"),
        (
            {"output_table_prefix": "t_", "engine": "local", "input_format": "jsonl"},
            "'local' writes folders",
        ),
        ({"containment": 0.0}, "config key 'containment': must be in (0, 1], got 0.0"),
        ({"containment": 1.5}, "config key 'containment': must be in (0, 1], got 1.5"),
        ({"containment": 0.8, "method": "simhash"}, "config key 'containment': needs shingle"),
        (
            {"containment": 0.8, "clustering": "connected"},
            "config key 'containment': needs clustering 'anchored'",
        ),
        ({"containment": 0.8, "against": "idx"}, "config key 'containment': not with against"),
        ({"containment_min_shingles": 0}, "config key 'containment_min_shingles': must be"),
    ],
)
def test_bad_settings_name_the_key(overrides: dict, message: str) -> None:
    base = {"input": "i", "output": "o"}
    if "input_table" in overrides:
        base = {"output": "o"}
    if "input" not in overrides and overrides != {}:
        overrides = {**base, **overrides}
    with pytest.raises(ConfigError) as err:
        load_config(**overrides)
    assert message in str(err.value)


def test_clustering_defaults_and_the_connected_keys() -> None:
    c = load_config(input="i", output="o")
    assert (c.clustering, c.max_rounds, c.max_driver_edges) == ("anchored", 50, None)
    c = load_config(input="i", output="o", clustering="connected", no_chaining=True)
    assert c.no_chaining and c.chaining_floor is None
    i = load_images_config(input="i", output="o")
    assert (i.clustering, i.max_driver_edges) == ("anchored", None)
    with pytest.raises(ConfigError, match="config key 'clustering'"):
        load_images_config(input="i", output="o", clustering="single")
    with pytest.raises(ConfigError, match="config key 'max_driver_edges'"):
        load_images_config(input="i", output="o", max_driver_edges=-5)


def test_image_key_settings_are_checked_and_name_their_key() -> None:
    assert load_images_config(input="i", output="o").hamming_scheme(5_000).describe()[
        "key_bits"
    ] == [16, 16]  # sampled bits for the collection's distinct pHashes
    assert load_images_config(input="i", output="o", hamming_key_bits=14).hamming_scheme(
        10**6
    ).describe()["key_bits"] == [14, 14]  # a chosen length stands at any size
    bad = [
        ({"hamming_key_bits": 0}, "config key 'hamming_key_bits'.*\\[1, 54\\]"),
        ({"hamming_blocks": 5}, "config key 'hamming_blocks'.*\\[11, 64\\]"),
        ({"hamming_blocks": 11, "hamming_key_bits": 16}, "exclude each other"),
    ]
    for settings, message in bad:
        with pytest.raises(ConfigError, match=message):
            load_images_config(input="i", output="o", **settings)


def test_bad_toml_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("method = \n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_config(str(bad), input="i", output="o")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(str(tmp_path / "missing.toml"), input="i", output="o")


def test_index_settings() -> None:
    c = load_config(str(ROOT / "conf/dedup.toml"), input="in", output="out", against="idx")
    assert (c.against, c.update_index, c.index_batch_id) == ("idx", False, "in")
    assert load_config(input="in", output="o", batch_id="w48").index_batch_id == "w48"
    with pytest.raises(ConfigError, match="'update_index': needs an index"):
        load_config(input="in", output="out", update_index=True)
    with pytest.raises(ConfigError, match="'outputs': 'matches' needs an index"):
        load_config(input="in", output="out", outputs=("docs", "matches"))
    built = load_index_config(str(ROOT / "conf/dedup.toml"), action="add", input="in", index="i")
    assert built.action == "add" and built.output == ""  # build/add write into the index
    with pytest.raises(ConfigError, match="'output'"):
        load_index_config(action="query", input="q", index="i")
    with pytest.raises(ConfigError, match="'action'"):
        load_index_config(action="drop", input="q", index="i")
    with pytest.raises(ConfigError, match="'index'"):
        load_index_config(action="build", input="q")
    with pytest.raises(ConfigError, match="'top'"):
        load_index_config(action="query", input="q", index="i", output="o", top=0)


def test_the_index_job_leaves_the_dedup_only_keys_of_its_file_to_the_dedup_job(
    tmp_path: Path,
) -> None:
    """jobs/index.py reads the dedup job's file: a key there that only the dedup job takes is
    checked by its declaration, then left to that job; given to the index job directly, it
    is an unknown key."""
    conf = tmp_path / "dedup.toml"
    conf.write_text('outputs = ["docs", "pairs"]\nclustering = "connected"\nmax_distance = 5\n')
    shared = load_index_config(str(conf), input="in", index="i", method="simhash")
    assert shared == load_index_config(input="in", index="i", method="simhash", max_distance=5)
    conf.write_text('clustering = "single"\n')
    with pytest.raises(ConfigError, match="config key 'clustering': 'single' is not one of"):
        load_index_config(str(conf), input="in", index="i")
    with pytest.raises(ConfigError, match="unknown config key 'clustering'"):
        load_index_config(input="in", index="i", clustering="connected")


def test_index_job_rejects_a_bad_command_line_before_spark(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import index as index_job

    assert index_job.main(["query", "--queries", "q.jsonl", "--index", "idx"]) == 2
    assert "index.py: error: config key 'output'" in capsys.readouterr().err
    assert (
        index_job.main(["query", "--queries", "q", "--index", "i", "--output", "o", "--top", "0"])
        == 2
    )
    assert "config key 'top'" in capsys.readouterr().err


def test_every_way_of_making_a_config_is_checked() -> None:
    """The loader, the constructor and dataclasses.replace all pass through the same checks
    (``__post_init__``): no config with a bad key exists."""
    good = load_config(input="i", output="o")
    with pytest.raises(ConfigError, match="config key 'max_rounds': must be a positive"):
        replace(good, max_rounds=0)
    with pytest.raises(ConfigError, match="config key 'method': 'lsh' is not one of"):
        DedupConfig(input="i", output="o", method="lsh")
    with pytest.raises(ConfigError, match="config key 'outputs': 'html' is not one of"):
        replace(good, outputs=("docs", "html"))
    with pytest.raises(ConfigError, match="config key 'order_col'"):
        replace(good, representative="earliest")  # keys checked together as well
    with pytest.raises(ConfigError, match="config key 'input': an input path is required"):
        ImagesConfig(output="o")
    with pytest.raises(ConfigError, match="config key 'max_distance': must be in \\[0, 63\\]"):
        replace(load_images_config(input="i", output="o"), max_distance=64)
    assert replace(good, outputs=["docs"]).outputs == ("docs",)  # a list becomes a tuple


def test_num_perm_and_shingle_words_name_the_preset_options() -> None:
    c = load_config(input="i", output="o", num_perm=256)
    assert c.pipeline().id == "web/1+semblance/1;bands=42,k=252,rows=6"  # recall at 0.75
    assert (
        c.pipeline().id
        == load_config(input="i", output="o", preset_options={"k": 256}).pipeline().id
    )
    w = load_config(input="i", output="o", shingle_words=4)
    assert w.pipeline().id == "web/1+semblance/1;bands=25,k=125,rows=5,w=4"
    s = load_config(input="i", output="o", method="simhash", preset="semblance-simhash",
                    shingle_words=2)  # fmt: skip
    assert s.pipeline().id == "web/1+semblance-simhash/1;w=2"
    bad = [
        ({"num_perm": 128, "preset_options": {"k": 64}}, "'num_perm': given twice"),
        ({"method": "simhash", "num_perm": 64}, "'num_perm': applies to method minhash only"),
        ({"method": "simhash", "shingle_words": 2}, "config key 'shingle_words': "),  # ditto/2
        ({"num_perm": 0}, "config key 'num_perm': must be a positive integer"),
        ({"shingle_words": 2000}, "config key 'shingle_words': option 'w' of preset"),
    ]
    for settings, message in bad:
        with pytest.raises(ConfigError, match=message):
            load_config(input="i", output="o", **settings)


def test_every_key_is_declared_once_with_its_meaning() -> None:
    """Each config class's keys come from settings.setting declarations with a meaning; a
    key's flag is --its-name, and the help the flag shows is the declaration's."""
    for cls in TABLES.values():
        for key in keys_of(cls):
            assert key.setting.help, (cls.__name__, key.name)
            assert flag_of(key.name) == "--" + key.name.replace("_", "-")
    p = argparse.ArgumentParser()
    add_arguments(p, ImagesConfig)
    help_text = p.format_help()
    assert "--max-distance MAX_DISTANCE" in help_text and "(bits); default: 10" in help_text
    assert "-k K" in help_text and "deprecated: --max-distance" in help_text


def shown_keys(conf: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The keys the TOML file ``conf`` sets, and those it shows commented out at the start of
    a line (``# key = value``), each with its value."""
    text = conf.read_text(encoding="utf-8")
    commented: dict[str, Any] = {}
    for line in text.splitlines():
        if re.match(r"# [a-z_]+ = ", line):
            ((name, value),) = tomllib.loads(line[2:]).items()
            assert name not in commented, f"{conf.name} shows {name!r} twice"
            commented[name] = value
    return tomllib.loads(text), commented


@pytest.mark.parametrize("job", ["dedup", "spans", "boilerplate", "images", "fingerprint"])
def test_conf_file_shows_each_key_commented_out_with_its_default(job: str) -> None:
    """A job's conf file (its ``JOB.config_file``) documents every key of its config class
    and sets none: each is commented out with its declared default, written once, in the
    declaration, so loading the file gives the defaults. A key with no TOML default (unset,
    or required) shows an example value instead (tests/test_settings.py gives each to its job).
    No value is live: one that should differ from its default belongs in the declaration or
    on the command line."""
    spec = importlib.import_module(job).JOB
    path = ROOT / spec.config_file
    live, commented = shown_keys(path)
    assert live == {}, f"{path.name} sets {sorted(live)}: show them commented out"
    keys = keys_of(spec.config)
    assert commented.keys() == {k.name for k in keys}
    for key in keys:
        if key.default is None or key.setting.required:
            continue  # no TOML value to show: an example
        value = commented[key.name]
        value = tuple(value) if isinstance(value, list) else value
        assert (type(value), value) == (type(key.default), key.default), (path.name, key.name)


def test_containment_is_part_of_the_run_id_not_of_the_pipeline() -> None:
    """An index matches runs with and without containment: the sketch pipeline is the same;
    the run's id (report.json, the summary) says what decided the removals."""
    plain = load_config(input="i", output="o")
    contained = load_config(input="i", output="o", containment=0.85, containment_min_shingles=30)
    assert contained.pipeline().id == plain.pipeline().id == plain.run_id()
    assert contained.run_id() == plain.run_id() + ";containment=0.85,min_shingles=30"


def test_containment_min_shingles_applies_with_containment_only() -> None:
    """Issue 50: ``--containment-min-shingles`` without ``--containment`` was ignored; as the
    boilerplate job's keep-one keys, a value other than its default is refused, naming both
    keys, and the default (a config file may spell it out) is not."""
    with pytest.raises(ConfigError) as err:
        load_config(input="i", output="o", containment_min_shingles=30)
    message = str(err.value)
    assert message.startswith("config key 'containment_min_shingles': applies with containment")
    assert "containment is off" in message
    conf = str(ROOT / "conf/dedup.toml")
    assert load_config(conf, input="i", output="o").containment is None  # make run's config
    assert load_config(conf, input="i", output="o", containment_min_shingles=20)
    on = load_config(input="i", output="o", containment=0.8, containment_min_shingles=30)
    assert on.containment_min_shingles == 30


def test_keep_one_keys_apply_to_keep_one_only() -> None:
    assert load_boilerplate_config(input="i", output="o").keep == "none"
    one = load_boilerplate_config(input="i", output="o", keep="one", max_keep_docs=50)
    assert (one.keep, one.representative, one.max_keep_docs) == ("one", "min_id", 50)
    for key, value in (("max_keep_docs", 5), ("representative", "longest"), ("order_col", "t")):
        with pytest.raises(ConfigError, match=f"config key '{key}': applies to keep 'one'"):
            load_boilerplate_config(input="i", output="o", **{key: value})
    with pytest.raises(ConfigError, match="config key 'order_col'"):
        load_boilerplate_config(input="i", output="o", keep="one", representative="earliest")
    with pytest.raises(ConfigError, match="config key 'keep'"):
        load_boilerplate_config(input="i", output="o", keep="all")
