"""Column names and schemas of everything neardup reads and writes."""

from __future__ import annotations

DOC_ID = "doc_id"
TEXT = "text"
FINGERPRINT = "fingerprint"  # bigint: the two's-complement view of the unsigned 64-bit value
FINGERPRINT_HEX = "fingerprint_hex"  # 16 lowercase hex digits
PIPELINE = "pipeline"  # the pipeline id the fingerprint was made with
REASON = "reason"

FINGERPRINTS_DDL = (
    f"{DOC_ID} string, {FINGERPRINT} bigint, {FINGERPRINT_HEX} string, {PIPELINE} string"
)
REJECTS_DDL = f"{DOC_ID} string, {REASON} string"
