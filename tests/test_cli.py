"""The `neardup` command: every behaviour through ``main`` in this process, and every
subcommand once as a real process (``python -m neardup_udfs``), as a user runs it."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from index_layout import SEMBLANCE, write_index
from semblance_golden import assert_fp_golden, inputs, semblance

import neardup_udfs
from neardup_udfs.cli import build_parser, main
from neardup_udfs.kernels import winnow

ROOT = Path(__file__).resolve().parent.parent


LOCKED = b"Your apple id has been locked. Please verify your account now"


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """``neardup ARGS`` run in this process through ``main``: standard input, output and error
    replaced for the call, the exit status of ``main`` or of argparse's ``SystemExit``."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(stdin)), out, err
    try:
        try:
            status = main(list(args))
        except SystemExit as e:  # argparse usage errors
            status = int(e.code or 0)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


def run_process(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """``python -m neardup_udfs ARGS`` as a real process, the way a user runs it."""
    proc = subprocess.run(
        [sys.executable, "-m", "neardup_udfs", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "b.txt").write_bytes(LOCKED + b".")
    (tmp_path / "a.txt").write_bytes(LOCKED + b"!")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "c.html").write_bytes(b"<p>A completely different page about gardening and roses.</p>")
    (sub / "bad.bin").write_bytes(b"caf\xe9 \xff\xfe")
    return tmp_path


def test_fingerprint_files_in_argument_order(corpus: Path) -> None:
    a, b = corpus / "a.txt", corpus / "b.txt"
    res = run("fingerprint", "--preset", "ditto/2", str(b), str(a))
    assert res.returncode == 0 and res.stderr == ""
    want = [
        f"{neardup_udfs.fingerprint(b.read_bytes()):016x}\t{b}",
        f"{neardup_udfs.fingerprint(a.read_bytes()):016x}\t{a}",
    ]
    assert res.stdout.splitlines() == want
    assert res.stdout.splitlines()[0].startswith("b2554760d0dec1db")  # ditto README value


def test_directory_expands_sorted_depth_first(corpus: Path) -> None:
    res = run("fp", str(corpus))
    assert res.returncode == 0
    paths = [line.split("\t")[1] for line in res.stdout.splitlines()]
    assert paths == [str(corpus / p) for p in ["a.txt", "b.txt", "sub/bad.bin", "sub/c.html"]]


def test_stdin_and_dash(corpus: Path) -> None:
    want = f"{neardup_udfs.fingerprint(b'hello there'):016x}\tstdin\n"
    assert run("fingerprint", stdin=b"hello there").stdout == want
    assert run("fingerprint", "-", stdin=b"hello there").stdout == want


def test_char_and_word_options(corpus: Path) -> None:
    a = corpus / "a.txt"
    res = run("fingerprint", "--char", "3", "--word", "1", str(a))
    fp = neardup_udfs.fingerprint(a.read_bytes(), char=3, word=1)
    assert res.stdout == f"{fp:016x}\t{a}\n"


def test_cluster_listing(corpus: Path) -> None:
    res = run("cluster", "--preset", "ditto/2", "--max-distance", "3", str(corpus))
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        "4 document(s), 1 near-duplicate cluster(s) at k=3 (ditto/2):\n"
        "\n[1] 2 members\n"
        f"  {corpus / 'a.txt'}\n"
        f"  {corpus / 'b.txt'}\n"
    )
    singles = run("cluster", "--max-distance", "3", "--min", "1", str(corpus))
    assert "4 document(s), 3 near-duplicate cluster(s) at k=3" in singles.stdout


def test_unreadable_path_is_named_and_others_still_processed(corpus: Path) -> None:
    missing = corpus / "missing.txt"
    res = run("fingerprint", str(missing), str(corpus / "a.txt"))
    assert res.returncode == 2
    assert res.stdout.count("\n") == 1 and res.stdout.endswith(f"\t{corpus / 'a.txt'}\n")
    assert res.stderr.strip().splitlines() == [
        f"neardup: cannot read '{missing}': No such file or directory"
    ]


def test_os_error_other_than_missing_is_reported(corpus: Path) -> None:
    bogus = corpus / "a.txt" / "inner"  # a file used as a directory
    res = run("fingerprint", str(bogus), str(corpus / "b.txt"))
    assert res.returncode == 2 and res.stdout.endswith(f"\t{corpus / 'b.txt'}\n")
    assert res.stderr == f"neardup: cannot read '{bogus}': Not a directory\n"


