"""Incremental extraction across the revisions of a page: parse only what an edit can have changed.

A history dump repeats a page's whole text in every revision, and consecutive
revisions are nearly identical. :class:`RevisionExtractor` gives, for each revision,
exactly what :func:`builder.wikitext.extract_images` gives on it from scratch (the
references, their positions, and the counts added to :class:`ExtractStats`), but
reuses the previous revision's result when it can prove the edit changed nothing but
offsets:

* a text seen before in this page (a null edit, a revert) gets that revision's result;
* an edit confined to plain text gets the previous result with the positions after the
  edit shifted. "Plain" is decided with the extractor's own scanners on the previous
  text: the edit must lie outside every ``[[…]]``/``{{…}}`` span (an opener that never
  closes counts to the end of the page), every gallery and every ``<…>`` tag, neither
  the removed nor the inserted text may hold a bracket or angle bracket, and the
  characters around the edit may be none of these nor ``-`` (which ends comments).
  Such an edit cannot add, remove, pair or blank a token, and the extractor reads no
  other text, so its result is the same up to offsets.

Anything else is parsed from scratch, which stays the reference path; the property test
``tests/test_incremental.py`` checks the equality over generated edit histories.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import OrderedDict
from collections.abc import Iterable

from builder.wikitext import (
    DEFAULT_FILE_ALIASES,
    ExtractionError,
    ExtractStats,
    ImageReference,
    _blank,
    _hide_inert_markup,
    _Tokens,
    extract_images,
)

TEXTS_KEPT = 16  # earlier texts of a page whose results are kept, for reverts
COMPARE_CHUNK = 4096  # characters compared at a time when looking for where two revisions differ
_MARKUP_CHARS = re.compile(r"[\[\]{}<>]")
_EDGE_CHARS = frozenset("[]{}<>-")
_ANGLE = re.compile(r"<[^<>]*>?")


@dataclasses.dataclass
class _Parsed:
    """One text's result: its references, what it added to the counts, and where its markup is (once needed)."""

    text: str
    references: list[ImageReference]
    counts: ExtractStats
    markup: list[tuple[int, int]] | None = None


@dataclasses.dataclass
class IncrementalStats:
    """How each revision was extracted: from scratch, from an identical earlier text, or by shifting offsets."""

    parsed: int = 0
    repeated: int = 0
    shifted: int = 0


class RevisionExtractor:
    """Extracts the revisions of a dump in order, reusing what the previous revisions of the same page had.

    Call :meth:`extract` as :func:`~builder.wikitext.extract_images` is called, with the
    page's id; a new id starts a new page. ``options`` are passed to ``extract_images``.
    """

    def __init__(self, file_aliases: Iterable[str] = DEFAULT_FILE_ALIASES, **options: object) -> None:
        self.aliases = tuple(file_aliases)
        self.options = options
        self.stats = IncrementalStats()
        self._page_id: int | None = None
        self._previous: _Parsed | None = None
        self._texts: OrderedDict[str, _Parsed] = OrderedDict()

    def extract(self, page_id: int, wikitext: str, title: str, stats: ExtractStats) -> list[ImageReference]:
        """The references of one revision, as ``extract_images(wikitext, title, aliases, stats)`` gives them."""
        if page_id != self._page_id:
            self._page_id = page_id
            self._previous = None
            self._texts.clear()
        parsed = self._texts.get(wikitext)
        if parsed is not None:
            self.stats.repeated += 1
            self._texts.move_to_end(wikitext)
        else:
            parsed = self._shifted(wikitext) if self._previous is not None else None
            if parsed is None:
                parsed = self._parse(wikitext, title, stats)
            self._texts[wikitext] = parsed
            if len(self._texts) > TEXTS_KEPT:
                self._texts.popitem(last=False)
        stats.add(parsed.counts)
        self._previous = parsed
        return list(parsed.references)

    def _parse(self, wikitext: str, title: str, stats: ExtractStats) -> _Parsed:
        counts = ExtractStats()
        try:
            references = extract_images(wikitext, title, self.aliases, counts, **self.options)  # type: ignore[arg-type]
        except ExtractionError:
            stats.add(counts)  # what it counted before it failed, as from scratch
            self._previous = None
            raise
        self.stats.parsed += 1
        return _Parsed(wikitext, references, counts)

    def _shifted(self, wikitext: str) -> _Parsed | None:
        """The previous result with its offsets moved, when the edit is confined to plain text; else None."""
        previous = self._previous
        assert previous is not None
        old = previous.text
        start, old_end, new_end = _edit(old, wikitext)
        if _MARKUP_CHARS.search(old, start, old_end) or _MARKUP_CHARS.search(wikitext, start, new_end):
            return None
        if (start > 0 and old[start - 1] in _EDGE_CHARS) or (old_end < len(old) and old[old_end] in _EDGE_CHARS):
            return None
        if previous.markup is None:
            previous.markup = markup_spans(old)
        markup = previous.markup
        index = bisect.bisect_left(markup, (start,))
        if index > 0 and markup[index - 1][1] > start - 1:
            return None  # the edit is inside (or touches) the span before it
        if index < len(markup) and markup[index][0] < old_end + 1:
            return None
        shift = new_end - old_end
        references = [
            reference
            if reference.position < start
            else dataclasses.replace(reference, position=reference.position + shift)
            for reference in previous.references
        ]
        moved = markup[:index] + [(first + shift, last + shift) for first, last in markup[index:]]
        self.stats.shifted += 1
        return _Parsed(wikitext, references, previous.counts, moved)


