"""What a dump file is before it is read: its compression (told by its magic bytes), its kind
(told by its name), a cheap fingerprint, and the errors and counters every reader of it shares.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from pathlib import Path
from typing import BinaryIO, Literal

from builder.config import DumpKind
from builder.storage import check_file, is_url, open_file, version

__all__ = [
    "CHUNK_SIZE",
    "Compression",
    "DumpError",
    "DumpWarning",
    "MAX_PROBLEMS",
    "Problem",
    "ReadStats",
    "STREAM_HEADER",
    "STREAM_MAGIC",
    "TITLE_ELEMENT",
    "byte_place",
    "check_dump_path",
    "dump_compression",
    "fingerprint",
    "kind_from_name",
    "open_binary",
]


CHUNK_SIZE = 1 << 20
FINGERPRINT_BYTES = 1 << 20
MAX_PROBLEMS = 100
STREAM_MAGIC = re.compile(rb"BZh[1-9]1AY&SY")
STREAM_HEADER = re.compile(rb"BZh[1-9]")
TITLE_ELEMENT = re.compile(r"<title>([^<]*)</title>")
_MAGIC_BYTES = (("bz2", b"BZh"), ("gz", b"\x1f\x8b"), ("7z", b"7z\xbc\xaf\x27\x1c"))

Compression = Literal["bz2", "gz", "7z", "xml"]


@dataclasses.dataclass(frozen=True)
class Problem:
    """Something in a dump that was skipped or that ended its reading.

    ``after_page`` is the last good page the same reader saw before it (None: none yet);
    a build fills that gap from the earlier parts of the same file, so that the text
    is the same however the file was cut. ``with_page`` is False for problems whose
    place is a compressed byte offset, where the last page would depend on buffering.
    """

    message: str
    after_page: str | None = None
    with_page: bool = True

    def render(self, earlier_page: str = "") -> str:
        if not self.with_page:
            return self.message
        page = self.after_page if self.after_page is not None else earlier_page
        return f"{self.message} (last good page: {page!r})" if page else f"{self.message} (before any good page)"


class DumpError(Exception):
    """A dump file that cannot be read to its end; the message names file and place."""

    def __init__(self, problem: Problem | str) -> None:
        self.problem = problem if isinstance(problem, Problem) else Problem(problem, with_page=False)
        super().__init__(self.problem.render())


class DumpWarning(UserWarning):
    """A part of a dump that was skipped, or a dump whose content contradicts its name or config."""


@dataclasses.dataclass
class ReadStats:
    """What a reader saw and what it left out, so that nothing is lost silently."""

    pages: int = 0
    revisions: int = 0
    skipped_namespace: int = 0
    skipped_redirect: int = 0
    invalid_utf8_bytes: int = 0
    malformed_pages: int = 0
    malformed_revisions: int = 0
    content_outside_pages: int = 0
    wrong_root_element: int = 0
    pages_with_several_revisions: int = 0
    file_redirects: int = 0  # redirect pages of the File namespace, read when a build asks for them
    entities_left_out: int = 0  # entity references expat does not expand: undefined behind a DTD, or external
    namespace_mismatches: int = 0  # pages whose <ns> is not the namespace their title's prefix names
    redirect_revisions: int = 0  # revisions skipped as redirects by their text, in pages with other revisions kept

    def add(self, other: ReadStats) -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def check_dump_path(path: str | os.PathLike[str]) -> Path | str:
    """The path as a :class:`Path` (a URL of an object store stays a string), or a clear error if it is missing or
    not a file."""
    return check_file(path, "dump file")


def dump_compression(path: str | os.PathLike[str]) -> Compression:
    """The compression of a dump, told by its first bytes (not by its name)."""
    with open_file(check_dump_path(path), "rb") as handle:
        head = handle.read(8)
    for name, magic in _MAGIC_BYTES:
        if head.startswith(magic):
            return name  # type: ignore[return-value]
    return "xml"


def kind_from_name(path: str | os.PathLike[str]) -> DumpKind | None:
    """What a Wikimedia file name says the dump holds: every revision, or the latest ones."""
    name = Path(path).name
    if "pages-meta-history" in name:
        return "history"
    if "pages-articles" in name or "pages-meta-current" in name:
        return "articles"
    return None


def fingerprint(path: str | os.PathLike[str]) -> str:
    """Size, modification time and a hash of the first and last MB: cheap, even for 20 GB files.

    A dump rewritten in place (same name, same size) gets a new fingerprint, so the
    finished parts of an earlier build are not taken for parts of this one. An object's version is its store's
    tag (S3's ETag) where there is no modification time in nanoseconds.
    """
    size, stamp = version(path)
    digest = hashlib.sha1()
    with open_file(path, "rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        handle.seek(max(0, size - FINGERPRINT_BYTES))
        digest.update(handle.read(FINGERPRINT_BYTES))
    return f"{size}|{stamp}|{digest.hexdigest()}"


def byte_place(compression: Compression, stream: int | None, offset: int) -> str:
    """A place in a dump as a byte offset: in the file, or decompressed (within its bz2 stream)."""
    if compression == "xml":
        return f"byte {offset}"
    if stream is None:
        return f"decompressed byte {offset}"
    return f"decompressed byte {offset} of the bz2 stream at byte {stream}"


def open_binary(path: str | os.PathLike[str]) -> BinaryIO:
    """A dump's bytes, from a local disk or an object store (ranged reads: a task reads its part only). An object
    is not asked twice per open: the build checked it before the work, and the store says if it is gone."""
    if is_url(path):
        return open_file(path, "rb")  # type: ignore[return-value] - closed by the caller
    return open(check_dump_path(path), "rb")  # noqa: SIM115 - closed by the caller
