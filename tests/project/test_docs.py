"""README.md and the pages under docs/ say what the code is: the README's jobs, make targets
and layout, and docs/configuration.md's key tables, are checked against jobs/, the Makefile,
the package's modules, neardup_udfs/config.py and conf/*.toml, so neither can change without
the other; and every relative link between the pages leads somewhere (no Spark, no JVM).

Each check is a function of a page's text (``readme_*``, ``config_tables``, ``broken_links``)
and of the code, so the tests below also run it on a deliberately broken page and see it fail.
"""

from __future__ import annotations

import importlib
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from neardup_udfs.config import (
    TABLES,
    BoilerplateConfig,
    DedupConfig,
    FingerprintConfig,
    ImagesConfig,
    SpansConfig,
    load_boilerplate_config,
    load_config,
    load_fingerprint_config,
    load_images_config,
    load_settings,
    load_spans_config,
)
from neardup_udfs.config import main as write_tables
from neardup_udfs.settings import key_table, keys_of, render_tables

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "neardup_udfs"
# every page, by its path from ROOT: README.md and docs/*.md
PAGES = {
    p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
README = PAGES["README.md"]
CONFIGURATION = "docs/configuration.md"  # the page of the key tables

NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten "
                                      "eleven twelve".split())}  # fmt: skip

# conf/<file> -> (the job that reads it, its loader, the dataclass the loader fills)
CONF_FILES: Mapping[str, tuple[str, Callable[..., Any], type]] = {
    "dedup.toml": ("dedup", load_config, DedupConfig),
    "spans.toml": ("spans", load_spans_config, SpansConfig),
    "boilerplate.toml": ("boilerplate", load_boilerplate_config, BoilerplateConfig),
    "images.toml": ("images", load_images_config, ImagesConfig),
    "fingerprint.toml": ("fingerprint", load_fingerprint_config, FingerprintConfig),
}


def jobs() -> set[str]:
    """The Spark jobs: every ``jobs/*.py`` but helpers (``_``-prefixed files)."""
    return {p.name for p in (ROOT / "jobs").glob("*.py") if not p.name.startswith("_")}


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section of ``text`` (up to the next ``## `` heading)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"the page has no section '## {title}'"
    return match.group(1)


def without_code_blocks(text: str) -> str:
    """``text`` without its fenced code blocks (their ``#`` lines are not headings)."""
    return re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)


# --- a. the jobs -------------------------------------------------------------------------------


def readme_jobs(text: str) -> list[str]:
    """The README's opening (before its first section) names every job, and only jobs; a
    count of Spark jobs in words anywhere is their number; any ``jobs/X.py`` it names exists."""
    out: list[str] = []
    intro = text[: text.index("\n## ")]
    named = set(re.findall(r"`jobs/(\w+\.py)`", intro))
    if named != jobs():
        out.append(f"the opening names jobs {sorted(named)}, jobs/ holds {sorted(jobs())}")
    for word in re.findall(r"\b(\w+)\s+Spark\s+jobs\b", text):
        if word.lower() in NUMBERS and NUMBERS[word.lower()] != len(jobs()):
            out.append(f"README says '{word} Spark jobs'; jobs/ holds {len(jobs())}")
    for name in set(re.findall(r"\bjobs/(\w+\.py)\b", text)) - jobs():
        out.append(f"README names jobs/{name}, which does not exist")
    return out


def dead_jobs(pages: Mapping[str, str]) -> list[str]:
    """Every ``jobs/X.py`` a page names exists."""
    return [
        f"{path} names jobs/{name}, which does not exist"
        for path, text in pages.items()
        for name in sorted(set(re.findall(r"\bjobs/(\w+\.py)\b", text)) - jobs())
    ]


def test_readme_lists_every_job() -> None:
    assert readme_jobs(README) == []
    assert dead_jobs(PAGES) == []


# --- b. the make targets -----------------------------------------------------------------------


def makefile_targets() -> set[str]:
    """Every explicit target of the Makefile (rules, not variable assignments)."""
    targets: set[str] = set()
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.$()/ -]+?)\s*:(?![=:])", line)
        if match and not line.startswith(("\t", "#")):
            targets.update(match.group(1).split())
    return targets


