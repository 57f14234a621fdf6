"""Decompression backends of the dump reader: bz2 (one stream, multistream, parallel blocks),
gzip, 7z (libarchive or py7zr) and plain XML, as pieces of bytes with the bz2 stream each
came from; a reader thread decompresses ahead of the parser; UTF-8 checking counts invalid bytes.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import importlib.util
import queue
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from builder.sources.damage import MAX_BLOCK_BYTES, damage_in, good_blocks_before
from builder.sources.files import CHUNK_SIZE, STREAM_HEADER, Compression, DumpError, ReadStats, open_binary
from builder.storage import is_url, name_of, size

__all__ = ["checked_pieces", "raw_pieces"]

_REPLACEMENT = "\ufffd".encode()


def _count_invalid_utf8(error: UnicodeError) -> tuple[str, int]:
    """Replace undecodable bytes by U+FFFD and note where they were, for :func:`checked_pieces`."""
    assert isinstance(error, UnicodeDecodeError)
    _InvalidBytes.runs.append((error.start, error.end))
    return "\ufffd", error.end


class _InvalidBytes:
    runs: list[tuple[int, int]] = []  # (start, end) in the decoder's input, since the last decode call


codecs.register_error("wikipedia-ipc-count", _count_invalid_utf8)


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
            if not STREAM_HEADER.match(pending):
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
            damage = damage_in(path, stream, offset - len(pending) - 2 * MAX_BLOCK_BYTES, offset)
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
            first, last = good_blocks_before(stream.available_block_offsets(), stream.tell())
            damage = damage_in(path, 0, first, last)
            raise DumpError(f"{path}: corrupt bz2 data in the bz2 stream at byte 0{damage}") from None


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

    threading.Thread(target=decompress, name=f"7z:{name_of(path)}", daemon=True).start()
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


def raw_pieces(
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
    if compression == "7z" and is_url(path):
        raise DumpError(f"{path}: a .7z dump is read from a local disk only; give the .bz2 dump of the same run")
    if compression == "7z":
        for block in _libarchive_chunks(path) if _libarchive_works() else _sevenzip_chunks(path):
            yield None, block
        return
    threaded = threads > 1 and not is_url(path) and importlib.util.find_spec("indexed_bzip2")  # a local file's
    if compression == "bz2" and byte_range is None and threaded:
        yield from _parallel_bz2_pieces(path, threads)
        return
    with open_binary(path) as handle:
        if compression == "bz2":
            start, end = byte_range if byte_range else (0, size(path))
            if read_ahead:
                yield from _read_ahead(_bz2_pieces(handle, path, start, end, READ_AHEAD_BZ2), name_of(path))
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


def checked_pieces(
    pieces: Iterable[tuple[int | None, bytes]], stats: ReadStats
) -> Iterator[tuple[int | None, bytes, list[tuple[int, int, int]]]]:
    """The pieces as valid UTF-8 for the XML parser: invalid bytes replaced by U+FFFD, and counted.

    The parser is fed bytes, not decoded text: decoding only checks them (an ASCII piece not even
    that), and expat reads UTF-8 itself, so no text is decoded and encoded again on the way in.
    A character cut by a piece's end is held back until the next piece completes it. Each piece
    comes with its invalid byte runs as (index of the replacement in the bytes handed on,
    decompressed byte offset in its bz2 stream or file, length), so that the reader can say where
    they were.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="wikipedia-ipc-count")
    stream: int | None = None
    position = 0  # decompressed bytes of the stream before the piece
    for piece_stream, piece in pieces:
        if piece_stream != stream:
            stream, position = piece_stream, 0
        pending = decoder.getstate()[0]
        if not pending and piece.isascii():
            yield stream, piece, []
        else:
            decoder.decode(piece)
            yield stream, *_valid_bytes(pending, piece, decoder.getstate()[0], position, stats)
        position += len(piece)
    pending = decoder.getstate()[0]
    decoder.decode(b"", final=True)
    yield stream, *_valid_bytes(pending, b"", b"", position, stats)


def _valid_bytes(
    pending: bytes, piece: bytes, kept: bytes, position: int, stats: ReadStats
) -> tuple[bytes, list[tuple[int, int, int]]]:
    """The bytes the decoder checked (``piece`` behind the ``pending`` bytes it held back before, without the
    ``kept`` ones it holds back now), with the runs :func:`_count_invalid_utf8` noted replaced by U+FFFD.

    Adjacent runs are reported as one run.
    """
    data = pending + piece if pending else piece
    end = len(data) - len(kept)
    if not _InvalidBytes.runs:
        return (data[:end] if kept else data), []
    offset = position - len(pending)
    parts: list[bytes] = []
    runs: list[tuple[int, int, int]] = []
    handed = 0  # bytes handed on so far
    done = 0
    for start, stop in _InvalidBytes.runs:
        stats.invalid_utf8_bytes += stop - start
        parts.append(data[done:start])
        handed += start - done
        if runs and start == done:
            at, where, length = runs[-1]
            runs[-1] = (at, where, length + stop - start)
        else:
            runs.append((handed, offset + start, stop - start))
        parts.append(_REPLACEMENT)
        handed += len(_REPLACEMENT)
        done = stop
    parts.append(data[done:end])
    _InvalidBytes.runs.clear()
    return b"".join(parts), runs
