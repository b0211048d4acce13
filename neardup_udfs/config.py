"""Every job's settings: one frozen dataclass per job whose fields are the keys of its
``conf/*.toml`` file, each declared once (``settings.setting``: type, default, unit,
meaning, allowed values, old names). The TOML loader, the jobs' flags and the key
tables are derived from these declarations; every config is checked when it is made
(``__post_init__``), before Spark starts."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from neardup_udfs import settings
from neardup_udfs.driver.settings import CLUSTERINGS, REPRESENTATIVES
from neardup_udfs.engine import ENGINES, config_refusal
from neardup_udfs.io.input_files import INPUT_FORMATS
from neardup_udfs.io.warc import DEFAULT_CONTENT_TYPES, EXTRACTORS, IMAGE_CONTENT_TYPES, WarcOptions
from neardup_udfs.kernels import lsh
from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme, default_blocks, image_scheme
from neardup_udfs.kernels.phash import DEFAULT_MAX_PIXELS
from neardup_udfs.normalization import NORMALIZATIONS
from neardup_udfs.presets import Pipeline, PresetError, get_preset, resolve
from neardup_udfs.settings import ConfigError, comma_list, fail, setting

__all__ = [
    "BoilerplateConfig",
    "ClusterConfig",
    "ConfigError",
    "DedupConfig",
    "FingerprintConfig",
    "ImagesConfig",
    "INDEX_ACTIONS",
    "IndexConfig",
    "InputConfig",
    "MethodConfig",
    "OUTPUTS",
    "Paths",
    "RunConfig",
    "Settings",
    "SpansConfig",
    "TABLES",
    "TableConfig",
    "WinnowConfig",
    "comma_list",
    "load_boilerplate_config",
    "load_config",
    "load_fingerprint_config",
    "load_images_config",
    "load_index_config",
    "load_settings",
    "load_spans_config",
]

METHODS = ("minhash", "simhash")
DEFAULT_PRESET = {"minhash": "semblance", "simhash": "ditto/2"}
VERIFICATIONS = ("hybrid", "exact", "estimate", "off")
BANDINGS = ("recall", "semblance")
KEEPS = ("none", "one")  # boilerplate: copies of a repeated passage that stay
OUTPUTS = ("docs", "clusters", "pairs", "rejects", "samples", "matches")
INDEX_ACTIONS = ("build", "add", "query")
SPANS_OUTPUTS = ("spans", "pair_summary", "rejects")
BOILERPLATE_OUTPUTS = ("regions", "cleaned", "boilerplate_top", "rejects")
IMAGE_FORMATS = ("files", "warc")
IMAGE_OUTPUTS = ("clusters", "hashes", "rejects", "pairs")
IMAGE_REPRESENTATIVES = ("pixels", "min_id")
TABLE_NAME = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*")
"""A metastore table name the dedup job reads or writes: ``name`` or ``db.name``."""
DEFAULT_THRESHOLD = 0.7  # minhash: the Jaccard threshold of a config that sets none
MIN_SHINGLES = 20  # containment_min_shingles's default (the one value allowed without containment)
OPTION_KEYS = {"num_perm": "k", "shingle_words": "w"}  # keys that set a preset option
KGRAM_BYTES = 16  # winnowing defaults: k-gram size in bytes ...
WINDOW = 16  # ... and k-grams per window

load_settings = settings.load


class Settings:
    """A config that checks itself when made: each key against its declaration
    (``settings.check``), then the keys together (``_check``, extended by subclasses).
    A job's config class composes key groups (dataclass bases, one idea each) and its
    ``_check`` runs their checks of the keys together."""

    shares_file_with: ClassVar[type | None] = None
    """Another job's config class whose TOML file this job reads: the keys only that job
    takes are checked one by one, then left to it (``settings.load``)."""

    def __post_init__(self) -> None:
        settings.check(self)
        self._check()

    def _check(self) -> None:
        """Settings that depend on each other; ConfigError names the key at fault."""

    def to_dict(self) -> dict[str, Any]:
        """The settings as report.json records them (lists for tuples, dicts for tables)."""
        d = asdict(self)  # type: ignore[call-overload]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


@dataclass(frozen=True)
class Paths(Settings):
    """Where a job reads and writes."""

    input: str = setting(
        "",
        "the input: a file, a directory (read recursively) or a glob, any path Spark reads "
        "(usually `--input`)",
        required="an input path",
    )
    output: str = setting(
        "",
        "the output directory, on any filesystem Spark writes: a path or a URI "
        "(usually `--output`)",
        required="an output directory",
    )


@dataclass(frozen=True)
class RunConfig(Paths):
    """The settings of a job that cuts its lineage (reliable checkpoints)."""

    checkpoint_dir: str | None = setting(
        None,
        "the directory (every executor reaches it) of the reliable checkpoints that cut "
        "lineage; they survive a lost executor",
        unset="`spark.checkpoint.dir`, else local checkpoints",
    )


def _max_distance(default: int, help: str) -> Any:
    return setting(default, help, unit="bits", minimum=0, maximum=63, aliases=("k",))


def _batch_id() -> Any:
    return setting(
        None,
        "the batch's id in the index; an id already committed adds nothing",
        unset="the input path",
    )


@dataclass(frozen=True)
class InputConfig(RunConfig):
    """The settings of every job that reads documents: where they come from, how they are
    read, where results go."""

    input_format: str = setting(
        "text",
        "`text` (each file one document, raw bytes), `jsonl`, `parquet`, `warc` or `wet` "
        "(one row per record)",
        choices=INPUT_FORMATS,
    )
    id_col: str | None = setting(
        None,
        "the id column (jsonl, parquet; `url` for warc/wet makes the URI the id)",
        unset="`<file URI>:<record index>` (warc/wet: the WARC-Record-ID)",
    )
    text_col: str = setting("text", "the text column (jsonl, parquet)")
    max_text_bytes: int = setting(
        10_000_000, "a longer text goes to `rejects/`", unit="bytes", minimum=1
    )
    html_extractor: str = setting(
        "raw",
        "warc/wet HTML: `raw` (the page as it is) or `resiliparse` (its main-content text)",
        choices=EXTRACTORS,
    )
    warc_content_types: tuple[str, ...] = setting(
        DEFAULT_CONTENT_TYPES,
        "warc/wet: the media types read as documents; other records go to `rejects/`",
        nonempty=True,
    )
    allow_empty_input: bool = setting(
        False,
        "true: an input with no files or no records gives an empty run, not an error "
        "(exit status 2)",
    )

    def warc_options(self) -> WarcOptions:
        """How WARC/WET records become documents under this config."""
        return WarcOptions(self.warc_content_types, self.html_extractor, self.max_text_bytes)


@dataclass(frozen=True)
class ClusterConfig(Settings):
    """How verified pairs become clusters (``stages.cluster``), for documents and images."""

    hot_bucket_size: int = setting(
        1000,
        "a candidate bucket larger than this becomes a star around its smallest id",
        unit="members",
        minimum=1,
    )
    clustering: str = setting(
        "anchored",
        "`anchored` (a member is removed only for its own verified similarity to the one "
        "kept) or `connected` (single link)",
        choices=CLUSTERINGS,
    )
    max_rounds: int = setting(
        50,
        "anchored: parallel rounds before the driver must be able to finish; connected: the "
        "run fails if not converged by then",
        unit="rounds",
        minimum=1,
    )
    max_driver_edges: int | None = setting(
        None,
        "anchored: once at most this many undecided edges are left (before any round too), "
        "the driver finishes them",
        unit="edges",
        minimum=0,
        unset="the smaller of `spark.driver.memory` / 256 bytes and "
        "`spark.driver.maxResultSize` / 128 bytes (8,388,608 at 2g)",
    )


@dataclass(frozen=True)
class TableConfig(InputConfig):
    """The input keys of a job that may read a metastore table instead of files, and write
    its frames as tables."""

    input: str = setting(
        "",
        "the input: a file, a directory (read recursively) or a glob, any path Spark reads "
        "(usually `--input`)",
        required="an input path (or input_table)",
        unless="input_table",
    )
    input_table: str | None = setting(
        None,
        "a metastore table read instead of `input` (`input_format` does not apply; needs `id_col`)",
    )
    output_table_prefix: str | None = setting(
        None,
        "also write the output frames as metastore tables named prefix + `docs`, "
        "`clusters`, ... (e.g. `db.dedup_`) instead of folders; a table is replaced only "
        "when neardup wrote it; `output` keeps report.json, report.html and the manifest",
    )

    def _check_tables(self) -> None:
        """The table keys together: one input, table names, an id column for a table."""
        if self.input_table is not None:
            if self.input:
                raise fail("input_table", "give input or input_table, not both")
            if not TABLE_NAME.fullmatch(self.input_table):
                raise fail("input_table", f"{self.input_table!r} is not a table name ([db.]name)")
            if not self.id_col:
                raise fail("id_col", "a table's rows have no file and line to name them: give it")
        prefix = self.output_table_prefix
        if prefix is not None:
            if not TABLE_NAME.fullmatch(prefix + "docs"):
                raise fail("output_table_prefix", f"{prefix!r} does not make table names "
                           "([db.]name_)")  # fmt: skip


@dataclass(frozen=True)
class MethodConfig(Settings):
    """The near-duplicate method of the text jobs that find pairs (dedup, index): the
    normalization, the preset and its options, the LSH or Hamming shape. Together they fix
    the pipeline, which an index and every run matched against it share."""

    normalize: str = setting(
        "web",
        "what texts become before shingling: `web` (the visible text of HTML, whitespace "
        "collapsed, CJK characters as tokens) or `none`; part of the pipeline id",
        choices=NORMALIZATIONS,
    )
    method: str = setting(
        "minhash",
        "`minhash` (MinHash LSH, Jaccard) or `simhash` (Hamming distance)",
        choices=METHODS,
    )
    preset: str | None = setting(
        None,
        "a text preset of the method's kind",
        unset="`semblance` (minhash), `ditto/2` (simhash)",
    )
    preset_options: Mapping[str, int] = setting(
        {},
        "the preset's own options as a TOML table, e.g. `{ char = 5 }` for ditto/2; part of "
        "the pipeline id (`num_perm` and `shingle_words` name the common ones)",
        flag=False,
    )
    num_perm: int | None = setting(
        None,
        "minhash: signature slots (the preset option `k` in the pipeline id); bands x rows "
        "use at most this many",
        unit="slots",
        unset="the preset's (128 for semblance)",
        minimum=1,
    )
    shingle_words: int | None = setting(
        None,
        "words per shingle (the preset option `w` of semblance and semblance-simhash, in the "
        "pipeline id)",
        unit="words",
        unset="the preset's (3)",
        minimum=1,
    )
    threshold: float | None = setting(
        None,
        "minhash: the Jaccard threshold pairs are verified against; bands x rows follow from it",
        unset=str(DEFAULT_THRESHOLD),
        above=0.0,
        below=1.0,
    )
    bands: int | None = setting(
        None,
        "minhash: LSH bands, given with `rows`; bands x rows <= the signature slots",
        unset="from `threshold` and `banding`",
        minimum=1,
    )
    rows: int | None = setting(
        None,
        "minhash: rows (signature slots) per band, given with `bands`",
        unset="from `threshold` and `banding`",
        minimum=1,
    )
    banding: str = setting(
        "recall",
        "minhash: `recall` (pairs at threshold + 0.05 are candidates with p >= 0.995: 25 x 5 "
        "at 0.7) or `semblance` (the preset's closest-threshold shape, 16 x 8)",
        choices=BANDINGS,
    )
    max_distance: int = _max_distance(
        3, "simhash: the largest Hamming distance of a near-duplicate pair"
    )
    hamming_blocks: int | None = setting(
        None,
        "simhash: candidate keys cut the 64 bits into this many blocks, one table per choice "
        "of blocks - max_distance; `max_distance + 1` is ditto's index",
        unset="from `max_distance` (6 at 3)",
    )

    def _check_method(self) -> None:
        """The method keys together: a text preset of the method's kind, and no key of
        the other method."""
        try:
            preset = get_preset(self.preset_name)
        except PresetError as e:
            raise fail("preset", str(e)) from None
        name = self.preset_name
        if preset.input != "text":
            raise fail("preset", f"{name!r} reads {preset.input}s; the dedup job reads text")
        if self.method == "minhash":
            if preset.kind != "minhash":
                raise fail("preset", f"{name!r} is not a MinHash preset (method minhash)")
            if self.hamming_blocks is not None:
                raise fail("hamming_blocks", "applies to method simhash only")
            return
        if preset.kind != "simhash":
            raise fail("preset", f"{name!r} is not a SimHash preset (method simhash)")
        for key in ("threshold", "bands", "rows", "num_perm"):
            if getattr(self, key) is not None:
                raise fail(key, "applies to method minhash only")
        try:
            self.hamming_scheme()
        except ValueError as e:
            raise fail("hamming_blocks", str(e)) from None

    def _check_pipeline(self) -> None:
        """The preset accepts the options given (ConfigError names the key that gave one)."""
        try:
            self.pipeline()  # ConfigError names bands/rows; a PresetError is an option's doing
        except PresetError as e:
            raise fail(self._option_key(str(e)), str(e)) from None

    def _option_key(self, message: str) -> str:
        """The key a preset's complaint about ``message``'s option came from."""
        for key, option in OPTION_KEYS.items():
            if getattr(self, key) is not None and f"option {option!r}" in message:
                return key
        return "preset_options" if self.preset_options else "preset"

    def preset_arguments(self) -> dict[str, Any]:
        """The preset options this config sets: ``preset_options``, with ``num_perm`` as
        ``k`` and ``shingle_words`` as ``w``.

        Raises:
            ConfigError: a key given both ways (the message names both)."""
        options: dict[str, Any] = dict(self.preset_options)
        for key, option in OPTION_KEYS.items():
            value = getattr(self, key)
            if value is None:
                continue
            if option in options:
                raise fail(key, f"given twice: as {key} and as preset_options {option!r}")
            options[option] = value
        return options

    @property
    def preset_name(self) -> str:
        return self.preset or DEFAULT_PRESET[self.method]

    def hamming_scheme(self) -> Scheme | None:
        """SimHash: the candidate keys' scheme (``kernels.hamming_tables``): ``hamming_blocks``
        blocks, else the default for ``max_distance``; ``max_distance + 1`` blocks is ditto's
        index.
        None for MinHash (no Hamming keys)."""
        if self.method != "simhash":
            return None
        blocks = (
            self.hamming_blocks
            if self.hamming_blocks is not None
            else default_blocks(self.max_distance)
        )
        return Scheme(blocks, self.max_distance)

    def pipeline(self) -> Pipeline:
        """The resolved preset pipeline, with the ``normalize`` normalization.

        Notes:
            MinHash signatures have ``bands * rows`` slots, at most ``num_perm`` (the
            preset option ``k``: 128 for semblance): the explicit ``bands``/``rows``;
            else, for ``banding = "recall"``, ``lsh.recall_params`` (pairs at threshold +
            0.05 become candidates with probability >= 0.995: 125 of 128 slots for the
            default 0.7 -> 25 x 5); ``"semblance"`` takes the preset's own closest-threshold
            shape of ``k`` slots. So the bands x rows of any pipeline this returns (in its
            id, in an index's shape), given back as ``bands``/``rows``, return the same
            pipeline.

        Raises:
            ConfigError: an option given twice, only one of ``bands``/``rows``, or a shape
                that does not fit the preset's signature (the message names the keys and
                flags to set).
            PresetError: a ``preset_options`` value the preset does not accept.
        """
        options = self.preset_arguments()
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
            raise fail("bands", "give both bands and rows, or neither (the threshold decides)")
        if self.bands * self.rows > slots:
            raise fail(
                "bands",
                f"{self.bands} x {self.rows} = {self.bands * self.rows} slots do not fit the "
                f"{slots}-slot signatures of preset {self.preset_name!r}: give --bands B "
                f"--rows R (keys bands, rows) with B x R <= {slots}",
            )
        return self.bands, self.rows

    @property
    def jaccard_threshold(self) -> float:
        """MinHash: the verification threshold (default 0.7)."""
        return DEFAULT_THRESHOLD if self.threshold is None else self.threshold


@dataclass(frozen=True)
class DedupConfig(MethodConfig, TableConfig, ClusterConfig, InputConfig):
    """Every setting of ``jobs/dedup.py``; ``conf/dedup.toml`` shows each key. The bases are
    its key groups, listed so that the keys keep their order: input, clustering, tables,
    method, then the dedup job's own."""

    verification: str = setting(
        "hybrid",
        "minhash: `hybrid` (the signature estimate when > 4 sd from the threshold, else the "
        "exact Jaccard), `exact` or `estimate`; simhash: the distance is always checked "
        "(`off` accepted)",
        choices=VERIFICATIONS,
    )
    representative: str = setting(
        "min_id",
        "the document kept: `min_id`, `earliest` (by `order_col`, nulls last) or `longest`; "
        "ties to the smallest id",
        choices=REPRESENTATIVES,
    )
    order_col: str | None = setting(
        None, 'the column `representative = "earliest"` orders by (required then)'
    )
    outputs: tuple[str, ...] = setting(
        ("docs", "clusters", "rejects", "samples"),
        "the output directories written; also `pairs` (verified edges); `matches/` is "
        "written whenever `against` is set",
        choices=OUTPUTS,
    )
    chaining_floor: float | None = setting(
        None,
        "connected only: the least similarity (or largest distance) to the representative; "
        "members beyond it are counted as `chained`",
        unset="`threshold` (minhash), `max_distance` (simhash)",
        minimum=0.0,
    )
    no_chaining: bool = setting(
        False, "connected only: true keeps the members beyond the floor as documents of their own"
    )
    against: str | None = setting(
        None,
        "an index directory: documents near an indexed one are removed too (listed in `matches/`)",
    )
    update_index: bool = setting(
        False, "true: then append the kept documents to the `against` index (created if absent)"
    )
    engine: str = setting(
        "auto",
        "where the run works: `local` (no Spark session at all: local JSON-lines files read, "
        "deduplicated and written in the job's own Python process), `driver` (Spark reads "
        "and writes, the pairs and clusters are found in the driver's own process, from the "
        "texts collected once), `spark` (Spark stages), `auto` (`local` for a job started "
        "in local mode on local JSON lines that Arrow reads as Spark does, else `driver`; "
        "either only when anchored, without `against`, and when the accepted texts fit its "
        "budget: `local` all of `spark.driver.memory`, `driver` half the smaller of it and "
        "`spark.driver.maxResultSize`; else `spark`); the outputs are the same whichever runs",
        choices=ENGINES,
    )
    batch_id: str | None = _batch_id()
    containment: float | None = setting(
        None,
        "minhash: also remove a document whose shingle set is at least this contained in a "
        "kept document with more shingles (verified exactly, removed next to that document; "
        "`clusters/` and `pairs/` then name the relation); part of the pipeline id",
        unset="off",
        above=0.0,
        maximum=1.0,
    )
    containment_min_shingles: int = setting(
        MIN_SHINGLES,
        "containment: documents with fewer shingles take no part in it (neither removed "
        "nor kept in place of another); another value without `containment` is an error",
        unit="shingles",
        minimum=1,
    )

    def _check(self) -> None:
        super()._check()
        if self.containment is not None:
            self._check_containment()
        elif self.containment_min_shingles != MIN_SHINGLES:  # a config file may spell it out
            raise fail(
                "containment_min_shingles",
                "applies with containment only (containment is off: give containment = T, "
                "--containment T, or leave this key out)",
            )
        if self.clustering == "anchored":
            for key, unset in (("chaining_floor", None), ("no_chaining", False)):
                if getattr(self, key) != unset:
                    why = "anchored removes only documents verified near the kept one"
                    raise fail(key, f"applies to clustering 'connected' only ({why})")
        if self.representative == "earliest" and not self.order_col:
            raise fail("order_col", "representative 'earliest' needs an order column")
        self._check_tables()
        refused = config_refusal(self)  # the engine decision's own rules (engine.py)
        if refused is not None:
            raise fail(*refused)
        self._check_method()
        if self.method == "minhash" and self.verification == "off":
            raise fail("verification", "'off' is for simhash only (MinHash pairs need a check)")
        if self.update_index and not self.against:
            raise fail("update_index", "needs an index: give against = the index directory")
        if "matches" in self.outputs and not self.against:
            raise fail("outputs", "'matches' needs an index to match against (against)")
        self._check_pipeline()

    def _check_containment(self) -> None:
        """Containment needs sets to be contained in and a removal anchored on the kept one."""
        if self.method != "minhash":
            raise fail(
                "containment",
                "needs shingle sets: method 'minhash' (a SimHash fingerprint's distance says "
                "nothing about one text inside another)",
            )
        if self.clustering != "anchored":
            raise fail("containment", "needs clustering 'anchored' (an excerpt is removed only "
                       "next to the document it is verified in)")  # fmt: skip
        if self.against:
            raise fail("containment", "not with against: index matches stay Jaccard matches, "
                       "and an indexed document is no container this run can verify")  # fmt: skip

    def run_id(self) -> str:
        """The id of what decides a run's removals: the pipeline's id, then the containment
        part when containment is on (``;containment=T,min_shingles=N``). An index keeps the
        pipeline's own id: containment decides nothing it stores."""
        own = self.pipeline().id
        if self.containment is None:
            return own
        part = f"containment={self.containment:g},min_shingles={self.containment_min_shingles}"
        return f"{own};{part}"

    @property
    def index_batch_id(self) -> str:
        """The id a batch of this input gets in an index: ``batch_id``, else the input path
        or table (so adding the same input twice is a no-op)."""
        return self.batch_id or self.input or f"table:{self.input_table}"


