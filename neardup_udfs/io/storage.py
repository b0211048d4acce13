"""Where every file a job or the CLI writes or reads by name goes: one filesystem layer.

Two implementations of one small interface (:class:`Storage`):

- :class:`HadoopStorage` (the jobs): the JVM's Hadoop ``FileSystem`` of the running Spark
  session, so any scheme the cluster's Hadoop configuration can open works (``hdfs://``,
  ``s3a://``, ``gs://``, ``abfs://``, ``viewfs://``, ``file://``) and a plain path means
  what it means to Spark's own Parquet writer (the default filesystem, relative to its
  working directory). Reports, manifests, index manifests and the removal of old outputs
  all go through it, so they land where the Parquet outputs land.
- :class:`LocalStorage` (a dedup run with the ``local`` engine, no JVM): the local
  filesystem under the names Hadoop's local filesystem gives it (``file:/abs/path``), with
  the same methods as :class:`HadoopStorage`; a file it writes or deletes loses its stale
  ``.crc`` sibling, so Hadoop never reads it against an old checksum.
- :class:`ArrowStorage` (the CLI, no JVM): pyarrow's filesystems: plain paths,
  ``file://``, and what pyarrow opens (``s3://``, ``gs://``, ``hdfs://`` with libhdfs).
  A scheme pyarrow cannot open is a :class:`StorageError` that says it is readable from a
  Spark job only.

Writes are atomic where the filesystem's rename is: a temporary name in the same
directory, then a rename over the target.
"""

from __future__ import annotations

import builtins
import os
import posixpath
import shutil
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "ArrowStorage",
    "FileStore",
    "LocalStorage",
    "HadoopStorage",
    "Listed",
    "Storage",
    "StorageError",
    "escape_glob",
    "file_in_the_way",
    "join",
]

Kind = Literal["file", "dir"]


class StorageError(OSError):
    """A location that cannot be opened, read or written as asked; the message names it."""


def join(base: str, *parts: str) -> str:
    """``base`` (a path or URI) and ``parts`` joined with ``/``."""
    out = base.rstrip("/") if base not in ("/", "") else base
    for part in parts:
        out = f"{out}/{part.strip('/')}" if out not in ("", "/") else f"{out}{part.strip('/')}"
    return out


@dataclass(frozen=True)
class Listed:
    """A file found under an input path."""

    uri: str  # as Spark names it in a ``path`` column (``file:/data/a.txt``)
    under: str  # its path below the listed root ("" when the root is the file itself)
    length: int  # bytes
    modified: int  # milliseconds since the epoch
    dangling: bool = False  # a symbolic link whose target is missing: nothing can read it


class Storage(Protocol):
    """What the jobs and the CLI need of a filesystem."""

    def kind(self, path: str) -> Kind | None:
        """``"file"``, ``"dir"``, or None when nothing is there."""
        ...

    def read_bytes(self, path: str) -> bytes | None:
        """The file's content; None when there is no file."""
        ...

    def write_bytes(self, path: str, data: bytes) -> None:
        """``path`` holds ``data`` (parents created; replaced atomically where the
        filesystem renames atomically)."""
        ...

    def delete(self, path: str) -> None:
        """Nothing at ``path`` afterwards (a directory with everything in it)."""
        ...

    def list(self, path: str) -> list[str]:
        """The names directly under directory ``path`` (empty when there is none)."""
        ...


class FileStore(Storage, Protocol):
    """What a job needs of its filesystem besides :class:`Storage`: names as the filesystem
    gives them, listings, and the lock's exclusive create (:class:`HadoopStorage`,
    :class:`LocalStorage`)."""

    def qualified(self, path: str) -> str: ...

    def exists_literally(self, path: str) -> bool: ...

    def walk(self, path: str) -> builtins.list[Listed]: ...

    def replace_in_place(self, path: str, data: bytes) -> None: ...

    def create_new(self, path: str, data: bytes) -> bool: ...

    def pattern(self, path: str) -> str: ...

    def files(self, path: str) -> builtins.list[Listed]: ...


def file_in_the_way(store: Storage, path: str) -> str | None:
    """The regular file, at ``path`` or at one of its parents, that keeps a directory from
    being made at ``path``; None when there is none."""
    current = path.rstrip("/") or path
    while current:
        kind = store.kind(current)
        if kind == "file":
            return current
        if kind == "dir":
            return None
        parent = posixpath.dirname(current)
        if parent == current or parent.endswith(":") or parent.endswith("//"):
            return None
        current = parent
    return None


def _temporary(path: str) -> str:
    parent, name = posixpath.split(path)
    return join(parent, f".{name}.{uuid.uuid4().hex[:12]}.tmp") if parent else f".{name}.tmp"


