"""The dedup job's configuration: frozen, loaded from TOML, overridden from the command line,
validated once before Spark starts."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from neardup_udfs.io import INPUT_FORMATS
from neardup_udfs.kernels import lsh
from neardup_udfs.presets import Pipeline, PresetError, get_preset, resolve

__all__ = ["ConfigError", "DedupConfig", "OUTPUTS", "load_config"]

METHODS = ("minhash", "simhash")
DEFAULT_PRESET = {"minhash": "semblance", "simhash": "ditto/2"}
VERIFICATIONS = ("estimate", "exact", "off")
BANDINGS = ("recall", "semblance")
REPRESENTATIVES = ("min_id", "earliest", "longest")
OUTPUTS = ("docs", "clusters", "pairs", "rejects")


class ConfigError(ValueError):
    """An invalid or inconsistent setting; the message names the key."""


@dataclass(frozen=True)
class DedupConfig:
    """Every setting of ``jobs/dedup.py``; see ``conf/dedup.toml`` for each key's meaning."""

    input: str = ""
    output: str = ""
    input_format: str = "text"
    id_col: str | None = None
    text_col: str = "text"
    max_text_bytes: int = 10_000_000
    method: str = "minhash"
    preset: str | None = None
    preset_options: Mapping[str, int] = field(default_factory=dict)
    threshold: float | None = None
    bands: int | None = None
    rows: int | None = None
    banding: str = "recall"
    k: int = 3
    verification: str = "exact"
    representative: str = "min_id"
    order_col: str | None = None
    outputs: tuple[str, ...] = ("docs", "clusters", "rejects")
    hot_bucket_size: int = 1000
    max_rounds: int = 50
    chaining_floor: float | None = None
    no_chaining: bool = False

    @property
    def preset_name(self) -> str:
        return self.preset or DEFAULT_PRESET[self.method]

    def pipeline(self) -> Pipeline:
        """The resolved preset pipeline.

        Notes:
            MinHash without explicit bands/rows: ``banding = "recall"`` takes
            ``lsh.recall_params`` (pairs at threshold + 0.05 become candidates with
            probability >= 0.995) and signatures of ``bands * rows`` slots (at most the
            preset's ``k``: 125 of 128 for the default 0.7 -> 25 x 5); ``"semblance"`` takes
            the preset's own closest-threshold shape of ``k`` slots.
        """
        options: dict[str, Any] = dict(self.preset_options)
        if self.method == "minhash":
            if self.bands is not None or self.rows is not None:
                options.update(bands=self.bands, rows=self.rows, threshold=None)
            elif self.banding == "semblance":
                options.update(bands=None, rows=None, threshold=self.jaccard_threshold)
            else:
                k = int(options.get("k", get_preset(self.preset_name).options["k"].default))
                bands, rows = lsh.recall_params(k, self.jaccard_threshold)
                options.update(k=bands * rows, bands=bands, rows=rows, threshold=None)
        return resolve(self.preset_name, **options)

    @property
    def jaccard_threshold(self) -> float:
        """MinHash: the verification threshold (default 0.7)."""
        return 0.7 if self.threshold is None else self.threshold

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["preset_options"] = dict(self.preset_options)
        d["outputs"] = list(self.outputs)
        return d


def _fail(key: str, message: str) -> ConfigError:
    return ConfigError(f"config key {key!r}: {message}")