def load_config(path: str | None = None, **overrides: Any) -> DedupConfig:
    """Settings of the dedup job from the TOML file ``path`` (if any), then ``overrides``
    (``None`` = unset).

    Raises:
        ConfigError: an unknown key, a value of the wrong type, or an invalid or inconsistent
            setting; the message names the key.
    """
    return settings.load(DedupConfig, path, **overrides)


@dataclass(frozen=True)
class IndexConfig(MethodConfig, InputConfig):
    """Every setting of ``jobs/index.py``: the input keys, the dedup job's method keys (they
    fix the index's pipeline and LSH shape), the batch id, the action and the index
    directory. ``build`` and ``add`` write only into the index; ``query`` writes its results
    to ``output``. Its file is ``conf/dedup.toml``: the keys there that only the dedup job
    takes are checked one by one and left to it (``shares_file_with``)."""

    shares_file_with = DedupConfig

    output: str = setting("", "query: the directory its results go to")
    batch_id: str | None = _batch_id()
    action: str = setting(
        "build",
        "`build`, `add` or `query` (the job's first argument)",
        choices=INDEX_ACTIONS,
        flag=False,
    )
    index: str = setting("", "the index directory", required="an index directory")
    top: int = setting(
        10, "query on a MinHash index: results per query (semblance Forest top-k)", minimum=1
    )

    def _check(self) -> None:
        super()._check()
        if self.action == "query" and not self.output:
            raise fail("output", "an output directory is required")
        self._check_method()
        self._check_pipeline()

    @property
    def index_batch_id(self) -> str:
        """The id a batch of this input gets in the index: ``batch_id``, else the input path
        (so adding the same input twice is a no-op)."""
        return self.batch_id or self.input