class HadoopStorage:
    """:class:`Storage` through the Spark session's Hadoop ``FileSystem`` (the JVM's)."""

    def __init__(self, spark: Any) -> None:
        sc = spark.sparkContext
        self._jvm = sc._jvm
        self._conf = sc._jsc.hadoopConfiguration()

    def _open(self, path: str) -> tuple[Any, Any]:
        try:
            p = self._jvm.org.apache.hadoop.fs.Path(path)
            return p.getFileSystem(self._conf), p
        except Exception as e:  # py4j: an unknown scheme, a malformed URI
            raise StorageError(f"cannot open {path!r}: {_java_message(e)}") from None

    def qualified(self, path: str) -> str:
        """``path`` as the filesystem names it (scheme and authority included)."""
        fs, p = self._open(path)
        return str(fs.makeQualified(p).toString())

    def kind(self, path: str) -> Kind | None:
        fs, p = self._open(path)
        if not fs.exists(p):
            return None
        return "dir" if fs.getFileStatus(p).isDirectory() else "file"

    def read_bytes(self, path: str) -> bytes | None:
        fs, p = self._open(path)
        if not fs.exists(p) or fs.getFileStatus(p).isDirectory():
            return None
        stream = fs.open(p)
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def write_bytes(self, path: str, data: bytes) -> None:
        fs, p = self._open(path)
        parent = p.getParent()
        if parent is not None:
            fs.mkdirs(parent)
        tmp = self._jvm.org.apache.hadoop.fs.Path(_temporary(path))
        out = fs.create(tmp, True)
        try:
            out.write(bytearray(data))
        finally:
            out.close()
        if fs.exists(p):
            fs.delete(p, False)
        if not fs.rename(tmp, p):
            fs.delete(tmp, False)
            raise StorageError(f"cannot write {path!r}: the rename into place failed")

    def delete(self, path: str) -> None:
        fs, p = self._open(path)
        fs.delete(p, True)

    def list(self, path: str) -> list[str]:
        fs, p = self._open(path)
        if not fs.exists(p) or not fs.getFileStatus(p).isDirectory():
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(p))

    def exists_literally(self, path: str) -> bool:
        """Is there a file or directory at ``path`` read as written (no glob expansion)?
        False for a name the filesystem cannot even parse."""
        try:
            fs, p = self._open(path)
            return bool(fs.exists(p))
        except Exception:  # py4j, StorageError: a malformed name; Hadoop's glob says what it is
            return False

    def matches(self, path: str) -> bool:
        """Does ``path`` (as Spark's readers take it: :meth:`pattern`) name a file or
        directory, a glob at least one? True when the filesystem cannot say (a permission
        error): Spark's reader then gives its own."""
        try:
            fs, p = self._open(self.pattern(path))
            found = fs.globStatus(p)
        except Exception:  # py4j: AccessControlException, ...; StorageError: a bad URI
            return True
        return found is not None and len(found) > 0

    def walk(self, path: str) -> builtins.list[Listed]:
        """Every file under directory ``path`` read as written (no glob expansion),
        recursively, checksum files included; empty when ``path`` is not a directory."""
        fs, p = self._open(path)
        if not fs.exists(p) or not fs.getFileStatus(p).isDirectory():
            return []
        if str(fs.getScheme()) == "file":
            return _walk_local(str(fs.makeQualified(p).toUri().getPath()))
        base = str(fs.makeQualified(p).toString()).rstrip("/") + "/"
        found, out = fs.listFiles(p, True), []
        while found.hasNext():
            out.append(_listed(found.next(), ""))
        return [Listed(f.uri, f.uri[len(base) :], f.length, f.modified) for f in out]

    def replace_in_place(self, path: str, data: bytes) -> None:
        """``path`` holds ``data``, rewritten where it is (never absent meanwhile, unlike
        :meth:`write_bytes`; a reader may see a partial file)."""
        fs, p = self._open(path)
        out = fs.create(p, True)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def create_new(self, path: str, data: bytes) -> bool:
        """Create the file ``path`` holding ``data`` unless something is there already
        (False, nothing written); StorageError when it cannot be created."""
        fs, p = self._open(path)
        if fs.exists(p):
            return False
        try:
            out = fs.create(p, False)
            try:
                out.write(bytearray(data))
            finally:
                out.close()
        except Exception as e:  # py4j: permission denied, read-only, lost race
            if fs.exists(p):
                return False
            raise StorageError(f"cannot create {path!r}: {_java_message(e)}") from None
        return True

    def pattern(self, path: str) -> str:
        """``path`` as a Hadoop glob pattern (what Spark's readers and :meth:`files` take) that
        means what the user meant: when ``path``, or a leading part of it that ends in a name
        with glob characters (``*?[]{}\\``), exists read literally (a folder named
        ``run[1]``), that part with its glob characters escaped by backslashes (the rest, if
        any, still a glob: ``run[1]/*.jsonl``); else ``path`` itself, a glob."""
        if not any(c in path for c in _GLOB_CHARS):
            return path
        parts = path.split("/")
        for end in range(len(parts), 0, -1):  # the longest literal part first
            if any(c in parts[end - 1] for c in _GLOB_CHARS):
                prefix = "/".join(parts[:end])
                if self.exists_literally(prefix):
                    return "/".join([escape_glob(prefix), *parts[end:]])
        return path

    def files(self, path: str) -> builtins.list[Listed]:
        """Every file under ``path`` (a file, a directory read recursively, or a glob; a path
        that exists as written is read literally, see :meth:`pattern`), hidden names
        included, in no particular order; empty when nothing matches. On the local
        filesystem a symbolic link whose target is missing is listed too, ``dangling``
        (Spark's readers pass over it)."""
        fs, p = self._open(self.pattern(path))
        roots = fs.globStatus(p)
        if roots is None:
            return []
        out: builtins.list[Listed] = []
        for root in roots:
            if not root.isDirectory():
                out.append(_listed(root, ""))
            elif str(fs.getScheme()) == "file":  # one py4j call per root, not per file
                out.extend(_local_files(str(root.getPath().toUri().getPath())))
            else:
                base = str(root.getPath().toString()).rstrip("/") + "/"
                found = fs.listFiles(root.getPath(), True)
                while found.hasNext():
                    status = found.next()
                    out.append(_listed(status, str(status.getPath().toString())[len(base) :]))
        return out


