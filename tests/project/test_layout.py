"""The layout rules of docs/design-notes.md ("Layout, and where new code goes"), checked on
the source files themselves (no imports of the modules, no Spark):

- every test file mirrors what it tests: ``tests/test_<module>.py`` for a top-level module
  ``neardup_udfs/<module>.py`` (or a package tested through its API), and
  ``tests/<sub>/test_<module>.py`` for ``neardup_udfs/<sub>/<module>.py`` (or the package
  ``neardup_udfs/<sub>/<module>/``); only the tiers ``e2e/`` and ``project/`` are not in the
  package; a module that is no test file lives beside ``conftest.py`` (a helper);
- every module of the package is imported by at least one test file, or belongs to a
  subpackage with an API of its own (``__all__`` in its ``__init__``) that a test imports,
  so ``grep -rl`` finds its tests in one step;
- no module of the package or of jobs/ uses another module's private name (``from x import
  _y``, or ``x._y`` on an imported ``x``);
- no test file imports another test file (what two share lives in a helper beside
  ``conftest.py``);
- kernels import no Spark and no pandas;
- jobs only parse arguments and call the package (short, no Spark stages of their own);
- no bench script imports another bench script (what they share lives in bench/lib/).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "neardup_udfs"
TESTS = ROOT / "tests"
TIERS = ("e2e", "project")  # test folders that mirror no part of the package
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


def files_under_tests() -> list[Path]:
    """Every Python file under tests/: test files, conftest.py files and helpers."""
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def mirrored(test: Path) -> list[Path]:
    """What test file ``test`` (``tests/[sub/]test_<name>.py``) may mirror: the module
    ``neardup_udfs/[sub/]<name>.py`` or the package ``neardup_udfs/[sub/]<name>/``."""
    folder = PACKAGE.joinpath(*test.relative_to(TESTS).parent.parts)
    name = test.stem.removeprefix("test_")
    return [folder / f"{name}.py", folder / name / "__init__.py"]


def layout_errors(files: list[Path]) -> list[str]:
    """What breaks the layout rule among ``files`` (paths under tests/)."""
    errors = []
    for path in files:
        where = path.relative_to(TESTS)
        if path.name == "conftest.py":
            continue
        if not path.name.startswith("test_"):
            if len(where.parts) > 1:
                errors.append(f"tests/{where}: a helper lives beside tests/conftest.py")
            continue
        if where.parts[0] in TIERS and len(where.parts) == 2:
            continue
        if not any(p.is_file() for p in mirrored(path)):
            wanted = " or ".join(str(p.relative_to(ROOT)) for p in mirrored(path))
            errors.append(f"tests/{where}: mirrors no module ({wanted})")
    return errors


def test_every_test_file_mirrors_a_module_or_is_a_tier() -> None:
    assert layout_errors(files_under_tests()) == []


def test_every_module_is_imported_by_a_test() -> None:
    tested: set[str] = set()
    for test in files_under_tests():
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


def private_uses(path: Path) -> list[str]:
    """The private names of our modules (the package's, relative imports, the jobs') that
    ``path`` uses: ``from x import _y``, and ``x._y`` where ``x`` is a name it imports from
    one of them. Other libraries' private names (``os._exit``) are theirs to judge."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    jobs = {p.stem for p in (ROOT / "jobs").glob("*.py")}
    imported: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            ours = [a for a in node.names if a.name.split(".")[0] in {"neardup_udfs", *jobs}]
            imported |= {(a.asname or a.name).split(".")[0] for a in ours}
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            if node.level == 0 and source.split(".")[0] not in {"neardup_udfs", *jobs}:
                continue
            for alias in node.names:
                imported.add(alias.asname or alias.name)
                if _private(alias.name):
                    found.append(f"from {source} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):  # neardup_udfs.kernels.minhash._x
                base = base.value
            if isinstance(base, ast.Name) and base.id in imported:
                found.append(f"{ast.unparse(node)} (line {node.lineno})")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_module_uses_another_modules_private_names() -> None:
    sources = [*package_modules(), *sorted((ROOT / "jobs").glob("*.py"))]
    found = {str(p.relative_to(ROOT)): uses for p in sources if (uses := private_uses(p))}
    assert found == {}


def imported_test_files(path: Path) -> set[str]:
    """The test files (``test_*`` modules) among what ``path`` imports."""
    return {n for n in imported_names(path) if any(p.startswith("test_") for p in n.split("."))}


def test_no_test_file_imports_another() -> None:
    found = {
        str(path.relative_to(ROOT)): sorted(tests)
        for path in files_under_tests()
        if (tests := imported_test_files(path))
    }
    assert found == {}, "a test file imports another: move what they share to a helper"


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


def test_stages_and_kernels_import_no_config_code() -> None:
    """Stages take validated values: no stage or kernel imports the config module at run
    time (an import for type annotations only, under ``TYPE_CHECKING``, is allowed)."""
    found = []
    for module in sorted((PACKAGE / "stages").glob("*.py")) + sorted(
        (PACKAGE / "kernels").rglob("*.py")
    ):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in tree.body:  # top level only: a TYPE_CHECKING block is an ast.If
            if isinstance(node, ast.ImportFrom) and node.module in (
                "neardup_udfs.config",
                "neardup_udfs.settings",
            ):
                found.append(f"{dotted(module)} imports {node.module}")
    assert found == []


def test_where_new_code_goes_fits_on_a_page() -> None:
    """docs/design-notes.md's "Layout, and where new code goes" stays at most 40 lines."""
    text = (ROOT / "docs" / "design-notes.md").read_text(encoding="utf-8").splitlines()
    start = text.index("## Layout, and where new code goes")
    end = next(i for i in range(start + 1, len(text)) if text[i].startswith("## "))
    assert end - start <= 40, f"{end - start} lines"


def test_no_test_imports_a_bench_script() -> None:
    """A bench script is a measurement, not a library: tests import what they share with
    benches from ``bench/lib`` (``lib.<module>``), never a script of ``bench/``."""
    scripts = {p.stem for p in (ROOT / "bench").glob("*.py")}
    found = {
        str(path.relative_to(ROOT)): sorted(used)
        for path in files_under_tests()
        if (used := {n.split(".")[0] for n in imported_names(path)} & scripts)
    }
    assert found == {}


def runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports when it runs: at the top or inside a function,
    not under ``TYPE_CHECKING``; ``from X import name`` counts as ``X.name`` when that is a
    module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
    return found & modules


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules of ``graph`` (module -> the
    modules it imports): each is an import circle."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return circles


def test_no_import_circle_in_the_package() -> None:
    """No two modules import each other, directly or round a longer circle, even through an
    import inside a function (the engine decision once hid one between ``runs.dedup`` and
    ``runs.local``)."""
    paths = {dotted(p): p for p in package_modules()}
    graph = {name: runtime_imports(path, set(paths)) for name, path in paths.items()}
    assert import_circles(graph) == []
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


SPARK_FREE = (
    "neardup_udfs.driver",
    "neardup_udfs.kernels",
    "neardup_udfs.engine",
    "neardup_udfs.config",
    "neardup_udfs.clock",
    "neardup_udfs.io.reasons",
    "neardup_udfs.runs.local",
    "neardup_udfs.runs.summary",
    "neardup_udfs.cli",
)
"""The core (``driver/``, ``kernels/``), the engine decision, the config, the local shell and
the command line tool: none of them loads pyspark, directly or through what they import."""


def test_the_core_and_the_local_shell_load_no_spark() -> None:
    names = sorted(
        dotted(p)
        for p in package_modules()
        if any(dotted(p) == m or dotted(p).startswith(m + ".") for m in SPARK_FREE)
    )
    assert "neardup_udfs.driver.near" in names and "neardup_udfs.runs.local" in names
    probe = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "    if 'pyspark' in sys.modules:\n"
        "        print(name); break\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", f"{done.stdout.strip()} loads pyspark"
