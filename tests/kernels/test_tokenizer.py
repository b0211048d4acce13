"""The compiled tokenizer (kernels.tokenizer): word tokens from its tables, lowercasing to
several runes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.shingle import word_tokens
from neardup_udfs.kernels.text import TOKEN_RANGES_GE_0X80, go_lower_table
from neardup_udfs.kernels.tokenizer import TokenTables, next_token, token_scratch, token_tables
from neardup_udfs.kernels.utf8 import pack_utf8


def _tokens(text: str | bytes, tables: TokenTables) -> list[str]:
    buf, offsets = pack_utf8([text])
    tok = token_scratch(offsets)
    out, p = [], 0
    while True:
        p, n = next_token(buf, p, len(buf), tables, tok, 0)
        if n == 0:
            return out
        out.append(tok[:n].tobytes().decode())


@given(st.text(max_size=40) | st.binary(max_size=40))
def test_next_token_with_semblance_tables_is_word_tokens(text: str | bytes) -> None:
    semblance = token_tables(TOKEN_RANGES_GE_0X80, go_lower_table())
    assert _tokens(text, semblance) == word_tokens(text)


def test_next_token_lowercases_to_several_runes() -> None:
    lower = np.arange(0x110000, dtype=np.int32)
    lower[0x130] = -2  # row 1 of multi
    lower[0x3A3] = 0x3C3
    multi = np.array([[-1, -1], [0x69, 0x307]], dtype=np.int32)
    tables = token_tables([(0x130, 0x130), (0x3A3, 0x3A3)], lower, multi)  # İ and Σ
    assert tables[0][0x12F:0x132].tolist() == [0, 1, 0]
    assert _tokens("İSTANBUL, Σ\xffİ-", tables) == ["i\u0307stanbul", "σ", "i\u0307"]
