"""Stage 1: stream pages out of MediaWiki XML dumps (.xml, .xml.bz2, .xml.gz, .xml.7z).

Dumps are read with the standard library's incremental XML parser (expat) over
a decompressing byte stream, so memory stays flat however large the dump is.
Every ``<revision>`` becomes one :class:`Page` record: a ``pages-articles``
dump yields one per page, a ``pages-meta-history`` dump one per revision.

A ``pages-articles-multistream`` file is a concatenation of independent bz2
streams of 100 pages each; :func:`stream_offsets` finds them (from the
``-multistream-index.txt.bz2`` file when present) so that byte ranges can be
handed to separate worker processes (:func:`iter_pages` with ``byte_range``).

The verdict on a dump never depends on how it is cut: the compression is told by
the magic bytes, places are given as "line L of the bz2 stream at byte S" (the
same whether the stream is read from the file's start or from a range), a range
is read behind the file's own header, and a malformed page is skipped and
counted the same way in every case.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import dataclasses
import gzip
import hashlib
import html
import importlib.util
import os
import queue
import re
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal
from xml.parsers import expat

from builder.languages import language_for, language_from_dbname

CHUNK_SIZE = 1 << 20
FINGERPRINT_BYTES = 1 << 20
TAIL_SCAN_BYTES = 16 << 20
MAX_PROBLEMS = 100
MAX_FAILED_CUTS = 64
_STREAM_MAGIC = re.compile(rb"BZh[1-9]1AY&SY")
_STREAM_HEADER = re.compile(rb"BZh[1-9]")
_PAGE_START = re.compile(r"\s*<page[\s>/]")
_FIRST_PAGE = re.compile(r"<page[\s>/]")
_PAGE_OR_REVISION = re.compile(rb"<(?:page|revision)[\s>/]")
_END_OF_STREAM = 0x177245385090  # the 48-bit marker that ends every bz2 stream (bit-aligned)
_BLOCK_START = 0x314159265359  # the 48-bit marker that starts every bz2 block (bit-aligned)
MAX_BLOCK_BYTES = 2 << 20  # more than a bz2 block of 900 kB can take compressed, even of random data
_TITLE = re.compile(r"<title>([^<]*)</title>")
FILE_NAMESPACE = 6
REDIRECT_ELEMENT_VERSION = (0, 4)  # export formats before 0.4 have no <redirect>: a redirect is told by its text
_MAGIC_BYTES = (("bz2", b"BZh"), ("gz", b"\x1f\x8b"), ("7z", b"7z\xbc\xaf\x27\x1c"))

Compression = Literal["bz2", "gz", "7z", "xml"]
DumpKind = Literal["articles", "history"]


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


@dataclasses.dataclass(frozen=True)
class Page:
    """One revision of one page, as found in the dump."""

    title: str
    namespace: int
    page_id: int
    revision_id: int
    text: str
    timestamp: str = ""


@dataclasses.dataclass
class SiteInfo:
    """The dump's ``<siteinfo>``: which wiki, and the names of its namespaces."""

    dbname: str = ""
    base: str = ""
    generator: str = ""
    namespaces: dict[int, str] = dataclasses.field(default_factory=dict)


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


def _count_invalid_utf8(error: UnicodeError) -> tuple[str, int]:
    """Replace undecodable bytes by U+FFFD and note where they were, for :func:`_decoded_pieces`."""
    assert isinstance(error, UnicodeDecodeError)
    _InvalidBytes.runs.append((error.start, error.end))
    return "\ufffd", error.end


class _InvalidBytes:
    runs: list[tuple[int, int]] = []  # (start, end) in the decoder's input, since the last decode call


codecs.register_error("wikipedia-ipc-count", _count_invalid_utf8)


def check_dump_path(path: str | os.PathLike[str]) -> Path:
    """The path as a :class:`Path`, or a clear error if it is missing or not a file."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a dump file")
    if not path.exists():
        raise FileNotFoundError(f"dump file not found: {path}")
    return path


def dump_compression(path: str | os.PathLike[str]) -> Compression:
    """The compression of a dump, told by its first bytes (not by its name)."""
    with open(check_dump_path(path), "rb") as handle:
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
    finished parts of an earlier build are not taken for parts of this one.
    """
    path = Path(path)
    status = path.stat()
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        handle.seek(max(0, status.st_size - FINGERPRINT_BYTES))
        digest.update(handle.read(FINGERPRINT_BYTES))
    return f"{status.st_size}|{status.st_mtime_ns}|{digest.hexdigest()}"


class _Lines:
    """Turns expat's line numbers into places that do not depend on where reading began.

    Within a bz2 stream that does not start the file, lines are counted from the
    stream's start: a range of a multistream dump and the whole file then name the
    same place the same way.
    """

    def __init__(self) -> None:
        self.fed = 0
        self.stream: int | None = None
        self.first_line = 1
        self.shift = 0  # lines to add to expat's (a range of a plain file read behind text from elsewhere)
        self._ended_with_cr = False

    def feed(self, stream: int | None, text: str) -> None:
        if stream != self.stream:
            self.stream = stream
            self.first_line = self.fed + 1
        if stream is None:
            return  # not bz2: one stream, expat's own line numbers are the places
        # expat counts "\n", "\r\n" and a lone "\r" as one line break each
        breaks = text.count("\n")
        if "\r" in text:
            breaks += text.count("\r") - text.count("\r\n")
        if self._ended_with_cr and text.startswith("\n"):
            breaks -= 1
        self.fed += breaks
        if text:
            self._ended_with_cr = text.endswith("\r")

    def where(self, line: int, column: int | None = None) -> str:
        at_column = "" if column is None else f", column {column}"
        if not self.stream:
            return f"line {line + self.shift}{at_column}"
        return f"line {line - self.first_line + 1}{at_column} of the bz2 stream at byte {self.stream}"


