"""HTTP responses as web archives store them, turned back into what the server sent.

An archive's response record holds the HTTP message as it came over the wire, and archives differ in how
faithfully: ClueWeb09's Nutch ends header lines with a bare LF; wget and Heritrix keep a chunked body's
chunk-size lines; most keep a ``Content-Encoding: gzip`` or ``br`` body compressed, while some (ClueWeb09
again) store it decoded and leave the header. :func:`parse_response` reads the status line and headers
tolerantly, and :func:`decode_body` undoes the transfer and content codings where the body really carries
them, keeping a body that does not as it was stored, so that what reaches the HTML parser is the page a
browser would have shown. Every decoding is bounded: a body that would decode to more than the cap is refused
before it is held in memory.
"""

from __future__ import annotations

import dataclasses
import zlib

__all__ = ["MAX_PAYLOAD", "BodyError", "HttpResponse", "decode_body", "dechunk", "parse_response"]

# bytes: a larger payload (a WARC record's, a dataset sample's file) is a counted skip, never read into memory
MAX_PAYLOAD = 50 * 10**6

_MAX_HEADER_LINES = 500  # a header block longer than this is no HTTP message


class BodyError(ValueError):
    """A body that cannot be decoded (``reason``: ``too_large`` or ``unsupported_encoding``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class HttpResponse:
    """A stored HTTP response's status, its headers (names in lower case, values in order of appearance) and
    where its body starts in the stored block."""

    status: int
    headers: dict[str, list[str]]
    body_start: int

    def header(self, name: str) -> str | None:
        """The first value of a header, or None."""
        values = self.headers.get(name)
        return values[0] if values else None

    def codings(self, name: str) -> list[str]:
        """A coding header's values (``Transfer-Encoding``, ``Content-Encoding``) in the order they were applied."""
        return [
            part.strip().lower()
            for value in self.headers.get(name, ())
            for part in value.split(",")
            if part.strip() and part.strip().lower() != "identity"
        ]


def parse_response(block: bytes) -> HttpResponse | None:
    """The status line and headers of a stored HTTP response; None when the block holds none.

    Lines may end in CRLF or a bare LF; a header line that starts with a space continues the one before
    (obsolete folding); a line without a colon is ignored, as browsers do.
    """
    if not block.startswith(b"HTTP/"):
        return None
    end = block.find(b"\n")
    if end < 0:
        return None
    status_line = block[:end].rstrip(b"\r").split(None, 2)
    if len(status_line) < 2 or not status_line[1].isdigit():
        return None
    headers: dict[str, list[str]] = {}
    last: tuple[str, int] | None = None
    position = end + 1
    for _ in range(_MAX_HEADER_LINES):
        end = block.find(b"\n", position)
        line = block[position:] if end < 0 else block[position:end]
        position = len(block) if end < 0 else end + 1
        line = line.rstrip(b"\r")
        if not line:
            return HttpResponse(int(status_line[1]), headers, position)
        if line[:1] in (b" ", b"\t") and last is not None:
            name, number = last
            headers[name][number] += " " + line.strip().decode("latin-1")
            continue
        name, colon, value = line.partition(b":")
        if not colon:
            continue
        key = name.strip().decode("latin-1").lower()
        headers.setdefault(key, []).append(value.strip().decode("latin-1"))
        last = (key, len(headers[key]) - 1)
        if end < 0:
            break
    return HttpResponse(int(status_line[1]), headers, len(block)) if end < 0 else None


def dechunk(body: bytes, limit: int) -> bytes | None:
    """A ``Transfer-Encoding: chunked`` body without its chunk framing; None when the body is not framed in
    chunks (an archive that stored it de-chunked). A body cut short keeps the chunks it holds whole or in part."""
    parts: list[bytes] = []
    size_total = 0
    position = 0
    while position < len(body):
        end = body.find(b"\n", position)
        if end < 0:
            return None if not parts else b"".join(parts)
        size_text = body[position:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return None
        if not size_text or size < 0:
            return None
        if size == 0:
            break
        start = end + 1
        parts.append(body[start : start + size])
        size_total += size
        if size_total > limit:
            raise BodyError("too_large", f"the de-chunked body exceeds the cap of {limit:,} bytes")
        position = start + size
        if body[position : position + 2] == b"\r\n":
            position += 2
        elif body[position : position + 1] == b"\n":
            position += 1
        elif position < len(body):
            return None
    return b"".join(parts)


def _inflate(data: bytes, window: int, limit: int) -> bytes:
    decompressor = zlib.decompressobj(window)
    out = decompressor.decompress(data, limit + 1)
    if len(out) > limit:
        raise BodyError("too_large", f"the body decodes to more than the cap of {limit:,} bytes")
    if not decompressor.eof and not out:
        raise zlib.error("no complete block")
    return out


def _brotli(data: bytes, limit: int) -> bytes:
    try:
        import brotli
    except ImportError:  # brotlicffi has the same interface
        try:
            import brotlicffi as brotli  # type: ignore[no-redef]
        except ImportError:
            raise BodyError("unsupported_encoding", "a br body needs brotli (pip install brotli)") from None
    decompressor = brotli.Decompressor()
    out = bytearray()
    chunk = decompressor.process(data, output_buffer_limit=limit + 1)
    while True:
        out += chunk
        if len(out) > limit:
            raise BodyError("too_large", f"the body decodes to more than the cap of {limit:,} bytes")
        if decompressor.is_finished() or decompressor.can_accept_more_data():
            break
        chunk = decompressor.process(b"", output_buffer_limit=limit + 1 - len(out))
    if not decompressor.is_finished() and (not out or _looks_like_markup(data)):
        raise ValueError("not a complete brotli stream")  # brotli has no magic number: a page stored decoded
    return bytes(out)


def _looks_like_markup(data: bytes) -> bool:
    return data.lstrip()[:1] == b"<"


def _decode_one(coding: str, body: bytes, limit: int) -> bytes | None:
    """One content coding undone; None when the body does not carry it (stored decoded)."""
    try:
        if coding in ("gzip", "x-gzip"):
            return _inflate(body, 47, limit)  # a gzip or zlib header, as browsers accept both
        if coding == "deflate":
            try:
                return _inflate(body, 15, limit)
            except zlib.error:
                return _inflate(body, -15, limit)  # raw deflate, as some servers send it
        if coding == "br":
            return _brotli(body, limit)
    except BodyError:
        raise
    except Exception:  # noqa: BLE001 - zlib.error, brotli.error: the body does not carry the coding
        return None
    raise BodyError("unsupported_encoding", f"Content-Encoding {coding!r} is not supported")


def decode_body(response: HttpResponse, body: bytes, limit: int) -> tuple[bytes, list[str]]:
    """The body as sent: de-chunked and its content codings undone, in reverse order of application; and what
    was kept as stored (``chunked`` or a coding such as ``gzip``), for the reader's counters.

    A body whose header names a coding it does not carry was stored decoded (ClueWeb09, some proxies): it is
    used as it is. Raises :class:`BodyError` for a body over ``limit`` once decoded or an unknown coding.
    """
    kept: list[str] = []
    transfer = response.codings("transfer-encoding")
    if "chunked" in transfer:
        dechunked = dechunk(body, limit)
        if dechunked is None:
            kept.append("chunked")
        else:
            body = dechunked
    for coding in reversed([c for c in transfer if c != "chunked"] + response.codings("content-encoding")):
        decoded = _decode_one(coding, body, limit)
        if decoded is None:
            kept.append(coding)
            break  # the body is not encoded as said: what is under it cannot be either
        body = decoded
    return body, kept
