"""The `neardup` command, run as a subprocess like a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import neardup_udfs

ROOT = Path(__file__).resolve().parent.parent


LOCKED = b"Your apple id has been locked. Please verify your account now"


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
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
    res = run("cluster", "--preset", "ditto/2", "-k", "3", str(corpus))
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        "4 document(s), 1 near-duplicate cluster(s) at k=3 (ditto/2):\n"
        "\n[1] 2 members\n"
        f"  {corpus / 'a.txt'}\n"
        f"  {corpus / 'b.txt'}\n"
    )
    singles = run("cluster", "-k", "3", "--min", "1", str(corpus))
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
    cl = run("cluster", "--preset", "phash", "-k", "10", str(tmp_path))
    assert "3 document(s), 1 near-duplicate cluster(s) at k=10 (phash/1)" in cl.stdout
    assert "circle_resized_64.png" in cl.stdout and cl.returncode == 2


@pytest.mark.parametrize("preset", ["fingerprint", "anchor"])
def test_text_presets_fingerprint(corpus: Path, preset: str) -> None:
    a = corpus / "a.txt"
    res = run("fingerprint", "--preset", preset, str(a))
    fp = neardup_udfs.fingerprint(a.read_bytes(), preset=preset)
    assert res.returncode == 0 and res.stdout == f"{fp:016x}\t{a}\n"
