"""Benchmark of the web normalization kernels (``neardup_udfs.kernels.web_text``).

    .venv/bin/python bench/bench_web_text.py [--repeats R] [--warc FILE ...]

Prints one JSON line per measurement, throughput in MB of input (UTF-8) per CPU-second of
this one process, i.e. per core (CPU time, best of R interleaved rounds: the least disturbed by
a busy machine):

* ``visible_text`` with resiliparse (the chosen extractor) and, when selectolax is
  installed, the nearest selectolax (lexbor) equivalent: parse, drop the same skipped
  elements, a line break before and after every same block element, the body's text;
* ``normalize_web_batch`` (detection, visible text, whitespace, CJK character tokens), and
  beside it the fingerprint stage's kernel (the job's default MinHash ``signature_batch``)
  on the normalized pages, per MB of the pages as read;
  both on the ``text/html`` response records of the WARC samples under
  ../shared/data (distinct payloads, decoded by their declared or detected charset);
* ``looks_like_html`` and ``collapse_whitespace`` on plain text: the Debian copyright files
  /usr/share/doc/*/copyright, when present;
* ``cjk_chars`` and ``cjk_bigrams`` on Chinese text: the manual pages under
  /usr/share/man/zh_CN (their troff source, one document per page) when present, else text
  generated from the CJK Unified Ideographs block (seeded; sentences of 5-30 ideographs
  between punctuation).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from neardup_udfs.kernels import web_text

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
ZH_MAN = Path("/usr/share/man/zh_CN")
DEBIAN_DOC = Path("/usr/share/doc")

# The same contract as web_text.visible_text, for the selectolax measurement.
_BLOCK = (
    "address article aside blockquote br center dd details div dl dt fieldset figcaption "
    "figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre section "
    "table tr ul"
).split()
_SKIP = (
    "script style noscript template iframe frame textarea input button select option label "
    "img area video audio object embed"
).split()


def warc_files() -> list[Path]:
    return sorted(
        p
        for p in SHARED_DATA.rglob("*.warc*")
        if p.is_file() and not p.name.endswith((".wat.gz", ".wet.gz"))
    )


def html_pages(files: Sequence[Path]) -> list[str]:
    """The distinct text/html response payloads of ``files``, decoded."""
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from warcio.archiveiterator import ArchiveIterator

    seen: set[bytes] = set()
    pages: list[str] = []
    for path in files:
        with open(path, "rb") as fh:
            try:
                for rec in ArchiveIterator(fh):
                    if rec.rec_type != "response" or rec.http_headers is None:
                        continue
                    ctype = (rec.http_headers.get_header("Content-Type") or "").lower()
                    if not ctype.startswith("text/html"):
                        continue
                    try:
                        data = rec.content_stream().read()
                    except Exception:  # noqa: BLE001 -- a broken record is skipped
                        continue
                    digest = hashlib.sha1(data).digest()
                    if not data or digest in seen:
                        continue
                    seen.add(digest)
                    charset = None
                    if "charset=" in ctype:
                        charset = ctype.split("charset=", 1)[1].split(";")[0].strip(" \"'")
                    pages.append(bytes_to_str(data, charset or detect_encoding(data) or "utf-8"))
            except Exception as e:  # noqa: BLE001 -- a truncated file ends its records
                print(f"[bench_web_text] {path.name}: {type(e).__name__}", file=sys.stderr)
    return pages


def chinese_docs() -> tuple[str, list[str]]:
    if ZH_MAN.is_dir():
        docs = []
        for p in sorted(ZH_MAN.rglob("*")):
            if p.is_file():
                raw = gzip.open(p).read() if p.suffix == ".gz" else p.read_bytes()
                docs.append(raw.decode("utf-8", "replace"))
        if docs:
            return f"{ZH_MAN} (troff source, {len(docs)} pages)", docs
    rng = random.Random(20261201)
    docs = []
    for _ in range(200):
        parts = []
        for _ in range(rng.randint(20, 80)):
            parts.append(
                "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(5, 30)))
            )
            parts.append(rng.choice("，。、；："))
        docs.append("".join(parts))
    return "generated from the CJK Unified Ideographs block U+4E00..U+9FFF (seeded)", docs


def selectolax_visible_text() -> Callable[[str], str] | None:
    try:
        from selectolax.lexbor import LexborHTMLParser
    except ImportError:
        return None
    selector = ",".join(_BLOCK)

    def visible(html: str) -> str:
        tree = LexborHTMLParser(html)
        tree.strip_tags(_SKIP)
        for node in tree.css(selector):
            node.insert_before("\n")
            node.insert_after("\n")
        body = tree.body
        return body.text() if body is not None else ""

    return visible


@dataclass(frozen=True)
class Case:
    function: str
    docs: Sequence[str]
    run: Callable[[], object]
    extra: dict[str, object]


def library_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _each(fn: Callable[[str], object], docs: Sequence[str]) -> None:
    for d in docs:
        fn(d)


def measure(cases: Sequence[Case], repeats: int) -> None:
    """Time every case ``repeats`` times, the rounds interleaved (so that a busy machine
    disturbs all cases alike), and print each case's best round as one JSON line."""
    best = [float("inf")] * len(cases)
    for _ in range(repeats):
        for i, case in enumerate(cases):
            t = time.process_time()
            case.run()
            best[i] = min(best[i], time.process_time() - t)
    for case, seconds in zip(cases, best, strict=True):
        mb = sum(len(d.encode("utf-8", "surrogatepass")) for d in case.docs) / 1e6
        line = {
            "function": case.function,
            **case.extra,
            "mb_per_s_per_core": round(mb / max(seconds, 1e-9), 1),
            "input_mb": round(mb, 3),
            "docs": len(case.docs),
            "cpu_seconds_best": round(seconds, 4),
            "repeats": repeats,
        }
        print(json.dumps(line, ensure_ascii=False), flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--warc", type=Path, nargs="*", help="WARC files (default: the samples)")
    args = ap.parse_args(argv)

    files = args.warc or warc_files()
    pages = html_pages(files)
    source = f"{len(files)} WARC files under {SHARED_DATA}" if not args.warc else "--warc"
    cases: list[Case] = []
    if pages:
        web_text.normalize_web_batch(pages[:3])  # load or compile the numba kernel first
        resiliparse = f"resiliparse {library_version('resiliparse')}"
        cases.append(
            Case(
                "visible_text",
                pages,
                lambda: [web_text.visible_text(p) for p in pages],
                {"library": resiliparse, "chosen": True, "source": source},
            )
        )
        other = selectolax_visible_text()
        if other is not None:
            selectolax = f"selectolax {library_version('selectolax')}"
            cases.append(
                Case(
                    "visible_text",
                    pages,
                    lambda: [other(p) for p in pages],
                    {"library": selectolax, "chosen": False, "source": source},
                )
            )
        else:
            skipped = {"function": "visible_text", "library": "selectolax", "skipped": "absent"}
            print(json.dumps(skipped), flush=True)
        cases.append(
            Case(
                "normalize_web_batch",
                pages,
                lambda: web_text.normalize_web_batch(pages),
                {"library": resiliparse, "source": source},
            )
        )
        # the fingerprint stage beside it, on the same pages: MB of the HTML as read
        from neardup_udfs.config import load_config

        pipeline = load_config(input="i", output="o").pipeline()  # the job's default
        normalized = pipeline.normalize_batch(pages)
        pipeline.signature_batch(normalized[:3], normalized=True)
        cases.append(
            Case(
                "signature_batch",
                pages,
                lambda: pipeline.signature_batch(normalized, normalized=True),
                {"pipeline": pipeline.id, "of": "the normalized pages", "source": source},
            )
        )
    else:
        print(json.dumps({"function": "visible_text", "skipped": f"no HTML in {source}"}))

    copyrights = [
        p.read_bytes().decode("utf-8", "replace") for p in sorted(DEBIAN_DOC.glob("*/copyright"))
    ]
    if copyrights:
        plain = f"{DEBIAN_DOC}/*/copyright ({len(copyrights)} files)"
        for name in ("looks_like_html", "collapse_whitespace"):
            fn = getattr(web_text, name)
            cases.append(Case(name, copyrights, partial(_each, fn, copyrights), {"source": plain}))

    zh_source, zh = chinese_docs()
    web_text.cjk_bigrams("中文字符")
    for name in ("cjk_chars", "cjk_bigrams"):
        fn = getattr(web_text, name)
        cases.append(Case(name, zh, partial(_each, fn, zh), {"source": zh_source}))
    measure(cases, args.repeats)


if __name__ == "__main__":
    main()
