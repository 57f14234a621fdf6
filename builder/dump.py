"""Stage 1: stream pages out of MediaWiki XML dumps (.xml, .xml.bz2, .xml.gz, .xml.7z).

Dumps are read with the standard library's incremental XML parser (expat) over
a decompressing byte stream, so memory stays flat however large the dump is.
Every ``<revision>`` becomes one :class:`Page` record: a ``pages-articles``
dump yields one per page, a ``pages-meta-history`` dump one per revision.

A ``pages-articles-multistream`` file is a concatenation of independent bz2
streams of 100 pages each; :func:`stream_offsets` finds them (from the
``-multistream-index.txt.bz2`` file when present) so that byte ranges can be
handed to separate worker processes (:func:`iter_pages` with ``byte_range``).
"""

from __future__ import annotations

import bz2
import codecs
import dataclasses
import gzip
import importlib.util
import os
import queue
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO
from xml.parsers import expat

CHUNK_SIZE = 1 << 20
_STREAM_MAGIC = re.compile(rb"BZh[1-9]1AY&SY")


class DumpError(Exception):
    """A dump file that cannot be read to its end; the message names file and place."""


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

    def add(self, other: ReadStats) -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def _count_invalid_utf8(error: UnicodeError) -> tuple[str, int]:
    """Replace undecodable bytes by U+FFFD and count them on the decoder that hit them."""
    assert isinstance(error, UnicodeDecodeError)
    _InvalidBytes.count += error.end - error.start
    return "\ufffd", error.end


class _InvalidBytes:
    count = 0


codecs.register_error("wikipedia-ipc-count", _count_invalid_utf8)


class _PageCollector:
    """expat handlers that assemble pages and the siteinfo from element events."""

    _CAPTURED = frozenset({"title", "ns", "id", "text", "timestamp", "dbname", "base", "generator", "namespace"})

    def __init__(self, namespaces: frozenset[int] | None, skip_redirects: bool, stats: ReadStats) -> None:
        self.namespaces = namespaces
        self.skip_redirects = skip_redirects
        self.stats = stats
        self.siteinfo = SiteInfo()
        self.ready: list[Page] = []
        self.last_title = ""
        self._path: list[str] = []
        self._buffer: list[str] | None = None
        self._namespace_key = 0
        self._page: dict[str, object] = {}
        self._revision: dict[str, object] = {}

    def start(self, name: str, attrs: dict[str, str]) -> None:
        parent = self._path[-1] if self._path else ""
        self._path.append(name)
        if name == "page":
            self._page = {"title": "", "ns": 0, "id": 0, "redirect": False}
        elif name == "redirect" and parent == "page":
            self._page["redirect"] = True
        elif name == "revision":
            self._revision = {"id": 0, "text": "", "timestamp": ""}
        elif name == "namespace" and parent == "namespaces":
            self._namespace_key = int(attrs.get("key", "0"))
        if name in self._CAPTURED and self._wanted(name, parent):
            self._buffer = []

    def _wanted(self, name: str, parent: str) -> bool:
        """Skip buffering the text of revisions that will be filtered out anyway."""
        if parent == "revision" and name in ("text", "timestamp"):
            return self._keep_page()
        return True

    def _keep_page(self) -> bool:
        if self.namespaces is not None and self._page.get("ns") not in self.namespaces:
            return False
        return not (self.skip_redirects and self._page.get("redirect"))

    def open_elements(self) -> list[str]:
        return list(self._path)

    def characters(self, data: str) -> None:
        if self._buffer is not None:
            self._buffer.append(data)

    def end(self, name: str) -> None:
        self._path.pop()
        parent = self._path[-1] if self._path else ""
        value = "".join(self._buffer) if self._buffer is not None else ""
        self._buffer = None
        if parent == "page" and name in ("title", "ns", "id"):
            self._page[name] = value if name == "title" else int(value or 0)
        elif parent == "revision" and name in ("id", "text", "timestamp"):
            self._revision[name] = int(value or 0) if name == "id" else value
        elif name == "revision":
            self._finish_revision()
        elif name == "page":
            self._finish_page()
        elif parent == "siteinfo" and name in ("dbname", "base", "generator"):
            setattr(self.siteinfo, name, value)
        elif parent == "namespaces" and name == "namespace":
            self.siteinfo.namespaces[self._namespace_key] = value

    def _finish_revision(self) -> None:
        self.stats.revisions += 1
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

    def _finish_page(self) -> None:
        self.stats.pages += 1
        self.last_title = str(self._page["title"])
        if self.namespaces is not None and self._page["ns"] not in self.namespaces:
            self.stats.skipped_namespace += 1
        elif self.skip_redirects and self._page["redirect"]:
            self.stats.skipped_redirect += 1


