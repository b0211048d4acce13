"""report.html in a real browser: headless Chromium renders it to out/report-screenshot.png.

The end-to-end tier (``make test-e2e``, or ``make test-browser`` for this file alone) installs
Debian's chromium package first; ``make test`` deselects the ``e2e`` marker. Look at the
screenshot after a run.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from report_outputs import standard_output

from neardup_udfs.report import build_report, write_report_html

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SHOT = Path(__file__).resolve().parents[2] / "out" / "report-screenshot.png"
WIDTH, HEIGHT = 1280, 3200


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A page with every section."""
    root = standard_output(tmp_path_factory.mktemp("std") / "out")
    return root, build_report(root)


def test_report_renders_in_headless_chromium(standard: tuple[Path, str]) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "no chromium on PATH: `make test-browser` installs Debian's package"
    page = write_report_html(standard[0])
    SHOT.parent.mkdir(parents=True, exist_ok=True)
    SHOT.unlink(missing_ok=True)
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={WIDTH},{HEIGHT}",
            f"--screenshot={SHOT}",
            Path(page).as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    with Image.open(SHOT) as shot:
        img = shot.convert("RGB")
    assert img.size == (WIDTH, HEIGHT)
    colors = img.getcolors(maxcolors=WIDTH * HEIGHT)
    assert colors is not None and len(colors) > 50  # text, plots, highlights: not a blank page
    white = sum(n for n, c in colors if min(c) >= 250)
    assert white / (WIDTH * HEIGHT) < 0.97
