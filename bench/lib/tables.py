"""The benches' plain-text tables on stdout: a title, a header, aligned columns (the first
left-aligned, the others right-aligned; floats to 4 significant digits, or whole from 1000)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _cell(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:.0f}" if abs(c) >= 1000 else f"{c:.4g}"
    return str(c)


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [list(header)] + [[_cell(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n== {title} ==")
    for k, r in enumerate(cells):
        print(
            "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
        )
        if k == 0:
            print("  ".join("-" * w for w in widths))
