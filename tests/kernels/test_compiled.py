"""``kernels.compiled.kernel``: cached where numba can write a cache, compiled anyway where not."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from neardup_udfs.kernels import compiled, words_jit
from neardup_udfs.kernels.compiled import kernel

ROOT = Path(__file__).resolve().parents[2]

# source with no file behind it: numba has nowhere to put a cache for it
SOURCE = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"


def _unfiled(name: str):  # type: ignore[no-untyped-def]
    scope: dict[str, object] = {}
    exec(compile(SOURCE.replace("total", name), "<generated>", "exec"), scope)
    return scope[name]


def test_a_kernel_without_a_cache_location_still_compiles() -> None:
    with pytest.raises(RuntimeError, match="no locator available"):
        njit(cache=True)(_unfiled("plain_total"))  # what cache=True alone does
    total = kernel()(_unfiled("unfiled_total"))
    assert total(np.arange(10)) == 45
    assert "unfiled_total" in compiled.uncached


def test_the_package_kernels_are_cached_on_disk_here() -> None:
    words_jit.shingle_sets_batch(["a b c d"], 3)  # compiled or loaded from the cache
    assert words_jit._sorted_sets._cache._cache_path  # a cache location was found
    assert "_sorted_sets" not in compiled.uncached


def _read_only_install(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the package where numba can write no cache beside the sources (each
    ``__pycache__`` is a file) and a HOME under which nothing can be made (it lies under a
    file): what a read-only install run by a user without a home looks like, even to root."""
    pkg = tmp_path / "site"
    shutil.copytree(
        ROOT / "neardup_udfs", pkg / "neardup_udfs", ignore=shutil.ignore_patterns("__pycache__")
    )
    for folder in [p for p in (pkg / "neardup_udfs").rglob("*") if p.is_dir()] + [
        pkg / "neardup_udfs"
    ]:
        (folder / "__pycache__").write_text("not a directory")
    (tmp_path / "blocked").write_text("a file")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_", "PYTHON"))}
    env.update(HOME=str(tmp_path / "blocked" / "home"), PYTHONPATH=str(pkg))
    return pkg, env


# every kernel the CLI imports is decorated; one small kernel is compiled and run (the
# tokenizer's kernels take 15 s to compile, a cost that proves nothing more here)
PROBE = (
    "import numpy as np, numba\n"
    "from neardup_udfs.kernels import compiled, words_jit\n"
    "import neardup_udfs.cli\n"
    "h, o = np.array([3, 1, 3, 2], dtype=np.uint64), np.zeros(2, dtype=np.int64)\n"
    "words_jit._sorted_sets(h, np.array([0, 4], dtype=np.int64), o)\n"
    "assert h[: o[-1]].tolist() == [1, 2, 3], h\n"
    "print(numba.config.CACHE_DIR or '-', len(compiled.uncached))\n"
)


def _probe(code: str, env: dict[str, str], cwd: Path) -> list[str]:
    """What ``code`` prints, run by a fresh interpreter with ``env`` in ``cwd``."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_a_read_only_install_caches_in_a_private_temporary_directory(tmp_path: Path) -> None:
    _, env = _read_only_install(tmp_path)
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    for _ in range(2):  # the second process loads what the first one cached
        cache_dir, n_uncached = _probe(PROBE, env, tmp_path)
        assert cache_dir == str(tmp_path / "tmp" / f"neardup-numba-{os.getuid()}")
        assert n_uncached == "0"
    assert list(Path(cache_dir).rglob("*.nbi"))  # numba's index files are there
    assert stat.S_IMODE(Path(cache_dir).stat().st_mode) == 0o700


@pytest.mark.parametrize("place", ["blocked", "shared"])
def test_with_no_private_place_the_kernels_compile_uncached(tmp_path: Path, place: str) -> None:
    _, env = _read_only_install(tmp_path)
    if place == "blocked":  # nothing can be made under the temporary directory
        tmp = tmp_path / "blocked" / "tmp"
    else:  # the directory exists but others may write it: its code is never loaded
        tmp = tmp_path / "tmp"
        (tmp / f"neardup-numba-{os.getuid()}").mkdir(parents=True)
        (tmp / f"neardup-numba-{os.getuid()}").chmod(0o777)
    probe = f"import tempfile\ntempfile.tempdir = {str(tmp)!r}\n" + PROBE
    cache_dir, n_uncached = _probe(probe, env, tmp_path)
    assert cache_dir == "-" and int(n_uncached) > 0