class _PageCollector:
    """expat handlers that assemble pages and the siteinfo from element events.

    A page whose title, namespace or id is missing or not valid is skipped and
    counted (``malformed_pages``), as is a revision without a valid id; text and
    elements directly inside the root element other than pages and the siteinfo
    are counted (``content_outside_pages``). Each gets a :class:`Problem`.
    """

    _CAPTURED = frozenset({"title", "ns", "id", "text", "timestamp", "dbname", "base", "generator", "namespace"})

    def __init__(
        self,
        source: str,
        namespaces: frozenset[int] | None,
        skip_redirects: bool,
        stats: ReadStats,
        file_redirects: bool = False,
    ) -> None:
        self.source = source
        self.file_redirects = file_redirects
        self.redirects: list[tuple[str, str]] = []
        self.namespaces = namespaces
        self.skip_redirects = skip_redirects
        self.stats = stats
        self.siteinfo = SiteInfo()
        self.ready: list[Page] = []
        self.problems: list[Problem] = []
        self.last_good: str | None = None
        self.loud = True
        self.locate: Callable[[], str] = lambda: "an unknown place"
        self._path: list[str] = []
        self._buffer: list[str] | None = None
        self._namespace_key = 0
        self._page: dict[str, object] = {}
        self._page_flaw = ""
        self._page_where = ""
        self._revision: dict[str, object] = {}
        self._revision_flaw = ""
        self._revision_where = ""
        self._page_revisions = 0
        self._stray_text = False
        self._last_root_event = ""
        self._redirects_by_text = False
        self._content_language = ""
        self._namespace_by_name: dict[str, int] | None = None
        self._redirect_start: re.Pattern[str] | None = None
        self._page_redirect_revisions = 0
        self._redirect_now: str | None = None
        self.page_continues = False  # the range ends inside a page: the next range reads its end

    def note(self, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(f"{self.source}: {message}", self.last_good))

    def invalid_utf8(self, length: int, place: str) -> None:
        """Invalid bytes the decoder replaced by U+FFFD: where they were, and in which page."""
        self.note(
            f"{length} invalid UTF-8 byte{'s' if length > 1 else ''} at {place}, {self._page_being_read()}:"
            " replaced by U+FFFD"
        )

    def skipped_entity(self, name: str, is_parameter_entity: bool) -> None:
        """An entity that expat leaves out: undefined, where a DTD it does not read might define it."""
        if self.loud:
            self.stats.entities_left_out += 1
            reference = f"%{name};" if is_parameter_entity else f"&{name};"
            self.note(f"entity {reference} at {self.locate()}, {self._page_being_read()}: not defined, left out")

    def external_entity(
        self, context: str | None, base: str | None, system_id: str | None, public_id: str | None
    ) -> int:
        """An external entity: never loaded (a dump must not make us read files or URLs), so it is left out."""
        if not self.loud:
            return 1
        self.stats.entities_left_out += 1
        if context is None:  # the DTD's external subset, or a parameter entity in it
            self.note(
                f"the external DTD part {system_id!r} at {self.locate()} is not loaded: what it defines is left out"
            )
        else:
            where = f"{self.locate()}, {self._page_being_read()}"
            self.note(f"external entity &{context}; ({system_id!r}) at {where}: not loaded, left out")
        return 1  # tells expat to go on without it

    def _page_being_read(self) -> str:
        """The page the parser is in, for a place in a warning (its title is known once ``</title>`` is read)."""
        if "page" not in self._path:
            return "outside the pages"
        title, page_id = str(self._page["title"]), self._page["id"]
        if not title:
            return "in a page whose title is not read yet"
        return f"in page {title!r}" + (f" (id {page_id})" if page_id is not None else "")

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if self._stray_text:
            self._end_stray_text()
        depth = len(self._path)
        parent = self._path[-1] if self._path else ""
        self._path.append(name)
        if depth == 0:
            self._last_root_event = self.locate()
            if name != "mediawiki" and self.loud:
                self.stats.wrong_root_element += 1
                self.note(f"the root element is <{name}>, not <mediawiki> ({self._last_root_event})")
            self._redirects_by_text = _export_version(attrs.get("version", "")) < REDIRECT_ELEMENT_VERSION
            self._content_language = attrs.get("xml:lang", "")
        elif depth == 1 and name not in ("page", "siteinfo") and self.loud:
            self.stats.content_outside_pages += 1
            self.note(f"element <{name}> outside the pages at {self.locate()}")
        if name == "page":
            self._page = {"title": "", "ns": None, "id": None, "redirect": False, "target": "", "title_ns": None}
            self._page_flaw = ""
            self._page_where = self.locate()
            self._page_revisions = 0
            self._page_redirect_revisions = 0
            self._redirect_now = None
        elif name == "redirect" and parent == "page":
            self._page["redirect"] = True
            self._page["target"] = attrs.get("title", "")
        elif name == "revision":
            self._revision = {"id": None, "text": "", "timestamp": ""}
            self._revision_flaw = ""
            self._revision_where = self.locate()
        elif name == "namespace" and parent == "namespaces":
            key = attrs.get("key", "0")
            try:
                self._namespace_key = int(key)
            except ValueError:
                raise DumpError(
                    Problem(f"{self.source}: namespace key {key!r} is not a number at {self.locate()}", self.last_good)
                ) from None
        if name in self._CAPTURED and self._wanted(name, parent):
            self._buffer = []

    def _wanted(self, name: str, parent: str) -> bool:
        """Skip buffering the text of revisions that will be filtered out anyway."""
        if parent == "revision" and name in ("text", "timestamp"):
            return self._keep_page() or self._file_redirect_by_text()
        return True

    def _file_redirect_by_text(self) -> bool:
        """A File page of an old export: its text tells whether it redirects, and where to."""
        return self.file_redirects and self._redirects_by_text and self._page.get("ns") == FILE_NAMESPACE

    def _keep_page(self) -> bool:
        if self._page_flaw or self._missing_field():
            return False
        if self.namespaces is not None and self._page.get("ns") not in self.namespaces:
            return False
        return not (self.skip_redirects and self._page.get("redirect"))

    def _missing_field(self) -> str:
        """Why the page cannot be used, once its title, ns and id should have been read."""
        if not str(self._page["title"]).strip():
            return "it has no title"
        if self._page["id"] is None:
            return "it has no page <id>"
        return ""

    def open_elements(self) -> list[str]:
        return list(self._path)

    def characters(self, data: str) -> None:
        if self._buffer is not None:
            self._buffer.append(data)
        elif len(self._path) == 1 and self.loud and not self._stray_text and data.strip():
            self._stray_text = True

    def _end_stray_text(self) -> None:
        """Count a run of text directly in the root once, placed after the element before it."""
        self._stray_text = False
        self.stats.content_outside_pages += 1
        self.note(f"text outside the pages after {self._last_root_event}")

    def end(self, name: str) -> None:
        if self._stray_text:
            self._end_stray_text()
        self._path.pop()
        parent = self._path[-1] if self._path else ""
        value = "".join(self._buffer) if self._buffer is not None else ""
        self._buffer = None
        if parent == "page" and name == "title":
            self._page["title"] = value
            self._page["title_ns"] = self._title_namespace(value)
            if self._page["ns"] is None:  # no <ns> (yet): export formats before 0.5 have none
                self._page["ns"] = self._page["title_ns"]
            elif not self._page_flaw:
                self._check_namespace()
        elif parent == "page" and name in ("ns", "id"):
            number = _integer(value)
            if number is None:
                self._page_flaw = self._page_flaw or f"its <{name}> {value!r} is not a number"
            self._page[name] = number
            if name == "ns" and number is not None and self._page["title_ns"] is not None:
                self._check_namespace()
        elif parent == "revision" and name == "id":
            self._revision["id"] = number = _integer(value)
            if number is None:
                self._revision_flaw = f"its <id> {value!r} is not a number"
        elif parent == "revision" and name in ("text", "timestamp"):
            self._revision[name] = value
        elif name == "revision":
            self._finish_revision()
        elif name == "page":
            self._finish_page()
        elif parent == "siteinfo" and name in ("dbname", "base", "generator"):
            setattr(self.siteinfo, name, value)
        elif parent == "namespaces" and name == "namespace":
            self.siteinfo.namespaces[self._namespace_key] = value
        if len(self._path) <= 1:
            self._last_root_event = self.locate()

    def _title_namespace(self, title: str) -> int:
        """The namespace a title's prefix names, as MediaWiki reads it: case-insensitively, 0 for no known prefix."""
        if self._namespace_by_name is None:
            self._namespace_by_name = {
                _namespace_name_key(name): key for key, name in self.siteinfo.namespaces.items() if key and name
            }
        prefix, sep, _ = title.partition(":")
        return self._namespace_by_name.get(_namespace_name_key(prefix), 0) if sep else 0

    def _check_namespace(self) -> None:
        """A page's ``<ns>`` must be the namespace its title names; the ``<ns>`` is kept, the page counted."""
        if self._page["ns"] == self._page["title_ns"] or not self.loud:
            return
        self.stats.namespace_mismatches += 1
        self.note(
            f"page at {self._page_where} ({self._page['title']!r}) has <ns> {self._page['ns']}, but its title"
            f" names namespace {self._page['title_ns']}: read as namespace {self._page['ns']}"
        )

    def _redirect_target(self, text: str) -> str | None:
        """The target of a revision whose text is a redirect (old exports have no ``<redirect>``), else None.

        As MediaWiki: the redirect magic word of the dump's language (English ``#REDIRECT`` always
        works) at the start of the text, then a link.
        """
        if self._redirect_start is None:
            words = redirect_words(self.siteinfo.dbname, self._content_language)
            self._redirect_start = re.compile(
                r"\s*(?:" + "|".join(re.escape(word) for word in words) + r")\s*:?\s*\[\[([^\]|]*)", re.IGNORECASE
            )
        match = self._redirect_start.match(text)
        return match.group(1).strip() if match else None

    def _finish_revision(self) -> None:
        self.stats.revisions += 1
        self._page_revisions += 1
        if self._page_flaw or self._missing_field():
            return  # the whole page is skipped and counted when it ends
        if self._revision_flaw or self._revision["id"] is None:
            self.stats.malformed_revisions += 1
            flaw = self._revision_flaw or "it has no <id>"
            self.note(f"revision at {self._revision_where} of page {self._page['title']!r} skipped: {flaw}")
            return
        if self._redirects_by_text and (self._keep_page() or self._file_redirect_by_text()):
            self._redirect_now = self._redirect_target(str(self._revision["text"]))
            if self._redirect_now is not None and self.skip_redirects:
                self._page_redirect_revisions += 1
                return
        if not self._keep_page():
            return
        self.ready.append(
            Page(
                title=str(self._page["title"]),
                namespace=int(self._page["ns"]),  # type: ignore[call-overload]
                page_id=int(self._page["id"]),  # type: ignore[call-overload]
                revision_id=int(self._revision["id"]),  # type: ignore[call-overload]
                text=str(self._revision["text"]),
                timestamp=str(self._revision["timestamp"]),
            )
        )

    def continue_page(self, where: str, earlier_revisions: bool) -> None:
        """The page just opened began in an earlier range, which read its revisions before (if any)."""
        self._page_revisions = 1 if earlier_revisions else 0  # only "more than one" is counted
        self._page_where = where

    def _finish_page(self) -> None:
        if self.page_continues:  # counted by the range that reads the page's end
            self.stats.redirect_revisions += self._page_redirect_revisions
            return
        self.stats.pages += 1
        if self._page_revisions > 1:
            self.stats.pages_with_several_revisions += 1
        flaw = self._page_flaw or self._missing_field()
        if flaw:
            self.stats.malformed_pages += 1
            title = str(self._page["title"]).strip()
            named = f" ({title!r})" if title else ""
            self.note(f"page at {self._page_where}{named} skipped: {flaw}")
            return
        self.last_good = str(self._page["title"])
        if self._redirects_by_text:  # a redirect is what its latest revision is, as <redirect> says in later formats
            self._page["redirect"] = self._redirect_now is not None
            self._page["target"] = self._redirect_now or ""
        if self.file_redirects and self._page["ns"] == FILE_NAMESPACE and self._page["redirect"]:
            self.stats.file_redirects += 1
            self.redirects.append((str(self._page["title"]), str(self._page["target"])))
        if self.namespaces is not None and self._page["ns"] not in self.namespaces:
            self.stats.skipped_namespace += 1
        elif 0 < self._page_redirect_revisions < self._page_revisions:
            self.stats.redirect_revisions += self._page_redirect_revisions  # the page's other revisions were read
        elif self.skip_redirects and self._page["redirect"]:
            self.stats.skipped_redirect += 1


