"""The wheel a cluster would receive holds every subpackage and the data files."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_every_module_and_data(tmp_path: Path) -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    (wheel,) = tmp_path.glob("neardup-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "neardup_udfs").rglob("*")
        if p.suffix in (".py", ".json") and "__pycache__" not in p.parts
    }
    assert sources and sources <= names, sorted(sources - names)
