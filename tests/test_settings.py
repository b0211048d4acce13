"""Every key a conf/*.toml documents is a flag of its job, and the LSH shape a dedup run
reports is one a user can ask for. Arguments are parsed by the jobs' own parsers and loaded
by their own loaders, as ``submit.job_main`` does, before Spark would start (no session).

The flag of a key: ``--`` and the key with ``-`` for ``_`` (``hot_bucket_size`` ->
``--hot-bucket-size``); an old one-letter name keeps its ``-k`` flag. Its value: a list's
items comma-separated (``--outputs docs,pairs``); a boolean is a ``store_true`` flag (it can
only say true).
"""

from __future__ import annotations

import argparse
import importlib
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from neardup_udfs import cli
from neardup_udfs.config import (
    TABLES,
    ConfigError,
    DedupConfig,
    IndexConfig,
    load_boilerplate_config,
    load_config,
    load_fingerprint_config,
    load_images_config,
    load_index_config,
    load_spans_config,
)
from neardup_udfs.index import store as index_store
from neardup_udfs.settings import DeprecatedKey, keys_of

ROOT = Path(__file__).resolve().parent.parent

# keys of conf/dedup.toml that only the dedup job takes (not keys of index.py, which reads
# files, writes into --index, and neither verifies pairs nor clusters them)
DEDUP_ONLY = frozenset(
    {"against", "update_index", "outputs", "input_table", "output_table_prefix", "engine"}
    | {"verification", "representative", "order_col", "chaining_floor", "no_chaining"}
    | {"hot_bucket_size", "clustering", "max_rounds", "max_driver_edges"}
    | {"containment", "containment_min_shingles"}
)
TOML_ONLY = frozenset({"preset_options"})  # a table: no flag


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
            "input_table": {"input": None, "id_col": "id"},
        },
        not_flags=TOML_ONLY,
    ),
    Job(
        "index",
        "dedup.toml",
        load_index_config,
        {"input": "in", "index": "idx"},
        SHAPE,
        head=("build",),
        not_flags=DEDUP_ONLY | TOML_ONLY,
    ),
    Job("images", "images.toml", load_images_config, {"input": "in", "output": "out"}),
    Job(
        "spans",
        "spans.toml",
        load_spans_config,
        {"input": "in", "output": "out", "pairs": "p"},
        {"query": {"pairs": None}},  # exactly one of them
    ),
    Job(
        "boilerplate",
        "boilerplate.toml",
        load_boilerplate_config,
        {"input": "in", "output": "o"},
        {  # keep one's own keys
            "order_col": {"keep": "one", "representative": "earliest"},
            "max_keep_docs": {"keep": "one"},
        },
    ),
    Job("fingerprint", "fingerprint.toml", load_fingerprint_config, {"input": "in", "output": "o"}),
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
    shape = index_store.shape_of(pipeline, config.max_distance)
    printed = dedup.format_summary(dedup.Summary(pipeline=pipeline.id)).splitlines()[0]
    numbers = dict(re.findall(r"(bands|rows)=(\d+)", printed))
    assert {k: int(v) for k, v in numbers.items()} == {
        k: v for k, v in shape.items() if v != pipeline.preset.defaults()[k]
    }  # the id names the shape unless it is the preset's own
    back = [f"--{k}={v}" for k, v in shape.items()]
    _, again = parse(job, [*argv_of(job.base), *method_flags, *back])
    assert again.pipeline().id == pipeline.id
    manifest = index_store.new_manifest(config.preset_name, pipeline, config.max_distance)
    index_store.check_compatible(manifest, again.pipeline(), again.max_distance, "idx")


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


@pytest.mark.parametrize(
    ("job", "old", "new", "value"),
    [
        (JOBS[0], "k", "max_distance", 5),
        (JOBS[2], "k", "max_distance", 6),
        (JOBS[3], "k", "kgram_bytes", 8),
        (JOBS[4], "w", "window", 4),
    ],
    ids=lambda v: v.script if isinstance(v, Job) else str(v),
)
def test_old_names_still_work_and_say_they_are_deprecated(
    job: Job, old: str, new: str, value: int, tmp_path: Path
) -> None:
    """An old key name, as a flag or in the TOML file, sets the new key and warns, naming
    both; both names in one place is an error naming the new key."""
    with pytest.warns(DeprecatedKey, match=f"'{old}' .* use '{new}'"):
        _, config = parse(job, [*argv_of(job.base), f"-{old}", str(value)])
    assert getattr(config, new) == value
    conf = tmp_path / "old.toml"
    conf.write_text(f"{old} = {value}\n")
    with pytest.warns(DeprecatedKey):
        assert getattr(job.load(str(conf), **job.base), new) == value
    twice = f"config key '{new}': given twice"
    with pytest.warns(DeprecatedKey):  # old in the file, new as a flag: the flag wins
        assert getattr(job.load(str(conf), **job.base, **{new: 2}), new) == 2
    conf.write_text(f"{old} = {value}\n{new} = 2\n")
    with pytest.raises(ConfigError, match=twice):
        job.load(str(conf), **job.base)
    with pytest.raises(ConfigError, match=twice):
        parse(job, [*argv_of(job.base), f"-{old}", "2", flag(new), "3"])


