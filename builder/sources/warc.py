"""Web crawls stored as WARC files (thesis §4.1): where they are, and their response records.

A crawl is read where it lives: a local ``.warc``/``.warc.gz`` file, a folder of them, a Common
Crawl ``warc.paths.gz`` listing (paths resolved against a base URL), an ``http(s)://`` URL (read
through the bounded requests of :mod:`builder.sources.mirror`, resumed with ``Range`` after a
dropped connection) or any other URL fsspec opens (``s3://…``, as ``datasets`` does). Every source
is streamed and its bytes counted; nothing is downloaded whole first.

Records are WARC (1.0, 1.1 and ClueWeb's 0.18, framed by ``fastwarc``) or ARC (the Internet Archive's
format before WARC, framed here). Gzip members are decompressed here, one at a time (:class:`_GzipMembers`):
a file compressed per record, as WARC asks, is read member by member, so a record whose ``Content-Length``
is wrong, or a damaged member, spoils that member only and reading goes on at the next one; a file that ends
inside a member is a counted, named problem (fastwarc alone would end it without a word). A record whose
block is shorter than its ``Content-Length``, whose ``WARC-Block-Digest`` does not match, or whose payload
exceeds the cap is skipped and counted (:class:`WarcStats`), with the file and the record named. The HTTP
message in a record is read by :mod:`builder.sources.http`: headers with bare LF line ends (ClueWeb09),
bodies de-chunked and their content codings (gzip, deflate, br) undone, as the server sent them. Only a success
(2xx) is a page's or an image's capture: any other status is counted (``unsuccessful``), not handed on. A revisit
record is counted, never read. A page given twice is the engines' business (its first success is read). A record
is numbered by its place in its file (``number``): ids are optional and may repeat, gzip offsets may be shared.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import http.client
import io
import os
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, Literal

from builder.config import LISTING_SCHEMES
from builder.sources.files import MAX_PROBLEMS
from builder.sources.http import MAX_PAYLOAD, BodyError, HttpResponse, decode_body, parse_response
from builder.sources.kinds import ARCHIVE_SUFFIXES, LISTING_SUFFIX, archive_format, not_an_archive
from builder.sources.mirror import (
    CHUNK_SIZE,
    DownloadError,
    Network,
    Transient,
    Watch,
    open_url,
    read_some,
)
from builder.storage import StorageError, absent, exists, folder_files, has_scheme, is_url, open_file

__all__ = [
    "COMMON_CRAWL",
    "HTML_TYPES",
    "LISTING_SCHEMES",
    "WarcError",
    "WarcResponse",
    "WarcStats",
    "expand_warc_inputs",
    "iter_responses",
    "open_warc",
]

COMMON_CRAWL = "https://data.commoncrawl.org/"  # where the paths of a Common Crawl listing are relative to
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
WARC_SUFFIXES = ARCHIVE_SUFFIXES
PATHS_SUFFIX = LISTING_SUFFIX
_MEMBER_READ = 1 << 16

Kind = Literal["html", "image"]


class WarcError(Exception):
    """A crawl input that cannot be read at all (missing file, bad listing); the message names it."""


class TruncatedWarc(OSError):
    """The compressed stream ends inside a gzip member, or a member is damaged; the message says where."""


class _CutShort(TruncatedWarc):
    """The file ends inside a gzip member: nothing follows, so the file stops there."""


@dataclasses.dataclass
class WarcStats:
    """What the reader of WARC files saw and skipped, so that nothing is lost silently.

    ``problems`` names each skipped record and each file that stopped early (file, record id,
    byte offset), at most :data:`~builder.sources.files.MAX_PROBLEMS` of them; the counts are complete.
    """

    files: int = 0
    bytes: int = 0  # bytes read from the sources (compressed bytes for ``.gz``)
    records: int = 0  # WARC records of every type
    responses: int = 0  # response records
    html: int = 0  # HTML responses handed on (successes)
    images: int = 0  # image responses handed on (successes)
    unsuccessful: int = 0  # HTML and image responses whose HTTP status is no success (not 2xx), not handed on
    other_types: int = 0  # responses that are neither HTML nor images (scripts, PDF, CSS, …)
    not_http: int = 0  # response records without an HTTP message (DNS records, …)
    too_large: int = 0  # payloads over the cap, left unread
    truncated_records: int = 0  # blocks shorter than their Content-Length
    digest_mismatches: int = 0  # blocks whose WARC-Block-Digest does not match (a wrong Content-Length, damage)
    malformed_records: int = 0  # no Content-Length, HTTP headers that cannot be parsed
    files_stopped: int = 0  # files whose reading ended early (a truncated last member, broken framing, garbage)
    members_skipped: int = 0  # gzip members left after a bad record or damage; reading went on at the next one
    revisits: int = 0  # revisit records (a capture repeated without its payload)
    revisits_resolved: int = 0  # of which the file holds a response of the URI they refer to
    unsupported_encodings: int = 0  # bodies in a Content-Encoding the reader cannot undo
    bodies_as_stored: int = 0  # bodies whose header names a coding they do not carry (stored decoded), used as stored
    problems: list[str] = dataclasses.field(default_factory=list)

    def add(self, other: WarcStats) -> None:
        for field in dataclasses.fields(self):
            if field.name == "problems":
                self.problems.extend(other.problems[: max(0, MAX_PROBLEMS - len(self.problems))])
            else:
                setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def note(self, problem: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    @property
    def skipped(self) -> int:
        """Response records left out as bad input (not those of another content type)."""
        return (
            self.too_large
            + self.truncated_records
            + self.digest_mismatches
            + self.malformed_records
            + self.unsupported_encodings
        )


@dataclasses.dataclass(frozen=True)
class WarcResponse:
    """An HTML or image response record: where it came from and its payload (at most the cap)."""

    source: str  # the WARC file or URL
    uri: str  # WARC-Target-URI, without WARC 1.0's angle brackets (an ARC record's URL)
    record_id: str  # WARC-Record-ID, ``<urn:uuid:…>``; an ARC record's ``<arc:OFFSET>``
    date: str  # WARC-Date as written (an ARC record's date in that form)
    offset: int  # byte offset of the record in the file: its gzip member's, or the record's in a plain file
    number: int  # the record's place in the file, every record counted from 0: unique in the file, as ids are not
    kind: Kind
    content_type: str  # the HTTP Content-Type without parameters, lower case
    charset: str | None  # the HTTP Content-Type's charset parameter as written, if any
    payload: bytes  # the HTTP body as sent: de-chunked, its content codings undone


# ---------------------------------------------------------------------------------------------- inputs


def expand_warc_inputs(
    inputs: Sequence[str | os.PathLike[str]],
    base_url: str = COMMON_CRAWL,
    listing_schemes: Sequence[str] = LISTING_SCHEMES,
) -> list[str]:
    """The WARC sources of a build, in order: folders give their archives (sorted), a ``*.paths.gz`` listing its
    lines resolved against ``base_url``; files and URLs stay. A listing's line is a path relative to the base (as
    Common Crawl's are) or a URL of one of ``listing_schemes``: a listing, which may come from anywhere, never makes
    a build read a local file (``file://``) the user did not give. A source given twice is refused, as it would
    count its pages twice."""
    sources: list[str] = []
    for given in inputs:
        text = os.fspath(given)
        if is_url(text) and not text.startswith(("http://", "https://")) and not text.endswith(PATHS_SUFFIX):
            found = folder_files(text)  # a folder on an object store gives its archives, as a local one does
            if found is not None:
                archives = [name for name in found if name.endswith(WARC_SUFFIXES)]
                if not archives:
                    raise WarcError(f"{text}: the folder holds no .warc or .warc.gz file")
                sources.extend(archives)
                continue
            if not exists(text):  # said before the work, with what is missing: the bucket, the folder, the object
                raise WarcError(f"{text}: no such WARC file or folder ({absent(text)})")
        if has_scheme(text):
            sources.extend(_listing(text, base_url, listing_schemes) if text.endswith(PATHS_SUFFIX) else [text])
            continue
        path = Path(text)
        if path.is_dir():
            found = sorted(str(item) for item in path.iterdir() if item.is_file() and item.name.endswith(WARC_SUFFIXES))
            if not found:
                raise WarcError(f"{path}: the folder holds no .warc or .warc.gz file")
            sources.extend(found)
        elif not path.exists():
            raise WarcError(f"WARC file not found: {path}")
        elif path.name.endswith(PATHS_SUFFIX):
            sources.extend(_listing(text, base_url, listing_schemes))
        else:
            sources.append(text)
    seen: set[str] = set()
    for source in sources:
        key = source if has_scheme(source) else str(Path(source).resolve())
        if key in seen:
            raise WarcError(f"a WARC file is given twice: {source}")
        seen.add(key)
    return sources


def _listing(where: str, base_url: str, schemes: Sequence[str] = LISTING_SCHEMES) -> list[str]:
    """The lines of a Common Crawl ``warc.paths.gz`` listing, resolved against ``base_url``; a line that is neither
    a relative path nor a URL of ``schemes`` is refused, named, before anything is read."""
    base = base_url if base_url.endswith("/") else base_url + "/"
    allowed = {scheme.lower() for scheme in schemes}
    paths: list[str] = []
    with open_warc(where) as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        try:
            for number, line in enumerate(lines, 1):
                line = line.strip()
                if not line:
                    continue
                scheme, colon, _ = line.partition(":")
                if has_scheme(line) or (colon and scheme.isalpha() and len(scheme) > 1):
                    if scheme.lower() not in allowed:
                        raise WarcError(
                            f"{where}, line {number}: {line!r} is a {scheme.lower()}: URL; a listing may name paths "
                            f"relative to {base} or URLs of {', '.join(sorted(allowed))} (--listing-scheme allows more)"
                        )
                    paths.append(line)
                    continue
                if line.startswith(("/", "\\")) or ".." in line.replace("\\", "/").split("/"):
                    raise WarcError(f"{where}, line {number}: {line!r} is not a path relative to the base URL")
                paths.append(base + line)
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as error:
            raise WarcError(f"{where}: not a gzip listing of WARC paths ({error})") from None
    if not paths:
        raise WarcError(f"{where}: the listing names no WARC file")
    return paths


# ---------------------------------------------------------------------------------------------- streams


class _Forward(io.RawIOBase):
    """A read-only stream that goes forward only, and tells where it is (fastwarc asks)."""

    position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if (whence == os.SEEK_CUR and offset == 0) or (whence == os.SEEK_SET and offset == self.position):
            return self.position
        raise io.UnsupportedOperation("a WARC source is read forward only")

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Counted(_Forward):
    """A binary stream that counts the bytes read from it."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size if size is not None and size >= 0 else CHUNK_SIZE)
        self.count += len(data)
        self.position = self.count
        return data

    def close(self) -> None:
        self.inner.close()
        super().close()


class _HttpStream(_Forward):
    """The body of an ``http(s)`` URL, read through :mod:`builder.sources.mirror`'s watched requests.

    A dropped or stalled connection is opened again from the byte where it ended (``Range``),
    at most ``network.attempts`` times in a row; a server that ignores ``Range`` is refused
    rather than read twice.
    """

    def __init__(self, url: str, network: Network) -> None:
        self.url = url
        self.network = network
        self.position = 0
        self._watch: Watch | None = None
        self._response: http.client.HTTPResponse | None = None
        self._ended = False

    def _connect(self) -> None:
        self._drop()
        watch = Watch(self.network).__enter__()
        try:
            response = open_url(self.url, self.network, watch, self.position)
        except BaseException:
            watch.__exit__(None, None, None)
            raise
        if self.position and response.status != 206:
            response.close()
            watch.__exit__(None, None, None)
            raise DownloadError(
                f"{self.url}: the server ignores Range requests; cannot resume at byte {self.position:,}"
            )
        self._watch, self._response = watch, response

    def _drop(self) -> None:
        if self._response is not None:
            with contextlib.suppress(OSError, http.client.HTTPException):
                self._response.close()
        if self._watch is not None:
            self._watch.__exit__(None, None, None)
        self._watch = self._response = None

    def read(self, size: int = -1) -> bytes:
        if self._ended:
            return b""
        size = size if size is not None and size > 0 else CHUNK_SIZE
        failures = 0
        while True:
            try:
                if self._response is None:
                    self._connect()
                assert self._response is not None and self._watch is not None
                chunk = read_some(self._response, self._watch, size)
                if not chunk and self._response.length:  # the server promised more
                    raise Transient(f"the connection closed {self._response.length:,} bytes before the end")
            except Transient as error:
                failures += 1
                self._drop()
                if failures >= self.network.attempts:
                    raise DownloadError(f"{self.url}: {error} at byte {self.position:,} (gave up)") from None
                time.sleep(self.network.backoff * 2 ** (failures - 1))
                continue
            if not chunk:
                self._ended = True
                self._drop()
            self.position += len(chunk)
            return chunk

    def close(self) -> None:
        self._drop()
        super().close()


@contextlib.contextmanager
def open_warc(source: str, network: Network | None = None) -> Iterator[_Counted]:
    """A source's raw bytes as a counted stream: a local file, an ``http(s)`` URL, or a URL fsspec opens."""
    if source.startswith(("http://", "https://")):
        inner: BinaryIO = _HttpStream(source, network or Network())  # type: ignore[assignment]
    elif has_scheme(source):
        try:
            inner = open_file(source)  # an object store's object (or a file:// URL), read where it is
        except (StorageError, ValueError) as error:
            raise WarcError(f"{source}: {error}") from None
    else:
        try:
            inner = open(source, "rb")  # noqa: SIM115 - closed by the counted stream
        except OSError as error:
            raise WarcError(f"{source}: {error.strerror or error}") from None
    counted = _Counted(inner)
    try:
        yield counted
    finally:
        counted.close()


class _Prefixed(_Forward):
    """A stream whose first bytes were already read (to tell the format), handed back before the rest."""

    def __init__(self, head: bytes, inner: io.RawIOBase | _Forward) -> None:
        self.head = head
        self.inner = inner

    def read(self, size: int = -1) -> bytes:
        if self.head:
            if size is None or size < 0 or size >= len(self.head):
                data, self.head = self.head, b""
            else:
                data, self.head = self.head[:size], self.head[size:]
        else:
            data = self.inner.read(size)
        self.position += len(data)
        return data


class _Member(_Forward):
    """One gzip member of a stream, decompressed; the file ending inside it, or damage, raises TruncatedWarc."""

    def __init__(self, members: _GzipMembers, start: int) -> None:
        self.members = members
        self.start = start  # the member's compressed offset in the file
        self.ended = False

    def read(self, size: int = -1) -> bytes:
        size = size if size is not None and size > 0 else CHUNK_SIZE
        while not self.ended:
            out = self.members.inflate(self, size)
            if out:
                self.position += len(out)
                return out
        return b""

    def drain(self) -> None:
        """Decompress the member to its end, so that the next one can be found (what is left is not wanted)."""
        while self.read(CHUNK_SIZE):
            pass


class _GzipMembers:
    """The gzip members of a stream, one :class:`_Member` at a time, each starting where the last one ended.

    A WARC or ARC file compressed per record has one record per member, so a record whose ``Content-Length``
    is wrong spoils its own member only: reading goes on at the next one. A damaged member is skipped by
    looking for the next gzip header in the compressed bytes (counted by the reader).
    """

    MAGIC = b"\x1f\x8b\x08"

    def __init__(self, raw: _Counted, head: bytes) -> None:
        self.raw = raw
        self._pending = head
        self._consumed = 0  # compressed bytes before ``_pending``
        self._decompressor = zlib.decompressobj(31)
        self.damaged = 0  # members skipped as damaged

    def _fill(self) -> bool:
        data = self.raw.read(_MEMBER_READ)
        self._pending += data
        return bool(data)

    def __iter__(self) -> Iterator[_Member]:
        while True:
            while len(self._pending) < len(self.MAGIC) and self._fill():
                pass
            if not self._pending:
                return
            if not self._pending.startswith(self.MAGIC):
                self.damaged += 1  # bytes between members that start none
                if not self._resync():
                    return
            member = _Member(self, self._consumed)
            yield member
            member.drain()

    def _resync(self) -> bool:
        """Skip to the next gzip header in the compressed bytes; False at the end of the stream."""
        while True:
            found = self._pending.find(self.MAGIC, 1)
            if found >= 0:
                self._consumed += found
                self._pending = self._pending[found:]
                self._decompressor = zlib.decompressobj(31)
                return True
            keep = len(self.MAGIC) - 1
            self._consumed += max(0, len(self._pending) - keep)
            self._pending = self._pending[-keep:]
            if not self._fill():
                self._consumed += len(self._pending)
                self._pending = b""
                return False

    def inflate(self, member: _Member, size: int) -> bytes:
        """Up to ``size`` decompressed bytes of ``member``; marks it ended at the member's end."""
        if not self._pending and not self._fill():
            member.ended = True
            raise _CutShort(f"the gzip member at byte {member.start:,} is cut short (the file ends inside it)")
        data = self._pending
        try:
            out = self._decompressor.decompress(data, size)
        except zlib.error as error:
            member.ended = True
            self._resync()
            raise TruncatedWarc(f"the gzip member at byte {member.start:,} is damaged ({error})") from None
        if self._decompressor.eof:
            rest = self._decompressor.unused_data
            self._consumed += len(data) - len(rest)
            self._pending = rest
            self._decompressor = zlib.decompressobj(31)
            member.ended = True
        else:
            tail = self._decompressor.unconsumed_tail
            self._consumed += len(data) - len(tail)
            self._pending = tail
        return out


# ---------------------------------------------------------------------------------------------- records


def _kind(content_type: str) -> Kind | None:
    if content_type in HTML_TYPES:
        return "html"
    if content_type.startswith("image/"):
        return "image"
    return None


def _content_type(value: str | None) -> tuple[str, str | None]:
    """An HTTP Content-Type header's media type (lower case) and its charset parameter, if any."""
    if not value:
        return "", None
    media, *parameters = value.split(";")
    charset = None
    for parameter in parameters:
        name, _, given = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = given.strip().strip("\"'") or None
    return media.strip().lower(), charset


def target_uri(value: str | None) -> str:
    """A WARC-Target-URI as a URL: WARC 1.0's grammar put it in angle brackets, and wget writes them; a space
    (an old crawler's unescaped URL) is escaped."""
    uri = (value or "").strip()
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1].strip()
    return uri.replace(" ", "%20")


