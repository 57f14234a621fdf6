"""The text of an image–caption dataset (thesis §5.1): a sample's caption as published, a user as its rows carry
it, and the caption TSV's format (its layout from the first line, its rows, its parts), which the dataset reader
(:mod:`builder.sources.img2dataset`) and a build's TSV tasks (:mod:`builder.extract.captiontsv`) both read.

The TSV is Conceptual Captions' own (caption, tab, image URL; no header: a row is split on its last tab) or one
with a header naming ``caption`` and ``url`` (as img2dataset's ``--input_format tsv`` reads), and then any other
column, a user column among them, counted from either end.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from builder.lang.text import preprocess_caption  # web captions' §4.5.1 cleaning; needs no HTML parser
from builder.storage import as_path, open_file

__all__ = [
    "MAX_PROBLEMS",
    "TsvLayout",
    "UnreadableCaption",
    "caption_tsv_parts",
    "field_text",
    "read_caption_tsv",
    "read_caption_tsv_part",
    "sample_caption",
    "tsv_columns",
    "tsv_layout",
    "tsv_row",
    "user_value",
]

MAX_PROBLEMS = 100  # places of problems kept for the report; all are counted
# A caption is binary, not text, when one character in ten or more is a control character (tabs and line breaks
# aside); fewer, stray ones are dropped by the cleaning, as a web caption's are.
_CONTROL_SHARE = 10


class UnreadableCaption(ValueError):
    """A caption that is no text: not UTF-8, or holding NUL, U+FFFD or many control characters."""


def sample_caption(value: bytes | str | None) -> str | None:
    """A sample's caption as published: UTF-8 text cleaned as a web caption is (:func:`preprocess_caption`: line
    breaks and tabs to spaces, non-printable characters dropped, whitespace collapsed); None when there is none.

    ValueError when it is no text: bytes that are not UTF-8, or text holding NUL or U+FFFD (a decoding that
    already failed), or in which one character in ten or more is a control character."""
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise UnreadableCaption(f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    else:
        text = str(value)
    if "\x00" in text or "\ufffd" in text:
        raise UnreadableCaption("not text (a NUL or U+FFFD character)")
    if not text.isprintable():
        controls = sum(1 for char in text if not char.isspace() and unicodedata.category(char) == "Cc")
        if controls * _CONTROL_SHARE >= len(text):
            raise UnreadableCaption(f"not text ({controls} control characters in {len(text)})")
    return preprocess_caption(text)


class TsvLayout(NamedTuple):
    """Where a caption TSV's columns are: Conceptual Captions' own (caption, URL; no header), or as its first line
    names them (``header``: that line is no row)."""

    caption: int = 0
    url: int = 1
    width: int = 2
    header: bool = False
    user: int = -1  # the user column's (-1: none read)


def tsv_columns(path: str | Path) -> list[str]:
    """The columns a caption TSV's header names (lower case), or none when its first line is no header."""
    with open_file(path) as stream:
        first = stream.readline().decode("utf-8-sig", "replace").rstrip("\r\n")
    names = [field.strip().lower() for field in first.split("\t")]
    return names if first.strip() and {"caption", "url"} <= set(names) else []


def tsv_layout(path: str | Path, user: str = "") -> TsvLayout:
    """The layout of a caption TSV, from its first line: a header when it names ``caption`` and ``url`` among its
    fields (img2dataset's ``--input_format tsv``), else Conceptual Captions' own; ``user``: the column of users to
    read too, when the header names it."""
    names = tsv_columns(path)
    if names:
        place = names.index(user.lower()) if user and user.lower() in names else -1
        return TsvLayout(names.index("caption"), names.index("url"), len(names), True, place)
    return TsvLayout()