def _validate(c: DedupConfig) -> DedupConfig:
    if not c.input:
        raise _fail("input", "an input path is required")
    if not c.output:
        raise _fail("output", "an output directory is required")
    choices = {
        "input_format": (c.input_format, INPUT_FORMATS),
        "method": (c.method, METHODS),
        "verification": (c.verification, VERIFICATIONS),
        "banding": (c.banding, BANDINGS),
        "representative": (c.representative, REPRESENTATIVES),
    }
    for key, (value, allowed) in choices.items():
        if value not in allowed:
            raise _fail(key, f"{value!r} is not one of {', '.join(allowed)}")
    for key in ("max_text_bytes", "hot_bucket_size", "max_rounds"):
        if int(getattr(c, key)) < 1:
            raise _fail(key, f"must be a positive integer, got {getattr(c, key)!r}")
    bad = [o for o in c.outputs if o not in OUTPUTS]
    if bad:
        raise _fail("outputs", f"{bad[0]!r} is not one of {', '.join(OUTPUTS)}")
    if c.representative == "earliest" and not c.order_col:
        raise _fail("order_col", "representative 'earliest' needs an order column")
    try:
        preset = get_preset(c.preset_name)
    except PresetError as e:
        raise _fail("preset", str(e)) from None
    kind = preset.kind
    if preset.input != "text":
        raise _fail("preset", f"{c.preset_name!r} reads {preset.input}s; the dedup job reads text")
    if c.method == "minhash":
        if kind != "minhash":
            raise _fail("preset", f"{c.preset_name!r} is not a MinHash preset (method minhash)")
        if c.threshold is not None and not 0.0 < c.threshold < 1.0:
            raise _fail("threshold", f"must be in (0, 1), got {c.threshold!r}")
        if (c.bands is None) != (c.rows is None):
            raise _fail("bands", "give both bands and rows, or neither (the threshold decides)")
        if c.verification == "off":
            raise _fail("verification", "'off' is for simhash only (MinHash pairs need a check)")
    else:
        if kind != "simhash":
            raise _fail("preset", f"{c.preset_name!r} is not a SimHash preset (method simhash)")
        if not 0 <= c.k <= 63:
            raise _fail("k", f"the Hamming distance must be in [0, 63], got {c.k}")
        for key in ("threshold", "bands", "rows"):
            if getattr(c, key) is not None:
                raise _fail(key, "applies to method minhash only")
    if c.chaining_floor is not None and c.chaining_floor < 0:
        raise _fail("chaining_floor", f"must be >= 0, got {c.chaining_floor}")
    try:
        c.pipeline()
    except PresetError as e:
        raise _fail("preset_options", str(e)) from None
    return c


def load_config(path: str | None = None, **overrides: Any) -> DedupConfig:
    """Settings from the TOML file ``path`` (if any), then ``overrides`` (``None`` = unset).

    Raises:
        ConfigError: an unknown key, a value of the wrong type, or an invalid or inconsistent
            setting; the message names the key.
    """
    values: dict[str, Any] = {}
    if path:
        try:
            with open(path, "rb") as fh:
                values = tomllib.load(fh)
        except OSError as e:
            raise ConfigError(f"cannot read config file {path!r}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"config file {path!r} is not valid TOML: {e}") from None
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name: f for f in fields(DedupConfig)}
    for key in values:
        if key not in known:
            raise ConfigError(f"unknown config key {key!r}")
    if "outputs" in values:
        values["outputs"] = tuple(values["outputs"])
    config = replace(DedupConfig(), **values)
    _check_types(config)
    return _validate(config)


def _check_types(c: DedupConfig) -> None:
    default = DedupConfig()
    for f in fields(DedupConfig):
        value, base = getattr(c, f.name), getattr(default, f.name)
        if value is None:
            continue
        expected: tuple[type, ...]
        if f.name in ("threshold", "chaining_floor"):
            expected = (int, float)
        elif f.name in ("id_col", "preset", "order_col"):
            expected = (str,)
        elif f.name in ("bands", "rows"):
            expected = (int,)
        elif f.name == "preset_options":
            expected = (Mapping,)
        else:
            expected = (type(base),)
        if isinstance(value, bool) and bool not in expected:
            raise _fail(f.name, f"expected {expected[0].__name__}, got {value!r}")
        if not isinstance(value, expected):
            raise _fail(f.name, f"expected {expected[0].__name__}, got {value!r}")