@dataclasses.dataclass
class _Record:
    """An archive record as both formats give it to the HTTP layer: where it is, its block and its HTTP head."""

    uri: str
    record_id: str
    date: str
    offset: int
    number: int
    block: bytes
    http: HttpResponse


def iter_responses(
    source: str,
    stats: WarcStats,
    max_payload: int = MAX_PAYLOAD,
    verify_digests: bool = True,
    network: Network | None = None,
    wanted: Callable[[str], bool] | None = None,
) -> Iterator[WarcResponse]:
    """The HTML and image responses of one WARC or ARC source, in file order, their bodies as the server sent
    them (:mod:`builder.sources.http`); ``stats`` counts as it goes.

    Bad records are skipped and counted with the source and record named. In a file compressed per record, a
    bad record or a damaged member spoils that member only and reading goes on at the next one; in an
    uncompressed file, or inside one member, damage that breaks the framing stops the file there, with a
    counted problem, after the records before it. ``wanted(kind)`` chooses the kinds whose payloads are read
    (default: both). A source that cannot be opened, or that is no WARC or ARC file, raises :class:`WarcError`.
    """
    stats.files += 1
    reader = _Reader(source, stats, max_payload, verify_digests, wanted)
    with open_warc(source, network) as raw:
        try:
            head = raw.read(2)
            if head == b"\x1f\x8b":
                members = _GzipMembers(raw, head)
                for start, segment in _segments(members, reader):
                    yield from reader.segment(segment, start)
                    segment.drain()
                if members.damaged:
                    stats.members_skipped += members.damaged
                    stats.note(f"{source}: {members.damaged:,} stretch(es) of bytes between gzip members skipped")
            else:
                first = head + raw.read(14)
                reader.set_format(first, compressed=False)
                yield from reader.segment(_Prefixed(first, raw), None)
        except (OSError, ValueError, DownloadError) as error:
            if isinstance(error, WarcError):
                raise
            stats.files_stopped += 1
            stats.note(f"{source}: reading stopped after {reader.last}: {error}")
        finally:
            stats.bytes += raw.count


