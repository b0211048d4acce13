"""Every ``>>>`` example in ``neardup_udfs`` runs, one test per module that has any."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from functools import cache
from types import ModuleType

import pytest

import neardup_udfs

# Importing it runs the CLI and exits.
NOT_IMPORTED = {"neardup_udfs.__main__"}

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# The examples found when this floor was set: a finder that stops finding them fails.
MIN_EXAMPLES = 71


def _raise(name: str) -> None:
    raise ImportError(f"cannot import package {name} while walking neardup_udfs")


@cache
def _modules() -> list[ModuleType]:
    names = [neardup_udfs.__name__]
    names += [
        info.name
        for info in pkgutil.walk_packages(
            neardup_udfs.__path__, neardup_udfs.__name__ + ".", onerror=_raise
        )
    ]
    return [importlib.import_module(n) for n in sorted(set(names) - NOT_IMPORTED)]


@cache
def _doctests() -> dict[str, list[doctest.DocTest]]:
    """Module name -> its docstrings that have examples (modules without any left out)."""
    finder = doctest.DocTestFinder()
    found = {}
    for module in _modules():
        tests = [t for t in finder.find(module) if t.examples]
        if tests:
            found[module.__name__] = tests
    return found


@pytest.mark.parametrize("module", sorted(_doctests()))
def test_module_examples(module: str) -> None:
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    report: list[str] = []
    failed = attempted = 0
    for test in _doctests()[module]:
        result = runner.run(test, out=report.append)
        failed += result.failed
        attempted += result.attempted
    assert attempted > 0
    if failed:
        pytest.fail(f"{failed} of {attempted} examples failed\n" + "".join(report), pytrace=False)


def test_examples_found() -> None:
    total = sum(len(t.examples) for tests in _doctests().values() for t in tests)
    assert total >= MIN_EXAMPLES, f"found {total} examples, expected at least {MIN_EXAMPLES}"


def test_every_example_in_the_source_is_run() -> None:
    """Each ``>>>`` line of a module's source is an example the finder gives the tests above:
    one a finder cannot see (in a nested function, or a docstring a decorator hides) would
    never run."""
    missed = {}
    for module in _modules():
        source = module.__file__ or ""
        if not source.endswith(".py"):
            continue
        with open(source, encoding="utf-8") as fh:
            written = sum(line.lstrip().startswith(">>> ") for line in fh)
        found = sum(len(t.examples) for t in _doctests().get(module.__name__, []))
        if written != found:
            missed[module.__name__] = (written, found)
    assert missed == {}, f"module: (>>> lines in the source, examples found): {missed}"