def load_index_config(path: str | None = None, **overrides: Any) -> IndexConfig:
    """``IndexConfig`` from TOML + overrides, checked (ConfigError names the key). For
    ``query``, ``max_distance`` is the search distance (clamped down to the index's)."""
    return settings.load(IndexConfig, path, **overrides)


@dataclass(frozen=True)
class WinnowConfig(InputConfig):
    """Settings shared by the winnowing jobs: the fingerprint's k-gram and window sizes."""

    kgram_bytes: int = setting(
        KGRAM_BYTES,
        "the k-gram size; shorter shared passages are never found; part of the pipeline id",
        unit="bytes",
        minimum=1,
        aliases=("k",),
    )
    window: int = setting(
        WINDOW,
        "k-grams per window: shared passages of >= window + kgram_bytes - 1 bytes always "
        "share a fingerprint; part of the pipeline id",
        unit="k-grams",
        minimum=1,
        aliases=("w",),
    )


@dataclass(frozen=True)
class SpansConfig(WinnowConfig):
    """Every setting of ``jobs/spans.py``; ``conf/spans.toml`` shows each key. Give exactly
    one of ``pairs`` and ``query``."""

    pairs: str | None = setting(
        None,
        "pairs mode: a dedup output's `pairs/` (a, b) or `clusters/` (representative, member)",
    )
    query: str | None = setting(None, "provenance mode: the query documents, read like `input`")
    max_doc_freq: int = setting(
        100,
        "provenance: a hash occurring more often in the corpus is skipped as boilerplate "
        "(`hot_hashes`)",
        unit="occurrences",
        minimum=1,
    )
    outputs: tuple[str, ...] = setting(
        SPANS_OUTPUTS, "the output directories written", choices=SPANS_OUTPUTS
    )

    def _check(self) -> None:
        super()._check()
        if (self.pairs is None) == (self.query is None):
            raise fail("pairs", "give exactly one of pairs (a dedup output) or query (documents)")


