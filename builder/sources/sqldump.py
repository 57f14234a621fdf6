"""A streaming reader of MySQL dumps (``mysqldump`` output, as Wikimedia publishes its tables).

Wikimedia's ``…-image.sql.gz`` holds one ``CREATE TABLE `image` (…)`` statement and
``INSERT INTO `image` VALUES (…),(…);`` statements of about 1 MB each, with blobs
(``img_metadata``) that contain escaped quotes, backslashes, NUL bytes, newlines, commas
and parentheses. The reader tokenizes the statements over the decompressed bytes chunk by
chunk: a row may span chunks, a statement lines, and memory holds one chunk plus the row
being read. Column positions come from the ``CREATE TABLE`` statement (or the column list
of the ``INSERT``), never from a fixed layout; only the asked-for columns are unescaped.

``mwsql`` was considered and not used: it reads one ``INSERT`` per line, splits rows on
``),(`` (which a blob may contain) and turns ``\\0`` and ``\\n`` into ``0`` and ``n``.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from builder.sources.files import check_dump_path
from builder.storage import is_url, open_file

__all__ = ["SqlDumpError", "SqlStats", "iter_rows"]

CHUNK_SIZE = 1 << 20
MAX_STATEMENT = 16 << 20  # bytes of a statement other than INSERT (CREATE TABLE is a few KB)
MAX_ROW = 64 << 20  # a row longer than this (a blob is at most 16 MB, 32 MB escaped) is read value by value
LOOKAHEAD = 1 << 16  # bytes enough to tell a statement's kind and read an INSERT's head

_SPACE = re.compile(rb"\s*")
_COMMENT_LINE = re.compile(rb"--[^\n]*(?:\n|\Z)|#[^\n]*(?:\n|\Z)")
_COMMENT_BLOCK = re.compile(rb"/\*.*?\*/\s*;?", re.DOTALL)
# a statement up to its ";", strings and quoted identifiers skipped whole (one character per
# step outside them: a nested "+" would backtrack exponentially on a statement without ";")
_STATEMENT = re.compile(rb"(?:[^;'`\"]|'[^'\\]*(?:\\.[^'\\]*)*'|`[^`]*`|\"[^\"\\]*(?:\\.[^\"\\]*)*\")*;", re.DOTALL)
_INSERT = re.compile(
    rb"INSERT\s+(?:IGNORE\s+)?INTO\s+`?(\w+)`?\s*(?:\(([^)]*)\)\s*)?VALUES\s*", re.IGNORECASE | re.DOTALL
)
_CREATE = re.compile(rb"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?\s*\((.*)\)", re.IGNORECASE | re.DOTALL)
# a column definition: a quoted name and a type, first in the body or after a comma (keys start otherwise)
_COLUMN = re.compile(rb"(?:\A|,)\s*`([^`]+)`\s+[A-Za-z]")
_VALUE = rb"'[^'\\]*(?:\\.[^'\\]*)*'|[-+.\w]+"  # a string literal, or a number or NULL
_STRING = re.compile(rb"'[^'\\]*(?:\\.[^'\\]*)*'", re.DOTALL)
_BARE = re.compile(rb"[-+.\w]+")
_VALUES = re.compile(_VALUE, re.DOTALL)
# a whole row and the "," or ";" after it, in one match: the fast path (values cannot be ambiguous)
_ROW = re.compile(rb"\s*\(\s*((?:%s)(?:\s*,\s*(?:%s))*)\s*\)\s*([,;])" % (_VALUE, _VALUE), re.DOTALL)
_ESCAPES = {b"0": b"\x00", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"Z": b"\x1a"}
_ESCAPE = re.compile(rb"\\(.)", re.DOTALL)


class SqlDumpError(Exception):
    """A SQL dump that cannot be read; the message names the file and the place."""


@dataclasses.dataclass
class SqlStats:
    """What a reader saw: rows of the wanted table, and statements of other tables it passed over."""

    rows: int = 0
    other_statements: int = 0


def _unescape(raw: bytes) -> bytes:
    """A MySQL string literal's content, its backslash escapes (``\\0``, ``\\n``, ``\\'``, ``\\\\``…) decoded."""
    return _ESCAPE.sub(lambda match: _ESCAPES.get(match.group(1), match.group(1)), raw)


def _value(token: bytes) -> bytes | None:
    """One value of a row: a string literal's bytes, a number's text, or None for NULL."""
    if token.startswith(b"'"):
        return _unescape(token[1:-1])
    return None if token.upper() == b"NULL" else token


def _open(path: Path) -> BinaryIO:
    """The decompressed bytes of a ``.sql``, ``.sql.gz`` or ``.sql.bz2`` file, told by the magic bytes."""
    with open_file(path) as handle:  # a local file, or one on an object store
        head = handle.read(1 << 16)
    if head.startswith(b"\x1f\x8b"):
        return gzip.open(open_file(path) if is_url(path) else path, "rb")  # type: ignore[return-value]
    if head.startswith(b"BZh"):
        return bz2.open(open_file(path) if is_url(path) else path, "rb")  # type: ignore[return-value]
    if b"\x00" in head:  # mysqldump writes a NUL as the escape \0, never as a byte
        raise SqlDumpError(f"{path}: not SQL text, nor gzip or bz2 data (a NUL byte at offset {head.index(0):,})")
    return open_file(path)  # type: ignore[return-value] - closed by the reader's context manager


class _Buffer:
    """The decompressed bytes not yet consumed, refilled chunk by chunk, with the line of its start."""

    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self.stream = stream
        self.path = path
        self.data = b""
        self.pos = 0
        self.line = 1
        self.eof = False

    def more(self) -> bool:
        """Append a chunk (dropping what was consumed); False at the end of the data."""
        if self.eof:
            return False
        self.line += self.data.count(b"\n", 0, self.pos)
        self.data = self.data[self.pos :]
        self.pos = 0
        try:
            chunk = self.stream.read(CHUNK_SIZE)
        except (EOFError, OSError) as error:
            raise SqlDumpError(
                f"{self.path}: truncated or corrupt compressed data near line {self.line} ({error})"
            ) from None
        if not chunk:
            self.eof = True
            return False
        self.data += chunk
        return True

    def where(self, position: int | None = None) -> str:
        at = self.pos if position is None else position
        newlines = self.data.count(b"\n", 0, at)
        return f"line {self.line + newlines}"

    def match(self, pattern: re.Pattern[bytes], unfinished: bool = False, limit: int = 0) -> re.Match[bytes] | None:
        """``pattern`` at the position, reading on while the match could still grow past the data.

        ``unfinished``: no match may mean the data stops too early (an open string or
        statement), so read on, up to ``limit`` bytes when given.
        """
        while True:
            found = pattern.match(self.data, self.pos)
            if found is not None and found.end() < len(self.data):
                return found
            if found is None and not unfinished:
                return None
            if limit and len(self.data) - self.pos > limit:
                return found
            if not self.more():
                return pattern.match(self.data, self.pos)

    def need(self, count: int) -> bool:
        """At least ``count`` bytes after the position, reading on if needed."""
        while len(self.data) - self.pos < count:
            if not self.more():
                return False
        return True


def iter_rows(path: str | Path, table: str, columns: Sequence[str], stats: SqlStats | None = None) -> Iterator[tuple]:
    """The ``columns`` of every row of ``table`` in a MySQL dump, as bytes (None for NULL), streaming.

    Raises :class:`SqlDumpError` naming the file and line for a dump that holds no such
    table, lacks a column, or is truncated or malformed.
    """
    path = check_dump_path(path)
    stats = stats if stats is not None else SqlStats()
    created: dict[str, list[str]] = {}
    with _open(path) as stream:
        buffer = _Buffer(stream, path)
        while True:
            buffer.pos = buffer.match(_SPACE).end()  # type: ignore[union-attr]
            if not buffer.need(1):
                break
            buffer.need(LOOKAHEAD)
            if comment := buffer.match(_COMMENT_LINE) or buffer.match(_COMMENT_BLOCK):
                buffer.pos = comment.end()
                continue
            insert = buffer.match(_INSERT)
            if insert is None:
                _other_statement(buffer, created)
                continue
            name = insert.group(1).decode("utf-8", "replace")
            where = buffer.where()
            buffer.pos = insert.end()
            if name != table:
                if table not in created:
                    raise SqlDumpError(
                        f"{path}: INSERT into `{name}` at {where}: this SQL dump holds the `{name}` table, "
                        f"not `{table}`"
                    )
                stats.other_statements += 1
                for _ in _rows(buffer):
                    pass
                continue
            names = _listed_columns(insert.group(2)) if insert.group(2) else created.get(table)
            if names is None:
                raise SqlDumpError(f"{path}: INSERT into `{table}` at {where} comes before any CREATE TABLE `{table}`")
            positions = _positions(path, table, names, columns, where)
            for row in _rows(buffer):
                if len(row) != len(names):
                    raise SqlDumpError(
                        f"{path}: a row of `{table}` near {buffer.where()} has {len(row)} values, "
                        f"but the table has {len(names)} columns"
                    )
                stats.rows += 1
                yield tuple(_value(row[position]) for position in positions)
    if table not in created and not stats.rows:
        found = ", ".join(f"`{name}`" for name in created) or "none"
        raise SqlDumpError(f"{path}: no table `{table}` in this SQL dump (tables created: {found})")


def _positions(path: Path, table: str, names: list[str], columns: Sequence[str], where: str) -> list[int]:
    missing = [column for column in columns if column not in names]
    if missing:
        raise SqlDumpError(
            f"{path}: table `{table}` (at {where}) has no column {', '.join(missing)}; its columns: {', '.join(names)}"
        )
    return [names.index(column) for column in columns]


def _listed_columns(listed: bytes) -> list[str]:
    """The column names of an INSERT's column list: `a`,`b`,…"""
    return [name.strip().strip(b"`").decode("utf-8") for name in listed.split(b",")]