def test_directory_given_where_a_file_is_read_is_reported(corpus: Path) -> None:
    res = run("cluster", str(corpus / "missing-dir"), str(corpus))
    assert res.returncode == 2
    assert "missing-dir" in res.stderr and "4 document(s)" in res.stdout


def _linked_tree(tmp_path: Path) -> Path:
    """A directory holding a good file, a dangling link, a self-referencing link loop and a
    link to a directory outside it (whose file must not be read)."""
    top, elsewhere = tmp_path / "top", tmp_path / "elsewhere"
    top.mkdir()
    elsewhere.mkdir()
    (elsewhere / "hidden.txt").write_bytes(LOCKED)
    (top / "a.txt").write_bytes(LOCKED + b"!")
    os.symlink("nowhere", top / "dangling")
    os.symlink("loop", top / "loop")
    os.symlink(elsewhere, top / "dirlink")
    return top


def test_walk_names_every_skipped_link_and_reads_the_rest(tmp_path: Path) -> None:
    top = _linked_tree(tmp_path)
    res = run("fp", str(top))
    assert res.returncode == 2  # a dangling link or a loop is an unreadable path
    assert [line.split("\t")[1] for line in res.stdout.splitlines()] == [str(top / "a.txt")]
    assert res.stderr.splitlines() == [
        f"neardup: skipped '{top / 'dirlink'}': symbolic link to a directory, not followed",
        f"neardup: cannot read '{top / 'dangling'}': dangling symbolic link"
        " (its target does not exist)",
        f"neardup: cannot read '{top / 'loop'}': symbolic link loop",
    ]


def test_walk_notices_alone_keep_exit_status_0(tmp_path: Path) -> None:
    top = _linked_tree(tmp_path)
    (top / "dangling").unlink()
    (top / "loop").unlink()
    os.mkfifo(top / "fifo")  # read, it would block: skipped
    os.symlink("fifo", top / "fifolink")
    res = run("winnow", "--kgram-bytes", "4", "--window", "4", str(top))
    assert res.returncode == 0
    assert [r["id"] for r in json_lines(res.stdout)] == [str(top / "a.txt")]
    assert res.stderr.splitlines() == [
        f"neardup: skipped '{top / 'dirlink'}': symbolic link to a directory, not followed",
        f"neardup: skipped '{top / 'fifo'}': special file, not read",
        f"neardup: skipped '{top / 'fifolink'}': symbolic link to a special file, not read",
    ]