class LocalStorage:
    """:class:`FileStore` of the local filesystem without a JVM: plain paths (relative to the
    working directory) and ``file:`` URIs, named as Hadoop's local filesystem names them.
    It takes no glob: :meth:`pattern` is the path itself."""

    def local(self, path: str) -> str:
        """``path`` as an absolute local path; StorageError for another scheme."""
        if path.startswith("file:"):
            path = urllib.parse.unquote(urllib.parse.urlparse(path).path)
        elif "://" in path or path.split("/", 1)[0].endswith(":"):
            raise StorageError(f"{path!r} is not on the local filesystem")
        return os.path.abspath(path)

    def qualified(self, path: str) -> str:
        return "file:" + self.local(path)

    def kind(self, path: str) -> Kind | None:
        local = self.local(path)
        if os.path.isdir(local):
            return "dir"
        return "file" if os.path.exists(local) else None

    def read_bytes(self, path: str) -> bytes | None:
        local = self.local(path)
        if not os.path.isfile(local):
            return None
        with open(local, "rb") as fh:
            return fh.read()

    def write_bytes(self, path: str, data: bytes) -> None:
        local = self.local(path)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        tmp = _temporary(local)
        with open(tmp, "wb") as fh:
            fh.write(data)
        _drop_checksum(local)
        os.replace(tmp, local)

    def delete(self, path: str) -> None:
        local = self.local(path)
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        elif os.path.lexists(local):
            os.remove(local)
        _drop_checksum(local)

    def list(self, path: str) -> builtins.list[str]:
        local = self.local(path)
        if not os.path.isdir(local):
            return []
        return sorted(n for n in os.listdir(local) if not _checksum_name(n))

    def exists_literally(self, path: str) -> bool:
        try:
            return os.path.exists(self.local(path))
        except StorageError:
            return False

    def walk(self, path: str) -> builtins.list[Listed]:
        top = self.local(path)
        return _walk_local(top) if os.path.isdir(top) else []

    def replace_in_place(self, path: str, data: bytes) -> None:
        local = self.local(path)
        with open(local, "wb") as fh:
            fh.write(data)
        _drop_checksum(local)

    def create_new(self, path: str, data: bytes) -> bool:
        local = self.local(path)
        try:
            os.makedirs(os.path.dirname(local), exist_ok=True)
            fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        except OSError as e:
            raise StorageError(f"cannot create {path!r}: {e.strerror or e}") from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        _drop_checksum(local)
        return True

    def pattern(self, path: str) -> str:
        return path

    def files(self, path: str) -> builtins.list[Listed]:
        local = self.local(path)
        if os.path.isdir(local):
            return _local_files(local)
        if not os.path.lexists(local):
            return []
        try:
            st = os.stat(local)
        except OSError:  # a dangling link given by name
            modified = int(os.lstat(local).st_mtime * 1000)
            return [Listed(f"file:{local}", "", 0, modified, dangling=True)]
        return [Listed(f"file:{local}", "", st.st_size, int(st.st_mtime * 1000))]


