"""Every key a conf/*.toml documents is a flag of its job, and the LSH shape a dedup run
reports is one a user can ask for. Arguments are parsed by the jobs' own parsers and loaded
by their own loaders, as ``runtime.job_main`` does, before Spark would start (no session).

The flag of a key: ``-k`` for a one-letter key, else ``--`` and the key with ``-`` for ``_``
(``hot_bucket_size`` -> ``--hot-bucket-size``). Its value: a list's items comma-separated
(``--outputs docs,pairs``); a boolean is a ``store_true`` flag (it can only say true).
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from neardup_udfs import index_store
from neardup_udfs.config import (
    ConfigError,
    load_boilerplate_config,
    load_config,
    load_images_config,
    load_index_config,
    load_spans_config,
)

ROOT = Path(__file__).resolve().parent.parent

# dedup-job keys of conf/dedup.toml that index.py reads from the file but takes no flag for:
# they do not touch an index (against/update_index: refused, index.py has --index).
DEDUP_ONLY = frozenset(
    {
        "verification",
        "representative",
        "order_col",
        "hot_bucket_size",
        "clustering",
        "max_rounds",
        "max_driver_edges",
        "chaining_floor",
        "no_chaining",
        "against",
        "update_index",
    }
)


@dataclass(frozen=True)
class Job:
    """A job script, the conf file it documents its keys in, and its config loader."""

    script: str  # jobs/<script>.py
    conf: str  # conf/<conf>
    load: Callable[..., Any]
    base: Mapping[str, Any]  # settings around the key under test that make a valid run
    needs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # None: unset
    head: tuple[str, ...] = ()  # positional arguments first
    not_flags: frozenset[str] = frozenset()

    def module(self) -> ModuleType:
        """``jobs/<script>.py``, imported as spark-submit runs it (its folder on the path)."""
        return importlib.import_module(self.script)


SHAPE = {
    "bands": {"rows": 8},  # both or neither
    "rows": {"bands": 16},
    "hamming_blocks": {"method": "simhash"},  # simhash only
}
CONNECTED = {"clustering": "connected"}
JOBS = (
    Job(
        "dedup",
        "dedup.toml",
        load_config,
        {"input": "in", "output": "out"},
        {
            **SHAPE,
            "chaining_floor": CONNECTED,
            "no_chaining": CONNECTED,
            "update_index": {"against": "index/"},
        },
    ),
    Job(
        "index",
        "dedup.toml",
        load_index_config,
        {"input": "in", "index": "idx"},
        SHAPE,
        head=("build",),
        not_flags=DEDUP_ONLY,
    ),
    Job("images", "images.toml", load_images_config, {"input": "in", "output": "out"}),
    Job(
        "spans",
        "spans.toml",
        load_spans_config,
        {"input": "in", "output": "out", "pairs": "p"},
        {"query": {"pairs": None}},  # exactly one of them
    ),
    Job("boilerplate", "boilerplate.toml", load_boilerplate_config, {"input": "in", "output": "o"}),
)


def documented(conf: Path) -> dict[str, Any]:
    """Every key ``conf`` documents, with its value there: its settings and its examples
    commented out at the start of a line (``# key = value``)."""
    text = conf.read_text(encoding="utf-8")
    values = tomllib.loads(text)
    for line in text.splitlines():
        if re.match(r"# [a-z_]+ = ", line):
            values.update(tomllib.loads(line[2:]))
    return values


def flag(key: str) -> str:
    """The command-line flag of config key ``key``."""
    return f"-{key}" if len(key) == 1 else "--" + key.replace("_", "-")


def argv_of(settings: Mapping[str, Any]) -> list[str]:
    """``settings`` as command-line arguments: a (true) boolean its bare flag, a list its
    items comma-separated, anything else as written."""
    argv: list[str] = []
    for key, value in settings.items():
        if isinstance(value, bool):
            argv.append(flag(key))
        elif isinstance(value, list | tuple):
            argv += [flag(key), ",".join(value)]
        else:
            argv += [flag(key), str(value)]
    return argv


def given(value: Any) -> Any:
    """What a config holds after ``value`` was given as a flag."""
    if isinstance(value, bool):
        return True  # store_true
    return tuple(value) if isinstance(value, list) else value


def parse(job: Job, argv: Sequence[str]) -> tuple[dict[str, Any], Any]:
    """The flags ``job`` parses from ``argv``, and the config it loads from them."""
    args = vars(job.module().build_parser().parse_args([*job.head, *argv]))
    flags = dict(args)
    return flags, job.load(args.pop("config"), **args)


CASES = [
    pytest.param(job, key, value, id=f"{job.script}:{key}")
    for job in JOBS
    for key, value in documented(ROOT / "conf" / job.conf).items()
    if key not in job.not_flags
]


@pytest.mark.parametrize(("job", "key", "value"), CASES)
def test_every_documented_key_is_a_flag(job: Job, key: str, value: Any) -> None:
    settings = {**job.base, **job.needs.get(key, {}), key: value}
    argv = argv_of({k: v for k, v in settings.items() if v is not None})
    try:
        flags, config = parse(job, argv)
    except SystemExit:
        pytest.fail(f"jobs/{job.script}.py has no flag {flag(key)} for key {key!r} of {job.conf}")
    assert flags[key] == given(value)  # the flag sets the key of its name
    assert getattr(config, key) == given(value)


def test_every_conf_file_has_its_jobs() -> None:
    assert {p.name for p in (ROOT / "conf").glob("*.toml")} == {j.conf for j in JOBS}
    for job in JOBS:  # the keys a job takes no flag for are documented ones
        assert job.not_flags <= documented(ROOT / "conf" / job.conf).keys()


def test_allow_empty_input_defaults_to_false() -> None:
    for job in JOBS:
        if "allow_empty_input" in documented(ROOT / "conf" / job.conf):
            flags, config = parse(job, argv_of(job.base))
            assert flags["allow_empty_input"] is None and config.allow_empty_input is False
    dedup = JOBS[0]
    flags, config = parse(dedup, ["--config", str(ROOT / "conf/dedup.toml"), *argv_of(dedup.base)])
    assert config.allow_empty_input is False


def test_bands_25_rows_5_is_the_default_shape() -> None:
    dedup = JOBS[0]
    _, asked = parse(dedup, [*argv_of(dedup.base), "--bands", "25", "--rows", "5"])
    assert (asked.method, asked.jaccard_threshold) == ("minhash", 0.7)
    params = dict(asked.pipeline().params)
    assert (params["bands"], params["rows"], params["k"]) == (25, 5, 125)
    _, default = parse(dedup, argv_of(dedup.base))
    assert asked.pipeline().id == default.pipeline().id == "web/1+semblance/1;bands=25,k=125,rows=5"


@pytest.mark.parametrize(
    "method_flags",
    [
        [],
        ["--threshold", "0.8"],
        ["--threshold", "0.5", "--normalize", "none"],
        ["--banding", "semblance"],
        ["--banding", "semblance", "--threshold", "0.8"],
        ["--bands", "32", "--rows", "4"],
        ["--bands", "3", "--rows", "8"],
    ],
)
def test_the_reported_shape_gives_the_same_pipeline(method_flags: list[str]) -> None:
    """The bands x rows a run prints (its pipeline id) and records (report.json's pipeline
    id, an index's shape), given back as --bands/--rows, give the same pipeline: an index
    built by the one is used by the other."""
    dedup = importlib.import_module("dedup")
    job = JOBS[0]
    _, config = parse(job, [*argv_of(job.base), *method_flags])
    pipeline = config.pipeline()
    shape = index_store.shape_of(pipeline, config.k)
    printed = dedup.format_summary(dedup.Summary(pipeline=pipeline.id)).splitlines()[0]
    numbers = dict(re.findall(r"(bands|rows)=(\d+)", printed))
    assert {k: int(v) for k, v in numbers.items()} == {
        k: v for k, v in shape.items() if v != pipeline.preset.defaults()[k]
    }  # the id names the shape unless it is the preset's own
    back = [f"--{k}={v}" for k, v in shape.items()]
    _, again = parse(job, [*argv_of(job.base), *method_flags, *back])
    assert again.pipeline().id == pipeline.id
    manifest = index_store.new_manifest(config.preset_name, pipeline, config.k)
    index_store.check_compatible(manifest, again.pipeline(), again.k, "idx")


def test_a_shape_that_does_not_fit_names_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    dedup = importlib.import_module("dedup")
    assert dedup.main(["--input", "i", "--output", "o", "--bands", "20", "--rows", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dedup.py: error: config key 'bands': 20 x 8 = 160 slots do not fit")
    assert "--bands B --rows R (keys bands, rows) with B x R <= 128" in err
    assert "preset_options" not in err
    with pytest.raises(ConfigError, match="config key 'bands': must be a positive integer"):
        load_config(input="i", output="o", bands=0, rows=8)
    with pytest.raises(ConfigError, match="config key 'bands': give both bands and rows"):
        load_config(input="i", output="o", rows=8)
