"""What the job tests share whichever job they run: the settings that read JSON lines of
``url`` and ``body``, a folder of text files by name, and a run that must leave nothing
cached in the session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# a job reads JSON lines whose records hold the id in ``url`` and the text in ``body``
URL_BODY: dict[str, Any] = {"input_format": "jsonl", "id_col": "url", "text_col": "body"}


def write_texts(root: Path, texts: dict[str, str]) -> Path:
    """``root``, holding each text of ``texts`` in the file its name gives (a path relative
    to ``root``; folders made as needed)."""
    for name, text in texts.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def run_released(spark, job: Any, cfg: Any) -> Any:  # type: ignore[no-untyped-def]
    """``job.run(spark, cfg)``'s summary; checks that the run left nothing cached."""
    summary = job.run(spark, cfg)
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()
    return summary