def _walk_local(top: str) -> list[Listed]:
    """Every file under local directory ``top``, recursively, checksum files included (no
    sizes or times: a walk of an output folder asks only for names)."""
    out = []
    for parent, _, names in os.walk(top):
        for name in names:
            under = os.path.relpath(os.path.join(parent, name), top).replace(os.sep, "/")
            out.append(Listed(f"file:{os.path.join(parent, name)}", under, 0, 0))
    return out


def _checksum_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(".crc")


def _drop_checksum(local: str) -> None:
    """Remove the checksum Hadoop's local filesystem keeps beside ``local`` (``.NAME.crc``):
    after a write without it, Hadoop would read the file against a stale checksum."""
    parent, name = os.path.split(local)
    crc = os.path.join(parent, f".{name}.crc")
    if os.path.lexists(crc):
        os.remove(crc)


def _listed(status: Any, under: str) -> Listed:
    uri = str(status.getPath().toString())
    length, modified = int(status.getLen()), int(status.getModificationTime())
    return Listed(uri, under, length, modified)


_GLOB_CHARS = "\\*?[]{}"


def escape_glob(path: str) -> str:
    """``path`` with every Hadoop glob character (``\\*?[]{}``) escaped by a backslash, so
    a glob of it matches the path as written."""
    return "".join("\\" + c if c in _GLOB_CHARS else c for c in path)


def _local_files(top: str) -> list[Listed]:
    """The files under local directory ``top``, named as Hadoop's local filesystem names them
    (``file:`` + the absolute path, unescaped; its checksum files left out, as it does). A
    symbolic link whose target is missing (or loops) is listed ``dangling``, 0 bytes, its
    own time: Hadoop's listing and Spark's readers pass over it, so a job must report it."""
    out = []
    for parent, _, names in os.walk(top):
        for name in names:
            local = os.path.join(parent, name)
            if name.startswith(".") and name.endswith(".crc"):
                continue
            under = os.path.relpath(local, top).replace(os.sep, "/")
            try:
                st = os.stat(local)
            except OSError:
                try:
                    link = os.lstat(local)
                except OSError:  # gone since the walk saw it: nothing to read or report
                    continue
                modified = int(link.st_mtime * 1000)
                out.append(Listed(f"file:{local}", under, 0, modified, dangling=True))
                continue
            out.append(Listed(f"file:{local}", under, st.st_size, int(st.st_mtime * 1000)))
    return out


def _java_message(e: Exception) -> str:
    java = getattr(e, "java_exception", None)
    text = str(java.toString()) if java is not None else str(e)
    return text.splitlines()[0] if text else type(e).__name__


class ArrowStorage:
    """:class:`Storage` through pyarrow's filesystems (no JVM)."""

    def __init__(self, path: str) -> None:
        """The filesystem of ``path``; StorageError when pyarrow cannot open its scheme."""
        import pyarrow as pa
        import pyarrow.fs as pafs

        self._pafs = pafs
        if "://" not in path:
            self.fs: Any = pafs.LocalFileSystem()
            return
        try:
            self.fs, _ = pafs.FileSystem.from_uri(path)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            scheme = path.split("://", 1)[0]
            raise StorageError(
                f"cannot open {path!r} here ({e}); a {scheme}:// location is readable from a "
                "Spark job (through Hadoop), or copy it to a filesystem pyarrow opens "
                "(local, file://, s3://, gs://, hdfs:// with libhdfs)"
            ) from None

    def path(self, path: str) -> str:
        """``path`` as this filesystem names it (no scheme)."""
        import os

        if "://" not in path:
            return os.path.abspath(path)
        _, inner = self._pafs.FileSystem.from_uri(path)
        return str(inner)

    def kind(self, path: str) -> Kind | None:
        info = self.fs.get_file_info(self.path(path))
        if info.type == self._pafs.FileType.NotFound:
            return None
        return "dir" if info.type == self._pafs.FileType.Directory else "file"

    def read_bytes(self, path: str) -> bytes | None:
        if self.kind(path) != "file":
            return None
        with self.fs.open_input_stream(self.path(path)) as fh:
            return bytes(fh.read())

    def write_bytes(self, path: str, data: bytes) -> None:
        target = self.path(path)
        parent = posixpath.dirname(target)
        if parent:
            self.fs.create_dir(parent, recursive=True)
        tmp = _temporary(target)
        with self.fs.open_output_stream(tmp) as fh:
            fh.write(data)
        self.fs.move(tmp, target)

    def delete(self, path: str) -> None:
        kind = self.kind(path)
        if kind == "dir":
            self.fs.delete_dir(self.path(path))
        elif kind == "file":
            self.fs.delete_file(self.path(path))

    def list(self, path: str) -> list[str]:
        if self.kind(path) != "dir":
            return []
        infos = self.fs.get_file_info(self._pafs.FileSelector(self.path(path)))
        return sorted(i.base_name for i in infos)
