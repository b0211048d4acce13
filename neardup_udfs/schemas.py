"""Column names and schemas of everything neardup reads and writes."""

from __future__ import annotations

DOC_ID = "doc_id"
TEXT = "text"
FINGERPRINT = "fingerprint"  # bigint: the two's-complement view of the unsigned 64-bit value
FINGERPRINT_HEX = "fingerprint_hex"  # 16 lowercase hex digits
PIPELINE = "pipeline"  # the pipeline id the fingerprint was made with
REASON = "reason"
READ_ERROR = "read_error"  # set by a reader (WARC) on rows that are not documents: the reason
CORRUPT_RECORD = "_corrupt_record"  # Spark's raw JSON line that did not parse (jsonl)
SOURCE_FILE = "__source_file"  # jsonl with malformed lines: the file a row came from
SOURCE_LINE = "__source_line"  # jsonl read by neardup's own line reader: the row's line
LOST_BYTES = "lost_bytes"  # bytes of an input file a reader could not read (WARC)
# boolean, WARC: the text was decoded as the bytes say (UTF-8, a BOM) against the declared charset
CHARSET_OVERRIDDEN = "charset_overridden"

FINGERPRINTS_DDL = (
    f"{DOC_ID} string, {FINGERPRINT} bigint, {FINGERPRINT_HEX} string, {PIPELINE} string"
)
REJECTS_DDL = f"{DOC_ID} string, {REASON} string"
# 32 hex digits: xxh3-128 of the canonical form (equal = exact dups); a token-less text:
# SHA-256 of its own prepared text (stages.exact.exact_keys)
EXACT_KEY = "exact_key"
SEQ = "seq"  # bigint: an indexed document's position (batch number << 32 | rank in its batch)
INDEXED_ID = "indexed_id"  # the doc_id of an indexed document a new one duplicates
LEADER = "leader"  # the exact-duplicate group's representative for LSH (its smallest doc_id)
SIGNATURE = "signature"  # array<bigint>: a MinHash signature
BAND_KEYS = "band_keys"  # array<bigint>: a MinHash signature's LSH band keys, one per band
EMPTY_TEXT = "empty_text"  # boolean: normalization left no text (nobody's duplicate)
LENGTH = "length"  # bigint: the input text's UTF-8 bytes
CLUSTER_SIZE = "cluster_size"  # samples/: the documents of the sampled cluster
BAND = "band"
KEY = "key"  # bigint band key (MinHash) or block value (SimHash)
CHUNK = "chunk"  # int: the part of a hot bucket a group holds (0 for an ordinary bucket)
BUCKET = (BAND, KEY, CHUNK)  # where a scored candidate pair was found
A, B = "a", "b"  # a candidate or verified pair, a < b
SIMILARITY = "similarity"  # estimated or exact Jaccard
DISTANCE = "distance"  # Hamming distance
CLUSTER_ID = "cluster_id"  # the representative's doc_id
IS_REPRESENTATIVE = "is_representative"
# string, runs with containment: why a document was removed (null: kept), in clusters/ and pairs/
RELATION = "relation"
JACCARD = "jaccard"  # removed as a near-duplicate (exact copies included)
CONTAINMENT = "containment"  # removed as contained in the kept document (a containment pair)