def _open_binary(path: Path) -> BinaryIO:
    if not path.exists():
        raise FileNotFoundError(f"dump file not found: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"expected a dump file, got a directory: {path}")
    return open(path, "rb")  # noqa: SIM115 - closed by the caller's context manager


def _compression(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".bz2", ".gz", ".7z"):
        return suffix[1:]
    if suffix == ".xml":
        return "none"
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\x1f\x8b"):
        return "gz"
    return "none"


def _bz2_chunks(handle: BinaryIO, path: Path, start: int, end: int | None) -> Iterator[bytes]:
    """Decompress every bz2 stream between two byte offsets (multistream-aware)."""
    handle.seek(start)
    offset = start
    decompressor = bz2.BZ2Decompressor()
    inside_stream = False
    while end is None or offset < end:
        raw = handle.read(CHUNK_SIZE if end is None else min(CHUNK_SIZE, end - offset))
        if not raw:
            break
        offset += len(raw)
        while raw:
            inside_stream = True
            try:
                yield decompressor.decompress(raw)
            except OSError as error:
                raise DumpError(f"{path}: corrupt bz2 data before byte {offset}: {error}") from None
            if not decompressor.eof:
                break
            raw = decompressor.unused_data
            decompressor = bz2.BZ2Decompressor()
            inside_stream = False
    if inside_stream:
        raise DumpError(f"{path}: truncated bz2 stream: the data ends at byte {offset} inside a compressed stream")


def _parallel_bz2_chunks(path: Path, threads: int) -> Iterator[bytes]:
    """A single-stream bz2 file decompressed by ``threads`` threads ahead of the parser (indexed_bzip2)."""
    import indexed_bzip2

    try:
        with indexed_bzip2.open(str(path), parallelization=threads) as stream:
            while chunk := stream.read(CHUNK_SIZE):
                yield chunk
    except RuntimeError as error:  # indexed_bzip2 reports bad data as a bare C++ exception
        raise DumpError(f"{path}: truncated or corrupt bz2 data ({error})") from None


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


def _raw_chunks(path: Path, byte_range: tuple[int, int] | None, threads: int = 1) -> Iterator[bytes]:
    """The dump's decompressed bytes, chunk by chunk."""
    kind = _compression(path)
    if kind == "7z":
        if byte_range is not None:
            raise ValueError(f"{path}: byte ranges need a bz2 multistream dump")
        _open_binary(path).close()
        yield from _sevenzip_chunks(path)
        return
    if kind == "bz2" and byte_range is None and threads > 1 and importlib.util.find_spec("indexed_bzip2"):
        _open_binary(path).close()  # the same clear error as the sequential reader for a missing file
        yield from _parallel_bz2_chunks(path, threads)
        return
    with _open_binary(path) as handle:
        if kind == "bz2":
            start, end = byte_range if byte_range else (0, None)
            yield from _bz2_chunks(handle, path, start, end)
            return
        if byte_range is not None:
            raise ValueError(f"{path}: byte ranges need a bz2 multistream dump")
        stream: BinaryIO = gzip.GzipFile(fileobj=handle) if kind == "gz" else handle
        try:
            while chunk := stream.read(CHUNK_SIZE):
                yield chunk
        except (EOFError, gzip.BadGzipFile) as error:
            raise DumpError(f"{path}: truncated or corrupt gzip data: {error}") from None


def _decoded_chunks(chunks: Iterable[bytes], stats: ReadStats) -> Iterator[str]:
    """UTF-8 decode, replacing (and counting) invalid bytes instead of failing the whole dump."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="wikipedia-ipc-count")
    before = _InvalidBytes.count
    for chunk in chunks:
        yield decoder.decode(chunk)
    yield decoder.decode(b"", final=True)
    stats.invalid_utf8_bytes += _InvalidBytes.count - before


class DumpReader:
    """Iterate over the revisions of one dump file (or one byte range of a multistream file).

    ``namespaces=None`` keeps every namespace; the default keeps articles only.
    After iteration, :attr:`stats` tells how many pages were read and skipped and
    :attr:`siteinfo` holds the dump's namespace names. ``decompress_threads`` > 1
    decompresses a single-stream bz2 file in parallel threads (indexed_bzip2).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        namespaces: Iterable[int] | None = (0,),
        skip_redirects: bool = True,
        byte_range: tuple[int, int] | None = None,
        decompress_threads: int = 1,
    ) -> None:
        self.path = Path(path)
        self.decompress_threads = decompress_threads
        self.namespaces = None if namespaces is None else frozenset(namespaces)
        self.skip_redirects = skip_redirects
        self.byte_range = byte_range
        self.stats = ReadStats()
        self.siteinfo = SiteInfo()

    def __iter__(self) -> Iterator[Page]:
        collector = _PageCollector(self.namespaces, self.skip_redirects, self.stats)
        self.siteinfo = collector.siteinfo
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = CHUNK_SIZE
        parser.StartElementHandler = collector.start
        parser.EndElementHandler = collector.end
        parser.CharacterDataHandler = collector.characters
        # A byte range of a multistream dump is a run of <page> elements: give it a
        # root element, and close whatever the range left open at its end.
        wrapped = self.byte_range is not None
        try:
            if wrapped:
                parser.Parse("<mediawiki>", False)
            raw = _raw_chunks(self.path, self.byte_range, self.decompress_threads)
            for text in _decoded_chunks(raw, self.stats):
                parser.Parse(text, False)
                yield from collector.ready
                collector.ready.clear()
            closing = "".join(f"</{name}>" for name in reversed(collector.open_elements())) if wrapped else ""
            parser.Parse(closing, True)
        except expat.ExpatError as error:
            where = f"line {error.lineno}, column {error.offset}"
            if wrapped:
                where += f" of the stream range starting at byte {self.byte_range[0]}"  # type: ignore[index]
            raise DumpError(
                f"{self.path}: malformed XML at {where}: {expat.errors.messages[error.code]}"
                f" (last complete page: {collector.last_title!r})"
            ) from None
        except DumpError as error:
            raise DumpError(f"{error} (last complete page: {collector.last_title!r})") from None
        yield from collector.ready
        collector.ready.clear()


