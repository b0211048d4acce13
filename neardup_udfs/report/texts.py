"""Member texts on the dedup page: sample clusters side by side, the passages each member
shares with its representative marked.

Shared passages are found as the spans job finds them (``kernels.winnow.overlaps`` with
k = :data:`WINNOW_K`, w = :data:`WINNOW_W` bytes of the UTF-8 text), widened to whole
characters and merged. A cluster shows its representative and at most
``data.MEMBERS_SHOWN`` members, least similar first; a text is shown up to
:data:`TEXT_LIMIT` characters (cut at a space near the limit when there is one), with a note
counting the rest. Every text and id is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from neardup_udfs.config import KGRAM_BYTES, WINDOW
from neardup_udfs.kernels import winnow
from neardup_udfs.report.data import MEMBERS_SHOWN, Doc, Output, Sample, Samples, cluster_sizes
from neardup_udfs.report.style import esc, fmt_pct, section

__all__ = ["TEXT_LIMIT", "WINNOW_K", "WINNOW_W", "side_by_side_section"]


TEXT_LIMIT = 4000
"""Characters of a document shown; the rest is replaced by a "… (N more characters)" note."""
WINNOW_K, WINNOW_W = KGRAM_BYTES, WINDOW  # overlaps are highlighted as the spans job finds them


Ranges = list[tuple[int, int]]
Segments = list[tuple[str, bool]]


# --- shared passages ------------------------------------------------------------------------------


def _snap(data: bytes, lo: int, hi: int) -> tuple[int, int]:
    """Byte range [lo, hi) clipped to ``data`` and widened to whole UTF-8 characters."""
    n = len(data)
    lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
    while 0 < lo < n and data[lo] & 0xC0 == 0x80:
        lo -= 1
    while hi < n and data[hi] & 0xC0 == 0x80:
        hi += 1
    return lo, hi


def _merge(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, non-overlapping, non-adjacent ranges covering the non-empty input ranges."""
    out: Ranges = []
    for lo, hi in sorted(ranges):
        if lo >= hi:
            continue
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _shared_ranges(rep: bytes, member: bytes) -> tuple[Ranges, Ranges]:
    """Byte ranges (in rep, in member) of the passages they share, character-aligned."""
    spans = winnow.overlaps(rep, member, WINNOW_K, WINNOW_W)
    in_rep = [_snap(rep, s.pos_a, s.pos_a + s.length) for s in spans]
    in_member = [_snap(member, s.pos_b, s.pos_b + s.length) for s in spans]
    return _merge(in_rep), _merge(in_member)


def _segments(data: bytes, ranges: Ranges) -> Segments:
    """``data`` decoded as (text, marked) pieces; ``ranges`` must be merged and aligned."""
    out: Segments = []
    at = 0
    for lo, hi in ranges:
        if lo > at:
            out.append((data[at:lo].decode("utf-8", errors="replace"), False))
        out.append((data[lo:hi].decode("utf-8", errors="replace"), True))
        at = hi
    if at < len(data):
        out.append((data[at:].decode("utf-8", errors="replace"), False))
    return out


