"""What an input is — a MediaWiki dump, a web crawl, an image–caption dataset — told by its name and first bytes.

A build reads one kind of input. Told before any page is read, a crawl given to a dump build (or a dump to a web
build) is refused in one line that names the file and the config that reads it, instead of a parse error deep in
the wrong reader. A file named as an archive (``.warc``, ``.warc.gz``, ``.arc``, ``.arc.gz``) that starts like
neither format (empty, garbage, a gzip file of something else) is refused here, named with its first bytes, rather
than taken for a dump. Nothing here needs the web libraries: a Wikipedia build imports it too.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from builder.storage import exists, folder_files, has_scheme, is_url, open_file

__all__ = [
    "ARCHIVE_SUFFIXES",
    "CONFIG_OF_KIND",
    "KINDS",
    "LISTING_SUFFIX",
    "NotAnArchive",
    "archive_format",
    "configs_for_inputs",
    "input_kind",
    "not_an_archive",
]

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
LISTING_SUFFIX = ".paths.gz"
KINDS = ("dump", "web", "dataset")
CONFIG_OF_KIND = {"web": "web", "dataset": "captions"}  # the config that reads a kind of input, besides dumps'
SHOWN = 16  # the first bytes an error shows of a file that is no archive
_PEEK = 1 << 16  # compressed bytes read to see a gzip file's first decompressed ones


class NotAnArchive(ValueError):
    """A file named as a web archive that starts like neither WARC nor ARC; the message names it and its bytes."""


def archive_format(first: bytes) -> str:
    """The format a stream's first (decompressed) bytes name: ``warc``, ``arc``, or ``""`` for neither."""
    start = first.lstrip(b"\r\n")
    if start.startswith(b"WARC/"):
        return "warc"
    if start.startswith(b"filedesc://"):
        return "arc"
    return ""


def not_an_archive(source: object, first: bytes, compressed: bool, problem: str = "") -> str:
    """The one message for a source that is no WARC or ARC file: the source, and its first bytes (a gzip file's
    decompressed ones), or that it is empty."""
    if problem:
        what = f"a gzip file that cannot be decompressed: {problem}"
    elif compressed:
        shown = f"its first bytes, decompressed, are {first[:SHOWN]!r}" if first else "it is empty once decompressed"
        what = f"a gzip file; {shown}"
    else:
        what = f"it starts with {first[:SHOWN]!r}" if first else "it is empty"
    return f"{source}: not a WARC or ARC file ({what})"


def _first_bytes(stream: object) -> tuple[bytes, bool, str]:
    """A stream's first bytes, decompressed when it is gzip (as far as they decompress), whether it was, and why
    its decompression stopped (empty when it did not)."""
    raw = stream.read(_PEEK)  # type: ignore[attr-defined]
    if raw[:2] != b"\x1f\x8b":
        return raw[:64], False, ""
    inflate = zlib.decompressobj(31)
    try:
        return inflate.decompress(raw, 64), True, ""
    except zlib.error as error:
        return b"", True, str(error)


def _file_kind(path: Path | str) -> str:
    """A file's kind by its first bytes (a gzip file by its first decompressed ones); a file named as an archive
    that is none raises :class:`NotAnArchive`."""
    try:
        with open_file(path) as stream:
            first, compressed, problem = _first_bytes(stream)
    except OSError:
        return "dump"  # unreadable here: the dump reader names what is wrong with it
    if archive_format(first):
        return "web"
    if Path(str(path)).name.lower().endswith(ARCHIVE_SUFFIXES):
        raise NotAnArchive(not_an_archive(path, first, compressed, problem))
    return "dump"


def _stored_kind(url: str) -> str:
    """An object store's file by its first bytes, its folder by the archives in it; ``unknown`` if it cannot
    be asked (the reader of the build's kind says why)."""
    try:
        names = folder_files(url)
        if names is None:
            return _file_kind(url) if exists(url) else "unknown"  # a missing one: its reader says what is missing
        if any(name.endswith(ARCHIVE_SUFFIXES) for name in names):
            return "web"
        from builder.sources.img2dataset import dataset_layout

        dataset_layout(url)  # a ValueError if it is none: the dump reader then says what it is not
        return "dataset"
    except Exception:  # noqa: BLE001 - a store's own exceptions, a missing object: told by the reader, with the URL
        return "unknown"


def _folder_kind(path: Path) -> str:
    names = [item.name for item in path.iterdir() if item.is_file()]
    if any(name.endswith(ARCHIVE_SUFFIXES) for name in names):
        return "web"
    try:
        from builder.sources.img2dataset import dataset_layout

        dataset_layout(path)
    except (ImportError, ValueError, OSError):
        dumps = any(".xml" in name or name.endswith((".bz2", ".7z")) or name == "download.json" for name in names)
        return "dump" if dumps else "unknown"
    return "dataset"


def input_kind(given: str | os.PathLike[str]) -> str:
    """``dump`` (a file that is no web archive, a download folder), ``web`` (a WARC or ARC file, a folder of them, a
    ``*.paths.gz`` listing, an archive's URL), ``dataset`` (an img2dataset output folder), or ``unknown`` (a path
    that does not exist, a folder of none of these): the reader of the build's kind names what is wrong with it.
    A file named as an archive that starts like none raises :class:`NotAnArchive` (a ValueError)."""
    text = os.fspath(given)
    if has_scheme(text):
        if text.endswith((*ARCHIVE_SUFFIXES, LISTING_SUFFIX)):
            return "web"
        return _stored_kind(text) if is_url(text) and not text.lower().startswith(("http:", "https:")) else "unknown"
    path = Path(text)
    if path.name.endswith(LISTING_SUFFIX):
        return "web"
    if path.is_dir():
        return _folder_kind(path)
    if path.is_file():
        return _file_kind(path)
    return "unknown"


def configs_for_inputs(inputs: list[str], dump_configs: list[str]) -> list[str]:
    """The configs a build without ``--configs`` makes of its inputs: ``dump_configs`` for dumps, ``web`` for
    crawls, ``captions`` for an img2dataset folder; inputs of two kinds are refused (ValueError names them)."""
    kinds = {given: kind if kind != "unknown" else "dump" for given in inputs if (kind := input_kind(given))}
    found = sorted(set(kinds.values()), key=KINDS.index)
    if len(found) > 1:
        examples = ", ".join(f"{given} ({kind})" for given, kind in kinds.items())
        raise ValueError(f"a build reads one kind of input, not {' and '.join(found)}: {examples}")
    kind = found[0] if found else "dump"
    return [CONFIG_OF_KIND[kind]] if kind in CONFIG_OF_KIND else list(dump_configs)
