"""The data files shipped in ``neardup_udfs/data``: the Unicode tables of Go 1.25 and Rust
1.95 and Go's cosine table, read once per process."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["shipped_json"]


@cache
def shipped_json(name: str) -> dict[str, Any]:
    """The parsed JSON file ``neardup_udfs/data/<name>`` (one shared object: do not mutate)."""
    raw = resources.files("neardup_udfs").joinpath(f"data/{name}").read_text("utf-8")
    data: dict[str, Any] = json.loads(raw)
    return data
