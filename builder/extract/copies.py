"""A page given twice is read once: the later copies of a page (or of a revision) are left out.

Users give one run's plain and multistream files together, part files that overlap, or a dump
that holds a page twice. Each extraction task records every page it read (a history: every
revision) as a row of :data:`PAGE_SCHEMA`, numbered in the order of the task, with the place of
its references among the task's rows. Once every task is done, an engine finds the copies
with the rule of :func:`copy_key`: the first copy in the order of the dumps as given, then of
their place in the file (task, then record), is read, and every later one is left out of the
grouping. In a pages-articles build a copy is a ``<page>`` with the id of one read before: the
first ``<page>`` of an id is read whole, so that an edit history read as pages keeps every
revision, as it did. A history is keyed by page and revision id, so that parts which overlap
keep each revision once and the revisions only one of them has. A later revision with the id
of an earlier one of its page but another text is kept apart in the counts (:data:`REUSED`):
the first in file order is the one read.

Both engines apply the rule (the local one in DuckDB, Spark on RDDs) and report what they found
as :class:`CopyGroup` rows, which :func:`note_copies` turns into the same counts and warnings.
"""

from __future__ import annotations

import dataclasses
import warnings
import zlib
from collections.abc import Iterable, Sequence

import pyarrow as pa

from builder.sources.files import MAX_PROBLEMS, DumpWarning

__all__ = [
    "CopyGroup",
    "PAGE",
    "PAGE_SCHEMA",
    "REUSED",
    "REVISION",
    "copy_key",
    "copy_kind",
    "copy_unit",
    "copy_warning",
    "digest_bytes",
    "merge_examples",
    "note_copies",
    "pieces_digest",
    "text_digest",
]

PAGE_SCHEMA = pa.schema(
    [
        ("record", pa.int64()),
        ("element", pa.int64()),  # the <page> element of the task that holds the record: a page's revisions share it
        ("page_id", pa.int64()),
        ("revision_id", pa.int64()),
        ("title", pa.string()),
        ("digest", pa.int64()),  # of the text, in a history only (:func:`text_digest`); 0 otherwise
        ("first_row", pa.int64()),  # the page's references are the task's rows first_row … first_row + rows - 1
        ("rows", pa.int64()),
    ]
)
PAGE = "page"  # a later copy of a page (pages-articles: by page id)
REVISION = "revision"  # a later copy of a revision with the same text (a history: by page and revision id)
REUSED = "reused"  # a later revision with the id of an earlier one of its page, but another text


def text_digest(text: str) -> int:
    """A checksum of a revision's text, to tell a copy of a revision from another text under its id.

    CRC-32, as it costs half of a cryptographic digest on every revision of a history: a collision
    could only count a reused revision id as a copy, both being skipped all the same.
    """
    return zlib.crc32(digest_bytes(text))


def digest_bytes(text: str) -> bytes:
    """The bytes :func:`text_digest` checks: UTF-8, a lone surrogate as its three bytes."""
    return text.encode("utf-8", "surrogatepass")


def pieces_digest(pieces: Iterable[bytes]) -> int:
    """:func:`text_digest` of a text from its pieces' :func:`digest_bytes`, in order: a revision of a history is checked
    from the pieces it shares with the one before, each encoded once."""
    return zlib.crc32(b"".join(pieces))


def copy_key(language: str, page_id: int, revision_id: int, history: bool) -> tuple[str, int, int]:
    """What makes two records copies of one another: the page (a history: the revision) of one wiki.

    Page ids of two languages' wikis are unrelated (a build reads one wiki per language).
    """
    return language, page_id, revision_id if history else -1


def copy_unit(record: int, element: int, history: bool) -> int:
    """What is read whole or skipped whole, within a task: a ``<page>`` element, or in a history each revision."""
    return record if history else element


def copy_kind(history: bool, same_text: bool) -> str:
    """How a later copy is counted: a page, a revision, or a revision id reused for another text."""
    if not history:
        return PAGE
    return REVISION if same_text else REUSED


@dataclasses.dataclass(frozen=True)
class CopyGroup:
    """The later copies found in one dump of pages first read in another (or earlier in the same one).

    ``order`` is the (task, record) of the first of them, which is the example a warning names.
    """

    later: str  # the dump that holds the later copies
    first: str  # the dump whose copies were read
    kind: str  # PAGE, REVISION or REUSED
    count: int
    order: tuple[int, int]
    page_id: int
    revision_id: int
    title: str


def merge_examples(one: tuple[int, tuple], other: tuple[int, tuple]) -> tuple[int, tuple]:
    """Two partial ``(count, example)`` of a group added up: counts summed, the earlier example kept."""
    return one[0] + other[0], min(one[1], other[1])


def copy_warning(group: CopyGroup) -> str:
    """One warning per group, naming both files, how many copies were skipped and the first of them."""
    where = "earlier in the same file" if group.later == group.first else f"from {group.first}"
    if group.kind == PAGE:
        example = f"page {group.title!r}, id {group.page_id}"
        return f"{group.later}: {_counted(group.count, 'page')} already read {where} skipped (the first: {example})"
    example = f"revision {group.revision_id} of page {group.title!r}, id {group.page_id}"
    if group.kind == REVISION:
        return f"{group.later}: {_counted(group.count, 'revision')} already read {where} skipped (the first: {example})"
    return (
        f"{group.later}: {_counted(group.count, 'revision')} with the id of a revision of their page already read "
        f"{where} but another text skipped; the first in file order is kept (the first: {example})"
    )


def _counted(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def note_copies(groups: Iterable[CopyGroup], problems: list[str]) -> tuple[int, int]:
    """Warn of the later copies, group by group in file order, and add the warnings to ``problems``.

    Returns (later copies of pages or revisions, revisions whose id was reused with another text).
    """
    ordered: Sequence[CopyGroup] = sorted(groups, key=lambda group: group.order)
    for group in ordered:
        message = copy_warning(group)
        warnings.warn(message, DumpWarning, stacklevel=3)
        if len(problems) < MAX_PROBLEMS:
            problems.append(message)
    copies = sum(group.count for group in ordered if group.kind != REUSED)
    return copies, sum(group.count for group in ordered if group.kind == REUSED)
