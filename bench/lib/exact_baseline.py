"""The exact single-core baseline of the dense benches (issue 39): what a user would write
instead of the job, in plain Python on one core: every pair of documents with word 3-shingle
Jaccard >= the threshold, found exactly, then one greedy pass that keeps a document per group.

FROZEN: this file is not changed once written, so that its figures stay comparable; bench
figures quote its git commit (``git log -1 --format=%h -- bench/lib/exact_baseline.py``, or
"uncommitted" while it has changes not committed). A better baseline is a new file.

    python bench/lib/exact_baseline.py --input corpus.jsonl --output kept.txt
        [--removed removed.tsv] [--threshold 0.7] [--order min_id]

Python and its standard library only (no numpy, nothing of the project), one process, one
core. Steps:

1. read the JSON lines ``{"doc_id", "text"}`` of ``--input``;
2. shingles: the text lowercased, its words ``re.findall(r"\\w+", text)``, its shingles the
   set of its word 3-grams; a text of 1 or 2 words has one shingle, its whole word tuple;
   a text without words has none, and an empty set is near nothing;
3. all pairs with Jaccard >= t (t an exact fraction: 0.7 is 7/10) by prefix filtering:
   shingles numbered by their number of documents, rarest first (ties by the shingle), each
   set a sorted list of those numbers; documents in order of size; each document probes an
   inverted index with its prefix (its first ``|x| - ceil(t|x|) + 1`` shingles), candidates
   are earlier (so not larger) documents with ``|y| >= t|x|``, each verified exactly
   (``|x & y| / |x | y|`` on Python sets), then its prefix joins the index. Lossless: two
   sets with J >= t share a shingle within both prefixes;
4. the greedy pass in the representative rule's order (``min_id``: ascending doc_id): a
   document not removed when its turn comes is kept, and each of its neighbours (pairs of
   step 3) not decided yet is removed in its place; every removed document is near the
   document kept in its place, and no two kept documents are near (J >= t);
5. ``--output``: the kept doc_ids, one a line, in that order; ``--removed`` (default: the
   output's name + ``.removed.tsv``): ``removed_id<TAB>kept_id`` lines. Counts and seconds
   go to stderr, and one JSON line with them as the last line of stderr.
"""

import argparse
import json
import re
import sys
import time
from collections import Counter
from fractions import Fraction

WORD = re.compile(r"\w+")
ORDERS = ("min_id",)


def shingle_set(text):
    words = WORD.findall(text.lower())
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def ceil_times(t, size):
    """ceil(t * size) for a Fraction t, exactly."""
    return -(-t.numerator * size // t.denominator)


def all_pairs(sets, t):
    """Every pair (y, x), y != x, with Jaccard(sets[y], sets[x]) >= t, each pair once.
    Consumes ``sets`` (each set is replaced by None once ranked, to free its tuples)."""
    frequency = Counter(s for shingles in sets for s in shingles)
    rank = {s: r for r, s in enumerate(sorted(frequency, key=lambda s: (frequency[s], s)))}
    frequency.clear()
    prefixes, as_sets = [], []
    for k, shingles in enumerate(sets):
        ranks = sorted(rank[s] for s in shingles)  # rarest first
        prefixes.append(ranks[: len(ranks) - ceil_times(t, len(ranks)) + 1])
        as_sets.append(set(ranks))
        sets[k] = None
    rank.clear()
    order = sorted(
        (i for i in range(len(as_sets)) if as_sets[i]), key=lambda i: (len(as_sets[i]), i)
    )
    index = {}  # shingle -> documents (in size order) with it in their prefix
    start = {}  # shingle -> first entry of index[shingle] not too small any more
    pairs = []
    num, den = t.numerator, t.denominator
    for x in order:
        sx = as_sets[x]
        size = len(sx)
        smallest = ceil_times(t, size)  # |y| >= t|x|
        candidates = set()
        for tok in prefixes[x]:
            entries = index.get(tok)
            if entries is None:
                continue
            k = start.get(tok, 0)
            while k < len(entries) and len(as_sets[entries[k]]) < smallest:
                k += 1
            start[tok] = k
            candidates.update(entries[k:])
        for y in candidates:
            sy = as_sets[y]
            inter = len(sx & sy)
            if den * inter >= num * (size + len(sy) - inter):
                pairs.append((y, x))
        for tok in prefixes[x]:
            index.setdefault(tok, []).append(x)
    return pairs


def greedy(ids, pairs, order):
    """(kept, removed) of the greedy pass: kept indices in turn, (removed, kept) pairs."""
    if order != "min_id":
        raise ValueError(f"unknown order {order!r}: one of {ORDERS}")
    neighbours = [[] for _ in ids]
    for a, b in pairs:
        neighbours[a].append(b)
        neighbours[b].append(a)
    state = bytearray(len(ids))  # 0 undecided, 1 kept, 2 removed
    kept, removed = [], []
    for i in sorted(range(len(ids)), key=lambda i: ids[i]):
        if state[i]:
            continue  # removed in the place of a document kept before it
        state[i] = 1
        kept.append(i)
        for j in neighbours[i]:
            if not state[j]:
                state[j] = 2
                removed.append((j, i))
    return kept, removed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True, help="JSON lines {doc_id, text}")
    p.add_argument("--output", required=True, help="kept doc_ids, one a line")
    p.add_argument("--removed", help="removed_id<TAB>kept_id lines (default: OUTPUT.removed.tsv)")
    p.add_argument("--threshold", default="0.7", help="Jaccard threshold (default 0.7)")
    p.add_argument("--order", default="min_id", choices=ORDERS, help="representative rule")
    args = p.parse_args(argv)
    t = Fraction(args.threshold)
    seconds = {}
    started = clock = time.perf_counter()

    def lap(name):
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = round(now - clock, 2)
        clock = now

    ids, texts = [], []
    with open(args.input, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                ids.append(str(row["doc_id"]))
                texts.append(row["text"] or "")
    lap("read")
    sets = [shingle_set(text) for text in texts]
    del texts
    without_shingles = sum(not s for s in sets)
    lap("shingles")
    pairs = all_pairs(sets, t)  # consumes sets
    lap("pairs")
    kept, removed = greedy(ids, pairs, args.order)
    lap("greedy")
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.writelines(ids[i] + "\n" for i in kept)
    with open(args.removed or args.output + ".removed.tsv", "w", encoding="utf-8") as fh:
        fh.writelines(f"{ids[j]}\t{ids[i]}\n" for j, i in removed)
    lap("write")
    total = round(time.perf_counter() - started, 2)
    counts = {
        "docs": len(ids),
        "without_shingles": without_shingles,
        "pairs": len(pairs),
        "kept": len(kept),
        "removed": len(removed),
    }
    print(
        f"exact_baseline: {counts['docs']} docs, {counts['pairs']} pairs J >= {t}, "
        f"{counts['kept']} kept, {counts['removed']} removed; seconds {seconds}, total {total}",
        file=sys.stderr,
    )
    figures = {"threshold": str(t), "order": args.order, **counts}
    print(json.dumps(figures | {"seconds": seconds, "total_seconds": total}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