def _namespace_name_key(name: str) -> str:
    """A namespace name as ``Language::getNsIndex`` compares it: any case, underscores as spaces, spaces collapsed."""
    return " ".join(name.replace("_", " ").split()).lower()


def _export_version(version: str) -> tuple[int, ...]:
    """The export format's version (``0.3``) as numbers; a dump that does not say is taken for a current one."""
    parts = version.strip().split(".")
    if not all(part.isdigit() for part in parts):
        return (99,)
    return tuple(int(part) for part in parts)


def redirect_words(dbname: str, content_language: str = "") -> tuple[str, ...]:
    """The redirect magic words of the dump's wiki, English's included.

    The wiki is told by ``<dbname>``; old exports have none, only the root's ``xml:lang``;
    a dump that says neither (or names a wiki not known) gets English's alone.
    """
    try:
        language = language_for(language_from_dbname(dbname) if dbname else content_language or "en")
    except ValueError:
        language = language_for("en")
    return tuple(dict.fromkeys((*language.redirect_words, *language_for("en").redirect_words)))


def _byte_place(compression: Compression, stream: int | None, offset: int) -> str:
    """A place in a dump as a byte offset: in the file, or decompressed (within its bz2 stream)."""
    if compression == "xml":
        return f"byte {offset}"
    if stream is None:
        return f"decompressed byte {offset}"
    return f"decompressed byte {offset} of the bz2 stream at byte {stream}"


def _integer(text: str) -> int | None:
    """An XML integer field, or None when it is not one (ids are never negative in dumps)."""
    text = text.strip()
    return int(text) if text.isascii() and text.lstrip("-").isdigit() else None


def _open_binary(path: Path) -> BinaryIO:
    return open(check_dump_path(path), "rb")  # noqa: SIM115 - closed by the caller's context manager


def _stream_end_marker_at(data: bytes, end: int) -> bool:
    """Whether a bz2 end-of-stream marker (48-bit magic, 32-bit CRC, 0–7 padding bits) ends ``data[:end]``."""
    if end < 11:
        return False
    value = int.from_bytes(data[end - 11 : end], "big")
    return any((value >> (32 + padding)) & 0xFFFFFFFFFFFF == _END_OF_STREAM for padding in range(8))


