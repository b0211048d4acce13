"""The project's modules outside the installed package (jobs/*.py, tests/*.py), for the benches.

A bench runs as ``python bench/X.py``: its own folder is on sys.path, the project root is not,
and no bench edits sys.path. ``load`` imports a file by its path instead, under the name it has
when its folder is on the path (the name spark-submit and pytest give it), and returns the
module already imported under that name if it is the same file: a bench imported by a test
shares the test's module.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent  # bench/lib/project.py


def load(relative: str) -> ModuleType:
    """``ROOT/relative`` (e.g. ``"jobs/dedup.py"``) as the module of its file name."""
    path = (ROOT / relative).resolve()
    name = path.stem
    module = sys.modules.get(name)
    if module is not None:
        if Path(getattr(module, "__file__", "") or "").resolve() != path:
            raise ImportError(f"{name!r} is already imported from another file than {path}")
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does: dataclasses and pickling look it up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
