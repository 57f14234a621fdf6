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
  closes counts to the end of the page), every gallery and every ``<…>`` tag; the removed
  and the inserted text may hold no bracket or angle bracket but in whole links without a
  ``:`` and templates without a ``=`` (which the extractor pairs and then ignores); and the
  characters around the edit may be none of these nor ``-`` (which ends comments). Such an
  edit cannot pair, unpair or blank any other token, and the extractor reads no other text,
  so its result is the same up to offsets.

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
# A link or template that holds no other markup, no namespace prefix and no parameter name: the extractor pairs
# it with itself and takes nothing from it, so adding or removing one where no markup is open changes nothing else.
_INERT_PAIR = re.compile(r"\[\[[^\[\]{}<>:]*\]\]|\{\{[^\[\]{}<>=]*\}\}")
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
        self._hint: list[tuple[int, int]] = []  # the page's markup as last found, moved along by the edits since

    def extract(self, page_id: int, wikitext: str, title: str, stats: ExtractStats) -> list[ImageReference]:
        """The references of one revision, as ``extract_images(wikitext, title, aliases, stats)`` gives them."""
        if page_id != self._page_id:
            self._page_id = page_id
            self._previous = None
            self._texts.clear()
            self._hint = []
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
        if not (_plain(old[start:old_end]) and _plain(wikitext[start:new_end])):
            return None
        if (start > 0 and old[start - 1] in _EDGE_CHARS) or (old_end < len(old) and old[old_end] in _EDGE_CHARS):
            return None
        if previous.markup is None:
            if _opened_before(old, start) or _inside(self._hint, start, old_end):
                self._hint = _moved(self._hint, start, old_end, new_end)
                return None  # most likely inside markup: not worth finding the markup to be sure
            previous.markup = markup_spans(old)
        markup = previous.markup
        self._hint = _moved(markup, start, old_end, new_end)
        index = bisect.bisect_left(markup, (start,))
        if index > 0 and markup[index - 1][1] > start - 1:
            return None  # the edit is inside (or touches) the span before it
        after = index
        while after < len(markup) and markup[after][1] <= old_end:
            after += 1  # a removed inert link or template
        if after < len(markup) and markup[after][0] < old_end + 1:
            return None
        shift = new_end - old_end
        references = [
            reference
            if reference.position < start
            else dataclasses.replace(reference, position=reference.position + shift)
            for reference in previous.references
        ]
        inserted = [(start, new_end)] if _MARKUP_CHARS.search(wikitext, start, new_end) else []
        moved = markup[:index] + inserted + [(first + shift, last + shift) for first, last in markup[after:]]
        self.stats.shifted += 1
        return _Parsed(wikitext, references, previous.counts, moved)


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``[start, end]`` meets one of the sorted ``spans``."""
    index = bisect.bisect_left(spans, (start,))
    return (index > 0 and spans[index - 1][1] >= start) or (index < len(spans) and spans[index][0] <= end)


def _moved(spans: list[tuple[int, int]], start: int, old_end: int, new_end: int) -> list[tuple[int, int]]:
    """Spans after an edit, as a guess: those after it shifted, the edit itself one more span."""
    index = bisect.bisect_left(spans, (start,))
    after = index
    while after < len(spans) and spans[after][1] <= old_end:
        after += 1
    shift = new_end - old_end
    return spans[:index] + [(start, new_end)] + [(first + shift, last + shift) for first, last in spans[after:]]


def _opened_before(text: str, position: int) -> bool:
    """Whether the bracket token nearest before ``position`` opens a link or template (a cheap guess, never trusted
    to accept an edit: only to parse without looking closer)."""
    opener = max(text.rfind("[[", 0, position), text.rfind("{{", 0, position))
    closer = max(text.rfind("]]", 0, position), text.rfind("}}", 0, position))
    return opener > closer


def _plain(text: str) -> bool:
    """Text with no markup the extractor reads, but for inert links and templates (:data:`_INERT_PAIR`)."""
    if not _MARKUP_CHARS.search(text):
        return True
    return not _MARKUP_CHARS.search(_INERT_PAIR.sub("", text))


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