def _column_names(body: bytes) -> list[str]:
    """The column names of a CREATE TABLE body, in order (keys and constraints left out)."""
    return [match.group(1).decode("utf-8") for match in _COLUMN.finditer(body)]


def _other_statement(buffer: _Buffer, created: dict[str, list[str]]) -> None:
    """Pass over one statement that is not an INSERT; a CREATE TABLE leaves its column names."""
    start = buffer.where()
    statement = buffer.match(_STATEMENT, unfinished=True, limit=MAX_STATEMENT)
    if statement is None or statement.end() - buffer.pos > MAX_STATEMENT:
        ended = "ends inside" if buffer.eof else "is too long or malformed at"
        raise SqlDumpError(f"{buffer.path}: the SQL dump {ended} the statement at {start}")
    create = _CREATE.match(statement.group(0).strip())
    if create is not None:
        created[create.group(1).decode("utf-8")] = _column_names(create.group(2))
    buffer.pos = statement.end()


def _rows(buffer: _Buffer) -> Iterator[list[bytes]]:
    """The rows of one INSERT statement, ``(…),(…);``, each as its raw value tokens.

    A row is matched whole by one pattern; where that fails (a malformed or truncated row,
    or one too long to wait for), it is read value by value, which names the place.
    """
    while True:
        whole = buffer.match(_ROW, unfinished=True, limit=MAX_ROW)
        if whole is not None:
            buffer.pos = whole.end()
            yield _VALUES.findall(whole.group(1))
            if whole.group(2) == b";":
                return
            continue
        yield _row_by_values(buffer)
        if _expect(buffer, b",;") == b";":
            return


