"""bench/bench_web.py's corpora built small from the files shipped with the tests: the three
real pages of tests/data/web and five Debian man pages under tests/data/web/bench/man (see the
README there), so that no test needs ../shared/data nor the manpages-zh / manpages-ja packages.
"""

from __future__ import annotations

from pathlib import Path

from lib.man_corpus import build_cjk, man_files
from lib.planted_families import SEED, Corpus
from lib.web_corpus import build_web

DATA = Path(__file__).parent / "data" / "web"
MAN = DATA / "bench" / "man"
PAGES = {
    "data-gov-uk-accessibility.html": "http://data.gov.uk/accessibility-statement",
    "iana-reserved-domains.html": "http://www.iana.org/domains/reserved",
    "iana-time-zones.html": "http://www.iana.org/time-zones",
}
TARGETS = {"web": 40, "zh": 30, "ja": 30}


def build_small(name: str, seed: int = SEED) -> Corpus:
    """Corpus ``name`` (web, zh or ja) at its small size (``TARGETS``)."""
    if name == "web":
        raw = [
            (uri, (DATA / f).read_bytes().decode("utf-8", "replace")) for f, uri in PAGES.items()
        ]
        return build_web(raw, seed, TARGETS["web"])
    return build_cjk(name, man_files(name, MAN), seed, TARGETS[name])