def _last_stream_end(data: bytes) -> int | None:
    """The byte just after the last bz2 end-of-stream marker in ``data``, searched at every bit shift."""
    ends = []
    for shift in range(8):
        window = (_END_OF_STREAM << (8 - shift)).to_bytes(7, "big")  # the marker starting ``shift`` bits in
        middle = window[1:6]
        position = data.rfind(middle)
        while position > 0:
            first, last = data[position - 1], data[position + 5] if position + 5 < len(data) else None
            head_ok = (first & (0xFF >> shift)) == window[0] if shift else first == window[0]
            tail_mask = (0xFF << (8 - shift)) & 0xFF
            tail_ok = shift == 0 or (last is not None and last & tail_mask == window[6])
            if head_ok and tail_ok:
                start_bit = (position - 1) * 8 + shift
                ends.append(-(-(start_bit + 80) // 8))
                break
            position = data.rfind(middle, 0, position + 4)
    ends = [end for end in ends if end <= len(data)]
    return max(ends) if ends else None


def check_bz2_end(path: Path) -> None:
    """Refuse a bz2 file that does not end with the end of a bz2 stream, before reading it.

    A truncated download, or one with other data appended, is then reported at once and
    the same way by every reader (the parallel decompressor ignores trailing data). A tail
    with no bz2 block in it is data appended after the last stream, however long it is.
    """
    size = path.stat().st_size
    with open(path, "rb") as handle:
        handle.seek(max(0, size - 11))
        if _stream_end_marker_at(handle.read(11), min(size, 11)):
            return
        start = max(0, size - TAIL_SCAN_BYTES)
        handle.seek(start)
        tail = handle.read()
        end = _last_stream_end(tail)
        if end is not None:
            end += start
        elif start > 0 and not _bit_offsets(tail, _BLOCK_START):
            end = _last_stream_end_before(handle, start)
        if end is not None:
            handle.seek(end)
            follows = handle.read(4)
    if end is None and start == 0:
        raise DumpError(f"{path}: truncated bz2 data: the data ends at byte {size} inside the bz2 stream at byte 0")
    if end is None:
        raise DumpError(
            f"{path}: truncated bz2 data: the data ends at byte {size} inside a bz2 stream"
            f" (none ends in the last {len(tail):,} bytes)"
        )
    if _STREAM_HEADER.match(follows):
        raise DumpError(f"{path}: truncated bz2 data: the data ends at byte {size} inside the bz2 stream at byte {end}")
    raise DumpError(
        f"{path}: {size - end:,} bytes after the end of the last bz2 stream (from byte {end} on) are not bz2 data"
    )


def _last_stream_end_before(handle: BinaryIO, before: int) -> int | None:
    """The byte after the last bz2 stream that ends before ``before``, searched backwards window by window."""
    while before > 0:
        start = max(0, before - TAIL_SCAN_BYTES)
        handle.seek(start)
        end = _last_stream_end(handle.read(before - start + 10))  # a marker may end just past ``before``
        if end is not None:
            return start + end
        before = start
    return None


def _bit_offsets(data: bytes, marker: int) -> list[int]:
    """Where the 48-bit ``marker`` starts in ``data``, as bit offsets, at any bit alignment."""
    found = []
    for shift in range(8):
        window = (marker << (8 - shift)).to_bytes(7, "big")  # the marker starting ``shift`` bits into a byte
        middle = window[1:6]
        position = data.find(middle, 1)
        while position >= 0:
            first = position - 1
            value = int.from_bytes(data[first : first + 7].ljust(7, b"\0"), "big")
            if (value >> (8 - shift)) & 0xFFFFFFFFFFFF == marker:
                found.append(first * 8 + shift)
            position = data.find(middle, position + 1)
    return sorted(found)


def _block_alone(data: bytes, start: int, end: int, level: bytes) -> bytes | None:
    """The bz2 block at bits ``start``–``end`` of ``data`` decompressed as a stream of its own; None if damaged.

    A block carries its own CRC, which is also the combined CRC of a one-block stream: so
    the block is wrapped in a stream header and end marker and checked on its own (as
    bzip2recover does), wherever it lies in the file and however the file was read.
    """
    first, last = start // 8, -(-end // 8)
    length = end - start
    bits = (int.from_bytes(data[first:last], "big") >> (last * 8 - end)) & ((1 << length) - 1)
    crc = (bits >> (length - 80)) & 0xFFFFFFFF  # the 32 bits after the block's start marker
    total = length + 80
    padding = -total % 8
    body = ((((bits << 48) | _END_OF_STREAM) << 32 | crc) << padding).to_bytes((total + padding) // 8, "big")
    try:
        return bz2.decompress(b"BZh" + level + body)
    except (OSError, EOFError, ValueError):
        return None


def _damage_in(path: Path, stream: int, first: int, last: int) -> str:
    """Where the damage is in the bz2 stream at ``stream``: its first bad block, and the page being read.

    The callers know that the blocks before byte ``first``, and the first one after it,
    were read without fault, and that the bad block starts before byte ``last``. The blocks
    between are checked one by one, so the answer is the same whichever decompressor hit
    the damage and however the file was cut. The text of the good block before the bad one
    names the page being read.
    """
    first = max(first, stream)
    with _open_binary(path) as handle:
        handle.seek(stream)
        level = handle.read(4)[3:]
        handle.seek(first)
        data = handle.read(last - first + MAX_BLOCK_BYTES)
    starts = _bit_offsets(data, _BLOCK_START)
    ends = sorted(starts + _bit_offsets(data, _END_OF_STREAM))
    before = b""
    for start in starts:
        later = [end for end in ends if end > start]
        if not later or start >= (last - first) * 8:
            break
        block = _block_alone(data, start, later[0], level)
        if block is None:
            titles = _TITLE.findall(before.decode("utf-8", errors="replace"))
            page = f" (the page being read: {html.unescape(titles[-1])!r})" if titles else ""
            return f": the bz2 block that starts in byte {first + start // 8} is damaged{page}"
        before = block
    return ""


def _bz2_pieces(
    handle: BinaryIO, path: Path, start: int, end: int, read_size: int = CHUNK_SIZE
) -> Iterator[tuple[int, bytes]]:
    """Decompress the bz2 streams between two byte offsets; each piece comes with its stream's offset.

    After a stream ends, the next bytes must start another stream: anything else is
    an error that names its offset, never silently dropped. ``read_size`` bytes of bz2 data
    are decompressed at a time.
    """
    handle.seek(start)
    offset = start
    pending = b""
    stream = start
    decompressor: bz2.BZ2Decompressor | None = None
    while True:
        if decompressor is None:
            while len(pending) < 4 and offset < end:
                more = handle.read(min(read_size, end - offset))
                if not more:
                    break
                pending += more
                offset += len(more)
            if not pending:
                return
            stream = offset - len(pending)
            if not _STREAM_HEADER.match(pending):
                raise DumpError(
                    f"{path}: the data at byte {stream} follows the end of a bz2 stream but is not bz2"
                    " (appended data, or a damaged stream header)"
                )
            decompressor = bz2.BZ2Decompressor()
        if not pending:
            pending = handle.read(min(read_size, end - offset)) if offset < end else b""
            offset += len(pending)
            if not pending:
                raise DumpError(
                    f"{path}: truncated bz2 data: the data ends at byte {offset} inside the bz2 stream at byte {stream}"
                )
        try:
            data = decompressor.decompress(pending)
        except OSError:
            damage = _damage_in(path, stream, offset - len(pending) - 2 * MAX_BLOCK_BYTES, offset)
            raise DumpError(f"{path}: corrupt bz2 data in the bz2 stream at byte {stream}{damage}") from None
        pending = b""
        if data:
            yield stream, data
        if decompressor.eof:
            pending = decompressor.unused_data
            decompressor = None


def _parallel_bz2_pieces(path: Path, threads: int) -> Iterator[tuple[int, bytes]]:
    """A single-stream bz2 file decompressed by ``threads`` threads ahead of the parser (indexed_bzip2)."""
    import indexed_bzip2

    with indexed_bzip2.open(str(path), parallelization=threads) as stream:
        try:
            while chunk := stream.read(CHUNK_SIZE):
                yield 0, chunk
        except (RuntimeError, ValueError):  # indexed_bzip2 reports bad data as bare C++ exceptions
            first, last = _good_blocks_before(stream.available_block_offsets(), stream.tell())
            damage = _damage_in(path, 0, first, last)
            raise DumpError(f"{path}: corrupt bz2 data in the bz2 stream at byte 0{damage}") from None


def _good_blocks_before(blocks: dict[int, int], failed_at: int) -> tuple[int, int]:
    """Bytes of the file between which the block that failed at decompressed offset ``failed_at`` starts.

    ``blocks`` maps the bit offsets of the blocks indexed_bzip2 has found to their
    decompressed offsets; the last one before ``failed_at`` was good, the bad one follows.
    """
    good = [bit for bit, decompressed in blocks.items() if decompressed < failed_at]
    first = max(good) // 8 if good else 0
    return first, first + 8 * MAX_BLOCK_BYTES


def _sevenzip_chunks(path: Path) -> Iterator[bytes]:
    """A .7z dump, streamed: py7zr decompresses in a thread into a small queue that we drain.

    py7zr pushes decompressed blocks into writer objects; the bounded queue turns that
    into the pull of our parser without ever holding the whole file.
    """
    import py7zr
    from py7zr.io import Py7zIO, WriterFactory

    blocks: queue.Queue[bytes | None] = queue.Queue(maxsize=16)
    failures: list[BaseException] = []

    class QueueWriter(Py7zIO):
        def write(self, data: bytes | bytearray) -> int:
            blocks.put(bytes(data))
            return len(data)

        def read(self, size: int | None = None) -> bytes:
            return b""

        def seek(self, offset: int, whence: int = 0) -> int:
            return 0

        def flush(self) -> None:
            return None

        def size(self) -> int:
            return 0

    class QueueFactory(WriterFactory):
        def create(self, filename: str) -> Py7zIO:
            return QueueWriter()

    def decompress() -> None:
        try:
            with py7zr.SevenZipFile(path) as archive:
                archive.extract(factory=QueueFactory())
        except Exception as error:  # py7zr raises many types for bad archives; all end this dump
            failures.append(error)
        finally:
            blocks.put(None)

    threading.Thread(target=decompress, name=f"7z:{path.name}", daemon=True).start()
    while (block := blocks.get()) is not None:
        yield block
    if failures:
        raise DumpError(f"{path}: cannot read the 7z archive ({type(failures[0]).__name__}: {failures[0]})")


def _libarchive_works() -> bool:
    """Whether libarchive-c and the C library it binds are there (the library is found only when imported)."""
    if importlib.util.find_spec("libarchive") is None:
        return False
    try:
        import libarchive  # noqa: F401
    except (ImportError, OSError, AttributeError):
        return False
    return True


def _libarchive_chunks(path: Path) -> Iterator[bytes]:
    """A .7z dump streamed by libarchive: as fast as the ``7z`` command, several times py7zr (benchmarks/history.py)."""
    import libarchive
    from libarchive.exception import ArchiveError

    try:
        with libarchive.file_reader(str(path)) as archive:
            for entry in archive:
                yield from entry.get_blocks()
    except ArchiveError as error:
        raise DumpError(f"{path}: cannot read the 7z archive (ArchiveError: {error})") from None


READ_AHEAD_PIECES = 16  # decompressed pieces a reader thread may hold ready: a few MB
READ_AHEAD_BZ2 = 1 << 18  # bz2 bytes per piece read ahead: small, so that parsing starts after the first
# While a reader thread decompresses, the interpreter hands the GIL over every 0.5 ms instead of 5 ms: the
# thread needs it for a moment between two pieces, and would otherwise wait for the parser's time slice.
READ_AHEAD_SWITCH_SECONDS = 0.0005
_switch_lock = threading.Lock()
_switch_users = 0
_switch_saved = 0.005


@contextlib.contextmanager
def _responsive_switching() -> Iterator[None]:
    """The shorter GIL switch interval while at least one reader thread runs; the caller's own afterwards."""
    global _switch_users, _switch_saved
    with _switch_lock:
        if _switch_users == 0:
            _switch_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_saved, READ_AHEAD_SWITCH_SECONDS))
        _switch_users += 1
    try:
        yield
    finally:
        with _switch_lock:
            _switch_users -= 1
            if _switch_users == 0:
                sys.setswitchinterval(_switch_saved)


def _read_ahead(pieces: Iterator[tuple[int | None, bytes]], name: str) -> Iterator[tuple[int | None, bytes]]:
    """The pieces, decompressed by a thread while the caller parses the ones before.

    bz2 and zlib release the GIL while they decompress, so decompression (the floor of a
    build) overlaps with the XML parsing and the image extraction instead of adding to them.
    An error of the thread is raised here, at the piece it stopped before; a caller that
    stops early stops the thread before the file is closed.
    """
    ready: queue.Queue[tuple[int | None, bytes] | BaseException | None] = queue.Queue(maxsize=READ_AHEAD_PIECES)
    stop = threading.Event()

    def produce() -> None:
        try:
            for piece in pieces:
                while not stop.is_set():
                    try:
                        ready.put(piece, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(None)
        except BaseException as error:  # handed to the caller, who raises it at the place it stopped
            ready.put(error)

    thread = threading.Thread(target=produce, name=f"decompress:{name}", daemon=True)
    with _responsive_switching():
        thread.start()
        try:
            while (item := ready.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            while thread.is_alive():
                try:
                    ready.get(timeout=0.1)
                except queue.Empty:
                    continue
            thread.join()


def _raw_pieces(
    path: Path,
    compression: Compression,
    byte_range: tuple[int, int] | None,
    threads: int = 1,
    read_ahead: bool = False,
    read_size: int = CHUNK_SIZE,
) -> Iterator[tuple[int | None, bytes]]:
    """The dump's decompressed bytes, piece by piece, with the offset of the bz2 stream (None if not bz2).

    ``read_ahead`` decompresses bz2 data in a thread ahead of the caller (:func:`_read_ahead`);
    ``read_size`` bytes of bz2 data are decompressed at a time otherwise.
    """
    if byte_range is not None and compression not in ("bz2", "xml"):
        raise ValueError(f"{path}: byte ranges need a bz2 multistream dump or a plain XML file")
    if compression == "7z":
        for block in _libarchive_chunks(path) if _libarchive_works() else _sevenzip_chunks(path):
            yield None, block
        return
    if compression == "bz2" and byte_range is None and threads > 1 and importlib.util.find_spec("indexed_bzip2"):
        yield from _parallel_bz2_pieces(path, threads)
        return
    with _open_binary(path) as handle:
        if compression == "bz2":
            start, end = byte_range if byte_range else (0, path.stat().st_size)
            if read_ahead:
                yield from _read_ahead(_bz2_pieces(handle, path, start, end, READ_AHEAD_BZ2), path.name)
            else:
                yield from _bz2_pieces(handle, path, start, end, read_size)
            return
        if byte_range is not None:  # a plain file's range: its bytes as they are
            handle.seek(byte_range[0])
            left = byte_range[1] - byte_range[0]
            while left > 0 and (chunk := handle.read(min(CHUNK_SIZE, left))):
                left -= len(chunk)
                yield None, chunk
            return
        stream: BinaryIO = gzip.GzipFile(fileobj=handle) if compression == "gz" else handle
        try:
            while chunk := stream.read(CHUNK_SIZE):
                yield None, chunk
        except (EOFError, gzip.BadGzipFile) as error:
            raise DumpError(f"{path}: truncated or corrupt gzip data: {error}") from None


def _decoded_pieces(
    pieces: Iterable[tuple[int | None, bytes]], stats: ReadStats
) -> Iterator[tuple[int | None, str, list[tuple[int, int, int]]]]:
    """UTF-8 decode, replacing (and counting) invalid bytes instead of failing the whole dump.

    Each text comes with its invalid byte runs as (index of the U+FFFD in the text,
    decompressed byte offset in its bz2 stream or file, length), so that the reader can
    say where they were.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="wikipedia-ipc-count")
    stream: int | None = None
    position = 0  # decompressed bytes of the stream before the piece
    for piece_stream, piece in pieces:
        if piece_stream != stream:
            stream, position = piece_stream, 0
        pending = decoder.getstate()[0]
        text = decoder.decode(piece)
        yield stream, text, _invalid_runs(pending, piece, position, stats)
        position += len(piece)
    pending = decoder.getstate()[0]
    yield stream, decoder.decode(b"", final=True), _invalid_runs(pending, b"", position, stats)


def _invalid_runs(pending: bytes, piece: bytes, position: int, stats: ReadStats) -> list[tuple[int, int, int]]:
    """The runs :func:`_count_invalid_utf8` noted while decoding ``piece`` (at ``position``) behind ``pending``.

    The decoder's input is the bytes it kept back from the piece before, then the piece.
    The bytes between two runs are valid UTF-8, so each run's place in the decoded text is
    the length of what came before it; adjacent runs are one run.
    """
    if not _InvalidBytes.runs:
        return []
    data = pending + piece
    offset = position - len(pending)
    runs: list[tuple[int, int, int]] = []
    index = 0
    done = 0
    for start, end in _InvalidBytes.runs:
        stats.invalid_utf8_bytes += end - start
        if runs and start == done:
            at, where, length = runs[-1]
            runs[-1] = (at, where, length + end - start)
        else:
            index += len(data[done:start].decode("utf-8"))
            runs.append((index, offset + start, end - start))
        index += 1  # the U+FFFD
        done = end
    _InvalidBytes.runs.clear()
    return runs


def _first_stream_start(handle: BinaryIO, offset: int) -> str:
    """The first decompressed characters of the bz2 stream at ``offset`` ("" if it cannot be read)."""
    handle.seek(offset)
    decompressor = bz2.BZ2Decompressor()
    try:
        while not decompressor.eof and (raw := handle.read(1 << 16)):
            if data := decompressor.decompress(raw):
                return data[:256].decode("utf-8", errors="replace")
    except OSError:
        return ""
    return ""


def header_text(path: Path) -> str:
    """The dump's text before its first ``<page>``, from the first bz2 stream: what a range is read behind."""
    decompressor = bz2.BZ2Decompressor()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = ""
    with _open_binary(path) as handle:
        while not decompressor.eof and (raw := handle.read(1 << 16)):
            try:
                text += decoder.decode(decompressor.decompress(raw))
            except OSError:
                raise DumpError(f"{path}: corrupt bz2 data in the bz2 stream at byte 0") from None
            if match := _FIRST_PAGE.search(text):
                return text[: match.start()]
    return text


class DumpReader:
    """Iterate over the revisions of one dump file (or one byte range of a multistream file).

    ``namespaces=None`` keeps every namespace; the default keeps articles only.
    After iteration, :attr:`stats` tells how many pages were read and skipped,
    :attr:`problems` says what was skipped and where, :attr:`last_good` names the
    last well-formed page, and :attr:`siteinfo` holds the dump's namespace names.
    ``decompress_threads`` > 1 decompresses a single-stream bz2 file in parallel
    threads (indexed_bzip2); it is meant for single-stream files, which the build
    checks before it asks for it; otherwise ``read_ahead`` decompresses bz2 data in a
    thread ahead of the parser (a second core's work, for a reader that has one to itself).
    ``file_redirects`` collects the redirect pages of the File namespace as raw
    ``(title, target)`` in :attr:`redirects` (they are not yielded).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        namespaces: Iterable[int] | None = (0,),
        skip_redirects: bool = True,
        byte_range: tuple[int, int] | None = None,
        decompress_threads: int = 1,
        file_redirects: bool = False,
        read_ahead: bool = True,
    ) -> None:
        self.path = Path(path)
        self.read_ahead = read_ahead
        self.file_redirects = file_redirects
        self.redirects: list[tuple[str, str]] = []
        self.decompress_threads = decompress_threads
        self.namespaces = None if namespaces is None else frozenset(namespaces)
        self.skip_redirects = skip_redirects
        self.byte_range = byte_range
        self.stats = ReadStats()
        self.siteinfo = SiteInfo()
        self.problems: list[Problem] = []
        self.last_good: str | None = None

    def __iter__(self) -> Iterator[Page]:
        path = check_dump_path(self.path)
        compression = dump_compression(path)
        collector = _PageCollector(str(path), self.namespaces, self.skip_redirects, self.stats, self.file_redirects)
        collector.problems = self.problems
        collector.redirects = self.redirects
        self.siteinfo = collector.siteinfo
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = CHUNK_SIZE
        parser.StartElementHandler = collector.start
        parser.EndElementHandler = collector.end
        parser.CharacterDataHandler = collector.characters
        parser.SkippedEntityHandler = collector.skipped_entity
        parser.ExternalEntityRefHandler = collector.external_entity
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE)  # to hear of the DTD's too
        lines = _Lines()
        collector.locate = lambda: lines.where(parser.CurrentLineNumber)
        start, end = self.byte_range if self.byte_range else (0, None)
        try:
            if compression == "bz2":
                check_bz2_end(path)
            if start > 0 and compression == "xml":
                self._read_behind(path, start, parser, collector, lines)
            elif start > 0:  # a range in the middle of the file is read behind the file's own header
                collector.loud = False
                header = header_text(path)
                lines.feed(0, header)
                parser.Parse(header, False)
                collector.loud = True
            raw = _raw_pieces(path, compression, self.byte_range, self.decompress_threads, self.read_ahead)
            for stream, text, invalid in _decoded_pieces(raw, self.stats):
                lines.feed(stream, text)
                done = 0
                for index, offset, length in invalid:  # parsed up to each, to name the page it is in
                    parser.Parse(text[done:index], False)
                    done = index
                    collector.invalid_utf8(length, _byte_place(compression, stream, offset))
                parser.Parse(text[done:], False)
                yield from collector.ready
                collector.ready.clear()
            parser.Parse(self._closing(collector, end), True)
        except expat.ExpatError as error:
            where = lines.where(error.lineno, error.offset)
            message = f"{path}: malformed XML at {where}: {expat.errors.messages[error.code]}"
            raise DumpError(Problem(message, collector.last_good)) from None
        finally:
            self.last_good = collector.last_good
        yield from collector.ready
        collector.ready.clear()

    def _read_behind(
        self, path: Path, start: int, parser: expat.XMLParserType, collector: _PageCollector, lines: _Lines
    ) -> None:
        """A range of a plain file is read behind the file's header and, when it starts inside a page, the page's
        opening (title, ids): quietly, as the ranges before count them. Places are lines of the whole file."""
        collector.loud = False
        header = plain_header(path)
        parser.Parse(header, False)
        fed = header.count("\n")
        page = page_opening(path, start)
        if page is not None:
            page_start, opening, earlier = page
            parser.Parse(opening, False)
            fed += opening.count("\n")
            collector.continue_page(f"line {lines_before(path, page_start) + 1}", earlier)
        collector.loud = True
        lines.shift = lines_before(path, start) - fed

    def _closing(self, collector: _PageCollector, end: int | None) -> str:
        """A range that stops before the file's end closes the root element the header opened.

        A range of a plain history file may stop inside a page (before a ``<revision>``): the page is closed
        too, and counted by the range that reads its end.
        """
        if end is None or end >= self.path.stat().st_size:
            return ""
        still_open = collector.open_elements()
        if len(still_open) == 2 and still_open[1] == "page" and dump_compression(self.path) == "xml":
            collector.page_continues = True
            return "</page>" + f"</{still_open[0]}>"
        if len(still_open) > 1:
            raise DumpError(
                Problem(f"{self.path}: the byte range ending at byte {end} ends inside <{still_open[-1]}>", None)
            )
        return "".join(f"</{name}>" for name in still_open)


def iter_pages(
    path: str | os.PathLike[str],
    namespaces: Iterable[int] | None = (0,),
    skip_redirects: bool = True,
    byte_range: tuple[int, int] | None = None,
) -> Iterator[Page]:
    """Yield the pages (one record per revision) of a dump file, streaming; skipped parts are warned about."""
    reader = DumpReader(path, namespaces, skip_redirects, byte_range)
    warned = 0
    for page in reader:
        yield page
        for problem in reader.problems[warned:]:
            warnings.warn(problem.render(), DumpWarning, stacklevel=2)
        warned = len(reader.problems)
    for problem in reader.problems[warned:]:
        warnings.warn(problem.render(), DumpWarning, stacklevel=2)


def read_siteinfo(path: str | os.PathLike[str]) -> SiteInfo:
    """Read only the ``<siteinfo>`` header at the start of a dump."""
    path = check_dump_path(path)
    collector = _PageCollector(str(path), frozenset(), True, ReadStats())
    collector.loud = False
    parser = expat.ParserCreate()
    parser.EndElementHandler = collector.end
    parser.CharacterDataHandler = collector.characters
    done = False

    def stop_at_first_page(name: str, attrs: dict[str, str]) -> None:
        nonlocal done
        done = done or name == "page"
        collector.start(name, attrs)

    parser.StartElementHandler = stop_at_first_page
    try:
        # small reads: the header is in the first bz2 block, and the rest of the file is not needed
        pieces = _raw_pieces(path, dump_compression(path), None, read_size=1 << 16)
        for _, text, _ in _decoded_pieces(pieces, ReadStats()):
            parser.Parse(text, False)
            if done or collector.siteinfo.namespaces and "siteinfo" not in collector.open_elements():
                break
    except expat.ExpatError as error:
        raise DumpError(f"{path}: malformed XML at line {error.lineno}, column {error.offset} in the header") from None
    return collector.siteinfo


def plain_header(path: Path) -> str:
    """A plain XML dump's text before its first ``<page>``: what a range of it is read behind."""
    data = b""
    with _open_binary(path) as handle:
        while chunk := handle.read(1 << 16):
            data += chunk
            match = _PAGE_OR_REVISION.search(data)
            if match is not None:
                return data[: match.start()].decode("utf-8", errors="replace")
    return data.decode("utf-8", errors="replace")


def page_opening(path: Path, start: int) -> tuple[int, str, bool] | None:
    """Where the page that ``start`` (a ``<revision>``) is in begins, its text up to its first revision, and
    whether revisions of it come before ``start``.

    None when ``start`` is a ``<page>``. The page's start is searched backwards window by window.
    """
    with _open_binary(path) as handle:
        handle.seek(start)
        if not handle.read(16).startswith(b"<revision"):
            return None
        before = start
        while before > 0:
            first = max(0, before - CHUNK_SIZE)
            handle.seek(first)
            window = handle.read(before - first)
            page = max(window.rfind(b"<page>"), window.rfind(b"<page "))
            if page >= 0:
                handle.seek(first + page)
                opening = handle.read(min(start - first - page, 1 << 16))
                while (match := _PAGE_OR_REVISION.search(opening, 1)) is None and len(opening) < start - first - page:
                    opening += handle.read(min(start - first - page - len(opening), 1 << 16))
                cut = match.start() if match is not None else len(opening)
                return first + page, opening[:cut].decode("utf-8", errors="replace"), first + page + cut < start
            before = first
    raise DumpError(f"{path}: no <page> before the <revision> at byte {start}")


def lines_before(path: Path, offset: int) -> int:
    """The line breaks in a plain file before ``offset``."""
    count = 0
    with _open_binary(path) as handle:
        while offset > 0 and (chunk := handle.read(min(CHUNK_SIZE * 8, offset))):
            count += chunk.count(b"\n")
            offset -= len(chunk)
    return count


def history_ranges(path: str | os.PathLike[str], parts: int) -> list[tuple[int, int]]:
    """Cut a plain XML history dump into about ``parts`` byte ranges, each starting at a ``<page>`` or a
    ``<revision>``: a page of many revisions is then read by several tasks. One range for a file too small."""
    path = Path(path)
    size = path.stat().st_size
    cuts = [0]
    with _open_binary(path) as handle:
        first_page = len(plain_header(path).encode("utf-8"))
        for part in range(1, parts):
            base = max(first_page + 1, size * part // parts, cuts[-1] + 1)
            handle.seek(base)
            data = b""
            while chunk := handle.read(1 << 16):
                data += chunk
                match = _PAGE_OR_REVISION.search(data)
                if match is not None:
                    cuts.append(base + match.start())
                    break
                kept = data[-16:]  # a tag cut by the chunk's end
                base += len(data) - len(kept)
                data = kept
    cuts = sorted(set(cuts))
    return list(zip(cuts, [*cuts[1:], size], strict=True))


def index_path(path: str | os.PathLike[str]) -> Path | None:
    """The ``…-multistream-index.txt.bz2`` that Wikimedia publishes beside a multistream dump.

    A big wiki's dump comes in parts, each with its own index:
    ``…-multistream1.xml-p1p41242.bz2`` beside ``…-multistream-index1.txt-p1p41242.bz2``.
    """
    path = Path(path)
    name = path.name
    part = re.fullmatch(r"(?P<head>.*multistream)(?P<number>\d+)\.xml(?P<pages>-p\d+p\d+)\.bz2", name)
    if part:
        index = f"{part['head']}-index{part['number']}.txt{part['pages']}.bz2"
    elif "multistream" in name and name.endswith(".xml.bz2"):
        index = name[: -len(".xml.bz2")].replace("multistream", "multistream-index") + ".txt.bz2"
    else:
        return None
    candidate = path.with_name(index)
    return candidate if candidate.exists() else None


def stream_offsets(path: str | os.PathLike[str]) -> list[int]:
    """Byte offsets of the bz2 streams in a dump file.

    Read from the multistream index when it is there (lines ``offset:page_id:title``);
    otherwise found by scanning for the byte-aligned bz2 stream header. An index that
    cannot be trusted (see :func:`index_offsets`) is ignored with a :class:`DumpWarning`
    naming it and what is wrong, and the streams are found by scanning: the pages read
    never depend on the index. A single-stream file gives ``[0]``; a file that is not bz2
    (by its first bytes) too.
    """
    path = Path(path)
    if dump_compression(path) != "bz2":
        return [0]
    index = index_path(path)
    if index is not None:
        try:
            return index_offsets(index, path)
        except DumpError as error:
            warnings.warn(f"{error}; the bz2 streams are found by scanning the dump instead", DumpWarning, 2)
    return scan_stream_offsets(path)


def index_offsets(index: Path, path: Path) -> list[int]:
    """The stream offsets a multistream index lists for ``path``, each checked against the dump.

    The index is a separate download that can be truncated, damaged, or belong to another
    dump: it must be bz2 to its end, every line ``offset:page_id:title``, the offsets in
    ascending order, and each offset inside the dump at the start of a bz2 stream.
    Anything else raises :class:`DumpError` naming the index and the line.
    """
    if index.stat().st_size == 0:
        raise DumpError(f"{index}: the index file is empty")
    size = path.stat().st_size
    offsets = [0]
    number = 0
    with _open_binary(path) as dump, bz2.open(index, "rb") as lines:
        try:
            for number, line in enumerate(lines, 1):
                offset = _index_offset(index, number, line)
                if offset == offsets[-1]:
                    continue  # the other pages of the same stream
                if offset < offsets[-1]:
                    raise DumpError(f"{index}:{number}: offset {offset} comes after offset {offsets[-1]}")
                if offset >= size:
                    raise DumpError(f"{index}:{number}: offset {offset} is beyond the end of {path} ({size} bytes)")
                dump.seek(offset)
                if not _STREAM_MAGIC.match(dump.read(10)):
                    raise DumpError(f"{index}:{number}: offset {offset} is not the start of a bz2 stream in {path}")
                offsets.append(offset)
        except EOFError:
            raise DumpError(f"{index}: truncated bz2 data after line {number:,}") from None
        except OSError as error:  # bz2 reports data that is not bz2 as OSError
            where = f"after line {number:,}" if number else "from its first byte"
            raise DumpError(f"{index}: not bz2 data {where} ({error})") from None
    if number == 0:
        raise DumpError(f"{index}: the index lists no bz2 stream")
    return offsets


def _index_offset(index: Path, number: int, line: bytes) -> int:
    head, sep, _ = line.partition(b":")
    if not sep or not head.isdigit():
        text = line.decode("utf-8", errors="replace").strip()
        raise DumpError(f"{index}:{number}: expected 'offset:page_id:title', got {text!r}")
    return int(head)


def scan_stream_offsets(path: Path) -> list[int]:
    """Byte offsets of the bz2 streams, found by scanning for the byte-aligned stream header."""
    offsets = []
    overlap = 9
    with _open_binary(path) as handle:
        position = 0
        tail = b""
        while block := handle.read(CHUNK_SIZE * 8):
            data = tail + block
            base = position - len(tail)
            offsets.extend(base + match.start() for match in _STREAM_MAGIC.finditer(data))
            tail = data[-overlap:]
            position += len(block)
    return sorted(set(offsets))


def split_ranges(path: str | os.PathLike[str], parts: int, offsets: list[int] | None = None) -> list[tuple[int, int]]:
    """Cut a multistream dump into about ``parts`` byte ranges on stream boundaries.

    A cut is made only where a stream starts with a ``<page>``, so that every range
    holds whole pages (files compressed in blocks by other tools, e.g. pbzip2, have
    streams that cut pages apart). The first range holds the header; the others are
    read behind it. Returns one range for a file that cannot be cut.
    """
    path = Path(path)
    size = path.stat().st_size
    offsets = stream_offsets(path) if offsets is None else offsets
    if len(offsets) < 2 or parts < 2:
        return [(0, size)]
    target = size / parts
    ranges: list[tuple[int, int]] = []
    start = 0
    failed_checks = 0
    with _open_binary(path) as handle:
        for offset in offsets[1:]:
            if offset - start < target or failed_checks >= MAX_FAILED_CUTS:
                continue
            if _PAGE_START.match(_first_stream_start(handle, offset)):
                ranges.append((start, offset))
                start = offset
            else:
                failed_checks += 1
    ranges.append((start, size))
    return ranges