def load_spans_config(path: str | None = None, **overrides: Any) -> SpansConfig:
    """``SpansConfig`` from TOML + overrides, checked (ConfigError names the key)."""
    return settings.load(SpansConfig, path, **overrides)


@dataclass(frozen=True)
class BoilerplateConfig(WinnowConfig):
    """Every setting of ``jobs/boilerplate.py``; ``conf/boilerplate.toml`` shows each key."""

    min_docs: int = setting(
        3,
        "documents (the document itself included) that must hold a fingerprint for it to be "
        "boilerplate",
        unit="documents",
        minimum=1,
    )
    min_run: int = setting(
        5,
        "a region needs at least this many such fingerprints in a row",
        unit="fingerprints",
        minimum=0,
    )
    group_col: str | None = setting(
        None,
        "count documents within each value of this column instead (e.g. the host of a crawl "
        "record)",
        unset="the whole corpus",
    )
    top: int = setting(
        100,
        "`boilerplate_top/` holds this many passages, those held by the most documents",
        unit="passages",
        minimum=1,
    )
    keep: str = setting(
        "none",
        "copies of a repeated region that stay: `none` (removed from every document) or "
        "`one` (the document first by `representative` keeps each maximal region; "
        "`regions/` names it)",
        choices=KEEPS,
    )
    representative: str = setting(
        "min_id",
        "keep one: the document that keeps a region: `min_id`, `earliest` (by `order_col`, "
        "nulls last) or `longest`; ties to the smallest id",
        choices=REPRESENTATIVES,
    )
    order_col: str | None = setting(
        None, 'the column `representative = "earliest"` orders by (required then)'
    )
    max_keep_docs: int | None = setting(
        None,
        "keep one: a region held by more documents than this is removed from all of them "
        "(navigation, banners)",
        unit="documents",
        unset="no limit",
        minimum=1,
    )
    outputs: tuple[str, ...] = setting(
        BOILERPLATE_OUTPUTS, "the output directories written", choices=BOILERPLATE_OUTPUTS
    )

    def _check(self) -> None:
        super()._check()
        if self.keep == "none":
            for key, unset in (("representative", "min_id"), ("order_col", None),
                               ("max_keep_docs", None)):  # fmt: skip
                if getattr(self, key) != unset:
                    raise fail(key, "applies to keep 'one' only (keep 'none' removes every copy)")
        if self.representative == "earliest" and not self.order_col:
            raise fail("order_col", "representative 'earliest' needs an order column")


