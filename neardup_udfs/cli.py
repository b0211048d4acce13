"""The ``neardup`` command: fingerprint and cluster files on one machine (mirrors ditto's CLI).

Also semblance's MOSS winnowing (``winnow``, ``overlaps``, ``cover``) over raw file bytes.

Exit status: 0 on success; 2 when any path could not be read or an option is wrong (each
problem is one line on stderr; the readable inputs are still processed and printed). Inside a
directory, a dangling symlink, a symlink loop or a subdirectory that cannot be listed is such
a path; an entry skipped on purpose (a symlink to a directory, a special file) is one notice
line on stderr and leaves the status alone.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import numpy as np

from neardup_udfs import __version__
from neardup_udfs.index.store import IndexStoreError, pipeline_of
from neardup_udfs.io.report_files import MANIFEST_NAME
from neardup_udfs.kernels import hamming_index, minhash, winnow
from neardup_udfs.kernels.simhash import format_hex
from neardup_udfs.presets import Pipeline, PresetError, get_preset, preset_names, resolve

if TYPE_CHECKING:
    from neardup_udfs.io.storage import ArrowStorage

__all__ = ["main"]

EXIT_OK = 0
EXIT_USAGE = 2
STDIN_ID = "stdin"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"neardup: error: {message}\n")


class _OldFlag(argparse.Action):
    """A flag's deprecated old name: it sets what the new flag sets, after a line on stderr
    naming the new flag."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, help=f"deprecated: {new}", **kw)
        self.new = new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        _say([f"{option_string} is deprecated: use {self.new}"])
        setattr(namespace, self.dest, values)


def _renamed_flag(
    p: argparse.ArgumentParser, new: str, old: str, *, required: bool = False, **kw: Any
) -> None:
    """The flag ``new`` (argparse ``kw``) and its old name ``old``, which still works
    (:class:`_OldFlag`); giving both is an error; ``required``: one of them must be given."""
    both = p.add_mutually_exclusive_group(required=required)
    dest = both.add_argument(new, **kw).dest
    same: dict[str, Any] = {"type": kw.get("type"), "metavar": kw.get("metavar")}
    both.add_argument(old, dest=dest, action=_OldFlag, new=new, default=argparse.SUPPRESS, **same)