class _Segment(_Forward):
    """The records of a gzip file from one member that starts a record to the next: one member when the file is
    compressed per record (as WARC asks), several when a writer split a record over members, the whole file when
    it is one member."""

    def __init__(self, members: Iterator[_Member], member: _Member, first: bytes, starts: Callable[[bytes], bool]):
        self.members = members
        self.current = member
        self.head = first
        self.starts = starts
        self.next: tuple[_Member, bytes] | None = None  # the member that starts the next segment, and its first bytes

    def read(self, size: int = -1) -> bytes:
        size = size if size is not None and size > 0 else CHUNK_SIZE
        while True:
            if self.head:
                data, self.head = self.head[:size], self.head[size:]
            elif self.current is None:
                return b""
            else:
                data = self.current.read(size)
            if data:
                self.position += len(data)
                return data
            following = next(self.members, None)
            if following is None:
                self.current = None
                return b""
            first = following.read(16)
            if self.starts(first):
                self.next, self.current = (following, first), None
                return b""
            self.current, self.head = following, first

    def drain(self) -> None:
        """Read to the segment's end (what a parser left), so that the next segment is found; a damaged member is
        passed over (the gzip reader resynchronised on the next header)."""
        while True:
            try:
                if not self.read(CHUNK_SIZE):
                    return
            except _CutShort:
                raise
            except TruncatedWarc:
                continue