def _cut_point(text: str, limit: int) -> int:
    """Where to cut ``text`` to at most ``limit`` characters: at a space near the limit if any."""
    space = max(text.rfind(" ", limit - limit // 10, limit), text.rfind("\n", 0, limit))
    return space + 1 if space >= limit - limit // 10 else limit


def _truncate(segments: Segments, limit: int) -> tuple[Segments, int]:
    """The first characters of ``segments`` (at most ``limit``) and how many were left out."""
    total = sum(len(s) for s, _ in segments)
    if total <= limit:
        return segments, 0
    cut = _cut_point("".join(s for s, _ in segments), limit)
    out: Segments = []
    left = cut
    for text, marked in segments:
        if left <= 0:
            break
        out.append((text[:left], marked))
        left -= len(text)
    return out, total - cut


def _encode(text: str) -> bytes:
    """Text as the winnowing kernel sees it (UTF-8, lone surrogates as their 3-byte form)."""
    return text.encode("utf-8", errors="surrogatepass")


def _doc_text(segments: Segments, truncated: bool) -> str:
    """A document's text block: escaped, marks for shared passages, truncation notes."""
    shown, hidden = _truncate(segments, TEXT_LIMIT)
    body = "".join(f"<mark>{esc(text)}</mark>" if marked else esc(text) for text, marked in shown)
    if hidden:
        body += f'<span class="more">… ({hidden:,} more characters)</span>'
    if truncated:
        body += '<span class="more">[text truncated by the job]</span>'
    return f'<div class="doc-text">{body}</div>'


def _score_label(metric: str | None, score: float | None, relation: str | None = None) -> str:
    if score is None or metric is None:
        return ""
    if metric == "distance":
        return f"Hamming distance {score:g}"
    if relation == "containment":
        return f"contained {score:.3f} (its shingles inside the representative)"
    return f"Jaccard {score:.3f}"


def _member(doc: Doc, metric: str | None, rep_bytes: bytes | None) -> tuple[str, Ranges]:
    """A member's article, and the rep's byte ranges it shares (for marking the rep)."""
    data = _encode(doc.text)
    in_rep, in_member = _shared_ranges(rep_bytes, data) if rep_bytes else ([], [])
    segments = _segments(data, in_member)
    marked = sum(len(t) for t, m in segments if m)
    total = sum(len(t) for t, _ in segments)
    share = f"shares {marked:,} of {total:,} characters ({fmt_pct(marked, total)})"
    label = " · ".join(x for x in (_score_label(metric, doc.score, doc.relation), share) if x)
    article = (
        f'<article class="doc member" data-doc-id="{esc(doc.doc_id)}"><header>'
        f'<code class="doc-id">{esc(doc.doc_id)}</code> <span class="meta">{esc(label)}'
        f"</span></header>{_doc_text(segments, doc.truncated)}</article>"
    )
    return article, in_rep


def _member_order(metric: str | None) -> Callable[[Doc], tuple[bool, float, str]]:
    """Sort key for members: the least similar first (the ones worth checking), then id."""

    def key(doc: Doc) -> tuple[bool, float, str]:
        if doc.score is None:
            return True, 0.0, doc.doc_id
        return False, (-doc.score if metric == "distance" else doc.score), doc.doc_id

    return key


def _cluster_view(sample: Sample, size: int, metric: str | None, index: int) -> str:
    """One side-by-side cluster: the representative left, up to MEMBERS_SHOWN members right."""
    rep = sample.representative
    rep_bytes = _encode(rep.text) if rep is not None else None
    members = sorted(sample.members, key=_member_order(metric))[:MEMBERS_SHOWN]
    articles, rep_ranges = [], []
    for doc in members:
        article, ranges = _member(doc, metric, rep_bytes)
        articles.append(article)
        rep_ranges.extend(ranges)
    more = max(size - 1 - len(members), 0)
    if more:
        articles.append(f'<p class="more-members">… and {more:,} more member(s) not shown.</p>')
    if rep is None or rep_bytes is None:
        left = '<p class="empty">The representative\'s text is not in samples/.</p>'
    else:
        left = (
            f'<article class="doc representative" data-doc-id="{esc(rep.doc_id)}"><header>'
            f'<code class="doc-id">{esc(rep.doc_id)}</code> <span class="meta">representative'
            f" (kept)</span></header>"
            f"{_doc_text(_segments(rep_bytes, _merge(rep_ranges)), rep.truncated)}</article>"
        )
    return (
        f'<section class="cluster" id="cluster-{index}"'
        f' data-cluster-id="{esc(sample.cluster_id)}">'
        f'<h3>Cluster <code>{esc(sample.cluster_id)}</code> <span class="meta">{size:,}'
        f' documents</span></h3><div class="side-by-side"><div class="rep-col">{left}</div>'
        f'<div class="member-col">{"".join(articles)}</div></div></section>'
    )


def side_by_side_section(out: Output | None, samples: Samples | None) -> str:
    """Section 4: sample clusters side by side (or why there are none). ``out``, the output
    directory (None for the job's own writer), gives the sizes of clusters ``samples``
    does not carry."""
    title = "Clusters side by side"
    if samples is None:
        note = (
            '<p class="empty" id="no-samples">Side-by-side views need the job\'s samples output'
            " (a samples/ directory in the output); this run has none.</p>"
        )
        return section("clusters", title, note)
    metric, groups = samples
    unsized = [s.cluster_id for s in groups if s.size is None]
    sizes = cluster_sizes(out, unsized) if unsized and out is not None else {}

    def size(s: Sample) -> int:
        if s.size is not None:
            return s.size
        return sizes.get(s.cluster_id, len(s.members) + (s.representative is not None))

    groups = sorted(groups, key=lambda s: (-size(s), s.cluster_id))
    if not groups:
        return section("clusters", title, '<p class="empty">samples/ holds no clusters.</p>')
    intro = (
        '<p class="caption">Marked passages (<mark>like this</mark>) are shared with the'
        f" representative (winnowing, k = {WINNOW_K}, w = {WINNOW_W} bytes; edges are"
        f" approximate). Up to {MEMBERS_SHOWN} members per cluster, least similar first;"
        f" texts are cut after {TEXT_LIMIT:,} characters.</p>"
    )
    views = "".join(_cluster_view(s, size(s), metric, i) for i, s in enumerate(groups, 1))
    return section("clusters", title, intro + views)