def _row_by_values(buffer: _Buffer) -> list[bytes]:
    """One row read value by value: slow, but it tells where a malformed row goes wrong."""
    _expect(buffer, b"(")
    row: list[bytes] = []
    while True:
        buffer.pos = buffer.match(_SPACE).end()  # type: ignore[union-attr]
        quoted = _peek(buffer) == b"'"
        value = buffer.match(_STRING, unfinished=True) if quoted else buffer.match(_BARE)
        if value is None and quoted:  # read to the end of the data without finding the closing quote
            raise SqlDumpError(f"{buffer.path}: the SQL dump ends inside a string that starts at {buffer.where()}")
        if value is None:
            raise _malformed(buffer, "a value")
        row.append(value.group(0))
        buffer.pos = value.end()
        if _expect(buffer, b",)") == b")":
            return row


def _peek(buffer: _Buffer) -> bytes:
    if not buffer.need(1):
        raise SqlDumpError(f"{buffer.path}: the SQL dump ends inside an INSERT statement at {buffer.where()}")
    return buffer.data[buffer.pos : buffer.pos + 1]


def _expect(buffer: _Buffer, choices: bytes) -> bytes:
    """The next non-space byte, which must be one of ``choices``."""
    buffer.pos = buffer.match(_SPACE).end()  # type: ignore[union-attr]
    found = _peek(buffer)
    if found not in [choices[index : index + 1] for index in range(len(choices))]:
        raise _malformed(buffer, " or ".join(repr(chr(byte)) for byte in choices))
    buffer.pos += 1
    return found


def _malformed(buffer: _Buffer, wanted: str) -> SqlDumpError:
    shown = buffer.data[buffer.pos : buffer.pos + 20].decode("utf-8", "replace")
    return SqlDumpError(f"{buffer.path}: malformed INSERT at {buffer.where()}: expected {wanted}, found {shown!r}")
