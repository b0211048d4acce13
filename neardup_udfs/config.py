"""The dedup job's configuration: frozen, loaded from TOML, overridden from the command line,
validated once before Spark starts."""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from neardup_udfs.io import INPUT_FORMATS
from neardup_udfs.kernels import lsh
from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme, default_blocks, image_scheme
from neardup_udfs.kernels.phash import DEFAULT_MAX_PIXELS
from neardup_udfs.normalization import NORMALIZATIONS
from neardup_udfs.presets import Pipeline, PresetError, get_preset, resolve
from neardup_udfs.warc import DEFAULT_CONTENT_TYPES, EXTRACTORS, IMAGE_CONTENT_TYPES, WarcOptions

__all__ = [
    "BoilerplateConfig",
    "ConfigError",
    "DedupConfig",
    "ImagesConfig",
    "INDEX_ACTIONS",
    "IndexConfig",
    "InputConfig",
    "OUTPUTS",
    "SpansConfig",
    "add_method_arguments",
    "comma_list",
    "load_boilerplate_config",
    "load_config",
    "load_images_config",
    "load_index_config",
    "load_settings",
    "load_spans_config",
]

METHODS = ("minhash", "simhash")
DEFAULT_PRESET = {"minhash": "semblance", "simhash": "ditto/2"}
VERIFICATIONS = ("hybrid", "exact", "estimate", "off")
BANDINGS = ("recall", "semblance")
REPRESENTATIVES = ("min_id", "earliest", "longest")
CLUSTERINGS = ("anchored", "connected")  # stages.cluster
OUTPUTS = ("docs", "clusters", "pairs", "rejects", "samples", "matches")
INDEX_ACTIONS = ("build", "add", "query")


C = TypeVar("C")  # a frozen config dataclass


class ConfigError(ValueError):
    """An invalid or inconsistent setting; the message names the key."""


