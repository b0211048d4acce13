"""Named, frozen fingerprinting pipelines.

A preset is a pipeline whose every step is fixed and versioned: anything stored from it
carries :attr:`Pipeline.id`, and two values are comparable only when their ids are equal.
Changing what a preset computes means a new version string, never a silent change (the
golden tests make that loud).

Two kinds of preset exist: ``simhash`` presets make one 64-bit fingerprint per text
(:meth:`Pipeline.fingerprint_batch`), ``minhash`` presets make a k-slot signature and its LSH
band keys (:meth:`Pipeline.signature_batch`, :meth:`Pipeline.band_keys_batch`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import xxhash

from neardup_udfs.kernels import anchor, featurize, fingerprint_text, lsh, phash, words_jit
from neardup_udfs.kernels.normalize import normalize_utf8
from neardup_udfs.kernels.shingle import word_tokens
from neardup_udfs.normalization import NONE, Normalization, for_preset

__all__ = [
    "NO_TOKENS_KEY",
    "Pipeline",
    "Preset",
    "PresetError",
    "get_preset",
    "preset_names",
    "resolve",
]

U64 = npt.NDArray[np.uint64]
Kind = Literal["simhash", "minhash"]


class PresetError(ValueError):
    """An unknown preset or an option a preset does not accept; the message names it."""


@dataclass(frozen=True)
class Option:
    """One tunable of a preset: its default and the range of accepted integers.

    With ``zero_disables``, any value <= 0 means "off" and is stored as 0.
    """

    default: int
    minimum: int
    maximum: int
    help: str
    zero_disables: bool = False


@dataclass(frozen=True)
class Preset:
    """A registered pipeline family: name, version string, options and the batch kernel.

    ``batch(texts, **params)`` gives a uint64 array: shape (n,) for ``simhash`` presets,
    (n, k) for ``minhash`` presets. ``check(params)`` returns an error message or None.
    ``input`` says what the batch reads: text, or encoded image bytes (``phash``). Presets
    whose inputs can be unusable give ``checked(inputs, **params) -> (values, errors)``.
    ``word_tokens`` presets split text with semblance's tokenizer: the web normalization
    gives them CJK character tokens. ``sets_batch(hashes, offsets, **params)`` (a
    ``minhash`` preset on word shingles) gives ``batch``'s signatures from the texts'
    word-shingle sets in ``words_jit.shingle_sets_batch``'s form.
    """

    name: str
    version: str
    kind: Kind
    description: str
    options: Mapping[str, Option]
    batch: Callable[..., U64] = field(repr=False)
    sets_batch: Callable[..., U64] | None = field(repr=False, default=None)
    canonical: Callable[[str | bytes], bytes] = field(repr=False, default=normalize_utf8)
    canonical_batch: Callable[[Sequence[str | bytes]], Iterable[bytes]] | None = field(
        repr=False, default=None
    )
    checked: Callable[..., tuple[U64, list[str | None]]] | None = field(repr=False, default=None)
    input: Literal["text", "image"] = "text"
    check: Callable[[dict[str, int]], str | None] = field(repr=False, default=lambda p: None)
    word_tokens: bool = False

    def defaults(self) -> dict[str, int]:
        return {k: o.default for k, o in self.options.items()}


@dataclass(frozen=True)
class Pipeline:
    """A preset with every option fixed, and the normalization its texts get first: what
    gets stored next to its values.

    Every method that takes texts normalizes them first, unless ``normalized=True`` says
    they already are (``normalize_batch``'s output, as the Spark stages pass them).
    """

    preset: Preset
    params: tuple[tuple[str, int], ...]
    normalization: Normalization = NONE

    @property
    def version(self) -> str:
        """The preset's pipeline version (e.g. ``ditto/2``)."""
        return self.preset.version

    @property
    def kind(self) -> Kind:
        return self.preset.kind

    @property
    def id(self) -> str:
        """The normalization's id, then the version plus any non-default option, e.g.
        ``ditto/2``, ``ditto/2;char=3,word=1`` or ``web/1+semblance/1;bands=25,k=125,rows=5``.

        Notes:
            Values are comparable exactly when their pipeline ids are equal. Without
            normalization the id is the preset's alone, as before normalization existed.
        """
        defaults = self.preset.defaults()
        changed = [f"{k}={v}" for k, v in self.params if defaults[k] != v]
        own = self.version + (";" + ",".join(changed) if changed else "")
        return f"{self.normalization.id}+{own}" if self.normalization.active else own

    def normalize_batch(self, texts: Sequence[str | bytes]) -> list[str | bytes]:
        """``texts`` as this pipeline shingles them (unchanged without normalization)."""
        return self.normalization.apply_batch(texts)

    def _prepared(self, texts: Sequence[str | bytes], normalized: bool) -> Sequence[str | bytes]:
        return texts if normalized or not self.normalization.active else self.normalize_batch(texts)

    def param(self, name: str) -> int:
        return dict(self.params)[name]

    def _require(self, kind: Kind, what: str) -> None:
        if self.kind != kind:
            raise PresetError(f"preset {self.preset.name!r} makes {self.kind} values, not {what}")

    def fingerprint_batch(self, texts: Sequence[str | bytes], *, normalized: bool = False) -> U64:
        """64-bit fingerprints of ``texts`` as a uint64 array, in input order."""
        self._require("simhash", "64-bit fingerprints")
        return self.preset.batch(self._prepared(texts, normalized), **dict(self.params))

    def fingerprint_batch_checked(
        self, inputs: Sequence[str | bytes], *, normalized: bool = False
    ) -> tuple[U64, list[str | None]]:
        """Fingerprints and, per input, None or why it could not be fingerprinted (then 0)."""
        self._require("simhash", "64-bit fingerprints")
        if self.preset.checked is None:
            return self.fingerprint_batch(inputs, normalized=normalized), [None] * len(inputs)
        return self.preset.checked(self._prepared(inputs, normalized), **dict(self.params))

    def fingerprint(self, text: str | bytes) -> int:
        """Fingerprint of one text as an unsigned 64-bit int."""
        return int(self.fingerprint_batch([text])[0])

    def signature_batch(self, texts: Sequence[str | bytes], *, normalized: bool = False) -> U64:
        """MinHash signatures of ``texts``: a uint64 array of shape (n, k)."""
        self._require("minhash", "MinHash signatures")
        return self.preset.batch(self._prepared(texts, normalized), **dict(self.params))

    def signature_and_sets_batch(
        self, texts: Sequence[str | bytes], *, normalized: bool = False
    ) -> tuple[U64, U64, npt.NDArray[np.int64], list[str]]:
        """:meth:`signature_batch` of ``texts``, their word-shingle sets
        (``words_jit.shingle_sets_batch`` with the preset's ``w``) and their
        :meth:`exact_keys`, the texts tokenized once where the preset makes its signatures
        from the sets and its canonical form is the token text."""
        self._require("minhash", "MinHash signatures")
        prepared = self._prepared(texts, normalized)
        if self.preset.sets_batch is None or self.preset.canonical_batch is not _token_texts:
            hashes, offsets = words_jit.shingle_sets_batch(prepared, self.param("w"))
            signatures = self.preset.batch(prepared, **dict(self.params))
            return signatures, hashes, offsets, self.exact_keys(prepared, normalized=True)
        hashes, offsets, buf, starts = words_jit.shingle_sets_and_token_texts_batch(
            prepared, self.param("w")
        )
        signatures = self.preset.sets_batch(hashes, offsets, **dict(self.params))
        data = buf.tobytes()
        keys = [xxhash.xxh3_128_hexdigest(data[starts[i] : starts[i + 1]])
                for i in range(len(prepared))]  # fmt: skip
        return signatures, hashes, offsets, keys

    def band_keys_batch(self, signatures: U64) -> U64:
        """LSH band keys of signatures made by this pipeline: shape (n, bands)."""
        self._require("minhash", "band keys")
        return lsh.band_keys_batch(signatures, self.param("bands"), self.param("rows"))

    def exact_keys(self, texts: Sequence[str | bytes], *, normalized: bool = False) -> list[str]:
        """A 128-bit key (32 hex digits) of each text's canonical form under this preset.

        Notes:
            Texts with equal canonical forms have identical shingles, hence identical
            fingerprints and signatures under every option of the preset: they are exact
            duplicates for it (ditto: the normalized text; semblance: the token sequence).
            Keys are xxh3-128 of the canonical form; a collision needs ~2**64 documents.
            Every text with an empty canonical form (no token) gets the same key here; the
            jobs (``stages.exact.exact_keys``) key those by their own bytes instead, so two
            different token-less texts are never exact duplicates there.
        """
        texts = self._prepared(texts, normalized)
        batch = self.preset.canonical_batch
        forms = batch(texts) if batch is not None else map(self.preset.canonical, texts)
        return [xxhash.xxh3_128_hexdigest(form) for form in forms]

    @property
    def threshold(self) -> float:
        """The LSH threshold ``(1/bands)**(1/rows)`` of a minhash pipeline."""
        self._require("minhash", "an LSH threshold")
        return lsh.threshold(self.param("bands"), self.param("rows"))


# Pipeline.exact_keys of an empty canonical form (a text without a token): every such text has
# it, whatever it holds, so the jobs never use it as a key (``stages.exact.exact_keys``).
NO_TOKENS_KEY = xxhash.xxh3_128_hexdigest(b"")


def _ditto_batch(texts: Sequence[str | bytes], char: int, word: int) -> U64:
    return featurize.fingerprints(texts, char_n=char, word_n=word)


def _semblance_batch(
    texts: Sequence[str | bytes], w: int, k: int, seed: int, bands: int, rows: int
) -> U64:
    return words_jit.minhash_batch(texts, k=k, seed=seed, w=w)


def _semblance_sets_batch(
    hashes: U64, offsets: npt.NDArray[np.int64], w: int, k: int, seed: int, bands: int, rows: int
) -> U64:
    return words_jit.minhash_of_sets(hashes, offsets, k=k, seed=seed)


def _semblance_simhash_batch(texts: Sequence[str | bytes], w: int) -> U64:
    return words_jit.simhash_batch(texts, w=w)


def _token_text(text: str | bytes) -> bytes:
    return " ".join(word_tokens(text)).encode("utf-8")


def _token_texts(texts: Sequence[str | bytes]) -> Iterator[bytes]:
    buf, offsets = words_jit.token_texts_batch(texts)
    data = buf.tobytes()
    return (data[offsets[i] : offsets[i + 1]] for i in range(len(texts)))


def _fingerprint_batch(texts: Sequence[str | bytes]) -> U64:
    return fingerprint_text.simhash_batch(texts)


def _fingerprint_tokens(text: str | bytes) -> bytes:
    return " ".join(fingerprint_text.tokens(text)).encode("utf-8")


def _anchor_batch(texts: Sequence[str | bytes]) -> U64:
    return anchor.simhash_batch(texts)


def _anchor_tokens(text: str | bytes) -> bytes:
    return " ".join(anchor.tokenize(text)).encode("utf-8")


def _phash_checked(blobs: Sequence[str | bytes]) -> tuple[U64, list[str | None]]:
    return phash.phash_batch([b if isinstance(b, bytes) else b.encode() for b in blobs])


def _phash_batch(blobs: Sequence[str | bytes]) -> U64:
    hashes, errors = _phash_checked(blobs)
    bad = next((e for e in errors if e is not None), None)
    if bad is not None:
        raise PresetError(f"preset 'phash': an input is not a usable image: {bad}")
    return hashes


def _image_bytes(blob: str | bytes) -> bytes:
    return blob if isinstance(blob, bytes) else blob.encode("utf-8")


def _check_bands(params: dict[str, int]) -> str | None:
    bands, rows, k = params["bands"], params["rows"], params["k"]
    if bands * rows != k:
        return f"bands x rows must equal k: {bands} x {rows} != {k}"
    return None


_REGISTRY: dict[str, Preset] = {}


def _register(preset: Preset) -> None:
    if preset.name in _REGISTRY:
        raise RuntimeError(f"preset {preset.name!r} registered twice")
    _REGISTRY[preset.name] = preset


_register(
    Preset(
        name="ditto/2",
        version="ditto/2",
        kind="simhash",
        description="netstar-labs/ditto: Normalize, rune 4-grams, FNV-1a 64, saturating SimHash",
        options={
            "char": Option(4, 0, 1024, "character n-gram size in runes (<= 0 disables)", True),
            "word": Option(0, 0, 1024, "word n-gram size (<= 0 disables)", True),
        },
        batch=_ditto_batch,
    )
)
_register(
    Preset(
        name="semblance",
        version="semblance/1",
        kind="minhash",
        description="ophymx/semblance: word 3-shingles (xxh64 + Mix), 128-slot MinHash, 16x8 LSH",
        options={
            "w": Option(3, 1, 1024, "word shingle size"),
            "k": Option(128, 1, 65535, "MinHash slots"),
            "seed": Option(0, 0, 2**64 - 1, "MinHash seed"),
            "bands": Option(16, 1, 65535, "LSH bands"),
            "rows": Option(8, 1, 65535, "LSH rows per band"),
        },
        batch=_semblance_batch,
        sets_batch=_semblance_sets_batch,
        canonical=_token_text,
        canonical_batch=_token_texts,
        check=_check_bands,
        word_tokens=True,
    )
)
_register(
    Preset(
        name="semblance-simhash",
        version="semblance-simhash/1",
        kind="simhash",
        description="ophymx/semblance SketchText: word 3-shingles (xxh64 + Mix), unit weights",
        options={"w": Option(3, 1, 1024, "word shingle size")},
        batch=_semblance_simhash_batch,
        canonical=_token_text,
        canonical_batch=_token_texts,
        word_tokens=True,
    )
)
_register(
    Preset(
        name="fingerprint",
        version="fingerprint/1",
        kind="simhash",
        description="richardwooding/fingerprint Compute: Go L/Nd words, 3-shingles, FNV-1a 64",
        options={},
        batch=_fingerprint_batch,
        canonical=_fingerprint_tokens,
    )
)
_register(
    Preset(
        name="anchor",
        version="anchor/1",
        kind="simhash",
        description="anchor-fingerprint simhash: Rust alphanumeric words, murmur3 x64_128 low 64",
        options={},
        batch=_anchor_batch,
        canonical=_anchor_tokens,
    )
)


_register(
    Preset(
        name="phash",
        version="phash/1",
        kind="simhash",
        description="richardwooding/fingerprint PHash: PNG/JPEG/GIF, CatmullRom 32x32, 8x8 DCT",
        options={},
        batch=_phash_batch,
        canonical=_image_bytes,
        checked=_phash_checked,
        input="image",
    )
)


def preset_names() -> list[str]:
    """Registered preset names, sorted."""
    return sorted(_REGISTRY)


def get_preset(name: str) -> Preset:
    """The registered preset ``name``; :class:`PresetError` names it when unknown."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(preset_names())
        raise PresetError(f"unknown preset {name!r} (known: {known})") from None


def _int_option(preset: Preset, key: str, value: Any) -> int:
    if key not in preset.options:
        allowed = ", ".join(sorted(preset.options)) or "none"
        raise PresetError(f"preset {preset.name!r} has no option {key!r} (options: {allowed})")
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise PresetError(
            f"option {key!r} of preset {preset.name!r} must be an integer, got {value!r}"
        )
    opt = preset.options[key]
    v = int(value)
    if opt.zero_disables and v < 0:
        v = 0
    if not opt.minimum <= v <= opt.maximum:
        raise PresetError(
            f"option {key!r} of preset {preset.name!r} must be in [{opt.minimum}, {opt.maximum}],"
            f" got {v}"
        )
    return v


def _derive_bands(preset: Preset, params: dict[str, int], options: dict[str, Any]) -> None:
    """Replace bands/rows by the shape semblance's ``lsh.Params`` picks for ``threshold``."""
    t = options.pop("threshold")
    if options.get("bands") is not None or options.get("rows") is not None:
        raise PresetError(
            f"preset {preset.name!r}: give either 'threshold' or 'bands'/'rows', not both"
        )
    if isinstance(t, bool) or not isinstance(t, int | float) or not 0.0 < float(t) < 1.0:
        raise PresetError(
            f"option 'threshold' of preset {preset.name!r} must be in (0, 1), got {t!r}"
        )
    k = _int_option(preset, "k", options["k"]) if options.get("k") is not None else params["k"]
    params["bands"], params["rows"] = lsh.params(k, float(t))


def resolve(name: str = "ditto/2", *, normalize: str = "none", **options: Any) -> Pipeline:
    """A :class:`Pipeline` for preset ``name`` with ``options`` over its defaults, whose texts
    get the normalization ``normalize`` (``none``, the default, or ``web``) first.

    Notes:
        ``None`` values mean "default". An option the preset does not have, a non-integer,
        or a value outside the option's range raises :class:`PresetError` naming the
        option. Options where <= 0 means "disabled" (ditto's n-gram sizes) store any such
        value as 0. MinHash presets also take ``threshold`` (a Jaccard similarity in (0, 1))
        instead of ``bands``/``rows``: the shape is then derived as semblance's
        ``lsh.Params(k, threshold)`` does; ``bands x rows`` must equal ``k``. Changing only
        ``k`` keeps the preset's threshold and derives the shape for the new ``k``.
    """
    preset = get_preset(name)
    params = preset.defaults()
    options = dict(options)
    shape_given = any(options.get(o) is not None for o in ("threshold", "bands", "rows"))
    if preset.kind == "minhash" and options.get("k") is not None and not shape_given:
        # A new k with no LSH shape keeps the preset's threshold: derive bands x rows for it.
        options["threshold"] = lsh.threshold(params["bands"], params["rows"])
    if options.get("threshold") is not None:
        if preset.kind != "minhash":
            raise PresetError(f"preset {name!r} has no option 'threshold'")
        _derive_bands(preset, params, options)
    options.pop("threshold", None)
    for key, value in options.items():
        if value is not None:
            params[key] = _int_option(preset, key, value)
    problem = preset.check(params)
    if problem:
        raise PresetError(f"preset {name!r}: {problem}")
    try:
        normalization = for_preset(normalize, preset.word_tokens)
    except ValueError as e:
        raise PresetError(f"preset {name!r}: {e}") from None
    if normalization.active and preset.input != "text":
        raise PresetError(f"preset {name!r} reads images: normalization {normalize!r} is for text")
    return Pipeline(preset, tuple(sorted(params.items())), normalization)
