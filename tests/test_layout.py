"""The layout rules of docs/design-notes.md ("Layout, and where new code goes"), checked on
the source files themselves (no imports of the modules, no Spark):

- every module of the package is imported by at least one test file, or belongs to a
  subpackage with an API of its own (``__all__`` in its ``__init__``) that a test imports,
  so ``grep -l`` finds its tests in one step;
- kernels import no Spark and no pandas;
- jobs only parse arguments and call the package (short, no Spark stages of their own);
- no bench script imports another bench script (what they share lives in bench/lib/).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "neardup_udfs"
MAX_JOB_LINES = 70  # argument parsing, a summary line, one call


def dotted(path: Path) -> str:
    """The import name of a package file (``neardup_udfs/io/storage.py`` ->
    ``neardup_udfs.io.storage``; a package's ``__init__.py`` -> the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_names(path: Path) -> set[str]:
    """Every module ``path`` imports, and every ``from X import name`` as ``X.name`` too
    (a submodule imported by name from its package)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def package_modules() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts and p.name != "__main__.py"
    )


def test_every_module_is_imported_by_a_test() -> None:
    tested: set[str] = set()
    for test in (ROOT / "tests").glob("*.py"):
        tested |= imported_names(test)
    facades = {
        dotted(init)
        for init in PACKAGE.rglob("__init__.py")
        if "__all__" in init.read_text(encoding="utf-8") and init.parent != PACKAGE
    }
    untested = []
    for module in package_modules():
        name = dotted(module)
        # a package's __init__ counts as tested through any of its submodules' tests
        if module.name == "__init__.py" and any(t.startswith(name + ".") for t in tested):
            continue
        # a module of a package with an API of its own (an ``__all__`` in its __init__:
        # kernels/phash, kernels/winnow, report) is tested through that API
        package = name.rpartition(".")[0]
        if package in tested and package in facades:
            continue
        if name not in tested:
            untested.append(name)
    assert untested == [], f"no test file imports {untested}"


def test_kernels_import_no_spark_and_no_pandas() -> None:
    for module in sorted((PACKAGE / "kernels").rglob("*.py")):
        heavy = {n for n in imported_names(module) if n.split(".")[0] in ("pyspark", "pandas")}
        assert heavy == set(), f"{dotted(module)} imports {sorted(heavy)}"


@pytest.mark.parametrize("job", sorted((ROOT / "jobs").glob("*.py")), ids=lambda p: p.name)
def test_jobs_parse_arguments_and_call_the_package(job: Path) -> None:
    lines = job.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_JOB_LINES, f"jobs/{job.name}: {lines} lines"
    spark = {n for n in imported_names(job) if n.startswith(("pyspark", "neardup_udfs.stages"))}
    assert spark == set(), f"jobs/{job.name} imports {sorted(spark)}: a run belongs in runs/"


def test_no_bench_imports_another_bench() -> None:
    scripts = {p.stem for p in (ROOT / "bench").glob("*.py")}
    for script in sorted((ROOT / "bench").glob("*.py")):
        others = {n.split(".")[0] for n in imported_names(script)} & (scripts - {script.stem})
        assert others == set(), f"bench/{script.name} imports {sorted(others)}: use bench/lib/"


def test_reference_classes_are_used_by_their_module() -> None:
    """``Index`` is three classes (ditto's, semblance's LSH and winnowing ones): package code
    names them by module (``hamming_index.Index``), never as a bare imported ``Index``
    (a package's ``__init__`` may hand its own on)."""
    for module in package_modules():
        if module.name == "__init__.py":
            continue
        bare = {n for n in imported_names(module) if n.endswith(".Index")}
        assert bare == set(), f"{dotted(module)} imports {sorted(bare)}"
