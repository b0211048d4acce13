"""``report.html``: a self-contained, readable page about one job's output directory.

The page loads nothing from the network and needs no JavaScript (plots and thumbnails are
inline ``data:`` URIs, the CSS is inline) and HTML-escapes every text, id and config value.
One module per part:

- ``data``: reading a dedup output directory through storage (report.json, the parquet
  datasets; :class:`ReportError`) and the bounded tables the page shows.
- ``plots``: the figures, as inline SVG data URIs (drawn here, no plotting library).
- ``style``: the CSS, the page skeleton and small HTML helpers.
- ``sections``: the sections both pages share (facts, timings, plots, hot buckets, config).
- ``texts``: member texts side by side, the passages shared with the representative marked.
- ``page``: the dedup job's page and its entry points (:func:`build_report`,
  :func:`write_report_html`, :func:`report_page`).
- ``images``: the images job's page, thumbnails instead of texts.

:data:`MEMBERS_SHOWN` here is the dedup page's; the images page's own is
``report.images.MEMBERS_SHOWN``.
"""

from neardup_udfs.report.data import MEMBERS_SHOWN, SIMILARITY_STEPS, ReportError
from neardup_udfs.report.images import build_image_report, image_report_page, thumbnail_uri
from neardup_udfs.report.page import build_report, report_page, write_report_html
from neardup_udfs.report.texts import TEXT_LIMIT, WINNOW_K, WINNOW_W

__all__ = [
    "MEMBERS_SHOWN",
    "SIMILARITY_STEPS",
    "TEXT_LIMIT",
    "WINNOW_K",
    "WINNOW_W",
    "ReportError",
    "build_image_report",
    "build_report",
    "image_report_page",
    "report_page",
    "thumbnail_uri",
    "write_report_html",
]
