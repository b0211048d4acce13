"""What the local engine's tests share: records written as JSON lines, the dedup config of
such an export, and the settings that force the streamed read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_corpus import TABLES

from neardup_udfs import engine as engine_rules
from neardup_udfs.config import load_config
from neardup_udfs.driver import blocks

ROOT = Path(__file__).resolve().parent.parent


def write_lines(path: Path, rows: list[Any]) -> Path:
    """``path``, holding one line a row: a string as it is, anything else as JSON."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def engine_config(src: Path | str, out: Path | str, **settings: Any) -> Any:
    """conf/dedup.toml's config for the JSON lines at ``src`` (ids ``url``, texts ``body``,
    every output of the engines' comparison), ``settings`` applied last."""
    base = {"outputs": TABLES, "input_format": "jsonl", "id_col": "url", "text_col": "body"}
    return load_config(
        str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **{**base, **settings}
    )


def streamed(mp: pytest.MonkeyPatch) -> None:
    """The local engine never holds the input whole: it reads it in blocks of 300 bytes."""
    mp.setattr(engine_rules, "DRIVER_TEXT_COPIES", 10**12)  # never held whole
    mp.setattr(blocks, "BLOCK_BYTES", 300)
