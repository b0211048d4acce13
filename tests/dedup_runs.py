"""What several dedup test files share: token-less texts and worded ones, a parametrization
over every text pipeline, and one run of the dedup job on a folder of JSON lines (every
output written, or conf/dedup.toml's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dedup as dedup_job
import pytest
from job_runs import URL_BODY, run_released

from neardup_udfs.config import load_config

ROOT = Path(__file__).resolve().parent.parent

# texts without a word token: the preset's canonical form (its token sequence) is empty
TOKEN_LESS = [
    ("emoji", "\U0001f600\U0001f600\U0001f389"),
    ("cjk-punctuation", "\u3002\u3001\u300c\u300d"),
    ("symbols", "+++ ### ~~~"),
    ("arrows-1", "\u2192 \u2190 \u2194 \u2713"),
    ("arrows-2", "\u2192 \u2190 \u2194 \u2713"),  # byte-identical to arrows-1
]
WORDED = [("story-1", "The harbour storm closed the bridge."), ("story-2", "the harbour storm")]
EVERY_OUTPUT = ("docs", "clusters", "pairs", "rejects", "samples")
TEXT_PRESETS = ["semblance", "semblance-simhash", "ditto/2", "fingerprint", "anchor"]


def every_text_pipeline(test: Any) -> Any:
    """Parametrize ``test`` over every text preset, with and without web normalization."""
    by_normalize = pytest.mark.parametrize("normalize", ["web", "none"])
    return by_normalize(pytest.mark.parametrize("preset", TEXT_PRESETS)(test))


def run_dedup(spark, src: Path, out: Path, **overrides: Any) -> dedup_job.Summary:  # type: ignore[no-untyped-def]
    """One run of the job writing every output (``overrides`` may name the outputs too);
    checks that it leaves nothing cached behind."""
    return run_shipped_dedup(spark, src, out, **{"outputs": EVERY_OUTPUT, **overrides})


def run_shipped_dedup(spark, src: Path, out: Path, **overrides: Any) -> dedup_job.Summary:  # type: ignore[no-untyped-def]
    """One run of the job on conf/dedup.toml as shipped (its outputs too) but for
    ``overrides``, over JSON lines of ``url`` and ``body``; checks that it leaves nothing
    cached behind."""
    cfg = load_config(
        str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **URL_BODY, **overrides
    )
    return run_released(spark, dedup_job, cfg)
