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
LEADER = "leader"  # the exact-duplicate group's representative for LSH (its smallest doc_id)
SIGNATURE = "signature"  # array<bigint>: a MinHash signature
BAND = "band"
KEY = "key"  # bigint band key (MinHash) or block value (SimHash)
A, B = "a", "b"  # a candidate or verified pair, a < b
SIMILARITY = "similarity"  # estimated or exact Jaccard
DISTANCE = "distance"  # Hamming distance
CLUSTER_ID = "cluster_id"  # the representative's doc_id
IS_REPRESENTATIVE = "is_representative"
