"""datatrove, the peer a user would pick for MinHash deduplication of text on one machine,
installed in a venv of the bench's own (out/bench-venvs/datatrove): datatrove is never a
dependency of the project, and nothing of it is imported here. ``lib.datatrove_run`` (its own
file, run by that venv's python) is what a timed run executes.

The venv: ``python3.11 -m venv``, then ``pip install`` of ``PINS``: datatrove 0.10.1 with its
``io`` extra (orjson for JsonlReader) and ``processing`` extra (xxhash, the default MinHash
hash, and regex for its text normalization), and spaCy, which its English word tokenizer
needs (a blank English pipeline: no model is downloaded; datatrove's ``multilingual`` extra,
which would bring it, also brings TensorFlow and a dozen tokenizers for other languages).
It is made once and remade when ``PINS`` change (its ``.installed`` stamp records them).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from lib.processes import log
from lib.project import ROOT

VENV = ROOT / "out" / "bench-venvs" / "datatrove"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / ".installed"
RUNNER = Path(__file__).resolve().parent / "datatrove_run.py"
PINS = ("datatrove[io,processing]==0.10.1", "spacy>=3.8,<4")
TASKS = 2
WORKERS = 2


def ensure_venv() -> Path:
    """The venv's python, the venv made and ``PINS`` installed first if needed."""
    want = json.dumps(list(PINS))
    if PYTHON.exists() and STAMP.exists() and STAMP.read_text("utf-8") == want:
        return PYTHON
    base = shutil.which("python3.11")
    if base is None:
        raise RuntimeError("datatrove peer: python3.11 is not on PATH")
    log(f"datatrove venv: installing {' '.join(PINS)} into {VENV}")
    if not PYTHON.exists():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([base, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", *PINS], check=True)
    STAMP.write_text(want, "utf-8")
    return PYTHON


def versions() -> dict[str, str]:
    """Installed versions of the packages that matter, read by the venv's python."""
    code = (
        "import json; from importlib.metadata import version; "
        "print(json.dumps({k: version(k) for k in ('datatrove', 'numpy', 'spacy', 'xxhash')}))"
    )
    out = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def command(corpus: Path, workdir: Path, kept: Path) -> list[str]:
    """The timed process: the runner on ``corpus``, its files under ``workdir``."""
    return [
        str(PYTHON),
        str(RUNNER),
        "--input",
        str(corpus),
        "--workdir",
        str(workdir),
        "--kept",
        str(kept),
        "--tasks",
        str(TASKS),
        "--workers",
        str(WORKERS),
    ]


def read_kept(kept: Path) -> list[str]:
    return [line for line in kept.read_text("utf-8").split("\n") if line]


def run_info(workdir: Path) -> dict[str, Any]:
    """The runner's own figures (stage seconds, counts, configuration, versions)."""
    path = workdir / "run.json"
    return json.loads(path.read_text("utf-8")) if path.exists() else {}
