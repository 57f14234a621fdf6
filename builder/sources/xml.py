"""Stream pages out of MediaWiki XML dumps (.xml, .xml.bz2, .xml.gz, .xml.7z).

Dumps are read with the standard library's incremental XML parser (expat) over
a decompressing byte stream (:mod:`builder.sources.compression`), so memory stays flat
however large the dump is. Every ``<revision>`` becomes one :class:`Page` record: a
``pages-articles`` dump yields one per page, a ``pages-meta-history`` dump one per revision.

A range of a multistream file (:mod:`builder.sources.multistream`) is read behind the
file's own header, so the verdict on a dump never depends on how it is cut: places are
given as "line L of the bz2 stream at byte S" (the same whether the stream is read from
the file's start or from a range), and a malformed page is skipped and counted the same
way in every case.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from xml.parsers import expat

from builder.lang.languages import language_for, language_from_dbname
from builder.sources.compression import checked_pieces, raw_pieces
from builder.sources.damage import check_bz2_end
from builder.sources.files import (
    CHUNK_SIZE,
    MAX_PROBLEMS,
    DumpError,
    DumpWarning,
    Problem,
    ReadStats,
    byte_place,
    check_dump_path,
    dump_compression,
)
from builder.sources.multistream import header_text, lines_before, page_opening, plain_header
from builder.storage import location, size

__all__ = ["DumpReader", "Page", "SiteInfo", "iter_pages", "read_siteinfo"]


FILE_NAMESPACE = 6
# what expat says of bytes that are not UTF-8 (a byte that starts no character, a character cut by the end)
_ENCODING_ERRORS = frozenset(
    expat.errors.codes[message]
    for message in (expat.errors.XML_ERROR_INVALID_TOKEN, expat.errors.XML_ERROR_PARTIAL_CHAR)
)
REDIRECT_ELEMENT_VERSION = (0, 4)  # export formats before 0.4 have no <redirect>: a redirect is told by its text


@dataclasses.dataclass(frozen=True)
class Page:
    """One revision of one page, as found in the dump."""

    title: str
    namespace: int
    page_id: int
    revision_id: int
    text: str
    timestamp: str = ""
    element: int = 0  # which <page> element of those the reader opened holds it: a page's revisions share one


@dataclasses.dataclass
class SiteInfo:
    """The dump's ``<siteinfo>``: which wiki, and the names of its namespaces."""

    dbname: str = ""
    base: str = ""
    generator: str = ""
    namespaces: dict[int, str] = dataclasses.field(default_factory=dict)


class _InvalidBytes(Exception):
    """A read that trusted its bytes met one that is not UTF-8 (or a malformed token): read it again, checked."""


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
        # lines to add to expat's (a range of a plain file read behind text from elsewhere), or how to count them
        self._shift: int | Callable[[], int] = 0
        self._ended_with_cr = False

    def feed(self, stream: int | None, text: str | bytes) -> None:
        if stream != self.stream:
            self.stream = stream
            self.first_line = self.fed + 1
        if stream is None:
            return  # not bz2: one stream, expat's own line numbers are the places
        # expat counts "\n", "\r\n" and a lone "\r" as one line break each
        data = text.encode() if isinstance(text, str) else text
        breaks = data.count(b"\n")
        if b"\r" in data:
            breaks += data.count(b"\r") - data.count(b"\r\n")
        if self._ended_with_cr and data.startswith(b"\n"):
            breaks -= 1
        self.fed += breaks
        if data:
            self._ended_with_cr = data.endswith(b"\r")

    def shift_by(self, lines: Callable[[], int]) -> None:
        """Add ``lines()`` lines to expat's, counted the first time a place is named (most ranges name none)."""
        self._shift = lines

    def place(self, line: int) -> str | _Deferred:
        """:meth:`where`, named later if naming it now would mean counting the file's lines."""
        if not self.stream and callable(self._shift):
            return _Deferred(lambda: self.where(line))
        return self.where(line)

    def where(self, line: int, column: int | None = None) -> str:
        at_column = "" if column is None else f", column {column}"
        if not self.stream:
            if callable(self._shift):  # counted when a place is first named: it may mean reading the file up to it
                self._shift = self._shift()
            return f"line {line + self._shift}{at_column}"
        return f"line {line - self.first_line + 1}{at_column} of the bz2 stream at byte {self.stream}"


class _Deferred:
    """A place named only if a message names it: in a range of a plain file, naming its line means counting the
    file's lines up to the range, which most ranges never need."""

    def __init__(self, name: Callable[[], str]) -> None:
        self._name: Callable[[], str] | str = name

    def __str__(self) -> str:
        if callable(self._name):
            self._name = self._name()
        return self._name


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
        self.locate: Callable[[], str | _Deferred] = lambda: "an unknown place"
        self._path: list[str] = []
        self._buffer: list[str] | None = None
        self._namespace_key = 0
        self._page: dict[str, object] = {}
        self._page_flaw = ""
        self._page_where: str | _Deferred = ""
        self._revision: dict[str, object] = {}
        self._revision_flaw = ""
        self._page_revisions = 0
        self._stray_text = False
        self._last_root_event: str | _Deferred = ""
        self._redirects_by_text = False
        self._content_language = ""
        self._namespace_by_name: dict[str, int] | None = None
        self._redirect_start: re.Pattern[str] | None = None
        self._page_redirect_revisions = 0
        self._redirect_now: str | None = None
        self.page_continues = False  # the range ends inside a page: the next range reads its end
        self._elements = 0  # <page> elements opened

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
            self._elements += 1
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
            self._revision_flaw = ""  # named by its page's place, id and timestamp: a line number per revision
            # would make expat count every line of every text (a fifth of a history's reading time)
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
            named = f"<id> {self._revision['id']!r}, " if self._revision["id"] is not None else ""
            self.note(
                f"a revision of page {self._page['title']!r} (the page at {self._page_where}; {named}<timestamp> "
                f"{self._revision['timestamp'] or 'none'}) skipped: {flaw}"
            )
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
                element=self._elements,
            )
        )

    def continue_page(self, where: str | _Deferred, earlier_revisions: bool) -> None:
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


