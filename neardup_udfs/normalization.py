"""What a text becomes before a pipeline shingles it: nothing (``none``), or the text a person
reads (``web``).

``web`` is the web normalization of :mod:`neardup_udfs.kernels.web_text`: an HTML text (by
``looks_like_html``) becomes its visible text, whitespace is collapsed, and for presets that
split text into words, every character of the scripts written without spaces (Han, Kana,
Hangul, Thai, Lao, Khmer, Myanmar) becomes a token of its own (``cjk_chars``: word
3-shingles are then character 3-grams there). Character-based presets (ditto) and the
reference word presets (fingerprint, anchor) get the first two steps only.

A normalization is part of a pipeline's identity: its id prefixes the pipeline id
(``web/1+semblance/1;...``, ``web/1;cjk=0+ditto/2``), and ``none`` adds nothing, so values
stored before normalization existed keep their ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from neardup_udfs.kernels.web_text import normalize_web_batch

__all__ = ["NONE", "NORMALIZATIONS", "Normalization", "for_preset"]

NORMALIZATIONS = ("web", "none")
WEB_VERSION = "web/1"


@dataclass(frozen=True)
class Normalization:
    """One normalization with its options fixed: ``name`` is ``none`` or ``web``; ``cjk``
    (web only) says whether CJK characters become tokens of their own."""

    name: str = "none"
    cjk: bool = False

    @property
    def active(self) -> bool:
        return self.name != "none"

    @property
    def id(self) -> str:
        """``""`` for none, ``web/1`` (with CJK character tokens) or ``web/1;cjk=0``."""
        if not self.active:
            return ""
        return WEB_VERSION + ("" if self.cjk else ";cjk=0")

    def apply_batch(self, texts: Sequence[str | bytes]) -> list[str | bytes]:
        """Every text normalized, in order. ``none`` returns the texts unchanged; ``web``
        returns strings (bytes are read as UTF-8 with ``errors="replace"``: one U+FFFD per
        maximal invalid subsequence)."""
        if not self.active:
            return list(texts)
        decoded = [t.decode("utf-8", "replace") if isinstance(t, bytes) else t for t in texts]
        out = normalize_web_batch(decoded, cjk="chars" if self.cjk else None)
        return out  # type: ignore[return-value]


NONE = Normalization()


def for_preset(name: str, word_tokens: bool) -> Normalization:
    """The normalization ``name`` (``web`` or ``none``) as it applies to a preset:
    ``word_tokens`` presets (semblance's tokenizer) get CJK character tokens under ``web``.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if name not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {name!r} (known: {', '.join(NORMALIZATIONS)})")
    return Normalization(name, cjk=word_tokens and name == "web")