def _segments(members: _GzipMembers, reader: _Reader) -> Iterator[tuple[int, _Segment]]:
    """The segments of a gzip file, each with the compressed offset of its first member; the first member tells
    the format (a WARC member starts a record with ``WARC/``; every ARC member starts one)."""
    iterator = iter(members)
    member = next(iterator, None)
    if member is None:
        return
    first = member.read(16)
    reader.set_format(first, compressed=True)

    def starts(head: bytes) -> bool:
        return reader.format == "arc" or archive_format(head) == "warc"

    pending: tuple[_Member, bytes] | None = (member, first)
    while pending is not None:
        member, first = pending
        segment = _Segment(iterator, member, first, starts)
        yield member.start, segment
        pending = segment.next


class _Reader:
    """The records of one source, segment by segment (a gzip member, or the whole uncompressed file)."""

    def __init__(
        self,
        source: str,
        stats: WarcStats,
        max_payload: int,
        verify_digests: bool,
        wanted: Callable[[str], bool] | None,
    ) -> None:
        self.source = source
        self.stats = stats
        self.max_payload = max_payload
        self.verify_digests = verify_digests
        self.wanted = wanted
        self.format = ""
        self.last = "the start"
        self.arc_fields = 5
        self.number = 0  # records framed so far in the file, of every type
        self.seen: set[str] = set()  # the target URIs of the file's responses, to resolve its revisits

    def set_format(self, first: bytes, compressed: bool) -> None:
        """The source's format from its first (decompressed) bytes; a source of neither is refused, named."""
        name = archive_format(first)
        if not name:
            raise WarcError(not_an_archive(self.source, first, compressed))
        self.format = name

    def segment(self, stream: _Forward, member: int | None) -> Iterator[WarcResponse]:
        """The responses of one segment; in a gzip member (``member``: its offset) a framing error ends the
        member, counted, and the next one is read."""
        records = self._arc(stream, member) if self.format == "arc" else self._warc(stream, member)
        try:
            for record in records:
                response = self._response(record)
                if response is not None:
                    yield response
        except (ValueError, OSError) as error:
            if member is None or isinstance(error, _CutShort):
                raise
            self.stats.members_skipped += 1
            self.stats.note(f"{self.source}: the rest of the gzip member at byte {member:,} is skipped: {error}")

    # -- WARC, through fastwarc

    def _warc(self, stream: _Forward, member: int | None) -> Iterator[_Record]:
        stats = self.stats
        from fastwarc import ArchiveIterator, WarcRecordType  # here: a dataset build, which imports this, needs none

        records = ArchiveIterator(
            stream, record_types=WarcRecordType.any_type, parse_http=False, stream_detect=False, fsspec_args=False
        )
        for record in records:
            stats.records += 1
            number, self.number = self.number, self.number + 1
            offset = record.stream_pos if member is None else member
            kind = record.record_type
            if kind == WarcRecordType.revisit:
                self._revisit(record)
                continue
            if kind != WarcRecordType.response:
                continue
            stats.responses += 1
            headers = record.headers
            record_id = record.record_id or "(no WARC-Record-ID)"
            where = f"{self.source}: record {record_id} at byte {offset:,}"
            self.last = f"record {record_id} at byte {offset:,}"
            uri = target_uri(headers.get("WARC-Target-URI"))
            self.seen.add(uri)
            read = self._warc_block(record, where)
            if read is not None:
                yield _Record(uri, record_id, headers.get("WARC-Date") or "", offset, number, *read)

    def _warc_block(self, record: object, where: str) -> tuple[bytes, HttpResponse] | None:
        """A response record's block and its HTTP head, or None (counted) when it is skipped; a block that holds
        no HTTP message or whose type is not wanted is left unread beyond its head."""
        stats = self.stats
        headers = record.headers  # type: ignore[attr-defined]
        declared = headers.get("Content-Length")
        if declared is None or not declared.strip().isdigit():
            stats.malformed_records += 1
            stats.note(f"{where}: no valid Content-Length")
            record.consume()  # type: ignore[attr-defined]
            return None
        size = int(declared)
        if size > self.max_payload:
            if not _cut_short(stats, where, record.consume(), size):  # type: ignore[attr-defined]
                stats.too_large += 1
                stats.note(f"{where}: {size:,} bytes, over the cap of {self.max_payload:,}")
            return None
        check = self.verify_digests and headers.get("WARC-Block-Digest")
        if check and not record.verify_block_digest(consume=False):  # type: ignore[attr-defined]
            if not _cut_short(stats, where, record.content_length, size):  # type: ignore[attr-defined]
                stats.digest_mismatches += 1
                stats.note(f"{where}: WARC-Block-Digest does not match the block (a wrong Content-Length, or damage)")
            record.consume()  # type: ignore[attr-defined]
            return None
        head = record.reader.read(min(size, _HEAD_READ))  # type: ignore[attr-defined]
        response = self._wanted_head(head)
        if response is None:
            record.consume()  # type: ignore[attr-defined]
            return None
        block = head + record.reader.read(size - len(head)) if size > len(head) else head  # type: ignore[attr-defined]
        if _cut_short(stats, where, len(block), size):
            return None
        return block, _whole_head(response, head, block)

    def _wanted_head(self, head: bytes) -> HttpResponse | None:
        """The HTTP head of a block's first bytes if it is a successful response of a wanted type (else None,
        counted): a redirect or an error (not 2xx) is no capture of its page or image, whatever its body."""
        response = parse_response(head)
        if response is None:
            self.stats.not_http += 1
            return None
        kind = _kind(_content_type(response.header("content-type"))[0])
        if kind is None or (self.wanted is not None and not self.wanted(kind)):
            self.stats.other_types += 1
            return None
        if not 200 <= response.status < 300:
            self.stats.unsuccessful += 1
            return None
        return response

    def _revisit(self, record: object) -> None:
        """A revisit repeats a capture without its payload: counted, never read, resolved when the file holds a
        response of the URI it refers to (read from that URI's first success, if any: a later capture is a copy)."""
        headers = record.headers  # type: ignore[attr-defined]
        self.stats.revisits += 1
        original = target_uri(headers.get("WARC-Refers-To-Target-URI") or headers.get("WARC-Target-URI"))
        if original in self.seen:
            self.stats.revisits_resolved += 1
        record.consume()  # type: ignore[attr-defined]

    # -- ARC, the Internet Archive's format before WARC

    def _arc(self, stream: _Forward, member: int | None) -> Iterator[_Record]:
        """ARC records (version 1): a header line ``URL IP date type length``, then ``length`` bytes (the HTTP
        response, for an http URL); the first record, ``filedesc://``, names the header's fields."""
        stats = self.stats
        buffered = io.BufferedReader(stream, _MEMBER_READ)  # type: ignore[arg-type]
        while True:
            start = buffered.tell() if member is None else member
            line = buffered.readline(_ARC_LINE)
            while line in (b"\n", b"\r\n"):
                line = buffered.readline(_ARC_LINE)
            if not line:
                return
            if not line.endswith(b"\n"):
                raise ValueError(f"ARC header at byte {start:,} is not a line")
            fields = line.decode("latin-1").rstrip("\r\n").rsplit(" ", self.arc_fields - 1)
            if len(fields) != self.arc_fields or not fields[-1].isdigit():
                raise ValueError(f"ARC header at byte {start:,} is malformed: {line[:120]!r}")
            url, length = fields[0], int(fields[-1])
            stats.records += 1
            number, self.number = self.number, self.number + 1
            if url.startswith("filedesc://"):
                block = buffered.read(length)
                lines = block.split(b"\n", 2)
                if len(lines) > 1 and lines[1].strip():
                    self.arc_fields = len(lines[1].split())
                continue
            record_id = f"<arc:{start}>"
            where = f"{self.source}: ARC record at byte {start:,} ({url[:200]})"
            self.last = f"ARC record at byte {start:,}"
            if not url.startswith(("http://", "https://")):
                stats.responses += 1
                stats.not_http += 1
                _skip(buffered, length)
                continue
            stats.responses += 1
            self.seen.add(target_uri(url))
            if length > self.max_payload:
                if not _cut_short(stats, where, _skip(buffered, length), length):
                    stats.too_large += 1
                    stats.note(f"{where}: {length:,} bytes, over the cap of {self.max_payload:,}")
                continue
            head = buffered.read(min(length, _HEAD_READ))
            response = self._wanted_head(head)
            if response is None:
                _skip(buffered, length - len(head))
                continue
            block = head + buffered.read(length - len(head)) if length > len(head) else head
            if _cut_short(stats, where, len(block), length):
                return
            response = _whole_head(response, head, block)
            yield _Record(target_uri(url), record_id, _arc_date(fields[2]), start, number, block, response)

    # -- HTTP, the same for both formats

    def _response(self, record: _Record) -> WarcResponse | None:
        stats = self.stats
        where = f"{self.source}: record {record.record_id} at byte {record.offset:,}"
        response = record.http
        content_type, charset = _content_type(response.header("content-type"))
        kind = _kind(content_type)
        assert kind is not None  # the head was checked
        try:
            payload, kept = decode_body(response, record.block[response.body_start :], self.max_payload)
        except BodyError as error:
            if error.reason == "too_large":
                stats.too_large += 1
            else:
                stats.unsupported_encodings += 1
            stats.note(f"{where}: {error}")
            return None
        stats.bodies_as_stored += bool(kept)
        if kind == "html":
            stats.html += 1
        else:
            stats.images += 1
        where_from = (self.source, record.uri, record.record_id, record.date, record.offset, record.number)
        return WarcResponse(*where_from, kind, content_type, charset, payload)