def load_boilerplate_config(path: str | None = None, **overrides: Any) -> BoilerplateConfig:
    """``BoilerplateConfig`` from TOML + overrides, checked (ConfigError names the key)."""
    return settings.load(BoilerplateConfig, path, **overrides)


@dataclass(frozen=True)
class ImagesConfig(ClusterConfig, RunConfig):
    """Every setting of ``jobs/images.py``; ``conf/images.toml`` shows each key."""

    input_format: str = setting(
        "files",
        "`files` (every file under `input`) or `warc` (the image records of "
        "`.warc`/`.warc.gz` files)",
        choices=IMAGE_FORMATS,
    )
    max_distance: int = _max_distance(
        10, "the largest Hamming distance between the pHashes of near-duplicates"
    )
    hamming_blocks: int | None = setting(
        None,
        "guaranteed candidate keys on this many blocks (`max_distance + 1` = 11: ditto's, "
        "nothing missed); not with `hamming_key_bits`",
        unset="from `max_distance`",
    )
    hamming_key_bits: int | None = setting(
        None,
        "bits per key of 20 tables of sampled bits: fewer, more recall and more candidates; "
        "not with `hamming_blocks`",
        unit="bits",
        unset="from `max_distance` and the collection (12 bits up to 409 pHashes at 10; "
        "guaranteed blocks at <= 4)",
    )
    max_pixels: int = setting(
        DEFAULT_MAX_PIXELS,
        "a larger image (width x height) is rejected from its header, before decoding",
        unit="pixels",
        minimum=1,
    )
    max_bytes: int = setting(
        64_000_000,
        "a larger file or payload is rejected without being read",
        unit="bytes",
        minimum=1,
    )
    batch_images: int = setting(
        8, "images per Arrow batch given to a Python worker", unit="images", minimum=1
    )
    representative: str = setting(
        "pixels",
        "the image kept: `pixels` (the most pixels, then the smallest path) or `min_id` (the "
        "smallest path)",
        choices=IMAGE_REPRESENTATIVES,
    )
    warc_content_types: tuple[str, ...] = setting(
        IMAGE_CONTENT_TYPES,
        "warc: the media types read as images; other records go to `rejects/`",
        nonempty=True,
    )
    outputs: tuple[str, ...] = setting(
        ("clusters", "hashes", "rejects"),
        "the output directories written; also `pairs` (verified edges with their distance)",
        choices=IMAGE_OUTPUTS,
    )

    def _check(self) -> None:
        super()._check()
        try:
            self.hamming_scheme()
        except ValueError as e:
            key = "hamming_key_bits" if self.hamming_key_bits is not None else "hamming_blocks"
            raise fail(key, str(e)) from None

    def hamming_scheme(self, images: int | None = None) -> Scheme | SampledScheme:
        """The candidate keys' scheme for ``images`` distinct pHashes
        (``kernels.hamming_tables.image_scheme``): at the default distance 10, 20 tables of
        sampled bits, 12 or more as the collection grows (bounded, recall measured);
        guaranteed blocks where they are long enough or ``hamming_blocks`` asks for them."""
        return image_scheme(self.max_distance, self.hamming_blocks, self.hamming_key_bits, images)

    def warc_options(self) -> WarcOptions:
        """How WARC records become images under this config."""
        return WarcOptions(self.warc_content_types, "raw", self.max_bytes, payload="bytes")