def _edit(old: str, new: str) -> tuple[int, int, int]:
    """Where two texts differ: ``old[start:old_end]`` was replaced by ``new[start:new_end]``."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start : start + COMPARE_CHUNK] == new[start : start + COMPARE_CHUNK]:
        start += COMPARE_CHUNK
    start = min(start, limit)
    low, high = start, min(start + COMPARE_CHUNK, limit)
    while low < high:  # the first differing offset in old[start:start+chunk]
        middle = (low + high) // 2
        if old[start : middle + 1] == new[start : middle + 1]:
            low = middle + 1
        else:
            high = middle
    start = low
    room = limit - start  # the common suffix may not overlap the common prefix
    suffix = 0
    while suffix < room:
        step = min(COMPARE_CHUNK, room - suffix)
        if old[len(old) - suffix - step : len(old) - suffix] != new[len(new) - suffix - step : len(new) - suffix]:
            low, high = suffix, suffix + step
            while low < high:
                middle = (low + high) // 2
                if old[len(old) - middle - 1 : len(old) - suffix] == new[len(new) - middle - 1 : len(new) - suffix]:
                    low = middle + 1
                else:
                    high = middle
            suffix = low
            break
        suffix += step
    return start, len(old) - suffix, len(new) - suffix


def markup_spans(text: str) -> list[tuple[int, int]]:
    """Every stretch of ``text`` whose characters the extractor reads, merged and sorted.

    Found with the extractor's own scanners, as it reads the page: every paired ``[[…]]``
    and ``{{…}}`` (an opener that never closes runs to the end), every closer, every
    gallery's content and every ``<…>`` (tags, comment openers).
    """
    hidden, galleries = _hide_inert_markup(text)
    if galleries:
        pieces: list[str] = []
        kept = 0
        for first, last in galleries:
            pieces.append(hidden[kept:first])
            _blank(pieces, hidden, first, last)
            kept = last
        pieces.append(hidden[kept:])
        hidden = "".join(pieces)
    tokens = _Tokens(hidden)
    spans = list(galleries)
    for index, position in enumerate(tokens.positions):
        partner = tokens.partner[index]
        if partner < 0:
            closer = tokens.kinds[index] in ("]]", "}}")
            spans.append((position, position + 2 if closer else len(text)))
        elif partner > index:
            spans.append((position, tokens.positions[partner] + 2))
    spans.extend(match.span() for match in _ANGLE.finditer(text))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for first, last in spans:
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged
