"""Why a record is rejected, and the errors of an input that cannot be read: the reasons the
rejects tables name (one wording for every engine and reader), with no Spark."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "DUPLICATE_ID",
    "GZIP_CORRUPT",
    "GZIP_TRUNCATED",
    "LINE_REASONS",
    "MALFORMED_JSON",
    "NOT_A_STRING",
    "NOT_UNICODE",
    "NOT_UTF8",
    "NOT_UTF16",
    "NOT_UTF32",
    "NULL_ID",
    "NULL_TEXT",
    "ROW_RULES",
    "EmptyInput",
    "InputError",
    "rejects_by_reason",
    "too_large",
    "wrong_type",
]

MALFORMED_JSON = "malformed JSON"  # a JSON-lines line that does not parse as a JSON object
NOT_A_STRING = "text is not a string"  # a JSON-lines text value that is a number, list, ...
NOT_UTF8 = "not valid UTF-8"  # a JSON-lines line whose bytes are not text in its encoding
NOT_UTF16 = "not valid UTF-16"
NOT_UTF32 = "not valid UTF-32"
# a JSON-lines text value holding a lone surrogate (an escape such as \ud800 without its pair
# of \udc00-\udfff, or one of those alone): a string no UTF-8 text holds. Elsewhere than the
# text (the id, another field) one is read as '?', as Spark reads it; the rule is one:
# ``_not_unicode`` (Spark), ``driver.read.lone_surrogates`` (the local engine)
NOT_UNICODE = "text is not valid Unicode (a lone surrogate escape, e.g. \\ud800)"
# a .gz JSON-lines file that breaks off (or turns to garbage): one reject for all it has left
GZIP_TRUNCATED = "gzip stream ends early: this line and the rest of the file are lost"
GZIP_CORRUPT = "corrupt gzip stream: this line and the rest of the file cannot be read"
# the rejects named ``<file URI>#L<line>`` rather than by an id (see :func:`malformed_lines`)
LINE_REASONS = (MALFORMED_JSON, NOT_UTF8, NOT_UTF16, NOT_UTF32, GZIP_TRUNCATED, GZIP_CORRUPT)

# The per-row rules of every engine's read check, declared once: a row gets the reason of the
# first rule in ROW_RULES that matches it (``stages.rejects.split_rejects`` renders them as
# Spark Columns, ``driver.read.reject_reasons`` as numpy masks); of the rows that pass all of
# them, every copy of a repeated id but one is DUPLICATE_ID.
NULL_ID = "null doc_id"
NULL_TEXT = "null text"
DUPLICATE_ID = "duplicate doc_id"
READER, ID_NULL, TEXT_TYPE, TEXT_NULL, TEXT_SIZE = (
    "the reader's own", "null id", "text type", "null text", "text size"
)
ROW_RULES = (READER, ID_NULL, TEXT_TYPE, TEXT_NULL, TEXT_SIZE)
"""The per-row reject rules, in the order they are tried."""


def too_large(max_text_bytes: int) -> str:
    """The reason of a text (or WARC record) larger than ``max_text_bytes``."""
    return f"text larger than {max_text_bytes} bytes"


def wrong_type(type_name: str) -> str:
    """The reason of every row when the text column is of type ``type_name``, not a string."""
    return f"text column is {type_name}, not a string"


class InputError(ValueError):
    """The input cannot be read as asked; the message names the path, format or column."""


class EmptyInput(InputError):
    """The input holds no records (no files, or only empty ones) and an empty input was not
    allowed."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"input path {path!r} holds no records (no files, or only empty ones); pass "
            "--allow-empty-input (allow_empty_input = true) to make that an empty run"
        )


def rejects_by_reason(
    counts: Mapping[str | None, int] | Mapping[str, int], top: int = 50
) -> dict[str, int]:
    """report.json's ``rejects_by_reason``: the ``top`` most frequent reasons of ``counts``
    (rows per reason; None, the accepted rows, left out), ties by reason."""
    by_reason = sorted((-n, r) for r, n in counts.items() if r is not None)[:top]
    return {r: -n for n, r in by_reason}