def _integer(text: str) -> int | None:
    """An XML integer field, or None when it is not one (ids are never negative in dumps)."""
    text = text.strip()
    return int(text) if text.isascii() and text.lstrip("-").isdigit() else None


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
        self.path = location(path)
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
        """The pages, read from bytes expat checks as UTF-8 itself; a file with invalid bytes is read again.

        Checking every piece beforehand costs as much as a third of the parsing (decoding to text that
        is then dropped), for bytes that are almost always valid. So a read first trusts expat to stop
        at an invalid byte; if it does, the read starts again with the checks (invalid bytes replaced
        and counted, as :func:`~builder.sources.compression.checked_pieces` says), the counts and
        problems of the first read undone and the pages already handed on not handed on again.
        """
        snapshot = copy.deepcopy(self.stats)
        problems, redirects = len(self.problems), len(self.redirects)
        handed = 0
        try:
            for page in self._pages(checked=False):
                handed += 1
                yield page
            return
        except _InvalidBytes:
            pass
        for field in dataclasses.fields(self.stats):
            setattr(self.stats, field.name, getattr(snapshot, field.name))
        del self.problems[problems:]
        del self.redirects[redirects:]
        for index, page in enumerate(self._pages(checked=True)):
            if index >= handed:
                yield page

    def _pages(self, checked: bool) -> Iterator[Page]:
        path = check_dump_path(self.path)
        compression = dump_compression(path)
        collector = _PageCollector(str(path), self.namespaces, self.skip_redirects, self.stats, self.file_redirects)
        collector.problems = self.problems
        collector.redirects = self.redirects
        self.siteinfo = collector.siteinfo
        parser = expat.ParserCreate(encoding="UTF-8")  # fed checked UTF-8 bytes, whatever the XML declaration says
        parser.buffer_text = True
        parser.buffer_size = CHUNK_SIZE
        parser.StartElementHandler = collector.start
        parser.EndElementHandler = collector.end
        parser.CharacterDataHandler = collector.characters
        parser.SkippedEntityHandler = collector.skipped_entity
        parser.ExternalEntityRefHandler = collector.external_entity
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE)  # to hear of the DTD's too
        lines = _Lines()
        collector.locate = lambda: lines.place(parser.CurrentLineNumber)
        start, end = self.byte_range if self.byte_range else (0, None)
        raw: Iterator[tuple[int | None, bytes]] | None = None
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
            raw = raw_pieces(path, compression, self.byte_range, self.decompress_threads, self.read_ahead)
            pieces = checked_pieces(raw, self.stats) if checked else ((stream, data, []) for stream, data in raw)
            for stream, data, invalid in pieces:
                lines.feed(stream, data)
                done = 0
                for index, offset, length in invalid:  # parsed up to each, to name the page it is in
                    parser.Parse(data[done:index], False)
                    done = index
                    collector.invalid_utf8(length, byte_place(compression, stream, offset))
                parser.Parse(data[done:] if done else data, False)
                yield from collector.ready
                collector.ready.clear()
            parser.Parse(self._closing(collector, end), True)
        except expat.ExpatError as error:
            if not checked and error.code in _ENCODING_ERRORS:
                raise _InvalidBytes from None
            where = lines.where(error.lineno, error.offset)
            message = f"{path}: malformed XML at {where}: {expat.errors.messages[error.code]}"
            raise DumpError(Problem(message, collector.last_good)) from None
        finally:
            self.last_good = collector.last_good
            if raw is not None:
                raw.close()  # a decompressing thread ahead of the parser stops now, not when collected
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
            collector.continue_page(_Deferred(lambda: f"line {lines_before(path, page_start) + 1}"), earlier)
        collector.loud = True
        lines.shift_by(lambda: lines_before(path, start) - fed)

    def _closing(self, collector: _PageCollector, end: int | None) -> str:
        """A range that stops before the file's end closes the root element the header opened.

        A range of a plain history file may stop inside a page (before a ``<revision>``): the page is closed
        too, and counted by the range that reads its end.
        """
        if end is None or end >= size(self.path):
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
    parser = expat.ParserCreate(encoding="UTF-8")
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
        pieces = raw_pieces(path, dump_compression(path), None, read_size=1 << 16)
        for _, data, _ in checked_pieces(pieces, ReadStats()):
            parser.Parse(data, False)
            if done or collector.siteinfo.namespaces and "siteinfo" not in collector.open_elements():
                break
    except expat.ExpatError as error:
        raise DumpError(f"{path}: malformed XML at line {error.lineno}, column {error.offset} in the header") from None
    return collector.siteinfo
