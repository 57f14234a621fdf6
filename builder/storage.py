"""Where a build's files live: a local path, or a URL of an object store that fsspec opens (``s3://…``,
``gs://…``, ``hdfs://…``). Clusters keep their data on object stores, where every executor reads and writes
the same names; the readers and the publisher ask here, so that one place knows how such a name is opened.

Credentials and endpoints are fsspec's and the store's own (for S3: the ``AWS_*`` variables, a profile or an
instance role; ``AWS_ENDPOINT_URL`` for an S3-compatible server), set where the executors run as well.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "LOCAL_SCHEMES",
    "BUCKET_SCHEMES",
    "StorageError",
    "absent",
    "as_path",
    "readable",
    "check_file",
    "store_errors",
    "exists",
    "folder_files",
    "has_scheme",
    "identity",
    "filesystem",
    "is_url",
    "local_path",
    "join",
    "location",
    "name_of",
    "open_file",
    "resolved",
    "sibling",
    "size",
    "version",
]

LOCAL_SCHEMES = ("file",)


class StorageError(OSError):
    """An object store that cannot be used: its fsspec implementation is not installed, or it refused."""


def _text(location: object) -> str:
    """A name as text: a string, a local path, or a store's path object (universal-pathlib's has no fspath)."""
    return (
        location
        if isinstance(location, str)
        else os.fspath(location)
        if isinstance(location, os.PathLike)
        else str(location)
    )


def has_scheme(text: str) -> bool:
    """Whether a name is a URL of any scheme (``file://``, ``http://`` and object stores' alike)."""
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme.isalnum() and len(scheme) > 1


def is_url(location: str | os.PathLike) -> bool:
    """Whether a name is a URL of a remote file system (``file://`` is local)."""
    text = _text(location)
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme.isidentifier() and scheme.lower() not in LOCAL_SCHEMES


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec file system of a URL and the path inside it; a missing implementation is said by name."""
    try:
        import fsspec
        from fsspec.core import url_to_fs
    except ImportError:  # pragma: no cover - fsspec comes with datasets
        raise StorageError(f"{url}: object stores need fsspec (pip install fsspec)") from None
    scheme = url.partition("://")[0].lower()
    try:
        return url_to_fs(url)
    except ImportError as error:
        extra = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "abfs": "adlfs", "az": "adlfs"}
        package = extra.get(scheme, "the fsspec implementation of this scheme")
        known = scheme in fsspec.available_protocols()
        why = f"{package} is not installed" if known else f"fsspec knows no file system {scheme!r}"
        raise StorageError(f"{url}: {why} ({error})") from None


def join(location: str | Path, *parts: str) -> str | Path:
    """A name inside a folder, a URL joined with ``/`` (never ``os.sep``, and never a collapsed ``//``)."""
    if isinstance(location, Path) or not is_url(location):
        return Path(location).joinpath(*parts)
    return "/".join([location.rstrip("/"), *parts])


def name_of(location: str | os.PathLike) -> str:
    """The last part of a path or URL."""
    return _text(location).rstrip("/").rsplit("/", 1)[-1]


def open_file(location: str | os.PathLike, mode: str = "rb") -> IO:
    """A local file, or a URL's object opened by fsspec (seekable where the store allows ranged reads)."""
    if not is_url(location):
        local = _text(location)
        return open(local.removeprefix("file://") if local.startswith("file://") else location, mode)  # noqa: SIM115
    fs, path = filesystem(_text(location))
    opened = fs.open(path, mode)
    # the io module's buffering over the store's file: every reader's calls (``readline(limit)``, ``peek``) work
    return io.BufferedReader(opened) if mode == "rb" else opened


def location(path: str | os.PathLike) -> Path | str:
    """A local path as a :class:`Path`, a URL as it is (``Path`` would fold its ``//``)."""
    return _text(path) if is_url(path) else Path(path)


def resolved(path: str | os.PathLike) -> str:
    """A name that is the same for every spelling of one file: the absolute local path, or the URL."""
    return _text(path) if is_url(path) else str(Path(path).resolve())


def sibling(path: str | os.PathLike, name: str) -> Path | str:
    """The file of another name in the same folder."""
    if is_url(path):
        return _text(path).rstrip("/").rsplit("/", 1)[0] + "/" + name
    return Path(path).with_name(name)


def exists(path: str | os.PathLike) -> bool:
    if is_url(path):
        fs, inside = filesystem(_text(path))
        return bool(fs.exists(inside))
    return Path(path).exists()


def size(path: str | os.PathLike) -> int:
    """A file's size in bytes."""
    if is_url(path):
        fs, inside = filesystem(_text(path))
        return int(fs.size(inside))
    return Path(path).stat().st_size


def check_file(path: str | os.PathLike, what: str, article: str = "a") -> Path | str:
    """The file (a URL stays a string), or a clear error naming ``what`` it should be if it is missing or a
    folder; on a store the error says what is missing: the bucket, the folder or the object."""
    if is_url(path):
        with store_errors(_text(path)):
            fs, inside = filesystem(_text(path))
            folder, found = fs.isdir(inside), fs.isfile(inside)
        path = _text(path)
    else:
        path = Path(path)
        folder, found = path.is_dir(), path.exists()
    if folder:
        raise IsADirectoryError(f"{path} is a directory, not {article} {what}")
    if not found:
        why = f" ({absent(path)})" if isinstance(path, str) else ""
        raise FileNotFoundError(f"{what} not found: {path}{why}")
    return path


BUCKET_SCHEMES = ("s3", "s3a", "gs", "gcs", "abfs", "az")  # stores whose first path part is a bucket (a container)


def absent(url: str) -> str:
    """What of a store's URL is missing, said for a user: the bucket, the folder the object would be in, or the
    object itself (a URL ending in ``/`` names a folder)."""
    text = _text(url)
    with store_errors(text):
        fs, inside = filesystem(text)
        fs.invalidate_cache()
        scheme = text.partition("://")[0].lower()
        parts = inside.strip("/").split("/")
        bucket = parts[0]
        if scheme in BUCKET_SCHEMES and bucket and not fs.exists(bucket):
            return f"the bucket {bucket!r} does not exist"
        parent = "/".join(parts[:-1])
        if len(parts) > 1 and parent != bucket and not fs.isdir(parent):
            return f"the folder {scheme}://{parent}/ does not exist"
        if text.endswith("/"):
            return f"the folder {text} does not exist"
        return f"no object {parts[-1]!r} in {scheme}://{parent or bucket}/"


@contextlib.contextmanager
def store_errors(url: str) -> Iterator[None]:
    """A store's own exceptions (an endpoint that does not answer, credentials refused: botocore's, not OSErrors)
    as one :class:`StorageError` naming the URL; a missing file stays a FileNotFoundError."""
    try:
        yield
    except (FileNotFoundError, IsADirectoryError, StorageError):
        raise
    except Exception as error:  # noqa: BLE001 - every backend has its own exception classes
        raise StorageError(f"{url}: the object store could not be used ({type(error).__name__}: {error})") from None


def as_path(location: str | os.PathLike) -> Path:
    """A pathlib path of a local name, or of a URL through universal-pathlib (listing, ``open``, ``stat`` on the
    store): readers of folders (img2dataset's) then walk a bucket as they walk a disk."""
    if not is_url(location):
        return Path(location)
    try:
        from upath import UPath
    except ImportError:
        raise StorageError(
            f"{location}: folders on object stores need universal-pathlib (pip install 'wikipedia-ipc[s3]')"
        ) from None
    with store_errors(_text(location)):
        return UPath(_text(location))


def readable(path: Path) -> Path | IO:
    """What pyarrow and tarfile open: a local file by its name, a store's object opened for reading."""
    return path.open("rb") if is_url(str(path)) else path


def version(path: str | os.PathLike) -> tuple[int, str]:
    """A file's size and a mark of its version: the modification time in ns on a disk; on a store the object's
    version id (where the bucket keeps versions), its tag (S3's ETag) and modification time. A file rewritten in
    place gets another mark, even with the same size (and, on a store, the same bytes)."""
    if is_url(path):
        with store_errors(_text(path)):
            fs, inside = filesystem(_text(path))
            fs.invalidate_cache(inside)  # a listing cached by this process may be older than the object
            info = fs.info(inside)
        return int(info["size"]), _mark(info)
    status = Path(path).stat()
    return status.st_size, str(status.st_mtime_ns)


def identity(path: str | os.PathLike) -> str:
    """What work kept for ``--resume`` is keyed on: the file's place (the absolute path, or the URL), size and
    version mark (:func:`version`); for a folder, those of every file in it. An input rewritten under the same
    name is read again, whatever its kind (dump, crawl, dataset shard, caption TSV)."""
    if is_url(path):
        text = _text(path)
        with store_errors(text):
            fs, inside = filesystem(text)
            fs.invalidate_cache(inside)
            found = fs.find(inside, detail=True) if fs.isdir(inside) else None  # one listing: every object's marks
        if found is not None:
            start = len(inside.rstrip("/")) + 1
            return _folder_identity(
                text, [(name[start:], int(info["size"]), _mark(info)) for name, info in sorted(found.items())]
            )
    elif Path(path).is_dir():
        files = sorted(item for item in Path(path).rglob("*") if item.is_file())
        return _folder_identity(resolved(path), [(item.relative_to(path).as_posix(), *version(item)) for item in files])
    size_of, mark = version(path)
    return f"{resolved(path)}|{size_of}|{mark}"


def _mark(info: dict[str, Any]) -> str:
    """An object's version mark from its store's description (S3's, Google's, Azure's keys, whichever it has)."""
    keys = ("VersionId", "ETag", "LastModified", "mtime", "generation", "md5Hash", "etag", "last_modified")
    return "|".join(str(info[key]) for key in keys if info.get(key) not in (None, ""))


def _folder_identity(place: str, entries: list[tuple[str, int, str]]) -> str:
    """A folder's identity: its place, its file count and a digest of each file's name, size and mark."""
    digest = hashlib.sha1("\n".join(f"{name}|{size_of}|{mark}" for name, size_of, mark in entries).encode())
    return f"{place}|folder of {len(entries)}|{digest.hexdigest()}"


def local_path(text: str) -> Path:
    """A command's argument that must be on this machine's disk: a URL of an object store is refused by name,
    not folded into a local name that does not exist."""
    if is_url(text):
        import argparse

        raise argparse.ArgumentTypeError(
            f"{text}: this command reads and writes local files and folders; copy a build from an object store "
            "first (docs/building.md, Data and output on an object store)"
        )
    return Path(text)


def folder_files(url: str) -> list[str] | None:
    """The files directly in a folder of an object store, as URLs in name order; None if the URL is no folder."""
    with store_errors(url):
        fs, inside = filesystem(url)
        if not fs.isdir(inside):
            return None
        listed = fs.ls(inside, detail=True)
    scheme = url.partition("://")[0]
    return sorted(f"{scheme}://{entry['name']}" for entry in listed if entry["type"] == "file")