def iter_pages(
    path: str | os.PathLike[str],
    namespaces: Iterable[int] | None = (0,),
    skip_redirects: bool = True,
    byte_range: tuple[int, int] | None = None,
) -> Iterator[Page]:
    """Yield the pages (one record per revision) of a dump file, streaming."""
    yield from DumpReader(path, namespaces, skip_redirects, byte_range)


def read_siteinfo(path: str | os.PathLike[str]) -> SiteInfo:
    """Read only the ``<siteinfo>`` header at the start of a dump."""
    collector = _PageCollector(frozenset(), True, ReadStats())
    parser = expat.ParserCreate()
    parser.StartElementHandler = collector.start
    parser.EndElementHandler = collector.end
    parser.CharacterDataHandler = collector.characters
    done = False

    def stop_at_first_page(name: str, attrs: dict[str, str]) -> None:
        nonlocal done
        done = done or name == "page"
        collector.start(name, attrs)

    parser.StartElementHandler = stop_at_first_page
    try:
        for text in _decoded_chunks(_raw_chunks(Path(path), None), ReadStats()):
            parser.Parse(text, False)
            if done or collector.siteinfo.namespaces and "siteinfo" not in collector.open_elements():
                break
    except expat.ExpatError as error:
        raise DumpError(f"{path}: malformed XML at line {error.lineno}, column {error.offset} in the header") from None
    return collector.siteinfo


def index_path(path: str | os.PathLike[str]) -> Path | None:
    """The ``…-multistream-index.txt.bz2`` that Wikimedia publishes beside a multistream dump."""
    path = Path(path)
    name = path.name
    if "multistream" not in name or not name.endswith(".xml.bz2"):
        return None
    candidate = path.with_name(name[: -len(".xml.bz2")].replace("multistream", "multistream-index") + ".txt.bz2")
    return candidate if candidate.exists() else None


def stream_offsets(path: str | os.PathLike[str]) -> list[int]:
    """Byte offsets of the bz2 streams in a dump file.

    Read from the multistream index when it is there (lines ``offset:page_id:title``);
    otherwise found by scanning for the byte-aligned bz2 stream header. A single-stream
    file gives ``[0]``.
    """
    path = Path(path)
    if _compression(path) != "bz2":
        return [0]
    index = index_path(path)
    if index is not None:
        offsets = {0}
        with bz2.open(index, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                head, sep, _ = line.partition(":")
                if not sep or not head.isdigit():
                    raise DumpError(f"{index}:{number}: expected 'offset:page_id:title', got {line.strip()!r}")
                offsets.add(int(head))
        return sorted(offsets)
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


def split_ranges(path: str | os.PathLike[str], parts: int) -> list[tuple[int, int]]:
    """Cut a multistream dump into about ``parts`` byte ranges on stream boundaries.

    The first stream holds the ``<siteinfo>`` header and opens the root element, so
    it always starts the first range. Returns one range for a single-stream file.
    """
    size = Path(path).stat().st_size
    offsets = stream_offsets(path)
    if len(offsets) < 2 or parts < 2:
        return [(0, size)]
    target = size / parts
    ranges: list[tuple[int, int]] = []
    start = 0
    for offset in offsets[1:]:
        if offset - start >= target:
            ranges.append((start, offset))
            start = offset
    ranges.append((start, size))
    return ranges