def documented_targets() -> set[str]:
    """The targets the Makefile documents with a ``## make <target>`` comment."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^## make ([\w-]+)", text, re.M))


def make_commands(text: str) -> set[str]:
    """The targets of the ``make <target>`` commands ``text`` shows: at the start of a line of
    a fenced code block, or of an inline code span (prose such as "make sure" is not one)."""
    fence = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
    found: set[str] = set()
    for block in fence.findall(text):
        found.update(re.findall(r"^\s*make\s+([a-z][\w-]*)", block, re.M))
    for span in re.findall(r"`([^`]+)`", fence.sub("", text)):
        found.update(re.findall(r"^make\s+([a-z][\w-]*)", span))
    return found


def readme_make(text: str) -> list[str]:
    """Every documented target is shown as ``make <target>``; every ``make <target>`` the
    README shows is a Makefile target."""
    shown = make_commands(text)
    out = [f"README never shows `make {t}`" for t in sorted(documented_targets() - shown)]
    unknown = shown - makefile_targets()
    out += [f"README shows `make {t}`, not a Makefile target" for t in sorted(unknown)]
    return out


def test_makefile_parsing_sees_the_documented_targets() -> None:
    assert {"run", "test", "test-e2e", "package", "golden"} <= documented_targets()
    assert documented_targets() <= makefile_targets()
    assert {"lint", "clean", "chromium"} <= makefile_targets()


def make_table(text: str) -> list[str]:
    """The README's "Make targets" table has one row per Makefile target a person runs (the
    targets named like words, not files), in a row of its own."""
    rows = re.findall(r"^\| `make ([a-z][\w-]*)[^`]*` \|", section(text, "Make targets"), re.M)
    named = {t for t in makefile_targets() if re.fullmatch(r"[a-z][\w-]*", t)}
    out = [f"Make targets has no row of `make {t}`" for t in sorted(named - set(rows))]
    out += [
        f"Make targets has a row of `make {t}`, not a target" for t in sorted(set(rows) - named)
    ]
    out += [f"Make targets has `make {t}` twice" for t in sorted(set(rows)) if rows.count(t) > 1]
    return out


def test_readme_and_makefile_agree_on_targets() -> None:
    assert readme_make(README) == []
    assert make_table(README) == []


# --- c. the configuration keys -----------------------------------------------------------------


def config_tables(text: str) -> list[str]:
    """The key tables of docs/configuration.md are the declarations': every config class has
    one table, after its ``<!-- keys: Name -->`` marker, equal to ``settings.key_table`` of
    the class."""
    out: list[str] = []
    names = re.findall(r"^<!-- keys: (\w+) -->$", text, re.M)
    for name in TABLES:
        if name not in names:
            out.append(f"{CONFIGURATION} has no table of {name}")
    for name in sorted(set(names)):
        if name not in TABLES:
            out.append(f"{CONFIGURATION} has a table of {name}, not a config class")
        elif names.count(name) > 1:
            out.append(f"{CONFIGURATION} has the table of {name} twice")
        elif table_after(text, name) != key_table(TABLES[name]):
            out.append(
                f"{CONFIGURATION}: table of {name} differs from its declarations "
                f"(python -m neardup_udfs.config {CONFIGURATION} rewrites it)"
            )
    return out


def table_after(text: str, name: str) -> str:
    """The table lines after the ``<!-- keys: name -->`` line of ``text``."""
    lines = text.split("\n")
    at = lines.index(f"<!-- keys: {name} -->") + 1
    end = at
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[at:end])


def test_conf_files_map_to_their_loaders() -> None:
    """The table above is the code's: each conf file is its job's (the job's ``JOB`` names
    the file and reads it into that dataclass, as that loader does); there is no other."""
    assert {p.name for p in (ROOT / "conf").glob("*.toml")} == set(CONF_FILES)
    for conf, (job, loader, cls) in CONF_FILES.items():
        spec = importlib.import_module(job).JOB
        assert (spec.config_file, spec.config) == (f"conf/{conf}", cls)
        assert get_type_hints(loader)["return"] is cls


def test_config_tables_match_the_declarations() -> None:
    page = PAGES[CONFIGURATION]
    assert config_tables(page) == []
    assert render_tables(page, TABLES) == page
    # the tables are on that page only: a marker elsewhere would be a second, unchecked copy
    assert [p for p, text in PAGES.items() if "<!-- keys:" in text] == [CONFIGURATION]


def test_config_main_rewrites_the_tables_and_refuses_a_page_without_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m neardup_udfs.config PAGE`` makes a stale page current; a page with no
    table (the README, out of habit) is an error that names where the tables are."""
    stale = tmp_path / "configuration.md"
    stale.write_text(drop_line(PAGES[CONFIGURATION], r"^\| `max_pixels` \|"), encoding="utf-8")
    assert write_tables([str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == PAGES[CONFIGURATION]
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    assert write_tables([str(readme)]) == 2
    assert readme.read_text(encoding="utf-8") == README
    assert "docs/configuration.md" in capsys.readouterr().err


def conf_keys(conf: Path) -> set[str]:
    """The keys ``conf`` sets, and those it shows commented out (``# key = value``)."""
    text = conf.read_text(encoding="utf-8")
    keys = set(tomllib.loads(text))
    for line in text.splitlines():
        if re.match(r"# [a-z_]+ = ", line):
            keys |= set(tomllib.loads(line[2:]))
    return keys


@pytest.mark.parametrize("conf", sorted(CONF_FILES))
def test_conf_file_shows_every_key_and_only_keys(conf: str) -> None:
    """A conf file sets or shows (commented out) each key of its job's config class, by its
    current name, and nothing else; the loader accepts it as it is."""
    _, _, cls = CONF_FILES[conf]
    path = ROOT / "conf" / conf
    assert conf_keys(path) == {k.name for k in keys_of(cls)}
    needed = {"input": "i", "output": "o", **({"pairs": "p"} if cls is SpansConfig else {})}
    load_settings(cls, str(path), **needed)  # its key and type checks


# --- d. the layout -----------------------------------------------------------------------------


def layout_entries(text: str) -> dict[str, str]:
    """The README's layout block: each entry's path (its first word) and all its text."""
    block = re.search(r"```\n(.*?)```", section(text, "Layout"), re.S)
    assert block, "README's Layout has no ``` block"
    entries: dict[str, str] = {}
    current = ""
    for line in block.group(1).splitlines():
        if line and not line[0].isspace():
            current = line.split()[0]
            entries[current] = line
        elif current:
            entries[current] += "\n" + line
    return entries


def words(text: str) -> set[str]:
    """The names ``text`` mentions: identifiers, with ``name(_jit)`` also as ``name_jit``."""
    found = set(re.findall(r"\w+", text))
    found |= {a + b for a, b in re.findall(r"(\w+)\((_\w+)\)", text)}
    return found


def readme_layout(text: str) -> list[str]:
    """The layout names every job, conf file, subdirectory and module of the package, and
    every module of each subpackage within its subpackage's entry."""
    entries = layout_entries(text)
    block = "\n".join(entries.values())
    out: list[str] = []
    if "jobs/" not in entries:
        out.append("Layout has no jobs/ entry")
    else:
        missing = {j.removesuffix(".py") for j in jobs()} - words(entries["jobs/"])
        out += [f"Layout's jobs/ omits {j}" for j in sorted(missing)]
    confs = {p.name for p in (ROOT / "conf").iterdir() if p.is_file()}
    named = set(re.findall(r"[\w.-]+", entries.get("conf/", "")))
    out += [f"Layout's conf/ omits {c}" for c in sorted(confs - named)]
    for sub in sorted(p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"):
        entry = entries.get(f"neardup_udfs/{sub.name}/")
        if entry is None:
            out.append(f"Layout has no entry neardup_udfs/{sub.name}/")
            continue
        modules = {p.stem for p in sub.glob("*.py") if p.stem != "__init__"}
        out += [f"Layout's {sub.name}/ omits {m}" for m in sorted(modules - words(entry))]
    for module in sorted(PACKAGE.glob("*.py")):
        if not re.search(
            rf"(?<![\w/]){re.escape(module.name)}\b|neardup_udfs/{module.name}", block
        ):
            out.append(f"Layout omits neardup_udfs/{module.name}")
    return out


def test_layout_parsing_sees_the_entries() -> None:
    entries = layout_entries(README)
    assert {"jobs/", "conf/", "neardup_udfs/kernels/", "neardup_udfs/stages/"} <= set(entries)
    assert "fingerprint" in words(entries["jobs/"])
    assert "featurize_jit" in words(entries["neardup_udfs/kernels/"])


def test_readme_layout_names_every_module_and_job() -> None:
    assert readme_layout(README) == []


# --- e. the links between the pages -----------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (a link's text, for a link) lower-cased, without
    punctuation but ``-`` and ``_``, each space a ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of the headings of ``text``; a repeated one is ``-1``, ``-2``, ... after the
    first, as on GitHub."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.*?)[ #]*$", without_code_blocks(text), re.M):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def links(text: str) -> list[str]:
    """The targets of the markdown links (and images) of ``text``, but in code blocks."""
    return re.findall(r"\]\(([^)\s]+)\)", without_code_blocks(text))


def broken_links(pages: Mapping[str, str]) -> list[str]:
    """Every relative link of every page leads to a file or folder of the repository, and its
    ``#anchor``, if any, to a heading of the page it leads to (``pages`` by their path from
    the root; a page not among them is read from disk)."""
    out: list[str] = []
    for path, text in pages.items():
        for target in links(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            dest = Path(os.path.normpath((ROOT / path).parent / file)) if file else ROOT / path
            if not dest.is_relative_to(ROOT) or not dest.exists():
                out.append(f"{path}: ({target}) leads nowhere")
                continue
            name = dest.relative_to(ROOT).as_posix()
            if anchor and dest.suffix == ".md":
                page = pages[name] if name in pages else dest.read_text(encoding="utf-8")
                if anchor not in anchors(page):
                    out.append(f"{path}: ({target}): {name} has no heading #{anchor}")
    return out


def back_links(pages: Mapping[str, str]) -> list[str]:
    """The README links every page of docs/, and each of them links back to the README in
    its first five lines (a title, then what the page is for)."""
    out: list[str] = []
    linked = {os.path.normpath(t.partition("#")[0]) for t in links(pages["README.md"])}
    for path, text in pages.items():
        if path == "README.md":
            continue
        if path not in linked:
            out.append(f"README.md does not link {path}")
        if "](../README.md" not in "\n".join(text.split("\n")[:5]):
            out.append(f"{path} does not link back to the README at its top")
    return out


def test_slug_is_githubs() -> None:
    assert slug("Web crawls: WARC and WET input") == "web-crawls-warc-and-wet-input"
    assert slug("Where the run works (`engine`)") == "where-the-run-works-engine"
    assert slug("The persistent index: `bench/bench_index.py`") == (
        "the-persistent-index-benchbench_indexpy"
    )
    assert anchors("# A\n```\n# not a heading\n```\n## A\n## b ##\n") == {"a", "a-1", "b"}


def test_every_link_between_the_pages_resolves() -> None:
    assert len(PAGES) > 3 and all(links(text) for text in PAGES.values())
    assert broken_links(PAGES) == []


def test_the_readme_and_the_docs_pages_link_each_other() -> None:
    assert back_links(PAGES) == []


# --- the checks fail on a page that is wrong ---------------------------------------------------


def drop_line(text: str, pattern: str) -> str:
    """``text`` without its (single) line matching ``pattern``."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    assert len(hits) == 1, (pattern, hits)
    del lines[hits[0]]
    return "".join(lines)


def replaced(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def drop(pattern: str) -> Callable[[str], str]:
    return lambda text: drop_line(text, pattern)


def swap(old: str, new: str) -> Callable[[str], str]:
    return lambda text: replaced(text, old, new)


def add(line: str) -> Callable[[str], str]:
    return lambda text: text + "\n" + line + "\n"


R, C = "README.md", CONFIGURATION
ON_ALL_PAGES: set[Callable[..., list[str]]] = {dead_jobs, broken_links, back_links}

BROKEN = [
    pytest.param(readme_jobs, R, swap("and six\nSpark jobs", "and four\nSpark jobs"),
                 "'four Spark jobs'", id="jobs-count"),
    pytest.param(readme_jobs, R, swap("`jobs/images.py`, which", "the images job, which"),
                 "the opening names jobs", id="jobs-missing"),
    pytest.param(readme_jobs, R, add("see `jobs/gone.py`"), "jobs/gone.py", id="jobs-dead"),
    pytest.param(dead_jobs, "docs/jobs.md", add("see `jobs/gone.py`"),
                 "docs/jobs.md names jobs/gone.py", id="jobs-dead-docs"),
    pytest.param(readme_make, R, lambda t: t.replace("make golden", "make goldens"),
                 "never shows `make golden`", id="make-undocumented"),
    pytest.param(readme_make, R, add("run `make deploy`"), "`make deploy`, not",
                 id="make-unknown"),
    pytest.param(make_table, R, drop(r"^\| `make clean` \|"), "no row of `make clean`",
                 id="make-row"),
    pytest.param(config_tables, C, drop(r"^\| `max_pixels` \|"),
                 "table of ImagesConfig differs", id="config-missing"),
    pytest.param(config_tables, C,
                 swap("| `top` | `--top` | `100`", "| `top_n` | `--top` | `100`"),
                 "table of BoilerplateConfig differs", id="config-dead"),
    pytest.param(config_tables, C, swap("| `max_rounds` | `--max-rounds` | `50`",
                                        "| `max_rounds` | `--max-rounds` | `40`"),
                 "table of ClusterConfig differs", id="config-default"),
    pytest.param(config_tables, C, drop(r"^<!-- keys: SpansConfig -->"),
                 "no table of SpansConfig", id="config-table"),
    pytest.param(readme_layout, R, swap("(dedup, images, index,", "(dedup, index,"),
                 "jobs/ omits images", id="layout-job"),
    pytest.param(readme_layout, R, swap("hamming_tables (multi", "tables (multi"),
                 "kernels/ omits hamming_tables", id="layout-kernel"),
    pytest.param(readme_layout, R, drop(r"^neardup_udfs/session\.py"),
                 "omits neardup_udfs/session.py", id="layout-module"),
    pytest.param(readme_layout, R, swap("fingerprint.toml (job", "(job"),
                 "conf/ omits fingerprint.toml", id="layout-conf"),
    pytest.param(broken_links, R, add("see [it](docs/gone.md)"),
                 "README.md: (docs/gone.md) leads nowhere", id="link-file"),
    pytest.param(broken_links, "docs/jobs.md", add("see [it](../../README.md)"),
                 "(../../README.md) leads nowhere", id="link-outside"),
    pytest.param(broken_links, R, add("see [it](docs/jobs.md#no-such-stage)"),
                 "docs/jobs.md has no heading #no-such-stage", id="link-anchor"),
    pytest.param(broken_links, "docs/cluster.md",
                 swap("## Where outputs go", "## Where the outputs go"),
                 "docs/cluster.md has no heading #where-outputs-go", id="link-heading"),
    pytest.param(back_links, "docs/images.md",
                 swap("Back to the [README](../README.md)", "Back to the README"),
                 "docs/images.md does not link back", id="link-back"),
    pytest.param(back_links, R, lambda t: t.replace("(docs/benchmark-summary.md)", ""),
                 "README.md does not link docs/benchmark-summary.md", id="link-page"),
]  # fmt: skip


@pytest.mark.parametrize(("check", "page", "breaks", "expected"), BROKEN)
def test_checks_fail_on_a_broken_page(
    check: Callable[[Any], list[str]], page: str, breaks: Callable[[str], str], expected: str
) -> None:
    """Each check, run on the pages with one deliberate mistake in ``page``, reports that
    mistake."""

    def run(pages: Mapping[str, str]) -> list[str]:
        return check(pages) if check in ON_ALL_PAGES else check(pages[page])

    assert not any(expected in p for p in run(PAGES))
    found = run({**PAGES, page: breaks(PAGES[page])})
    assert any(expected in p for p in found), found
