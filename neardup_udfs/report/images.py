"""``report.html`` of an images run: counts, stage times, the Hamming distances of the
verified pairs, and sampled clusters side by side as thumbnails.

The page is built like the dedup job's (``report.style``, ``report.sections``: its CSS,
sections, plots and helpers), with an image summary and thumbnails instead of texts. Like
the text report it loads nothing from the network and needs no JavaScript: thumbnails are
inline ``data:`` URIs (JPEG, or PNG where the picture has transparency) of at most
:data:`THUMBNAIL_PX` pixels a side, made on the executors from the sampled images only
(``runs/images.py``); every path and id is HTML-escaped.

The samples table (collected by the job, at most :data:`MEMBERS_SHOWN` members and the
representative of each sampled cluster):

======================  ================  ===============================================
column                  type              meaning
======================  ================  ===============================================
``cluster_id``          string            the cluster (its representative's path)
``path``                string            the image (a file URI, or a WARC-Record-ID)
``is_representative``   bool              the image kept for the cluster
``distance``            int               Hamming distance to the representative's pHash
``cluster_size``        bigint            the cluster's images, all of them
``thumbnail``           string, nullable  the ``data:image/...`` URI; null when none could
                                          be made (the page shows the image without one)
======================  ================  ===============================================
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from PIL import Image

from neardup_udfs.io.storage import Storage
from neardup_udfs.kernels.phash import DEFAULT_MAX_PIXELS, open_image
from neardup_udfs.report import sections
from neardup_udfs.report.data import config_of, stored_scores, write_page
from neardup_udfs.report.style import as_int, esc, html_page, section

__all__ = [
    "MEMBERS_SHOWN",
    "THUMBNAIL_PX",
    "build_image_report",
    "image_report_page",
    "thumbnail_uri",
]

MEMBERS_SHOWN = 8
"""Members shown per sampled cluster besides the representative (the farthest first)."""
THUMBNAIL_PX = 96
"""Longest side of a thumbnail, in pixels."""

_CSS = """
.thumbs { display: flex; flex-wrap: wrap; gap: .8rem; align-items: flex-start; }
figure.thumb { width: 8.5rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); padding: .4rem; }
figure.thumb.representative { border-color: #729fcf; }
figure.thumb img, figure.thumb .no-thumb { display: block; margin: 0 auto .3rem;
  max-width: 96px; max-height: 96px; }
figure.thumb .no-thumb { width: 96px; height: 64px; line-height: 64px; text-align: center;
  color: var(--muted); font-size: .8em; border: 1px dashed var(--line); }
figure.thumb figcaption { font-size: .8em; overflow-wrap: anywhere; }
"""

_COUNT_ROWS = (
    ("Input images", "input", "files, or image records of WARC files"),
    ("Rejected", "rejected", "not an image, unsupported, corrupt, too large"),
    ("Hashed", "hashed", "images with a pHash"),
    ("Identical hashes", "identical", "removed or kept with an image of the same pHash"),
    ("Near duplicates removed", "near-duplicates", "removed − identical hashes"),
    ("Removed in total", "removed", ""),
    ("Fraction removed", "fraction-removed", "removed / input"),
    ("Kept", "kept", ""),
    ("Candidate pairs", "candidates", "pairs sharing a pHash block"),
    ("Verified pairs", "verified", "candidates within k bits"),
    ("Clusters (2+ images)", "clusters", ""),
    *sections.CLUSTER_COUNT_ROWS,
)


# --- thumbnails (on the executors) -----------------------------------------------------------


def thumbnail_uri(
    data: bytes, *, size: int = THUMBNAIL_PX, max_pixels: int = DEFAULT_MAX_PIXELS
) -> str | None:
    """A ``data:image/jpeg`` (or ``image/png`` when the picture has transparency) URI of the
    image's first frame scaled to at most ``size`` pixels a side; None when none can be made.

    Notes:
        The image is opened after the hash's own checks (``phash.open_image``: format, each
        format's header, ``max_pixels``), so it decodes nothing the hash would not; JPEGs are
        decoded at a reduced scale. Any failure gives None: a thumbnail never fails a run.
    """
    try:
        im = open_image(data, max_pixels=max_pixels)
        im.draft("RGB", (2 * size, 2 * size))  # JPEG: libjpeg's DCT scaling, cheap
        im.thumbnail((size, size))
        alpha = im.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in im.info
        if im.mode.startswith("I"):  # 16-bit grey: its high byte
            im = Image.fromarray((np.asarray(im).astype(np.uint32) >> 8).astype(np.uint8))
        out = im.convert("RGBA" if alpha else "RGB")
        buf = io.BytesIO()
        if alpha:
            out.save(buf, "PNG", optimize=True)
        else:
            out.save(buf, "JPEG", quality=80)
    except Exception:  # noqa: BLE001 -- a picture is a nicety: never fail the run for it
        return None
    kind = "png" if alpha else "jpeg"
    return f"data:image/{kind};base64," + base64.b64encode(buf.getvalue()).decode("ascii")


# --- the page ----------------------------------------------------------------------------------


@dataclass
class Shown:
    """One image of a sampled cluster."""

    path: str
    distance: int | None
    thumbnail: str | None


@dataclass
class Cluster:
    """A sampled cluster: its representative (if sampled), members shown and size."""

    cluster_id: str
    size: int
    representative: Shown | None
    members: list[Shown]


def _clusters(table: pa.Table) -> list[Cluster]:
    groups: dict[str, Cluster] = {}
    for row in table.to_pylist():
        cid = str(row["cluster_id"])
        size = as_int(row.get("cluster_size"))
        group = groups.setdefault(cid, Cluster(cid, size or 0, None, []))
        thumb = row.get("thumbnail")
        image = Shown(
            str(row["path"]),
            as_int(row.get("distance")),
            thumb if isinstance(thumb, str) and thumb.startswith("data:image/") else None,
        )
        if row.get("is_representative") and group.representative is None:
            group.representative = image
        else:
            group.members.append(image)
    for g in groups.values():
        g.size = max(g.size, len(g.members) + (g.representative is not None))
        g.members.sort(key=lambda m: (m.distance is None, -(m.distance or 0), m.path))
        del g.members[MEMBERS_SHOWN:]
    return sorted(groups.values(), key=lambda g: (-g.size, g.cluster_id))


def _name(path: str) -> str:
    """The last part of a path (a WARC-Record-ID stays whole)."""
    return path.rstrip("/").rsplit("/", 1)[-1] or path


def _figure(image: Shown, representative: bool) -> str:
    role = "representative" if representative else "member"
    label = (
        "representative (kept)"
        if representative
        else (
            f"Hamming distance {image.distance}"
            if image.distance is not None
            else "distance unknown"
        )
    )
    alt = f"{_name(image.path)}, {label}"
    picture = (
        f'<img class="thumb" src="{esc(image.thumbnail)}" alt="{esc(alt)}">'
        if image.thumbnail is not None
        else '<div class="no-thumb">no picture</div>'
    )
    distance = "" if image.distance is None else f' data-distance="{image.distance}"'
    return (
        f'<figure class="thumb {role}" data-path="{esc(image.path)}"{distance}>{picture}'
        f'<figcaption><code title="{esc(image.path)}">{esc(_name(image.path))}</code><br>'
        f'<span class="meta">{esc(label)}</span></figcaption></figure>'
    )


def _cluster_view(cluster: Cluster, index: int) -> str:
    figures = [_figure(cluster.representative, True)] if cluster.representative else []
    figures += [_figure(m, False) for m in cluster.members]
    more = cluster.size - len(figures)
    if more > 0:
        figures.append(f'<p class="more-members">… and {more:,} more image(s) not shown.</p>')
    cid = esc(cluster.cluster_id)
    return (
        f'<section class="cluster" id="cluster-{index}" data-cluster-id="{cid}">'
        f'<h3>Cluster <code>{esc(_name(cluster.cluster_id))}</code> <span class="meta">'
        f'{cluster.size:,} images</span></h3><div class="thumbs">{"".join(figures)}</div></section>'
    )


def _side_by_side(samples: pa.Table | None) -> str:
    title = "Clusters side by side"
    if samples is None:
        note = (
            '<p class="empty" id="no-samples">No sampled clusters: the job could not collect'
            " them (its log says why).</p>"
        )
        return section("clusters", title, note)
    clusters = _clusters(samples)
    if not clusters:
        body = '<p class="empty" id="no-samples">No cluster has two or more images.</p>'
        return section("clusters", title, body)
    intro = (
        f'<p class="caption">The largest clusters and a reproducible sample of the others;'
        f" the representative (kept) first, then up to {MEMBERS_SHOWN} members, the farthest"
        f" from it first, with the Hamming distance of their pHash to its. Thumbnails at most"
        f" {THUMBNAIL_PX} pixels a side, of the first frame.</p>"
    )
    views = "".join(_cluster_view(c, i) for i, c in enumerate(clusters, 1))
    return section("clusters", title, intro + views)


def build_image_report(report: Mapping[str, Any], samples: pa.Table | None, where: str) -> str:
    """The HTML of an images run's ``report.html``: from its report (counts, seconds,
    cluster size histogram, ``scores`` of the verified distances, hot buckets, config) and
    ``samples`` (the table described in the module docstring, or None)."""
    config = config_of(report)
    _, scores = stored_scores(report) or ("distance", None)
    parts = [
        sections.summary_section(report, _COUNT_ROWS, "identical"),
        sections.timings_section(report),
        sections.plots_section(report, "distance", scores, bands=False),
        _side_by_side(samples),
        sections.hot_buckets_section(report),
        sections.config_section(report),
    ]
    subtitle = f"pHash near-duplicate images of {config.get('input', '?')} → {where}"
    return html_page("neardup image report", subtitle, parts, extra_css=_CSS)


def image_report_page(samples: pa.Table | None) -> Callable[[Storage, str, dict[str, Any]], str]:
    """The images job's ``report.html`` writer (``io.report_files.write_report``'s page), written
    through the job's storage; ``samples`` is the collected samples table (bounded rows)."""

    def write_image_report(store: Storage, output: str, report: dict[str, Any]) -> str:
        return write_page(store, output, build_image_report(report, samples, output))

    return write_image_report