def tsv_row(text: str, layout: TsvLayout) -> tuple[str, str, str | None] | str | None:
    """One line of a caption TSV (its ``\\n`` included or not): ``(caption, url, user)``, the caption cleaned as
    :func:`sample_caption` says, the user that of the layout's user column (None without one); why it is no row
    (a string); or None for a blank line.

    A row is split on its LAST tab (with a header, the other columns are counted from either end): a tab inside a
    caption is the caption's."""
    text = text.rstrip("\r\n")
    if not text.strip():
        return None
    fields = text.split("\t")
    if len(fields) < layout.width:
        return f"expected a caption and a URL separated by a tab, found {len(fields)} field(s)"
    extra = len(fields) - layout.width  # tabs of the caption's own
    caption = "\t".join(fields[layout.caption : layout.caption + extra + 1])
    url = fields[layout.url if layout.url < layout.caption else layout.url + extra].strip()
    user = None if layout.user < 0 else fields[layout.user if layout.user < layout.caption else layout.user + extra]
    if not url:
        return "expected a caption and a URL separated by a tab, found no URL"
    try:
        if "\ufffd" in url:
            raise UnreadableCaption("not text (a NUL or U+FFFD character)")
        if caption.isprintable() and "\ufffd" not in caption:  # the common case, as sample_caption cleans it
            return " ".join(caption.split()), url, user_value(user)
        return sample_caption(caption) or "", url, user_value(user)
    except ValueError as error:
        return str(error)


def read_caption_tsv(path: str | Path, problems: list[str] | None = None) -> Iterator[tuple[int, str, str]]:
    """``(line, caption, url)`` for each row of a caption TSV, the caption cleaned as :func:`sample_caption` says.

    Conceptual Captions' TSV has no header: a row is split on its LAST tab, the caption everything before it (a
    tab inside a caption is the caption's), the URL after it. A first line naming ``caption`` and ``url`` among
    its fields is a header (img2dataset's ``--input_format tsv``); a row with more fields than the header has
    its extra tabs in the caption, the other columns counted from either end. Rows end at ``\\n`` alone (a
    ``\\r`` inside a caption is whitespace). A row without a URL, or that is not UTF-8 text, is left out and
    named in ``problems`` (``path:line: …``) when a list is given, else it stops the read as ValueError.
    A build reads its TSV in parts instead (:func:`read_caption_tsv_part`), each where the engine runs it."""
    path = as_path(path)
    layout = tsv_layout(path)
    with path.open(encoding="utf-8-sig", errors="replace", newline="\n") as stream:
        for line, text in enumerate(stream, start=1):
            if line == 1 and layout.header:
                continue
            row = tsv_row(text, layout)
            if isinstance(row, str):
                message = f"{path}:{line}: {row}"
                if problems is None:
                    raise ValueError(message)
                if len(problems) < MAX_PROBLEMS:
                    problems.append(message)
            elif row is not None:
                yield line, row[0], row[1]


def caption_tsv_parts(path: str | Path, part_bytes: int) -> list[tuple[int, int]]:
    """The byte ranges of a caption TSV cut into parts of about ``part_bytes``, each cut just after a line's
    ``\\n`` (a byte no UTF-8 character holds), so that each part decodes alone as the whole file does."""
    path = as_path(path)
    size = path.stat().st_size
    cuts = [0]
    with open_file(path) as stream:
        while cuts[-1] + part_bytes < size:
            stream.seek(cuts[-1] + part_bytes)
            stream.readline()  # to the end of the line the cut fell in
            if stream.tell() >= size:
                break
            cuts.append(stream.tell())
    return list(zip(cuts, [*cuts[1:], size], strict=True))


def read_caption_tsv_part(
    path: str | Path, start: int, end: int, layout: TsvLayout
) -> Iterator[tuple[int, tuple[str, str, str | None] | str | None]]:
    """Each line of the bytes ``start`` to ``end`` of a caption TSV (a range of :func:`caption_tsv_parts`) with
    its number in the part (from 1) and what :func:`tsv_row` makes of it: the file's line is the lines of the
    parts before it plus this number. The first part's first line loses its byte-order mark, and is no row (None)
    when it is the header."""
    with open_file(path) as stream:
        stream.seek(start)
        position, line = start, 0
        while position < end:
            raw = stream.readline(end - position)
            if not raw:
                break
            position += len(raw)
            line += 1
            first = start == 0 and line == 1
            if first and layout.header:
                yield line, None  # no row
                continue
            yield line, tsv_row(raw.decode("utf-8-sig" if first else "utf-8", "replace"), layout)


def user_value(value: object) -> str | None:
    """A user as the rows carry it: text without surrounding spaces; None for none (null or blank), which cannot
    make a caption pass the users rule. A number (YFCC100M's ids may be read as one) is its decimal text."""
    text = field_text(value)
    return text or None


def field_text(value: object) -> str | None:
    """A metadata field as text without surrounding spaces (bytes decoded as UTF-8); None for none."""
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text.strip()
