"""Locating damage in bz2 dumps: a truncated last stream, and the block where a corrupt
stream first fails, named by byte offset so that the error is the same however the file was cut.
"""

from __future__ import annotations

import bz2
import html
from pathlib import Path
from typing import BinaryIO

from builder.sources.files import STREAM_HEADER, TITLE_ELEMENT, DumpError, open_binary
from builder.storage import size as file_size

__all__ = ["MAX_BLOCK_BYTES", "MAX_FAILED_CUTS", "check_bz2_end", "damage_in", "good_blocks_before"]


TAIL_SCAN_BYTES = 16 << 20
MAX_FAILED_CUTS = 64
_END_OF_STREAM = 0x177245385090  # the 48-bit marker that ends every bz2 stream (bit-aligned)
_BLOCK_START = 0x314159265359  # the 48-bit marker that starts every bz2 block (bit-aligned)
MAX_BLOCK_BYTES = 2 << 20  # more than a bz2 block of 900 kB can take compressed, even of random data


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
    size = file_size(path)
    with open_binary(path) as handle:
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
    if STREAM_HEADER.match(follows):
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


def damage_in(path: Path, stream: int, first: int, last: int) -> str:
    """Where the damage is in the bz2 stream at ``stream``: its first bad block, and the page being read.

    The callers know that the blocks before byte ``first``, and the first one after it,
    were read without fault, and that the bad block starts before byte ``last``. The blocks
    between are checked one by one, so the answer is the same whichever decompressor hit
    the damage and however the file was cut. The text of the good block before the bad one
    names the page being read.
    """
    first = max(first, stream)
    with open_binary(path) as handle:
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
            titles = TITLE_ELEMENT.findall(before.decode("utf-8", errors="replace"))
            page = f" (the page being read: {html.unescape(titles[-1])!r})" if titles else ""
            return f": the bz2 block that starts in byte {first + start // 8} is damaged{page}"
        before = block
    return ""


def good_blocks_before(blocks: dict[int, int], failed_at: int) -> tuple[int, int]:
    """Bytes of the file between which the block that failed at decompressed offset ``failed_at`` starts.

    ``blocks`` maps the bit offsets of the blocks indexed_bzip2 has found to their
    decompressed offsets; the last one before ``failed_at`` was good, the bad one follows.
    """
    good = [bit for bit, decompressed in blocks.items() if decompressed < failed_at]
    first = max(good) // 8 if good else 0
    return first, first + 8 * MAX_BLOCK_BYTES