def test_every_declared_key_has_its_flag() -> None:
    """Each job's parser is derived from its config class: one flag per declared key (the
    index job's action is its first argument; DEDUP_ONLY keys are refused there)."""
    for job in JOBS:
        config = parse(job, argv_of(job.base))[1]
        dests = {a.dest for a in job.module().build_parser()._actions}
        missing = {
            k.name for k in keys_of(type(config)) if k.setting.flag and k.name not in job.not_flags
        } - dests
        assert missing == set(), (job.script, missing)


def test_the_index_job_takes_none_of_the_dedup_only_keys() -> None:
    """DEDUP_ONLY is what the dedup job takes beyond the index job's keys: index.py has no
    flag for any of them, and its config refuses each as an unknown key."""
    index = JOBS[1]
    assert DEDUP_ONLY == {k.name for k in keys_of(DedupConfig)} - {
        k.name for k in keys_of(IndexConfig)
    }
    values = documented(ROOT / "conf" / index.conf)
    for key in sorted(DEDUP_ONLY):
        with pytest.raises(SystemExit):
            parse(index, [*argv_of(index.base), *argv_of({key: values[key]})])
        with pytest.raises(ConfigError, match=f"unknown config key '{key}'"):
            index.load(None, action="build", **index.base, **{key: values[key]})


# --- old names: still read, never shown ------------------------------------------------------

EXAMPLES = [
    ROOT / "Makefile",
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "jobs").glob("*.py")),
    *sorted((ROOT / "conf").glob("*.toml")),
]
# a line (or a Markdown code span) that runs one of ours: the CLI, a job, make's ARGS
COMMAND = re.compile(r"\bneardup\b|python -m neardup_udfs|spark-submit|jobs/\w+\.py|\bARGS=")


def old_names() -> tuple[set[str], set[str]]:
    """The deprecated flags (the jobs' old key names, the ``neardup`` command's renamed flags:
    every flag whose help says ``deprecated:``) and the deprecated config keys."""
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parsers = [job.module().build_parser() for job in JOBS] + list(sub.choices.values())
    flags = {
        option
        for parser in parsers
        for action in parser._actions
        if (action.help or "").startswith("deprecated:")
        for option in action.option_strings
    }
    keys = {old for cls in TABLES.values() for key in keys_of(cls) for old in key.setting.aliases}
    return flags, keys


def command_examples(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the command examples in ``path``: TOML, every line; Markdown,
    every line of a fenced block and every code span that runs a command of ours; elsewhere
    every line that does (a line ending in a backslash continues it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".toml":
        yield from enumerate(lines, 1)
        return
    fenced = continued = False
    for n, line in enumerate(lines, 1):
        if path.suffix != ".md":
            if continued or COMMAND.search(line):
                yield n, line
            continued = (continued or bool(COMMAND.search(line))) and line.endswith("\\")
        elif line.startswith("```"):
            fenced = not fenced
        elif fenced:
            yield n, line
        else:
            spans = re.findall(r"`([^`]+)`", line)
            yield from ((n, span) for span in spans if COMMAND.search(span))


def test_the_old_names_are_known() -> None:
    flags, keys = old_names()
    assert {"-k", "-w", "--k", "--w"} <= flags and {"--max-distance", "--window"}.isdisjoint(flags)
    assert keys == {"k", "w"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_command_example_uses_an_old_flag_or_key(path: Path) -> None:
    """The Makefile, the jobs' usage lines, the README, docs/ and conf/*.toml show only the
    current names: an old flag or key still works (with a warning), but is never taught."""
    flags, keys = old_names()
    flag = re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, sorted(flags)))})(?![\w-])")
    key = re.compile(rf"^\s*#?\s*(?:{'|'.join(sorted(keys))})\s*=")
    found = [
        f"{path.relative_to(ROOT)}:{n}: {text.strip()}"
        for n, text in command_examples(path)
        if flag.search(text) or key.search(text)
    ]
    assert found == [], "old names in command examples:\n" + "\n".join(found)