@dataclass(frozen=True)
class InputConfig:
    """The settings every job shares: where documents come from and where results go."""

    input: str = ""
    output: str = ""
    input_format: str = "text"
    id_col: str | None = None
    text_col: str = "text"
    max_text_bytes: int = 10_000_000
    html_extractor: str = "raw"  # warc/wet: raw | resiliparse
    warc_content_types: tuple[str, ...] = DEFAULT_CONTENT_TYPES
    checkpoint_dir: str | None = None  # reliable lineage cuts here (else spark.checkpoint.dir)
    allow_empty_input: bool = False  # no files or no records: an empty run, not an error

    def warc_options(self) -> WarcOptions:
        """How WARC/WET records become documents under this config."""
        return WarcOptions(self.warc_content_types, self.html_extractor, self.max_text_bytes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key, value in d.items():
            if isinstance(value, tuple):
                d[key] = list(value)
        return d


@dataclass(frozen=True)
class DedupConfig(InputConfig):
    """Every setting of ``jobs/dedup.py``; see ``conf/dedup.toml`` for each key's meaning."""

    method: str = "minhash"
    normalize: str = "web"  # web | none: what texts become before shingling
    preset: str | None = None
    preset_options: Mapping[str, int] = field(default_factory=dict)
    threshold: float | None = None
    bands: int | None = None
    rows: int | None = None
    banding: str = "recall"
    k: int = 3
    hamming_blocks: int | None = None  # simhash: blocks of the multi-table keys (None: from k)
    verification: str = "hybrid"
    representative: str = "min_id"
    order_col: str | None = None
    outputs: tuple[str, ...] = ("docs", "clusters", "rejects", "samples")
    hot_bucket_size: int = 1000
    clustering: str = "anchored"
    max_rounds: int = 50
    max_driver_edges: int = 200_000
    chaining_floor: float | None = None
    no_chaining: bool = False
    against: str | None = None  # an index directory: remove documents duplicating it
    update_index: bool = False  # then append the kept documents to that index
    batch_id: str | None = None  # the batch's id in the index (default: the input path)

    @property
    def index_batch_id(self) -> str:
        """The id a batch of this input gets in an index: ``batch_id``, else the input path
        (so adding the same input twice is a no-op)."""
        return self.batch_id or self.input

    @property
    def preset_name(self) -> str:
        return self.preset or DEFAULT_PRESET[self.method]

    def hamming_scheme(self) -> Scheme | None:
        """SimHash: the candidate keys' scheme (``kernels.hamming_tables``): ``hamming_blocks``
        blocks, else the default for ``k``; ``hamming_blocks = k + 1`` is ditto's index.
        None for MinHash (no Hamming keys)."""
        if self.method != "simhash":
            return None
        blocks = self.hamming_blocks if self.hamming_blocks is not None else default_blocks(self.k)
        return Scheme(blocks, self.k)

    def pipeline(self) -> Pipeline:
        """The resolved preset pipeline, with the ``normalize`` normalization.

        Notes:
            MinHash signatures have ``bands * rows`` slots, at most the preset's ``k`` (128
            for semblance, or ``preset_options``' ``k``): the explicit ``bands``/``rows``;
            else, for ``banding = "recall"``, ``lsh.recall_params`` (pairs at threshold +
            0.05 become candidates with probability >= 0.995: 125 of 128 slots for the
            default 0.7 -> 25 x 5); ``"semblance"`` takes the preset's own closest-threshold
            shape of ``k`` slots. So the bands x rows of any pipeline this returns (in its
            id, in an index's shape), given back as ``bands``/``rows``, return the same
            pipeline.

        Raises:
            ConfigError: only one of ``bands``/``rows``, or a shape that does not fit the
                preset's signature (the message names the keys and flags to set).
            PresetError: a ``preset_options`` value the preset does not accept.
        """
        options: dict[str, Any] = dict(self.preset_options)
        if self.method == "minhash":
            slots = int(options.get("k", get_preset(self.preset_name).options["k"].default))
            shape = self._explicit_shape(slots)
            if shape is None and self.banding == "semblance":
                options.update(bands=None, rows=None, threshold=self.jaccard_threshold)
            else:
                bands, rows = shape or lsh.recall_params(slots, self.jaccard_threshold)
                options.update(k=bands * rows, bands=bands, rows=rows, threshold=None)
        return resolve(self.preset_name, normalize=self.normalize, **options)

    def _explicit_shape(self, slots: int) -> tuple[int, int] | None:
        """MinHash: the ``(bands, rows)`` given, or None when neither is (the threshold
        decides); ConfigError unless both are positive and use at most ``slots`` slots."""
        if self.bands is None and self.rows is None:
            return None
        if self.bands is None or self.rows is None:
            raise _fail("bands", "give both bands and rows, or neither (the threshold decides)")
        _check_positive(self, ["bands", "rows"])
        if self.bands * self.rows > slots:
            raise _fail(
                "bands",
                f"{self.bands} x {self.rows} = {self.bands * self.rows} slots do not fit the "
                f"{slots}-slot signatures of preset {self.preset_name!r}: give --bands B "
                f"--rows R (keys bands, rows) with B x R <= {slots}",
            )
        return self.bands, self.rows

    @property
    def jaccard_threshold(self) -> float:
        """MinHash: the verification threshold (default 0.7)."""
        return 0.7 if self.threshold is None else self.threshold

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["preset_options"] = dict(self.preset_options)
        return d


def _fail(key: str, message: str) -> ConfigError:
    return ConfigError(f"config key {key!r}: {message}")


def _check_choices(choices: Mapping[str, tuple[Any, Sequence[str]]]) -> None:
    for key, (value, allowed) in choices.items():
        if value not in allowed:
            raise _fail(key, f"{value!r} is not one of {', '.join(allowed)}")


def _check_positive(c: Any, keys: Iterable[str]) -> None:
    for key in keys:
        if int(getattr(c, key)) < 1:
            raise _fail(key, f"must be a positive integer, got {getattr(c, key)!r}")


def _check_input(c: InputConfig, need_output: bool = True) -> None:
    if not c.input:
        raise _fail("input", "an input path is required")
    if need_output and not c.output:
        raise _fail("output", "an output directory is required")
    _check_choices(
        {
            "input_format": (c.input_format, INPUT_FORMATS),
            "html_extractor": (c.html_extractor, EXTRACTORS),
        }
    )
    _check_positive(c, ["max_text_bytes"])
    if not c.warc_content_types:
        raise _fail("warc_content_types", "name at least one media type")


def _check_outputs(outputs: Sequence[str], allowed: Sequence[str]) -> None:
    bad = [o for o in outputs if o not in allowed]
    if bad:
        raise _fail("outputs", f"{bad[0]!r} is not one of {', '.join(allowed)}")


def _check_clustering(max_driver_edges: int) -> None:
    if max_driver_edges < 0:
        raise _fail("max_driver_edges", f"must be >= 0, got {max_driver_edges}")


def _validate(c: DedupConfig, need_output: bool = True) -> DedupConfig:
    _check_input(c, need_output)
    choices = {
        "method": (c.method, METHODS),
        "normalize": (c.normalize, NORMALIZATIONS),
        "verification": (c.verification, VERIFICATIONS),
        "banding": (c.banding, BANDINGS),
        "representative": (c.representative, REPRESENTATIVES),
        "clustering": (c.clustering, CLUSTERINGS),
    }
    _check_choices(choices)
    _check_positive(c, ["hot_bucket_size", "max_rounds"])
    _check_clustering(c.max_driver_edges)
    if c.clustering == "anchored":
        for key, unset in (("chaining_floor", None), ("no_chaining", False)):
            if getattr(c, key) != unset:
                why = "anchored removes only documents verified near the kept one"
                raise _fail(key, f"applies to clustering 'connected' only ({why})")
    _check_outputs(c.outputs, OUTPUTS)
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
        if c.verification == "off":
            raise _fail("verification", "'off' is for simhash only (MinHash pairs need a check)")
        if c.hamming_blocks is not None:
            raise _fail("hamming_blocks", "applies to method simhash only")
    else:
        if kind != "simhash":
            raise _fail("preset", f"{c.preset_name!r} is not a SimHash preset (method simhash)")
        if not 0 <= c.k <= 63:
            raise _fail("k", f"the Hamming distance must be in [0, 63], got {c.k}")
        for key in ("threshold", "bands", "rows"):
            if getattr(c, key) is not None:
                raise _fail(key, "applies to method minhash only")
        try:
            c.hamming_scheme()
        except ValueError as e:
            raise _fail("hamming_blocks", str(e)) from None
    if c.update_index and not c.against:
        raise _fail("update_index", "needs an index: give against = the index directory")
    if "matches" in c.outputs and not c.against:
        raise _fail("outputs", "'matches' needs an index to match against (against)")
    if c.chaining_floor is not None and c.chaining_floor < 0:
        raise _fail("chaining_floor", f"must be >= 0, got {c.chaining_floor}")
    try:
        c.pipeline()  # ConfigError names bands/rows; a PresetError is preset_options' doing
    except PresetError as e:
        raise _fail("preset_options" if c.preset_options else "preset", str(e)) from None
    return c


def load_config(path: str | None = None, **overrides: Any) -> DedupConfig:
    """Settings of the dedup job from the TOML file ``path`` (if any), then ``overrides``
    (``None`` = unset).

    Raises:
        ConfigError: an unknown key, a value of the wrong type, or an invalid or inconsistent
            setting; the message names the key.
    """
    return _validate(load_settings(DedupConfig, path, **overrides))


@dataclass(frozen=True)
class IndexConfig(DedupConfig):
    """Settings of ``jobs/index.py``: the dedup job's method settings (they fix the index's
    pipeline and LSH shape), plus the action and the index directory."""

    action: str = "build"  # build | add | query
    index: str = ""
    top: int = 10  # query on a MinHash index: results per query (semblance Forest top-k)
    outputs: tuple[str, ...] = ()


def load_index_config(path: str | None = None, **overrides: Any) -> IndexConfig:
    """``IndexConfig`` from TOML + overrides, validated (ConfigError names the key).

    Notes:
        ``query`` needs ``output`` (where results go); ``build`` and ``add`` write only into
        the index. For ``query``, ``k`` is the search distance (clamped down to the index's).
    """
    c = load_settings(IndexConfig, path, **overrides)
    _check_choices({"action": (c.action, INDEX_ACTIONS)})
    if not c.index:
        raise _fail("index", "an index directory is required")
    if c.against or c.update_index:
        raise _fail("against", "is a dedup job setting; index.py reads and writes --index")
    _check_positive(c, ["top"])
    _validate(c, need_output=c.action == "query")
    return c


def load_settings(cls: type[C], path: str | None = None, **overrides: Any) -> C:
    """An instance of the config dataclass ``cls``: its defaults, then the TOML file ``path``
    (if any), then ``overrides`` (``None`` = unset); keys and value types checked.

    Raises:
        ConfigError: an unreadable or invalid file, an unknown key, or a value of the wrong
            type; the message names the file or the key.
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
    hints = get_type_hints(cls)
    for key, value in values.items():
        if key not in hints:
            raise ConfigError(f"unknown config key {key!r}")
        expected = _expected_types(hints[key])
        if isinstance(value, bool) and bool not in expected:
            raise _fail(key, f"expected {expected[0].__name__}, got {value!r}")
        if not isinstance(value, expected):
            raise _fail(key, f"expected {expected[0].__name__}, got {value!r}")
        if isinstance(value, list):
            values[key] = tuple(value)
    return replace(cls(), **values)  # type: ignore[type-var]


def _expected_types(hint: Any) -> tuple[type, ...]:
    """The runtime types a TOML or command-line value may have for a field's type hint."""
    args = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
    out: list[type] = []
    for arg in args:
        if arg is type(None):
            continue
        origin = get_origin(arg) or arg
        if origin is float:
            out += [float, int]
        elif origin is tuple:
            out += [tuple, list]
        else:
            out.append(origin)
    return tuple(out)


def comma_list(value: str) -> tuple[str, ...]:
    """A list key's value on the command line: its items comma-separated
    (``--outputs docs,pairs`` for ``outputs = ["docs", "pairs"]``)."""
    return tuple(value.split(","))


def add_method_arguments(p: argparse.ArgumentParser, k_help: str) -> None:
    """The flags of the keys that fix a text job's pipeline and LSH shape: ``--normalize``,
    ``--method``, ``--preset``, ``--threshold``, ``--banding``, ``--bands``, ``--rows`` and
    ``-k`` (help ``k_help``), each setting the key of its name and defaulting to None
    (= not given, the config file's value stands)."""
    p.add_argument(
        "--normalize",
        choices=NORMALIZATIONS,
        help="web (default): visible text of HTML, whitespace collapsed, CJK characters as tokens",
    )
    p.add_argument("--method", choices=METHODS)
    p.add_argument("--preset")
    p.add_argument("--threshold", type=float, help="MinHash: Jaccard threshold (default 0.7)")
    p.add_argument(
        "--banding",
        choices=BANDINGS,
        help="MinHash: bands x rows from the threshold: recall (default: pairs at threshold "
        "+ 0.05 found with p >= 0.995) | semblance (the preset's closest-threshold shape)",
    )
    p.add_argument("--bands", type=int, help="MinHash: LSH bands instead (with --rows)")
    p.add_argument(
        "--rows", type=int, help="MinHash: rows per band (bands x rows <= the preset's k, 128)"
    )
    p.add_argument("-k", type=int, help=k_help)
    p.add_argument(
        "--hamming-blocks",
        dest="hamming_blocks",
        type=int,
        help="SimHash: split the 64 bits into this many blocks, one candidate table per "
        "choice of blocks - k of them (default from k: 6 for k = 3, 20 tables of 31-33-bit "
        "keys; k + 1 is ditto's index)",
    )


SPANS_OUTPUTS = ("spans", "pair_summary", "rejects")
BOILERPLATE_OUTPUTS = ("regions", "cleaned", "boilerplate_top", "rejects")


@dataclass(frozen=True)
class WinnowConfig(InputConfig):
    """Settings shared by the winnowing jobs: the fingerprint's k-gram and window sizes."""

    k: int = 16  # k-gram size in bytes
    w: int = 16  # window: shared passages of >= w + k - 1 bytes are always found


@dataclass(frozen=True)
class SpansConfig(WinnowConfig):
    """Every setting of ``jobs/spans.py``; see ``conf/spans.toml``."""

    pairs: str | None = None  # a dedup output's pairs/ or clusters/ (parquet)
    query: str | None = None  # provenance: query documents, read like ``input``
    max_doc_freq: int = 100  # provenance: hashes occurring more often in the corpus are skipped
    outputs: tuple[str, ...] = ("spans", "pair_summary", "rejects")


@dataclass(frozen=True)
class BoilerplateConfig(WinnowConfig):
    """Every setting of ``jobs/boilerplate.py``; see ``conf/boilerplate.toml``."""

    min_docs: int = 3  # a fingerprint held by this many documents is boilerplate
    min_run: int = 5  # ... when at least this many such fingerprints are consecutive
    group_col: str | None = None  # count documents within this column's groups (e.g. host)
    top: int = 100  # boilerplate_top/: this many most frequent passages
    outputs: tuple[str, ...] = ("regions", "cleaned", "boilerplate_top", "rejects")


def _check_winnow(c: WinnowConfig) -> None:
    _check_input(c)
    _check_positive(c, ["k", "w"])


def load_spans_config(path: str | None = None, **overrides: Any) -> SpansConfig:
    """``SpansConfig`` from TOML + overrides, validated (ConfigError names the key)."""
    c = load_settings(SpansConfig, path, **overrides)
    _check_winnow(c)
    _check_positive(c, ["max_doc_freq"])
    _check_outputs(c.outputs, SPANS_OUTPUTS)
    if (c.pairs is None) == (c.query is None):
        raise _fail("pairs", "give exactly one of pairs (a dedup output) or query (documents)")
    return c


def load_boilerplate_config(path: str | None = None, **overrides: Any) -> BoilerplateConfig:
    """``BoilerplateConfig`` from TOML + overrides, validated (ConfigError names the key)."""
    c = load_settings(BoilerplateConfig, path, **overrides)
    _check_winnow(c)
    _check_positive(c, ["min_docs", "top"])
    if c.min_run < 0:
        raise _fail("min_run", f"must be >= 0, got {c.min_run}")
    _check_outputs(c.outputs, BOILERPLATE_OUTPUTS)
    return c


IMAGE_FORMATS = ("files", "warc")
IMAGE_OUTPUTS = ("clusters", "hashes", "rejects", "pairs")
IMAGE_REPRESENTATIVES = ("pixels", "min_id")


@dataclass(frozen=True)
class ImagesConfig:
    """Every setting of ``jobs/images.py``; see ``conf/images.toml``."""

    input: str = ""
    output: str = ""
    input_format: str = "files"  # files (every file under input) | warc (image/* records)
    k: int = 10  # max Hamming distance between pHashes (fingerprint's "visually similar")
    hamming_blocks: int | None = None  # candidate keys: guaranteed blocks (None: from k)
    hamming_key_bits: int | None = None  # candidate keys: sampled bits per table (None: from k)
    max_pixels: int = DEFAULT_MAX_PIXELS  # larger images are rejected before decoding
    max_bytes: int = 64_000_000  # larger files / payloads are rejected without being read
    batch_images: int = 8  # images per Arrow batch given to a Python worker
    representative: str = "pixels"  # pixels (largest width x height, then path) | min_id
    hot_bucket_size: int = 1000
    clustering: str = "anchored"
    max_rounds: int = 50
    max_driver_edges: int = 200_000
    warc_content_types: tuple[str, ...] = IMAGE_CONTENT_TYPES
    outputs: tuple[str, ...] = ("clusters", "hashes", "rejects")
    checkpoint_dir: str | None = None  # reliable lineage cuts here (else spark.checkpoint.dir)

    def hamming_scheme(self, images: int | None = None) -> Scheme | SampledScheme:
        """The candidate keys' scheme for ``images`` distinct pHashes
        (``kernels.hamming_tables.image_scheme``): at the default k = 10, 20 tables of
        sampled bits, 12 or more as the collection grows (bounded, recall measured);
        guaranteed blocks where they are long enough or ``hamming_blocks`` asks for them."""
        return image_scheme(self.k, self.hamming_blocks, self.hamming_key_bits, images)

    def warc_options(self) -> WarcOptions:
        """How WARC records become images under this config."""
        return WarcOptions(self.warc_content_types, "raw", self.max_bytes, payload="bytes")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def load_images_config(path: str | None = None, **overrides: Any) -> ImagesConfig:
    """``ImagesConfig`` from TOML + overrides, validated (ConfigError names the key)."""
    c = load_settings(ImagesConfig, path, **overrides)
    if not c.input:
        raise _fail("input", "an input path is required")
    if not c.output:
        raise _fail("output", "an output directory is required")
    _check_choices(
        {
            "input_format": (c.input_format, IMAGE_FORMATS),
            "representative": (c.representative, IMAGE_REPRESENTATIVES),
            "clustering": (c.clustering, CLUSTERINGS),
        }
    )
    _check_clustering(c.max_driver_edges)
    _check_positive(c, ["max_pixels", "max_bytes", "batch_images", "hot_bucket_size", "max_rounds"])
    if not 0 <= c.k <= 63:
        raise _fail("k", f"the Hamming distance must be in [0, 63], got {c.k}")
    try:
        c.hamming_scheme()
    except ValueError as e:
        key = "hamming_key_bits" if c.hamming_key_bits is not None else "hamming_blocks"
        raise _fail(key, str(e)) from None
    if not c.warc_content_types:
        raise _fail("warc_content_types", "name at least one media type")
    _check_outputs(c.outputs, IMAGE_OUTPUTS)
    return c
