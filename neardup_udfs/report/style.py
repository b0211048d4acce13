"""The report pages' look and small HTML helpers: the inline CSS, the page skeleton with its
navigation, sections, plot ``<img>`` tags, escaping and the formatting of counts.

Shared by the dedup page (``report.page``) and the images page (``report.images``). The helpers
HTML-escape every text and attribute value they are given (quotes included), except an image's
``data:`` URI; the page they make has no scripts and no external URLs.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["as_int", "esc", "fact_list", "fmt_int", "fmt_pct", "html_page", "plot_img", "section"]


def esc(value: object) -> str:
    """``str(value)`` HTML-escaped, quotes included (safe in text and attribute values)."""
    return html.escape(str(value), quote=True)


def as_int(value: object) -> int | None:
    """An int count, or None when the value is missing or not an integer."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


def fmt_int(value: int | None) -> str:
    """A count with thousands separated; a dash for None."""
    return "—" if value is None else f"{value:,}"


def fmt_pct(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` to two decimals; a dash when ``whole`` is not
    positive."""
    return f"{100 * part / whole:.2f} %" if whole > 0 else "—"


def plot_img(plot_id: str, uri: str, alt: str, metric: str = "") -> str:
    """A plot's ``<img class="plot">`` showing the data URI ``uri`` (``data-metric`` if
    ``metric``)."""
    extra = f' data-metric="{esc(metric)}"' if metric else ""
    return f'<img id="{esc(plot_id)}" class="plot"{extra} src="{uri}" alt="{esc(alt)}">'


def section(section_id: str, title: str, body: str) -> str:
    """A ``<section>`` with its ``<h2>`` title; ``body`` is HTML, put in as given."""
    return f'<section id="{esc(section_id)}"><h2>{esc(title)}</h2>{body}</section>'


def fact_list(facts: Iterable[tuple[str, str, object]]) -> str:
    """A ``<dl class="facts">`` of (label, id, value): each value in a ``<code>`` of that id."""
    dl = "".join(
        f'<dt>{esc(label)}</dt><dd><code id="{esc(i)}">{esc(value)}</code></dd>'
        for label, i, value in facts
    )
    return f'<dl class="facts">{dl}</dl>'


_CSS = """
:root { --fg: #1d1f21; --muted: #5c6166; --line: #d8dadd; --bg: #ffffff; --panel: #f6f7f8;
  --accent: #204a87; --mark: #fce94f; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem 1.5rem 4rem; }
header.page h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
header.page p { margin: 0; color: var(--muted); }
nav { margin: 1rem 0 0; display: flex; flex-wrap: wrap; gap: .4rem 1rem; }
nav a { color: var(--accent); text-decoration: none; }
nav a:hover { text-decoration: underline; }
section { margin-top: 2.2rem; }
h2 { font-size: 1.25rem; border-bottom: 2px solid var(--line); padding-bottom: .3rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .5rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { padding: .3rem .75rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
thead th { background: var(--panel); }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.note, .caption, .meta { color: var(--muted); font-size: .9em; }
tr.used { font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: .9em; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: .8rem 1rem; overflow-x: auto; }
.pair, .plots { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
figure { margin: 0; }
img.plot { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.empty { color: var(--muted); font-style: italic; }
.cluster { border: 1px solid var(--line); border-radius: 8px; padding: .2rem 1rem 1rem;
  margin-top: 1.2rem; }
.side-by-side { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
@media (max-width: 800px) { .side-by-side { grid-template-columns: 1fr; } }
.rep-col .doc { position: sticky; top: .5rem; border-color: #729fcf; }
.doc { border: 1px solid var(--line); border-radius: 6px; background: var(--panel);
  margin-bottom: .8rem; }
.doc header { padding: .4rem .7rem; border-bottom: 1px solid var(--line); }
.doc-text { padding: .6rem .7rem; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 28rem; overflow-y: auto; font-size: .92em; }
mark { background: var(--mark); color: inherit; padding: 0; }
.more { display: block; margin-top: .4rem; color: var(--muted); font-style: italic; }
.more-members { color: var(--muted); }
"""

_NAV = (
    ("summary", "Summary"),
    ("timings", "Timings"),
    ("plots", "Distributions"),
    ("clusters", "Clusters"),
    ("hot-buckets", "Hot buckets"),
    ("config", "Configuration"),
)


def html_page(
    title: str,
    subtitle: str,
    sections: Sequence[str],
    extra_nav: Sequence[tuple[str, str]] = (),
    extra_css: str = "",
) -> str:
    """A whole report page: the inline CSS (and ``extra_css``), a header with its title,
    subtitle and navigation (the usual entries, ``extra_nav``'s after Summary), then
    ``sections`` (HTML, put in as given)."""
    entries = (*_NAV[:1], *extra_nav, *_NAV[1:])
    nav = "".join(f'<a href="#{esc(i)}">{esc(label)}</a>' for i, label in entries)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_CSS}{extra_css}</style></head><body><main>"
        f'<header class="page"><h1>{esc(title)}</h1><p>{esc(subtitle)}</p>'
        f"<nav>{nav}</nav></header>{''.join(sections)}</main></body></html>\n"
    )