def load_images_config(path: str | None = None, **overrides: Any) -> ImagesConfig:
    """``ImagesConfig`` from TOML + overrides, checked (ConfigError names the key)."""
    return settings.load(ImagesConfig, path, **overrides)


@dataclass(frozen=True)
class FingerprintConfig(InputConfig):
    """Every setting of ``jobs/fingerprint.py``; ``conf/fingerprint.toml`` shows each key.
    Its input is read as the dedup job's (the keys of :class:`InputConfig`)."""

    preset: str = setting("ditto/2", "the text preset every document is fingerprinted with")
    char: int | None = setting(
        None,
        "ditto/2: character n-gram size (<= 0 disables)",
        unit="runes",
        unset="the preset's (4)",
    )
    word: int | None = setting(
        None, "ditto/2: word n-gram size (<= 0 disables)", unit="words", unset="the preset's (0)"
    )
    overwrite: bool = setting(False, "true: replace the outputs of an earlier run")

    def _check(self) -> None:
        super()._check()
        try:
            self.pipeline()
        except PresetError as e:
            raise fail("preset", str(e)) from None

    def pipeline(self) -> Pipeline:
        """The preset's pipeline with ``char`` and ``word`` where given (PresetError for a
        preset or option value it does not accept)."""
        options: dict[str, Any] = {"char": self.char, "word": self.word}
        return resolve(self.preset, **{k: v for k, v in options.items() if v is not None})


def load_fingerprint_config(path: str | None = None, **overrides: Any) -> FingerprintConfig:
    """``FingerprintConfig`` from TOML + overrides, checked (ConfigError names the key)."""
    return settings.load(FingerprintConfig, path, **overrides)


# the key tables of docs/configuration.md, by the name in their <!-- keys: Name --> marker
TABLES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Paths,
        RunConfig,
        InputConfig,
        ClusterConfig,
        TableConfig,
        MethodConfig,
        DedupConfig,
        IndexConfig,
        WinnowConfig,
        SpansConfig,
        BoilerplateConfig,
        ImagesConfig,
        FingerprintConfig,
    )
}


def main(argv: list[str]) -> int:
    """``python -m neardup_udfs.config [PAGE ...]``: rewrite the key tables of each page
    (default ``docs/configuration.md``) from the declarations (the tests hold that page to
    them); a page without a ``<!-- keys: Name -->`` marker is an error (exit status 2)."""
    for path in argv or ["docs/configuration.md"]:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if not any(settings.MARKER.match(line) for line in text.split("\n")):
            print(f"{path} has no key tables (they are in docs/configuration.md)", file=sys.stderr)
            return 2
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(settings.render_tables(text, TABLES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
