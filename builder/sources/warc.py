"""Web crawls stored as WARC files (thesis §4.1): where they are, and their response records.

A crawl is read where it lives: a local ``.warc``/``.warc.gz`` file, a folder of them, a Common
Crawl ``warc.paths.gz`` listing (paths resolved against a base URL), an ``http(s)://`` URL (read
through the bounded requests of :mod:`builder.sources.mirror`, resumed with ``Range`` after a
dropped connection) or any other URL fsspec opens (``s3://…``, as ``datasets`` does). Every source
is streamed and its bytes counted; nothing is downloaded whole first.

Records are parsed by ``fastwarc``. Gzip members are decompressed here, not by fastwarc, because
fastwarc ends a file whose last member is cut short without a word: :class:`_Members` raises instead,
so a truncated file is a counted, named problem. A record whose block is shorter than its
``Content-Length``, whose ``WARC-Block-Digest`` does not match, or whose payload exceeds the cap is
skipped and counted (:class:`WarcStats`), with the file and the record named; a file that cannot be
parsed further stops there, its earlier records kept.
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

from fastwarc import ArchiveIterator, WarcRecordType

from builder.sources.files import MAX_PROBLEMS
from builder.sources.mirror import (
    CHUNK_SIZE,
    DownloadError,
    Network,
    Transient,
    Watch,
    open_url,
    read_some,
)

__all__ = [
    "COMMON_CRAWL",
    "HTML_TYPES",
    "MAX_PAYLOAD",
    "WarcError",
    "WarcResponse",
    "WarcStats",
    "expand_warc_inputs",
    "iter_responses",
    "open_warc",
]

COMMON_CRAWL = "https://data.commoncrawl.org/"  # where the paths of a Common Crawl listing are relative to
MAX_PAYLOAD = 50 * 10**6  # bytes: a larger payload is a counted skip, never read into memory
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
WARC_SUFFIXES = (".warc", ".warc.gz")
PATHS_SUFFIX = ".paths.gz"
_MEMBER_READ = 1 << 16

Kind = Literal["html", "image"]


class WarcError(Exception):
    """A crawl input that cannot be read at all (missing file, bad listing); the message names it."""


class TruncatedWarc(OSError):
    """The compressed stream ends inside a gzip member, or a member is damaged; the message says where."""


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
    html: int = 0  # HTML responses handed on
    images: int = 0  # image responses handed on
    other_types: int = 0  # responses that are neither HTML nor images (scripts, PDF, CSS, …)
    not_http: int = 0  # response records without an HTTP message (DNS records, …)
    too_large: int = 0  # payloads over the cap, left unread
    truncated_records: int = 0  # blocks shorter than their Content-Length
    digest_mismatches: int = 0  # blocks whose WARC-Block-Digest does not match (a wrong Content-Length, damage)
    malformed_records: int = 0  # no Content-Length, HTTP headers that cannot be parsed
    files_stopped: int = 0  # files whose reading ended early (a damaged or truncated member, garbage)
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
        return self.too_large + self.truncated_records + self.digest_mismatches + self.malformed_records


@dataclasses.dataclass(frozen=True)
class WarcResponse:
    """An HTML or image response record: where it came from and its payload (at most the cap)."""

    source: str  # the WARC file or URL
    uri: str  # WARC-Target-URI
    record_id: str  # WARC-Record-ID, ``<urn:uuid:…>``
    date: str  # WARC-Date as written
    offset: int  # byte offset of the record in the uncompressed stream
    kind: Kind
    content_type: str  # the HTTP Content-Type without parameters, lower case
    charset: str | None  # the HTTP Content-Type's charset parameter as written, if any
    payload: bytes  # the HTTP body (transfer and content encodings as stored)


# ---------------------------------------------------------------------------------------------- inputs


def expand_warc_inputs(inputs: Sequence[str | os.PathLike[str]], base_url: str = COMMON_CRAWL) -> list[str]:
    """The WARC sources of a build, in order: folders give their ``*.warc``/``*.warc.gz`` files
    (sorted), a ``*.paths.gz`` listing its lines resolved against ``base_url``; files and URLs stay.
    A source given twice is refused, as it would count its pages twice."""
    sources: list[str] = []
    for given in inputs:
        text = os.fspath(given)
        if _is_url(text):
            sources.extend(_listing(text, base_url) if text.endswith(PATHS_SUFFIX) else [text])
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
            sources.extend(_listing(text, base_url))
        else:
            sources.append(text)
    seen: set[str] = set()
    for source in sources:
        key = source if _is_url(source) else str(Path(source).resolve())
        if key in seen:
            raise WarcError(f"a WARC file is given twice: {source}")
        seen.add(key)
    return sources


def _is_url(text: str) -> bool:
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme.isalnum() and len(scheme) > 1


def _listing(where: str, base_url: str) -> list[str]:
    """The lines of a Common Crawl ``warc.paths.gz`` listing, resolved against ``base_url``."""
    base = base_url if base_url.endswith("/") else base_url + "/"
    paths: list[str] = []
    with open_warc(where) as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        try:
            for number, line in enumerate(lines, 1):
                line = line.strip()
                if not line:
                    continue
                if line.startswith("/") or ".." in line.split("/"):
                    raise WarcError(f"{where}, line {number}: {line!r} is not a path relative to the base URL")
                paths.append(line if _is_url(line) else base + line)
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
    elif _is_url(source):
        try:
            import fsspec
        except ImportError:  # pragma: no cover - fsspec comes with datasets
            raise WarcError(f"{source}: reading URLs needs fsspec (pip install fsspec)") from None
        try:
            inner = fsspec.open(source, "rb").open()
        except (ImportError, ValueError) as error:
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


class _Members(_Forward):
    """The concatenated gzip members of a stream, decompressed; an incomplete or damaged member raises.

    ``member_start`` is the compressed offset of the member being read, for naming where damage is.
    """

    def __init__(self, raw: _Counted, head: bytes) -> None:
        self.raw = raw
        self.member_start = 0
        self._decompressor = zlib.decompressobj(31)
        self._in_member = False
        self._consumed = 0  # compressed bytes handed to finished members
        self._pending = head  # the bytes read to tell gzip from plain WARC

    def read(self, size: int = -1) -> bytes:
        size = size if size is not None and size > 0 else CHUNK_SIZE
        while True:
            if not self._pending:
                self._pending = self.raw.read(_MEMBER_READ)
                if not self._pending:
                    if self._in_member:
                        raise TruncatedWarc(
                            f"the gzip member at byte {self.member_start:,} is cut short (the file ends inside it)"
                        )
                    return b""
            if not self._in_member:
                self.member_start = self._consumed
                self._in_member = True
            data = self._pending
            try:
                out = self._decompressor.decompress(data, size)
            except zlib.error as error:
                raise TruncatedWarc(f"the gzip member at byte {self.member_start:,} is damaged ({error})") from None
            used = len(data) - len(self._decompressor.unconsumed_tail) - len(self._decompressor.unused_data)
            if self._decompressor.eof:
                rest = self._decompressor.unused_data
                self._consumed += len(data) - len(rest)
                self._pending = rest
                self._decompressor = zlib.decompressobj(31)
                self._in_member = False
            else:
                self._consumed += used
                self._pending = self._decompressor.unconsumed_tail
            if out:
                self.position += len(out)
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


def iter_responses(
    source: str,
    stats: WarcStats,
    max_payload: int = MAX_PAYLOAD,
    verify_digests: bool = True,
    network: Network | None = None,
    wanted: Callable[[str], bool] | None = None,
) -> Iterator[WarcResponse]:
    """The HTML and image response records of one WARC source, in file order; ``stats`` counts as it goes.

    Bad records are skipped and counted with the source and record named; damage that ends the
    parsing of a file (a truncated or damaged gzip member, bytes that are no WARC record) stops it
    with a counted problem, after the records before it. ``wanted(kind)`` chooses the kinds whose
    payloads are read (default: both); a source that cannot be opened raises :class:`WarcError`.
    """
    stats.files += 1
    with open_warc(source, network) as raw:
        last = "the start"
        try:
            head = raw.read(2)
            stream: _Forward = _Members(raw, head) if head == b"\x1f\x8b" else _Prefixed(head, raw)
            records = ArchiveIterator(
                stream,
                record_types=WarcRecordType.any_type,
                parse_http=False,
                stream_detect=False,
                fsspec_args=False,
            )
            for record in records:
                stats.records += 1
                if record.record_type != WarcRecordType.response:
                    continue
                stats.responses += 1
                response = _response(source, record, stats, max_payload, verify_digests, wanted)
                last = f"record {record.record_id} at byte {record.stream_pos:,}"
                if response is not None:
                    yield response
        except (OSError, DownloadError) as error:
            stats.files_stopped += 1
            stats.note(f"{source}: reading stopped after {last}: {error}")
        finally:
            stats.bytes += raw.count


class _Prefixed(_Forward):
    """A stream whose first bytes were already read (to tell gzip from plain WARC)."""

    def __init__(self, head: bytes, raw: _Counted) -> None:
        self.head = head
        self.raw = raw

    def read(self, size: int = -1) -> bytes:
        if self.head:
            data, self.head = self.head, b""
        else:
            data = self.raw.read(size)
        self.position += len(data)
        return data


def _cut_short(stats: WarcStats, where: str, left: int, block: int) -> bool:
    """Whether a record holds fewer bytes than its Content-Length says (counted and noted as truncated)."""
    if left >= block:
        return False
    stats.truncated_records += 1
    stats.note(f"{where}: truncated, {left:,} of {block:,} bytes")
    return True


def _response(
    source: str,
    record: object,
    stats: WarcStats,
    max_payload: int,
    verify_digests: bool,
    wanted: Callable[[str], bool] | None,
) -> WarcResponse | None:
    """One response record as a :class:`WarcResponse`, or ``None`` (counted) when it is skipped."""
    headers = record.headers  # type: ignore[attr-defined]
    record_id = record.record_id or "(no WARC-Record-ID)"  # type: ignore[attr-defined]
    where = f"{source}: record {record_id} at byte {record.stream_pos:,}"  # type: ignore[attr-defined]
    declared = headers.get("Content-Length")
    if declared is None or not declared.strip().isdigit():
        stats.malformed_records += 1
        stats.note(f"{where}: no valid Content-Length")
        record.consume()  # type: ignore[attr-defined]
        return None
    block = int(declared)
    if block > max_payload:
        if not _cut_short(stats, where, record.consume(), block):  # type: ignore[attr-defined]
            stats.too_large += 1
            stats.note(f"{where}: {block:,} bytes, over the cap of {max_payload:,}")
        return None
    if not record.is_http:  # type: ignore[attr-defined]
        stats.not_http += 1
        record.consume()  # type: ignore[attr-defined]
        return None
    if verify_digests and headers.get("WARC-Block-Digest") and not record.verify_block_digest(consume=False):  # type: ignore[attr-defined]
        if not _cut_short(stats, where, record.content_length, block):  # type: ignore[attr-defined]
            stats.digest_mismatches += 1
            stats.note(f"{where}: WARC-Block-Digest does not match the block (a wrong Content-Length, or damage)")
        record.consume()  # type: ignore[attr-defined]
        return None
    try:
        record.parse_http()  # type: ignore[attr-defined]
    except OSError as error:
        stats.malformed_records += 1
        stats.note(f"{where}: HTTP headers cannot be parsed ({error})")
        record.consume()  # type: ignore[attr-defined]
        return None
    http_headers = record.http_headers  # type: ignore[attr-defined]
    content_type, charset = _content_type(http_headers.get("Content-Type") if http_headers is not None else None)
    kind = _kind(content_type)
    if kind is None or (wanted is not None and not wanted(kind)):
        stats.other_types += 1
        record.consume()  # type: ignore[attr-defined]
        return None
    remaining = record.content_length  # type: ignore[attr-defined]
    payload = record.reader.read(remaining)  # type: ignore[attr-defined]
    if len(payload) < remaining or (http_headers is None or http_headers.status_code is None):
        stats.truncated_records += 1
        stats.note(f"{where}: truncated, {len(payload):,} of {remaining:,} payload bytes")
        return None
    if kind == "html":
        stats.html += 1
    else:
        stats.images += 1
    return WarcResponse(
        source,
        headers.get("WARC-Target-URI") or "",
        record_id,
        headers.get("WARC-Date") or "",
        record.stream_pos,  # type: ignore[attr-defined]
        kind,
        content_type,
        charset,
        payload,
    )