_HEAD_READ = 1 << 14  # a block's first bytes, enough for the HTTP headers of almost every response
_ARC_LINE = 1 << 16  # the longest ARC header line read


def _whole_head(response: HttpResponse, head: bytes, block: bytes) -> HttpResponse:
    """The HTTP head of the whole block, where the first bytes read held only part of it."""
    if response.body_start < len(head) or len(block) == len(head):
        return response
    return parse_response(block) or response


def _skip(stream: io.BufferedReader, count: int) -> int:
    """Read past ``count`` bytes without keeping them; how many there were."""
    skipped = 0
    while skipped < count:
        data = stream.read(min(CHUNK_SIZE, count - skipped))
        if not data:
            break
        skipped += len(data)
    return skipped


def _arc_date(value: str) -> str:
    """An ARC date (``20080430204825``) as a WARC-Date (``2008-04-30T20:48:25Z``); as written if it is not one."""
    if len(value) == 14 and value.isdigit():
        return f"{value[:4]}-{value[4:6]}-{value[6:8]}T{value[8:10]}:{value[10:12]}:{value[12:]}Z"
    return value


def _cut_short(stats: WarcStats, where: str, left: int, block: int) -> bool:
    """Whether a record holds fewer bytes than its Content-Length says (counted and noted as truncated)."""
    if left >= block:
        return False
    stats.truncated_records += 1
    stats.note(f"{where}: truncated, {left:,} of {block:,} bytes")
    return True
