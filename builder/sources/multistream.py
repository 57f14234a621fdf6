"""Cutting a dump into byte ranges that workers read on their own: the bz2 streams of a
``pages-articles-multistream`` file (from its ``-multistream-index.txt.bz2`` or by scanning),
and page boundaries inside a plain or single-stream history file; the header a range is read behind.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import io
import mmap
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from builder.sources.damage import MAX_FAILED_CUTS
from builder.sources.files import CHUNK_SIZE, STREAM_MAGIC, DumpError, DumpWarning, dump_compression, open_binary
from builder.storage import exists, location, name_of, open_file, sibling, size

__all__ = [
    "header_text",
    "history_ranges",
    "lines_before",
    "page_opening",
    "plain_header",
    "split_ranges",
    "stream_offsets",
]


_PAGE_START = re.compile(r"\s*<page[\s>/]")
_FIRST_PAGE = re.compile(r"<page[\s>/]")
_PAGE_OR_REVISION = re.compile(rb"<(?:page|revision)[\s>/]")
PAGE_SEARCH_WINDOW = 1 << 26  # bytes of a history file mapped at a time, looking back for a range's page


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
    with open_binary(path) as handle:
        while not decompressor.eof and (raw := handle.read(1 << 16)):
            try:
                text += decoder.decode(decompressor.decompress(raw))
            except OSError:
                raise DumpError(f"{path}: corrupt bz2 data in the bz2 stream at byte 0") from None
            if match := _FIRST_PAGE.search(text):
                return text[: match.start()]
    return text


def plain_header(path: Path) -> str:
    """A plain XML dump's text before its first ``<page>``: what a range of it is read behind."""
    data = b""
    with open_binary(path) as handle:
        while chunk := handle.read(1 << 16):
            data += chunk
            match = _PAGE_OR_REVISION.search(data)
            if match is not None:
                return data[: match.start()].decode("utf-8", errors="replace")
    return data.decode("utf-8", errors="replace")


def page_opening(path: Path, start: int) -> tuple[int, str, bool] | None:
    """Where the page that ``start`` (a ``<revision>``) is in begins, its text up to its first revision, and
    whether revisions of it come before ``start``.

    None when ``start`` is a ``<page>``. The page's start is searched backwards in the file mapped to memory a
    window at a time, not copied: a range deep inside a page of many revisions (a long history cut for several
    workers) would otherwise read all of it before the range, and one mapping of all of it would count as the
    worker's memory.
    """
    with open_binary(path) as handle:
        handle.seek(start)
        if not handle.read(16).startswith(b"<revision"):
            return None
        page, end = -1, start
        while page < 0 and end > 8:
            first = max(0, end - PAGE_SEARCH_WINDOW)
            first -= first % mmap.ALLOCATIONGRANULARITY
            with _window(handle, first, end) as mapped:
                found = mapped.rfind(b"<page", 0, end - first)
                while found >= 0 and mapped[found + 5 : found + 6] not in (b">", b" "):
                    found = mapped.rfind(b"<page", 0, found)
            if found >= 0:
                page = first + found
            elif first == 0:
                break
            end = first + 8  # a tag the window's start cut is in the next window whole, with the byte after it
        if page >= 0:
            handle.seek(page)
            opening = handle.read(min(start - page, 1 << 16))
            while (match := _PAGE_OR_REVISION.search(opening, 1)) is None and len(opening) < start - page:
                opening += handle.read(min(start - page - len(opening), 1 << 16))
            cut = match.start() if match is not None else len(opening)
            return page, opening[:cut].decode("utf-8", errors="replace"), page + cut < start
    raise DumpError(f"{path}: no <page> before the <revision> at byte {start}")


@contextlib.contextmanager
def _window(handle: BinaryIO, first: int, end: int) -> Iterator[mmap.mmap | bytes]:
    """Bytes ``first``–``end`` of a file: mapped, not copied, on a local disk; read (one ranged request) from an
    object store."""
    try:
        descriptor = handle.fileno()
    except (OSError, AttributeError, io.UnsupportedOperation):
        handle.seek(first)
        yield handle.read(end - first)
        return
    with mmap.mmap(descriptor, end - first, offset=first, access=mmap.ACCESS_READ) as mapped:
        yield mapped