@dataclass
class Inputs:
    """Documents read from the command line, in argument order; the paths that failed
    (``errors``: exit status 2) and the entries skipped on purpose (``notices``: the status
    stays 0), one line each, naming the path."""

    docs: list[tuple[str, bytes]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def _cannot_read(path: str, reason: str) -> str:
    return f"cannot read {path!r}: {reason}"


def _skipped(path: str, reason: str) -> str:
    return f"skipped {path!r}: {reason}"


def _unreadable_link(e: OSError) -> str:
    """Why a symlink gives nothing to read: which kind of broken link, else the OS's word."""
    if e.errno == errno.ELOOP:
        return "symbolic link loop"
    if e.errno == errno.ENOENT:
        return "dangling symbolic link (its target does not exist)"
    return e.strerror or str(e)


def _link_to_file(path: str, out: Inputs) -> bool:
    """True when the symlink ``path`` leads to a regular file. Otherwise one line in ``out``
    names it: an error when it cannot be read (dangling, a loop), a notice when it leads to
    a directory (not followed) or to a special file (not read)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        out.errors.append(_cannot_read(path, _unreadable_link(e)))
        return False
    if stat.S_ISREG(mode):
        return True
    target = "a directory, not followed" if stat.S_ISDIR(mode) else "a special file, not read"
    out.notices.append(_skipped(path, f"symbolic link to {target}"))
    return False


def _walk(top: str, out: Inputs) -> Iterator[str]:
    """Files under ``top`` in lexical order, depth first (Go ``filepath.WalkDir``).

    Symlinks are followed to regular files only. Every other entry that is not read is one
    line in ``out`` naming it, and the walk goes on: a dangling link, a symlink loop or a
    directory that cannot be listed is an error (an unreadable path, as when named on the
    command line); a link to a directory (not followed: each tree is read once, and links
    cannot make the walk recur) and a special file (a fifo, socket or device: reading it
    may block) are notices.
    """
    try:
        with os.scandir(top) as it:
            entries = sorted(it, key=lambda e: os.fsencode(e.name))
    except OSError as err:
        out.errors.append(_cannot_read(top, err.strerror or str(err)))
        return
    for e in entries:
        path = os.path.join(top, e.name)
        if e.is_symlink():
            if _link_to_file(path, out):
                yield path
        elif e.is_dir():
            yield from _walk(path, out)
        elif e.is_file():
            yield path
        else:
            out.notices.append(_skipped(path, "special file, not read"))


def read_inputs(paths: Sequence[str], stdin: TextIO | None = None) -> Inputs:
    """Read every path as raw bytes; directories expand to the files under them (``_walk``).

    Notes:
        No paths, or ``-``, reads standard input as one document with id ``stdin``. A path
        that cannot be read is recorded as an error line naming it, an entry of a directory
        skipped on purpose as a notice line naming it; reading goes on.
    """
    out = Inputs()
    stream = stdin if stdin is not None else sys.stdin
    for path in paths or ["-"]:
        if path == "-":
            out.docs.append((STDIN_ID, stream.buffer.read()))
            continue
        for f in _walk(path, out) if os.path.isdir(path) else [path]:
            try:
                with open(f, "rb") as fh:
                    out.docs.append((f, fh.read()))
            except OSError as e:
                out.errors.append(_cannot_read(f, e.strerror or str(e)))
    return out


# the preset option each flag sets, by the flag's dest (--num-perm sets the preset's k,
# --shingle-words its w)
_PIPELINE_OPTIONS = {
    "char": "char",
    "word": "word",
    "shingle_words": "w",
    "num_perm": "k",
    "seed": "seed",
    "bands": "bands",
    "rows": "rows",
    "threshold": "threshold",
}


def _pipeline(args: argparse.Namespace) -> Pipeline:
    """The pipeline named on the command line; only the options the user gave are passed."""
    options = {o: getattr(args, dest, None) for dest, o in _PIPELINE_OPTIONS.items()}
    return resolve(args.preset, **{o: v for o, v in options.items() if v is not None})


def _hex_list(values: Any) -> list[str]:
    return [format_hex(int(v)) for v in values]


def _fingerprinted(pipeline: Pipeline, inputs: Inputs) -> list[tuple[str, int]]:
    """(id, fingerprint) of every usable input; the others become error lines naming them."""
    fps, problems = pipeline.fingerprint_batch_checked([d for _, d in inputs.docs])
    out = []
    for (doc_id, _), fp, problem in zip(inputs.docs, fps, problems, strict=True):
        if problem is None:
            out.append((doc_id, int(fp)))
        else:
            inputs.errors.append(f"cannot fingerprint {doc_id!r}: {problem}")
    return out


def _say(lines: Sequence[str]) -> None:
    for line in lines:
        print(f"neardup: {line}", file=sys.stderr)


def _report_errors(errors: Sequence[str]) -> int:
    """Each error as one line on stderr; the exit status: EXIT_USAGE when there is any."""
    _say(errors)
    return EXIT_USAGE if errors else EXIT_OK


def _report(inputs: Inputs) -> int:
    """The notices, then the errors of ``inputs``, one line each on stderr; the exit status
    (:func:`_report_errors`: notices alone leave it EXIT_OK)."""
    _say(inputs.notices)
    return _report_errors(inputs.errors)


def _emit(lines: Iterable[str], inputs: Inputs) -> int:
    """Each of ``lines`` on stdout, as it comes, then the notices and errors of ``inputs``
    on stderr; the exit status (:func:`_report`)."""
    out = sys.stdout
    for line in lines:
        out.write(f"{line}\n")
    out.flush()
    return _report(inputs)


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def _cmd_fingerprint(args: argparse.Namespace) -> int:
    pipeline = _pipeline(args)
    inputs = read_inputs(args.paths)
    fps = _fingerprinted(pipeline, inputs)
    return _emit((f"{format_hex(fp)}\t{doc_id}" for doc_id, fp in fps), inputs)


def _cmd_cluster(args: argparse.Namespace) -> int:
    pipeline = _pipeline(args)
    inputs = read_inputs(args.paths)
    index = hamming_index.Index(args.max_distance)
    for doc_id, fp in _fingerprinted(pipeline, inputs):
        index.add(doc_id, fp)
    families = index.clusters(args.max_distance, args.min)
    lines = [  # "at k=": ditto's CLI names the distance k
        f"{len(index)} document(s), {len(families)} near-duplicate cluster(s) at k={index.k}"
        f" ({pipeline.id}):"
    ]
    for i, family in enumerate(families, 1):
        lines += [f"\n[{i}] {len(family)} members", *(f"  {doc_id}" for doc_id in family)]
    return _emit(lines, inputs)


def _cmd_signature(args: argparse.Namespace) -> int:
    pipeline = _pipeline(args)
    inputs = read_inputs(args.paths)
    sigs = pipeline.signature_batch([d for _, d in inputs.docs])
    keys = pipeline.band_keys_batch(sigs)
    records = (
        {
            "id": doc_id,
            "preset": pipeline.id,
            "signature": _hex_list(sig),
            "band_keys": _hex_list(key),
            "empty": minhash.is_empty(sig),
        }
        for (doc_id, _), sig, key in zip(inputs.docs, sigs, keys, strict=True)
    )
    return _emit(map(_json, records), inputs)


def _cmd_similarity(args: argparse.Namespace) -> int:
    pipeline = _pipeline(args)
    inputs = read_inputs([args.a, args.b])
    if len(inputs.docs) != 2:
        if not inputs.errors:
            inputs.errors.append("similarity needs exactly two files (a directory expands)")
        return _report(inputs)
    (id_a, a), (id_b, b) = inputs.docs
    sa, sb = pipeline.signature_batch([a, b])
    ka, kb = pipeline.band_keys_batch(np.stack([sa, sb]))
    shared = int(np.count_nonzero(ka == kb))
    record = {
        "a": id_a,
        "b": id_b,
        "preset": pipeline.id,
        "jaccard": minhash.similarity(sa, sb),
        "containment_a_in_b": minhash.text_containment(sa, sb),
        "containment_b_in_a": minhash.text_containment(sb, sa),
        "shared_band_keys": shared,
        "candidate": shared > 0,
    }
    return _emit([_json(record)], inputs)


def _positive_int(value: str) -> int:
    """argparse type: an integer >= 1 (the error names the option: ``argument --window: ...``)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {value!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {n}")
    return n


def _cmd_winnow(args: argparse.Namespace) -> int:
    inputs = read_inputs(args.paths)

    def record(doc_id: str, data: bytes) -> str:
        fp = winnow.text(data, args.kgram_bytes, args.window)
        pairs = zip(fp.pos.tolist(), fp.hash.tolist(), strict=True)
        return _json({"id": doc_id, "fingerprints": [f"{p}:{format_hex(h)}" for p, h in pairs]})

    return _emit((record(doc_id, data) for doc_id, data in inputs.docs), inputs)


def _cmd_overlaps(args: argparse.Namespace) -> int:
    if args.a == "-" and args.b == "-":
        return _report_errors(["error: standard input ('-') can stand for only one of A and B"])
    docs: list[bytes] = []
    errors: list[str] = []
    for path in (args.a, args.b):
        if path != "-" and os.path.isdir(path):
            errors.append(f"overlaps needs two files, {path!r} is a directory")
            continue
        inputs = read_inputs([path])
        docs.extend(d for _, d in inputs.docs)
        errors.extend(inputs.errors)
    if errors:
        return _report_errors(errors)
    spans = winnow.overlaps(docs[0], docs[1], args.kgram_bytes, args.window)
    return _emit((f"{s.pos_a},{s.pos_b},{s.length}" for s in spans), Inputs())


def _cmd_cover(args: argparse.Namespace) -> int:
    inputs = read_inputs(args.paths)
    index = winnow.Index(args.kgram_bytes, args.window)
    for doc_id, data in inputs.docs:
        index.add(doc_id, data)

    def record(doc_id: str, data: bytes) -> str:
        regions = index.cover(data, args.min_docs, args.min_run)
        covered = sum(r.length for r in regions)
        return _json(
            {
                "id": doc_id,
                "regions": [[r.pos, r.length] for r in regions],
                "bytes": covered,
                "fraction": covered / len(data) if data else 0.0,
            }
        )

    return _emit((record(doc_id, data) for doc_id, data in inputs.docs), inputs)


def _manifest_job(store: ArrowStorage, output_dir: str) -> str | None:
    """The ``job`` a finished output's manifest names (None when it names none)."""
    from neardup_udfs.io.storage import join

    data = store.read_bytes(join(output_dir, MANIFEST_NAME))
    try:
        job = json.loads(data or b"{}").get("job")
    except (ValueError, AttributeError):
        return None
    return job if isinstance(job, str) else None


def _finished_output(output_dir: str) -> ArrowStorage | None:
    """The storage of ``output_dir`` when it is a finished dedup output: its ``_MANIFEST.json``
    (the success marker every job writes last) is there. Otherwise None, after one line on
    stderr naming the directory: a killed run's outputs (report.json included) may be stale
    or partial, so nothing is read from or written to it."""
    from neardup_udfs.io.storage import ArrowStorage, StorageError, join

    try:
        store = ArrowStorage(output_dir)
    except StorageError as e:
        _say([f"error: {e}"])
        return None
    if store.kind(output_dir) is None:
        _say([f"error: {output_dir!r} does not exist"])
        return None
    if store.kind(join(output_dir, MANIFEST_NAME)) != "file":
        print(
            f"neardup: {output_dir!r} is not a finished dedup output (no {MANIFEST_NAME})",
            file=sys.stderr,
        )
        return None
    return store


class _Unreadable(Exception):
    """An output's folder or file that cannot be read; the message (one line) names it."""


def _parquet_rows(store: ArrowStorage, folder: str) -> list[dict[str, Any]]:
    """The rows of the Parquet files under ``folder`` (those pyarrow reads: not named
    ``_*`` or ``.*``), file by file in name order; :class:`_Unreadable` naming the folder
    when it is missing, or the file that is not a readable Parquet file (truncated, other
    bytes)."""
    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from neardup_udfs.io.storage import join

    if store.kind(folder) != "dir":
        raise _Unreadable(f"{folder!r} is missing (not a finished dedup output?)")
    root = store.path(folder)
    infos = store.fs.get_file_info(pafs.FileSelector(root, recursive=True))
    rels = sorted(
        os.path.relpath(i.path, root)
        for i in infos
        if i.type == pafs.FileType.File and not i.base_name.startswith(("_", "."))
    )
    rows: list[dict[str, Any]] = []
    for rel in rels:
        try:
            rows += pq.read_table(join(root, rel), filesystem=store.fs).to_pylist()
        except (OSError, pa.ArrowException) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise _Unreadable(
                f"{join(folder, rel)!r} is damaged (not a readable Parquet file: {first})"
            ) from None
    return rows


def _cmd_clusters(args: argparse.Namespace) -> int:
    from neardup_udfs.io.storage import join

    store = _finished_output(args.output_dir)
    if store is None:
        return EXIT_USAGE
    try:
        table = _parquet_rows(store, join(args.output_dir, "clusters"))
    except _Unreadable as e:
        _say([f"error: {e}"])
        return EXIT_USAGE
    score = "distance" if table and "distance" in table[0] else "similarity"
    families: dict[str, list[dict[str, Any]]] = {}
    for row in table:
        families.setdefault(row["cluster_id"], []).append(row)
    multi = [f for f in families.values() if len(f) >= args.min]
    multi.sort(key=lambda f: (-len(f), f[0]["cluster_id"]))
    print(f"{len(table)} document(s), {len(multi)} cluster(s) of {args.min}+ (* = kept):")
    for i, family in enumerate(multi, 1):
        print(f"\n[{i}] {len(family)} members")
        for row in sorted(family, key=lambda r: (not r["is_representative"], r["doc_id"])):
            mark = "*" if row["is_representative"] else " "
            value = row[score]
            shown = f"{value:.3f}" if isinstance(value, float) else str(value)
            print(f" {mark} {row['doc_id']}  ({score} {shown})")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from neardup_udfs.report import ReportError, write_report_html

    store = _finished_output(args.output_dir)
    if store is None:
        return EXIT_USAGE
    job = _manifest_job(store, args.output_dir)
    if job not in ("dedup", None):  # an image run's page needs its samples' pictures
        print(
            f"neardup: {args.output_dir!r} is the output of the {job} job, whose report.html "
            "the job itself writes; neardup report rebuilds a dedup output's page only",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        path = write_report_html(args.output_dir)
    except ReportError as e:
        _say([f"error: {e}"])
        return EXIT_USAGE
    print(path)
    return EXIT_OK


def _queried(args: argparse.Namespace, kind: str) -> tuple[Any, Pipeline, Inputs]:
    """The local index of ``--index`` (IndexStoreError unless a ``kind`` index), its own
    pipeline (the query texts get the normalization it records), and the query files."""
    from neardup_udfs.index.query import LocalIndex

    index = LocalIndex(args.index)
    index.require_kind(kind, args.command)
    return index, pipeline_of(index.manifest), read_inputs(args.paths)


def _cmd_near(args: argparse.Namespace) -> int:
    index, pipeline, inputs = _queried(args, "simhash")
    lines = (
        f"{doc_id}\t{rank}\t{m.id}\t{m.distance}"
        for doc_id, fp in _fingerprinted(pipeline, inputs)
        for rank, m in enumerate(index.near(fp, args.max_distance), start=1)
    )
    return _emit(lines, inputs)


def _cmd_similar(args: argparse.Namespace) -> int:
    index, pipeline, inputs = _queried(args, "minhash")
    sigs = pipeline.signature_batch([d for _, d in inputs.docs])
    lines = (
        f"{doc_id}\t{r.rank}\t{r.id}\t{r.jaccard:.4f}"
        for (doc_id, _), sig in zip(inputs.docs, sigs, strict=True)
        for r in index.similar(sig, args.top)
    )
    return _emit(lines, inputs)


def _cmd_index_check(args: argparse.Namespace) -> int:
    from neardup_udfs.index.store import inspect_index

    result = inspect_index(args.dir, rows=True)
    if result.manifest is None or result.problems:
        return _report_errors([f"error: {problem}" for problem in result.problems])
    m = result.manifest
    shape = ", ".join(f"{k}={v}" for k, v in sorted(m.shape.items()))
    older = f", {result.present} by the presence of their data files" if result.present else ""
    out = sys.stdout
    out.write(f"{args.dir}: ok\n")
    out.write(f"pipeline   {m.pipeline_id} ({m.kind}, {shape})\n")
    out.write(f"batches    {len(m.batches)}\n")
    out.write(f"documents  {m.documents}\n")
    out.write(
        f"checked    the manifest; {result.verified} batch(es) by the data files recorded at "
        f"commit{older}; the documents in docs/ (Parquet footers)\n"
    )
    out.flush()
    return EXIT_OK


def _cmd_version(args: argparse.Namespace) -> int:
    print(f"neardup {__version__}")
    for name in preset_names():
        p = get_preset(name)
        print(f"  {name}\tversion={p.version}\t{p.description}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The ``neardup`` argument parser."""
    parser = _Parser(prog="neardup", description="Near-duplicate fingerprints and families.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def simhash_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--preset",
            default="ditto/2",
            help="64-bit preset: ditto/2 (default), semblance-simhash, fingerprint, anchor, phash",
        )
        p.add_argument("--char", type=int, default=None, help="ditto/2: char n-gram size")
        p.add_argument("--word", type=int, default=None, help="ditto/2: word n-gram size")
        words = "semblance-simhash: words per shingle"
        _renamed_flag(p, "--shingle-words", "--w", type=int, metavar="WORDS", help=words)

    def minhash_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--preset", default="semblance", help="minhash preset (default semblance)")
        words = "words per shingle (default 3)"
        _renamed_flag(p, "--shingle-words", "--w", type=int, metavar="WORDS", help=words)
        slots = "MinHash signature slots (default 128)"
        _renamed_flag(p, "--num-perm", "--k", type=int, metavar="SLOTS", help=slots)
        p.add_argument("--seed", type=int, default=None, help="MinHash seed (default 0)")
        p.add_argument("--bands", type=int, default=None, help="LSH bands (default 16)")
        p.add_argument("--rows", type=int, default=None, help="LSH rows per band (default 8)")
        p.add_argument("--threshold", type=float, default=None, help="derive bands/rows")

    def paths(p: argparse.ArgumentParser) -> None:
        p.add_argument("paths", nargs="*", help="files or directories; none or '-' = stdin")

    fp = sub.add_parser("fingerprint", aliases=["fp"], help="print '<hex>\\t<path>' per document")
    simhash_options(fp)
    paths(fp)
    fp.set_defaults(func=_cmd_fingerprint)

    max_distance: dict[str, Any] = {  # the flag of cluster and near
        "type": int,
        "default": 3,
        "metavar": "BITS",
        "help": "max Hamming distance (default 3)",
    }
    cl = sub.add_parser("cluster", help="print near-duplicate families")
    _renamed_flag(cl, "--max-distance", "-k", **max_distance)
    cl.add_argument("--min", type=int, default=2, help="smallest family printed (default 2)")
    simhash_options(cl)
    paths(cl)
    cl.set_defaults(func=_cmd_cluster)

    sg = sub.add_parser("signature", help="print one JSON MinHash signature per document")
    minhash_options(sg)
    paths(sg)
    sg.set_defaults(func=_cmd_signature)

    sm = sub.add_parser("similarity", help="Jaccard, containment and shared band keys of A, B")
    minhash_options(sm)
    sm.add_argument("a")
    sm.add_argument("b")
    sm.set_defaults(func=_cmd_similarity)

    def winnow_options(p: argparse.ArgumentParser) -> None:
        _renamed_flag(
            p,
            "--kgram-bytes",
            "--k",
            required=True,
            type=_positive_int,
            metavar="BYTES",
            help="k-gram size (e.g. 8)",
        )
        _renamed_flag(
            p,
            "--window",
            "--w",
            required=True,
            type=_positive_int,
            metavar="KGRAMS",
            help="winnowing window in k-grams (e.g. 6)",
        )

    wn = sub.add_parser(
        "winnow",
        help="print one JSON object of winnowing fingerprints per document",
        description=(
            "MOSS winnowing (semblance winnow.Text) of each document's raw bytes. One JSON"
            ' object per document per line, in argument order: {"id": PATH, "fingerprints":'
            ' ["POS:HASH", ...]}, POS the byte offset of the selected k-gram (decimal),'
            " HASH its XXH64 as 16 lowercase hex digits; in increasing POS. Documents shorter"
            " than BYTES + W - 1 bytes have no fingerprints."
        ),
    )
    winnow_options(wn)
    paths(wn)
    wn.set_defaults(func=_cmd_winnow)

    ov = sub.add_parser(
        "overlaps",
        help="print the aligned passages files A and B share, as 'posA,posB,len' lines",
        description=(
            "Aligned passages A and B share (semblance winnow.Overlaps): one line"
            " 'POS_A,POS_B,LEN' per span, byte offsets and length in decimal, sorted by POS_A"
            " then POS_B; nothing when none. A[POS_A:POS_A+LEN] aligns with B[POS_B:POS_B+LEN]"
            " (a located region, not proof of byte equality). '-' (stdin) may be one of A, B."
        ),
    )
    winnow_options(ov)
    ov.add_argument("a", help="file (or '-' for stdin)")
    ov.add_argument("b", help="file (or '-' for stdin)")
    ov.set_defaults(func=_cmd_overlaps)

    cv = sub.add_parser(
        "cover",
        help="print each document's boilerplate regions (passages shared across the corpus)",
        description=(
            "Indexes every document (semblance winnow.Index, id = path) and prints, per"
            ' document in argument order, one JSON object per line: {"id": PATH,'
            ' "regions": [[POS, LEN], ...], "bytes": B, "fraction": F}. Regions'
            " (winnow Index.Cover) are sorted, non-overlapping byte ranges [POS, POS+LEN) made"
            " of at least --min-run consecutive fingerprints each found in at least --min-docs"
            " documents (the document itself counts: --min-docs 3 = itself + 2 others); B is"
            " the sum of the LENs and F = B / document length in bytes (0.0 for an empty"
            " document). Regions may be []."
        ),
    )
    winnow_options(cv)
    cv.add_argument(
        "--min-docs",
        metavar="N",
        type=_positive_int,
        required=True,
        help="documents a fingerprint must occur in (itself included)",
    )
    cv.add_argument(
        "--min-run",
        metavar="R",
        type=_positive_int,
        required=True,
        help="consecutive qualifying fingerprints per region (semblance suggests 5)",
    )
    paths(cv)
    cv.set_defaults(func=_cmd_cover)

    cs = sub.add_parser("clusters", help="list the clusters of a dedup job's output directory")
    cs.add_argument("output_dir")
    cs.add_argument("--min", type=int, default=2, help="smallest cluster listed (default 2)")
    cs.set_defaults(func=_cmd_clusters)

    rp = sub.add_parser(
        "report",
        help="write report.html (counts, timings, plots, sample clusters) of a finished dedup run",
        description=(
            "Builds a self-contained report.html (no network, no JavaScript) from a finished"
            " dedup job's output directory (report.json, clusters/, pairs/ and samples/ when"
            " present), writes it next to report.json and prints its path. Exit status 2, and"
            " nothing written, when the directory has no _MANIFEST.json (its run did not"
            " finish: report.json may be stale) or no readable report.json."
        ),
    )
    rp.add_argument("output_dir")
    rp.set_defaults(func=_cmd_report)

    index_help = "an index directory (jobs/index.py build, or dedup --update-index)"
    nr = sub.add_parser(
        "near",
        help="print the indexed documents within --max-distance bits of each file (SimHash index)",
        description=(
            "ditto Index.Near against a persistent index: for each input, every indexed"
            " document within --max-distance bits (clamped down to the index's), by distance"
            " then id, one line 'INPUT<TAB>RANK<TAB>ID<TAB>DISTANCE'. Reads only the key"
            " partitions of the input's blocks."
        ),
    )
    nr.add_argument("--index", required=True, help=index_help)
    _renamed_flag(nr, "--max-distance", "-k", **max_distance)
    paths(nr)
    nr.set_defaults(func=_cmd_near)

    sl = sub.add_parser(
        "similar",
        help="print the most similar indexed documents of each file (MinHash index)",
        description=(
            "semblance Forest.query against a persistent index (trees x depth = its bands x"
            " rows): for each input, up to --top indexed documents by shared prefix depth,"
            " one line 'INPUT<TAB>RANK<TAB>ID<TAB>JACCARD' (JACCARD estimated from the"
            " signatures, 4 decimals)."
        ),
    )
    sl.add_argument("--index", required=True, help=index_help)
    sl.add_argument("--top", type=_positive_int, default=10, help="results per file (default 10)")
    paths(sl)
    sl.set_defaults(func=_cmd_similar)

    ix = sub.add_parser(
        "index",
        help="inspect a persistent index (index check DIR)",
        description="Commands on a persistent index without Spark.",
    )
    ix_sub = ix.add_subparsers(
        dest="index_command", metavar="{check}", required=True, parser_class=_Parser
    )
    ck = ix_sub.add_parser(
        "check",
        help="check an index's manifest and batch folders; exit 2 when damaged",
        description=(
            "Checks the index without reading its data: the manifest _INDEX.json parses and"
            " its fields are valid; every listed batch folder is there and its docs/, keys/"
            " and rejects/ hold the data files its commit recorded (their count, bytes and a"
            " digest of names and sizes; a batch committed before these were recorded: some"
            " data file wherever it has documents or rejects); docs/ holds the batch's"
            " documents (counted from the Parquet footers). Healthy: exit 0 and a summary"
            " (pipeline, batches, documents). Otherwise exit 2 and one line per problem on"
            " stderr, naming the file or folder at fault."
        ),
    )
    ck.add_argument("dir", metavar="DIR", help=index_help)
    ck.set_defaults(func=_cmd_index_check)

    ver = sub.add_parser("version", help="package version and registered presets")
    ver.set_defaults(func=_cmd_version)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except (PresetError, IndexStoreError) as e:
        _say([f"error: {e}"])
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    return status


if __name__ == "__main__":
    sys.exit(main())
