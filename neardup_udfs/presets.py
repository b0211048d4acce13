"""Named, frozen fingerprinting pipelines.

A preset is a pipeline whose every step is fixed and versioned: anything stored from it
carries :attr:`Pipeline.id`, and two values are comparable only when their ids are equal.
Changing what a preset computes means a new version string, never a silent change (the
golden tests make that loud).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels import featurize

__all__ = [
    "Pipeline",
    "PresetError",
    "Preset",
    "get_preset",
    "preset_names",
    "resolve",
]

U64 = npt.NDArray[np.uint64]


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
    """A registered pipeline family: name, version string, options and the batch kernel."""

    name: str
    version: str
    description: str
    options: Mapping[str, Option]
    batch: Callable[..., U64] = field(repr=False)

    def defaults(self) -> dict[str, int]:
        return {k: o.default for k, o in self.options.items()}


@dataclass(frozen=True)
class Pipeline:
    """A preset with every option fixed: what gets stored next to its fingerprints."""

    preset: Preset
    params: tuple[tuple[str, int], ...]

    @property
    def version(self) -> str:
        """The preset's pipeline version (e.g. ``ditto/2``)."""
        return self.preset.version

    @property
    def id(self) -> str:
        """Version plus any non-default option, e.g. ``ditto/2`` or ``ditto/2;char=3,word=1``.

        Notes:
            Fingerprints are comparable exactly when their pipeline ids are equal.
        """
        defaults = self.preset.defaults()
        changed = [f"{k}={v}" for k, v in self.params if defaults[k] != v]
        return self.version + (";" + ",".join(changed) if changed else "")

    def fingerprint_batch(self, texts: Sequence[str | bytes]) -> U64:
        """Fingerprints of ``texts`` as a uint64 array, in input order."""
        return self.preset.batch(texts, **dict(self.params))

    def fingerprint(self, text: str | bytes) -> int:
        """Fingerprint of one text as an unsigned 64-bit int."""
        return int(self.fingerprint_batch([text])[0])


def _ditto_batch(texts: Sequence[str | bytes], char: int, word: int) -> U64:
    return featurize.fingerprints(texts, char_n=char, word_n=word)


_REGISTRY: dict[str, Preset] = {}


def _register(preset: Preset) -> None:
    if preset.name in _REGISTRY:
        raise RuntimeError(f"preset {preset.name!r} registered twice")
    _REGISTRY[preset.name] = preset


_register(
    Preset(
        name="ditto/2",
        version="ditto/2",
        description="netstar-labs/ditto: Normalize, rune 4-grams, FNV-1a 64, saturating SimHash",
        options={
            "char": Option(4, 0, 1024, "character n-gram size in runes (<= 0 disables)", True),
            "word": Option(0, 0, 1024, "word n-gram size (<= 0 disables)", True),
        },
        batch=_ditto_batch,
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


def resolve(name: str = "ditto/2", **options: Any) -> Pipeline:
    """A :class:`Pipeline` for preset ``name`` with ``options`` over its defaults.

    Notes:
        ``None`` values mean "default". An option the preset does not have, a non-integer,
        or a value outside the option's range raises :class:`PresetError` naming the
        option. Options where <= 0 means "disabled" (ditto's n-gram sizes) store any such
        value as 0.
    """
    preset = get_preset(name)
    params = preset.defaults()
    for key, value in options.items():
        if value is None:
            continue
        if key not in preset.options:
            allowed = ", ".join(sorted(preset.options)) or "none"
            raise PresetError(f"preset {name!r} has no option {key!r} (options: {allowed})")
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise PresetError(
                f"option {key!r} of preset {name!r} must be an integer, got {value!r}"
            )
        opt = preset.options[key]
        v = int(value)
        if opt.zero_disables and v < 0:
            v = 0
        if not opt.minimum <= v <= opt.maximum:
            raise PresetError(
                f"option {key!r} of preset {name!r} must be in [{opt.minimum}, {opt.maximum}],"
                f" got {v}"
            )
        params[key] = v
    return Pipeline(preset, tuple(sorted(params.items())))