def lines_before(path: Path, offset: int) -> int:
    """The line breaks in a plain file before ``offset``."""
    count = 0
    with open_binary(path) as handle:
        while offset > 0 and (chunk := handle.read(min(CHUNK_SIZE * 8, offset))):
            count += chunk.count(b"\n")
            offset -= len(chunk)
    return count


def history_ranges(path: str | os.PathLike[str], parts: int) -> list[tuple[int, int]]:
    """Cut a plain XML history dump into about ``parts`` byte ranges, each starting at a ``<page>`` or a
    ``<revision>``: a page of many revisions is then read by several tasks. One range for a file too small."""
    path = location(path)
    total = size(path)
    cuts = [0]
    with open_binary(path) as handle:
        first_page = len(plain_header(path).encode("utf-8"))
        for part in range(1, parts):
            base = max(first_page + 1, total * part // parts, cuts[-1] + 1)
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
    return list(zip(cuts, [*cuts[1:], total], strict=True))


def index_path(path: str | os.PathLike[str]) -> Path | None:
    """The ``…-multistream-index.txt.bz2`` that Wikimedia publishes beside a multistream dump.

    A big wiki's dump comes in parts, each with its own index:
    ``…-multistream1.xml-p1p41242.bz2`` beside ``…-multistream-index1.txt-p1p41242.bz2``.
    """
    path = location(path)
    name = name_of(path)
    part = re.fullmatch(r"(?P<head>.*multistream)(?P<number>\d+)\.xml(?P<pages>-p\d+p\d+)\.bz2", name)
    if part:
        index = f"{part['head']}-index{part['number']}.txt{part['pages']}.bz2"
    elif "multistream" in name and name.endswith(".xml.bz2"):
        index = name[: -len(".xml.bz2")].replace("multistream", "multistream-index") + ".txt.bz2"
    else:
        return None
    candidate = sibling(path, index)
    return candidate if exists(candidate) else None


def stream_offsets(path: str | os.PathLike[str]) -> list[int]:
    """Byte offsets of the bz2 streams in a dump file.

    Read from the multistream index when it is there (lines ``offset:page_id:title``);
    otherwise found by scanning for the byte-aligned bz2 stream header. An index that
    cannot be trusted (see :func:`index_offsets`) is ignored with a :class:`DumpWarning`
    naming it and what is wrong, and the streams are found by scanning: the pages read
    never depend on the index. A single-stream file gives ``[0]``; a file that is not bz2
    (by its first bytes) too.
    """
    path = location(path)
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
    if size(index) == 0:
        raise DumpError(f"{index}: the index file is empty")
    total = size(path)
    offsets = [0]
    number = 0
    with open_binary(path) as dump, open_file(index) as packed, bz2.open(packed, "rb") as lines:
        try:
            for number, line in enumerate(lines, 1):
                offset = _index_offset(index, number, line)
                if offset == offsets[-1]:
                    continue  # the other pages of the same stream
                if offset < offsets[-1]:
                    raise DumpError(f"{index}:{number}: offset {offset} comes after offset {offsets[-1]}")
                if offset >= total:
                    raise DumpError(f"{index}:{number}: offset {offset} is beyond the end of {path} ({total} bytes)")
                dump.seek(offset)
                if not STREAM_MAGIC.match(dump.read(10)):
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
    with open_binary(path) as handle:
        position = 0
        tail = b""
        while block := handle.read(CHUNK_SIZE * 8):
            data = tail + block
            base = position - len(tail)
            offsets.extend(base + match.start() for match in STREAM_MAGIC.finditer(data))
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
    path = location(path)
    total = size(path)
    offsets = stream_offsets(path) if offsets is None else offsets
    if len(offsets) < 2 or parts < 2:
        return [(0, total)]
    target = total / parts
    ranges: list[tuple[int, int]] = []
    start = 0
    failed_checks = 0
    with open_binary(path) as handle:
        for offset in offsets[1:]:
            if offset - start < target or failed_checks >= MAX_FAILED_CUTS:
                continue
            if _PAGE_START.match(_first_stream_start(handle, offset)):
                ranges.append((start, offset))
                start = offset
            else:
                failed_checks += 1
    ranges.append((start, total))
    return ranges