def test_walk_goes_on_past_a_directory_it_cannot_list(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub, scandir = str(corpus / "sub"), os.scandir

    def failing(path: str = ".") -> Any:  # as root, chmod cannot make a directory unreadable
        if path == sub:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", failing)
    res = run("fp", str(corpus))
    assert res.returncode == 2
    paths = [line.split("\t")[1] for line in res.stdout.splitlines()]
    assert paths == [str(corpus / "a.txt"), str(corpus / "b.txt")]
    assert res.stderr == f"neardup: cannot read '{sub}': Permission denied\n"


def test_similarity_reports_what_a_directory_skipped(tmp_path: Path) -> None:
    top = _linked_tree(tmp_path)
    hidden = tmp_path / "elsewhere" / "hidden.txt"
    res = run("similarity", str(top), str(hidden))  # the directory gives one file: a.txt
    assert res.returncode == 2
    assert [json.loads(res.stdout)[k] for k in ("a", "b")] == [str(top / "a.txt"), str(hidden)]
    assert len(res.stderr.splitlines()) == 3
    assert f"skipped '{top / 'dirlink'}': symbolic link to a directory" in res.stderr
    assert f"'{top / 'dangling'}': dangling symbolic link" in res.stderr
    assert f"'{top / 'loop'}': symbolic link loop" in res.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fingerprint", "--preset", "nope"], "unknown preset 'nope'"),
        (["fingerprint", "--char", "x"], "argument --char: invalid int value: 'x'"),
        (["cluster", "--word", "99999"], "option 'word' of preset 'ditto/2' must be in"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required: command"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str], message: str) -> None:
    res = run(*args)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert res.stdout == ""


def test_version_lists_presets() -> None:
    res = run("version")
    assert res.returncode == 0
    assert res.stdout.splitlines()[0] == f"neardup {neardup_udfs.__version__}"
    assert "ditto/2\tversion=ditto/2" in res.stdout


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "neardup"
    res = subprocess.run([str(script), "version"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.startswith("neardup ")


def test_semblance_simhash_fingerprint(corpus: Path) -> None:
    a = corpus / "a.txt"
    res = run("fingerprint", "--preset", "semblance-simhash", str(a))
    fp = neardup_udfs.fingerprint(a.read_bytes(), preset="semblance-simhash")
    assert res.returncode == 0 and res.stdout == f"{fp:016x}\t{a}\n"
    bad = run("fingerprint", "--preset", "semblance-simhash", "--char", "3", str(a))
    assert bad.returncode == 2 and "preset 'semblance-simhash' has no option 'char'" in bad.stderr


def test_signature_json_lines(corpus: Path) -> None:
    a, short = corpus / "a.txt", corpus / "short.txt"
    short.write_text("two words")
    res = run("signature", "--preset", "semblance", "--threshold", "0.5", str(a), str(short))
    assert res.returncode == 0, res.stderr
    first, second = (json.loads(line) for line in res.stdout.splitlines())
    sig = neardup_udfs.signature(a.read_bytes(), threshold=0.5)
    assert first["id"] == str(a) and first["preset"] == "semblance/1;bands=32,rows=4"
    assert first["signature"] == [f"{int(v):016x}" for v in sig]
    assert len(first["band_keys"]) == 32 and first["empty"] is False
    assert second["empty"] is True and set(second["signature"]) == {"f" * 16}


def test_similarity(corpus: Path) -> None:
    res = run("similarity", str(corpus / "a.txt"), str(corpus / "b.txt"))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["preset"] == "semblance/1"
    assert out["jaccard"] == 1.0 and out["candidate"] is True and out["shared_band_keys"] == 16
    assert out["containment_a_in_b"] == out["containment_b_in_a"] == 1.0
    other = run("similarity", str(corpus / "a.txt"), str(corpus / "sub" / "c.html"))
    assert json.loads(other.stdout)["jaccard"] < 0.2
    missing = run("similarity", str(corpus / "a.txt"), str(corpus / "nope"))
    assert missing.returncode == 2 and "nope" in missing.stderr


def test_phash_fingerprint_and_cluster_with_bad_files(tmp_path: Path) -> None:
    import shutil

    golden = Path(__file__).parent / "golden" / "phash-images"
    for name in ("circle_128.png", "circle_resized_64.png", "noise_32.png"):
        shutil.copy(golden / name, tmp_path / name)
    (tmp_path / "notes.txt").write_text("not an image")
    res = run("fingerprint", "--preset", "phash", str(tmp_path))
    assert res.returncode == 2
    assert res.stdout.splitlines()[0] == f"a18cad6c2d93d25c\t{tmp_path / 'circle_128.png'}"
    assert len(res.stdout.splitlines()) == 3
    assert res.stderr.startswith(f"neardup: cannot fingerprint '{tmp_path / 'notes.txt'}'")
    cl = run("cluster", "--preset", "phash", "--max-distance", "10", str(tmp_path))
    assert "3 document(s), 1 near-duplicate cluster(s) at k=10 (phash/1)" in cl.stdout
    assert "circle_resized_64.png" in cl.stdout and cl.returncode == 2


@pytest.mark.parametrize("preset", ["fingerprint", "anchor"])
def test_text_presets_fingerprint(corpus: Path, preset: str) -> None:
    a = corpus / "a.txt"
    res = run("fingerprint", "--preset", preset, str(a))
    fp = neardup_udfs.fingerprint(a.read_bytes(), preset=preset)
    assert res.returncode == 0 and res.stdout == f"{fp:016x}\t{a}\n"


# --- winnowing subcommands (in process: main([...]) and capsys) ------------------------------

FOX_K4_W4 = [  # semblance winnow TestGolden (spec 3.6)
    "2:274f474d374b10e3",
    "5:079e5e25f2fca95a",
    "8:22ab2f80dfaf8a01",
    "12:337380428eae6a42",
]
FOOTER = b"\n--\nPosted to rec.boats.paddle - archived by the list server."
POSTS = {  # semblance winnow/example_test.go: three posts sharing a mailing-list footer
    "post1.txt": b"Anyone tried the new kevlar hull on whitewater? Curious about durability.",
    "post2.txt": b"Selling a two-seat canoe, barely used, pickup only near the lake.",
    "post3.txt": b"Trip report: three days on the river with perfect weather throughout.",
}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``neardup ARGS`` run in this process."""
    try:
        status = main(list(args))
    except SystemExit as e:  # argparse usage errors
        status = int(e.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def set_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.fixture()
def golden_dir(tmp_path: Path) -> Path:
    """Every semblance golden input as ``<id>.txt`` (the empty one included)."""
    top = tmp_path / "golden"
    top.mkdir()
    for doc_id, data in inputs():
        (top / f"{doc_id}.txt").write_bytes(data)
    return top


@pytest.fixture()
def posts(tmp_path: Path) -> list[Path]:
    paths = []
    for name, body in POSTS.items():
        (tmp_path / name).write_bytes(body + FOOTER)
        paths.append(tmp_path / name)
    return paths


def test_winnow_fox_golden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fox = tmp_path / "fox.txt"
    fox.write_bytes(b"the quick brown fox")
    status, out, err = cli(capsys, "winnow", "--kgram-bytes", "4", "--window", "4", str(fox))
    assert (status, err) == (0, "")
    assert out == json.dumps({"id": str(fox), "fingerprints": FOX_K4_W4}) + "\n"


def test_winnow_golden_corpus(golden_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "winnow", "--kgram-bytes", "8", "--window", "6", str(golden_dir))
    assert (status, err) == (0, "")
    records = json_lines(out)
    assert [r["id"] for r in records] == sorted(str(p) for p in golden_dir.iterdir())
    per_input = semblance()["per_input"]
    for r in records:
        doc_id = Path(r["id"]).stem
        assert_fp_golden(r["fingerprints"], per_input[doc_id]["winnow_k8_w6"], doc_id)


def test_winnow_stdin_and_short_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_stdin(monkeypatch, b"the quick brown fox")
    status, out, _ = cli(capsys, "winnow", "--kgram-bytes", "4", "--window", "4", "-")
    assert status == 0 and json_lines(out) == [{"id": "stdin", "fingerprints": FOX_K4_W4}]
    set_stdin(monkeypatch, b"the quick brown fox")
    short = ["winnow", "--kgram-bytes", "4", "--window", "17"]  # 19 bytes < k + w - 1
    status, out, _ = cli(capsys, *short)
    assert status == 0 and json_lines(out) == [{"id": "stdin", "fingerprints": []}]


def test_winnow_hashes_are_zero_padded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_bytes(bytes(range(256)) * 4)
    _, out, _ = cli(capsys, "winnow", "--kgram-bytes", "3", "--window", "2", str(doc))
    fp = winnow.text(doc.read_bytes(), 3, 2)
    got = json_lines(out)[0]["fingerprints"]
    assert got == [f"{p}:{h:016x}" for p, h in zip(fp.pos.tolist(), fp.hash.tolist(), strict=True)]
    assert all(len(x.split(":")[1]) == 16 for x in got)
    assert any(x.split(":")[1].startswith("0") for x in got)


def test_winnow_missing_file_named_others_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fox, missing = tmp_path / "fox.txt", tmp_path / "missing.txt"
    fox.write_bytes(b"the quick brown fox")
    status, out, err = cli(
        capsys, "winnow", "--kgram-bytes", "4", "--window", "4", str(missing), str(fox)
    )
    assert status == 2
    assert json_lines(out) == [{"id": str(fox), "fingerprints": FOX_K4_W4}]
    assert err == f"neardup: cannot read '{missing}': No such file or directory\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["winnow", "--kgram-bytes", "0", "--window", "4"],
            "argument --kgram-bytes: must be a positive integer, got 0",
        ),
        (
            ["winnow", "--kgram-bytes", "4", "--window", "-1"],
            "argument --window: must be a positive integer, got -1",
        ),
        (
            ["winnow", "--kgram-bytes", "x", "--window", "4"],
            "argument --kgram-bytes: invalid int value: 'x'",
        ),
        (["winnow", "--window", "4"], "one of the arguments --kgram-bytes --k is required"),
        (
            ["overlaps", "--kgram-bytes", "0", "--window", "4", "a", "b"],
            "argument --kgram-bytes: must be a positive",
        ),
        (
            ["overlaps", "--kgram-bytes", "4", "--window", "4", "a"],
            "the following arguments are required: b",
        ),
        (
            ["cover", "--kgram-bytes", "4", "--window", "4", "--min-run", "5"],
            "required: --min-docs",
        ),
        (
            ["cover", "--kgram-bytes", "4", "--window", "4", "--min-docs", "0", "--min-run", "5"],
            "argument --min-docs: must be a positive integer, got 0",
        ),
        (
            ["cover", "--kgram-bytes", "4", "--window", "0", "--min-docs", "2", "--min-run", "5"],
            "argument --window: must be a positive integer, got 0",
        ),
    ],
)
def test_winnow_bad_options_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = cli(capsys, *args)
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neardup: error: ") and message in lines[0], err


OLD_FLAGS = [  # (a subcommand with its other arguments, an old flag, the flag it became)
    (["cluster"], "-k", "--max-distance"),  # ditto's CLI: the Hamming distance
    (["near", "--index", "idx"], "-k", "--max-distance"),
    (["signature"], "--k", "--num-perm"),  # the MinHash slots (the preset option k)
    (["similarity", "a", "b"], "--k", "--num-perm"),
    (["winnow", "--window", "4"], "--k", "--kgram-bytes"),  # semblance winnow's k
    (["overlaps", "--window", "4", "a", "b"], "--k", "--kgram-bytes"),
    (["cover", "--window", "4", "--min-docs", "2", "--min-run", "5"], "--k", "--kgram-bytes"),
    (["winnow", "--kgram-bytes", "4"], "--w", "--window"),  # semblance winnow's w
    (["fingerprint", "--preset", "semblance-simhash"], "--w", "--shingle-words"),
    (["signature"], "--w", "--shingle-words"),  # the words per shingle (the preset option w)
]


@pytest.mark.parametrize(
    ("command", "old", "new"), OLD_FLAGS, ids=lambda v: str(v[0]) if isinstance(v, list) else v
)
def test_old_flags_still_work_and_name_the_new_one(
    command: list[str], old: str, new: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An old flag sets what its new one sets, after one line on stderr naming the new one;
    both at once is a usage error."""
    by_old = build_parser().parse_args([*command, old, "7"])
    assert capsys.readouterr().err == f"neardup: {old} is deprecated: use {new}\n"
    assert by_old == build_parser().parse_args([*command, new, "7"])
    assert capsys.readouterr().err == ""
    status, _, err = cli(capsys, *command, old, "7", new, "7")
    assert status == 2 and err.endswith(f"error: argument {new}: not allowed with argument {old}\n")


def test_an_old_flag_changes_no_output(corpus: Path) -> None:
    new, old = (run("cluster", flag, "3", str(corpus)) for flag in ("--max-distance", "-k"))
    assert old.returncode == new.returncode == 0 and old.stdout == new.stdout
    assert old.stderr == new.stderr + "neardup: -k is deprecated: use --max-distance\n"


def test_overlaps_golden_pair(golden_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = dict(inputs())
    for pair in semblance()["pairs"]:
        a, b = golden_dir / f"{pair['a']}.txt", golden_dir / f"{pair['b']}.txt"
        status, out, err = cli(
            capsys, "overlaps", "--kgram-bytes", "8", "--window", "6", str(a), str(b)
        )
        assert (status, err) == (0, "")
        assert out.splitlines() == (pair["winnow_overlaps_k8_w6_posA_posB_len"] or [])
        spans = winnow.overlaps(docs[pair["a"]], docs[pair["b"]], 8, 6)
        assert out == "".join(f"{s.pos_a},{s.pos_b},{s.length}\n" for s in spans)


def test_overlaps_equals_kernel_spans(
    posts: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = posts[0], posts[1]
    want = winnow.overlaps(a.read_bytes(), b.read_bytes(), 4, 5)
    assert len(want) >= 1
    status, out, err = cli(
        capsys, "overlaps", "--kgram-bytes", "4", "--window", "5", str(a), str(b)
    )
    assert (status, err) == (0, "")
    assert [tuple(map(int, line.split(","))) for line in out.splitlines()] == [
        (s.pos_a, s.pos_b, s.length) for s in want
    ]
    set_stdin(monkeypatch, b.read_bytes())
    assert cli(capsys, "overlaps", "--kgram-bytes", "4", "--window", "5", str(a), "-") == (
        0,
        out,
        "",
    )


def test_overlaps_errors(
    posts: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, missing = posts[0], tmp_path / "missing.txt"
    status, out, err = cli(
        capsys, "overlaps", "--kgram-bytes", "4", "--window", "4", str(a), str(missing)
    )
    assert (status, out) == (2, "")
    assert err == f"neardup: cannot read '{missing}': No such file or directory\n"
    status, out, err = cli(
        capsys, "overlaps", "--kgram-bytes", "4", "--window", "4", str(tmp_path), str(a)
    )
    assert (status, out) == (2, "") and err == (
        f"neardup: overlaps needs two files, '{tmp_path}' is a directory\n"
    )
    status, out, err = cli(capsys, "overlaps", "--kgram-bytes", "4", "--window", "4", "-", "-")
    assert (status, out) == (2, "") and err.startswith("neardup: error: standard input ('-')")
    assert len(err.splitlines()) == 1


def test_cover_footer_posts(posts: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["cover", "--kgram-bytes", "8", "--window", "6", "--min-docs", "3", "--min-run", "5"]
    status, out, err = cli(capsys, *args, *map(str, posts))
    assert (status, err) == (0, "")
    index = winnow.Index(8, 6)
    for p in posts:
        index.add(str(p), p.read_bytes())
    records = json_lines(out)
    assert [r["id"] for r in records] == [str(p) for p in posts]
    for p, r in zip(posts, records, strict=True):
        data = p.read_bytes()
        regions = index.cover(data, 3, 5)
        assert r["regions"] == [[g.pos, g.length] for g in regions] != []
        assert r["bytes"] == sum(g.length for g in regions)
        assert r["fraction"] == r["bytes"] / len(data)
        assert set(r) == {"id", "regions", "bytes", "fraction"}
    first = posts[0].read_bytes()
    [[pos, length]] = records[0]["regions"]
    assert first[pos : pos + length] == b"-\nPosted to rec.boats.paddle - archived by the list ser"
    # A fourth document does not share the footer: no regions, yet still listed.
    lone = posts[0].parent / "lone.txt"
    lone.write_bytes(b"Nothing in common with the posts, just a note about the weather.")
    _, out, _ = cli(capsys, *args, *map(str, posts), str(lone))
    assert json_lines(out)[-1] == {"id": str(lone), "regions": [], "bytes": 0, "fraction": 0.0}


def test_cover_golden_corpus(golden_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["cover", "--kgram-bytes", "8", "--window", "6", "--min-docs", "2", "--min-run", "5"]
    status, out, err = cli(capsys, *args, str(golden_dir))
    assert (status, err) == (0, "")
    want = semblance()["corpus"]["winnow_index_k8_w6_cover_mindocs2_minrun5_pos_len"]
    records = json_lines(out)
    assert len(records) == len(want)
    for r in records:
        doc_id = Path(r["id"]).stem
        assert [f"{p},{n}" for p, n in r["regions"]] == (want[doc_id] or []), doc_id
    empty = next(r for r in records if Path(r["id"]).stem == "empty")
    assert empty["fraction"] == 0.0 and empty["bytes"] == 0


def test_cover_missing_file_named_others_printed(
    posts: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.txt"
    args = ["cover", "--kgram-bytes", "8", "--window", "6", "--min-docs", "3", "--min-run", "5"]
    status, out, err = cli(capsys, *args, str(posts[0]), str(missing), *map(str, posts[1:]))
    assert status == 2
    assert [r["id"] for r in json_lines(out)] == [str(p) for p in posts]
    assert all(r["regions"] for r in json_lines(out))
    assert err == f"neardup: cannot read '{missing}': No such file or directory\n"


def _clusters_output(root: Path) -> Path:
    """A finished dedup output of one cluster {a*, b} and a single c (no Spark needed), with
    the manifest ``io.report_files.write_report`` writes last: report.json's content and the job."""
    from report_outputs import make_output

    make_output(root, {"a": [("b", 0.9)], "c": []})
    manifest = {"job": "dedup", **json.loads((root / "report.json").read_text())}
    (root / "_MANIFEST.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return root


def test_clusters_lists_families_largest_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _clusters_output(tmp_path / "out")
    status, out, err = cli(capsys, "clusters", str(root))
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "3 document(s), 1 cluster(s) of 2+ (* = kept):",
        "",
        "[1] 2 members",
        " * a  (similarity None)",
        "   b  (similarity 0.900)",
    ]
    status, out, _ = cli(capsys, "clusters", "--min", "1", str(root))
    assert status == 0 and out.startswith("3 document(s), 2 cluster(s) of 1+")
    (root / "_MANIFEST.json").unlink()
    status, out, err = cli(capsys, "clusters", str(root))
    assert (status, out) == (2, "") and "no _MANIFEST.json" in err


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_clusters_names_a_damaged_part_file(
    damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 50: a damaged clusters/ file was a pyarrow traceback; now one line naming it."""
    root = _clusters_output(tmp_path / "out")
    part = next((root / "clusters").glob("*.parquet"))
    whole = part.read_bytes()
    part.write_bytes(whole[: len(whole) // 2] if damage == "truncated" else b"\x00garbage" * 9)
    status, out, err = cli(capsys, "clusters", str(root))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and str(part) in err and "damaged" in err, err


def test_clusters_of_a_missing_path_says_it_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 50: a missing path was "not a finished dedup output"."""
    missing = tmp_path / "nonexistent"
    for command in ("clusters", "report"):
        status, out, err = cli(capsys, command, str(missing))
        assert (status, out) == (2, "")
        assert err == f"neardup: error: {str(missing)!r} does not exist\n", err


def test_report_refuses_an_unfinished_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _clusters_output(tmp_path / "out")
    manifest = (root / "_MANIFEST.json").read_bytes()
    (root / "_MANIFEST.json").unlink()  # a killed run: its report.json may be stale
    before = sorted(root.rglob("*"))
    status, out, err = cli(capsys, "report", str(root))
    assert (status, out) == (2, "")
    assert err == f"neardup: '{root}' is not a finished dedup output (no _MANIFEST.json)\n"
    assert sorted(root.rglob("*")) == before and not (root / "report.html").exists()
    (root / "_MANIFEST.json").write_bytes(manifest)
    status, out, err = cli(capsys, "report", str(root))
    assert (status, out, err) == (0, f"{root / 'report.html'}\n", "")
    assert (root / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _process_cases(tmp: Path) -> list[tuple[list[str], bytes, int, str]]:
    """One invocation of every subcommand: (args, stdin, exit status, a line of its output)."""
    a, b, fox = tmp / "a.txt", tmp / "b.txt", tmp / "fox.txt"
    a.write_bytes(LOCKED + b"!")
    b.write_bytes(LOCKED + b".")
    fox.write_bytes(b"the quick brown fox")
    root = _clusters_output(tmp / "out")
    winnowed = json.dumps({"id": str(fox), "fingerprints": FOX_K4_W4})
    cover = ["--kgram-bytes", "8", "--window", "6", "--min-docs", "2", "--min-run", "5"]
    return [
        (["fingerprint"], b"hello there", 0, f"{neardup_udfs.fingerprint(b'hello there'):016x}"),
        (["fp", str(a)], b"", 0, f"{neardup_udfs.fingerprint(a.read_bytes()):016x}\t{a}"),
        (["cluster", "--max-distance", "3", str(a), str(b)], b"", 0, "[1] 2 members"),
        (["signature", str(a)], b"", 0, f'"id": "{a}"'),
        (["similarity", str(a), str(b)], b"", 0, '"jaccard": 1.0'),
        (["winnow", "--kgram-bytes", "4", "--window", "4", str(fox)], b"", 0, winnowed),
        (
            ["overlaps", "--kgram-bytes", "4", "--window", "4", "-", str(b)],
            a.read_bytes(),
            0,
            "2,2,57",
        ),
        (["cover", *cover, str(a), str(b)], b"", 0, f'"id": "{a}"'),
        (["clusters", str(root)], b"", 0, "[1] 2 members"),
        (["report", str(root)], b"", 0, str(root / "report.html")),
        (["near", "--index", str(tmp / "none"), str(a)], b"", 2, "no index at"),
        (["similar", "--index", str(tmp / "none"), str(a)], b"", 2, "no index at"),
        (["index", "check", str(tmp / "none")], b"", 2, "no index at"),
        (["version"], b"", 0, f"neardup {neardup_udfs.__version__}"),
        (["frobnicate"], b"", 2, "invalid choice: 'frobnicate'"),
    ]


def test_every_subcommand_runs_as_a_process(tmp_path: Path) -> None:
    """The same entry point a user runs: ``python -m neardup_udfs``, real standard streams."""
    cases = _process_cases(tmp_path)
    with ThreadPoolExecutor(max_workers=2) as pool:  # independent processes, two cores
        results = list(pool.map(lambda c: run_process(*c[0], stdin=c[1]), cases))
    for (args, _, status, line), res in zip(cases, results, strict=True):
        assert res.returncode == status, (args, res.stderr)
        assert line in (res.stdout if status == 0 else res.stderr), (args, res)


def test_near_and_similar_without_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("some text")
    for command in ("near", "similar"):
        assert main([command, "--index", str(tmp_path / "none"), str(doc)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("neardup: error: no index at") and "none" in err


# --- neardup index check, and queries on a damaged index ----------------------------------------

MANIFEST_NAME = "_INDEX.json"


def test_index_check_summarizes_a_healthy_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "idx"
    write_index(root, [("w1", 3, 1), ("w2", 4, 0)])
    status, out, err = cli(capsys, "index", "check", str(root))
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"{root}: ok",
        f"pipeline   {SEMBLANCE.id} (minhash, bands=25, rows=5)",
        "batches    2",
        "documents  7",
        "checked    the manifest; 2 batch(es) by the data files recorded at commit; the "
        "documents in docs/ (Parquet footers)",
    ]
    old = tmp_path / "old"  # batches committed before their data files were recorded
    write_index(old, [("w1", 3, 1)], record=False)
    status, out, err = cli(capsys, "index", "check", str(old))
    assert (status, err) == (0, "")
    assert out.splitlines()[-1] == (
        "checked    the manifest; 0 batch(es) by the data files recorded at commit, 1 by the "
        "presence of their data files; the documents in docs/ (Parquet footers)"
    )
    status, out, err = cli(capsys, "index", "check", "bogus://x/idx")
    assert (status, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith("neardup: error: cannot open index location 'bogus://x/idx'")


def test_index_check_names_each_problem_on_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "idx"
    m = write_index(root, [("w1", 3, 1), ("w2", 4, 0), ("w3", 2, 0)])
    b1, b2 = (f"{root}/{b.dir}" for b in m.batches[:2])
    (root / m.batches[0].dir / "docs" / "part-00000.parquet").unlink()
    for f in (root / m.batches[1].dir).rglob("*"):
        if f.is_file():
            f.unlink()
    status, out, err = cli(capsys, "index", "check", str(root))
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 3 and all(line.startswith("neardup: error: batch 'w") for line in lines)
    assert lines[0].startswith(f"neardup: error: batch 'w1': {b1}/docs holds 0 data files")
    assert lines[1].startswith(f"neardup: error: batch 'w2': {b2}/docs holds 0 data files")
    assert lines[2].startswith(f"neardup: error: batch 'w2': {b2}/keys holds 0 data files")
    (root / MANIFEST_NAME).write_text('{"format": "neardup-in')
    status, out, err = cli(capsys, "index", "check", str(root))
    assert (status, out) == (2, "")
    assert err.startswith(f"neardup: error: index manifest {root}/{MANIFEST_NAME} is damaged")
    assert len(err.splitlines()) == 1


def test_similar_and_near_on_a_damaged_index_exit_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The query fails before reading anything: one line naming the missing folder or the
    damaged manifest, never a pyarrow traceback."""
    doc = tmp_path / "a.txt"
    doc.write_text("some text to look up")
    root = tmp_path / "idx"
    m = write_index(root, [("w1", 3, 0), ("w2", 4, 0)])
    gone = root / m.batches[1].dir
    shutil.rmtree(gone)
    for command in ("similar", "near"):
        status, out, err = cli(capsys, command, "--index", str(root), str(doc))
        assert (status, out) == (2, "")
        assert err == (
            f"neardup: error: index {str(root)!r} is damaged: batch 'w2': its folder {gone} "
            f"is missing (listed in {MANIFEST_NAME})\n"
        )
    manifest = root / MANIFEST_NAME
    manifest.write_bytes(manifest.read_bytes()[:-40])
    status, out, err = cli(capsys, "similar", "--index", str(root), str(doc))
    assert (status, out) == (2, "")
    assert err.startswith(f"neardup: error: index manifest {manifest} is damaged (truncated")
    assert len(err.splitlines()) == 1
