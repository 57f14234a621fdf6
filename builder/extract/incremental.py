"""Incremental extraction across the revisions of a page: parse only what an edit can have changed.

A history dump repeats a page's whole text in every revision, and consecutive
revisions are nearly identical. :class:`RevisionExtractor` gives, for each revision,
exactly what :func:`builder.extract.wikitext.extract_images` gives on it from scratch (the
references, their positions, and the counts added to :class:`ExtractStats`), but
reuses the previous revision's result when it can prove what the edit changed:

* a text seen before in this page (a null edit, a revert) gets that revision's result;
* an edit confined to plain text gets the previous result with the positions after the
  edit shifted. "Plain" is decided with the extractor's own scanners on the previous
  text: the edit must lie outside every ``[[…]]``/``{{…}}`` span (an opener that never
  closes counts to the end of the page), every gallery and every ``<…>`` tag; the removed
  and the inserted text may hold no bracket or angle bracket but in whole links without a
  ``:`` and templates without a ``=`` (which the extractor pairs and then ignores); and the
  characters around the edit may be none of these nor ``-`` (which ends comments). Such an
  edit cannot pair, unpair or blank any other token, and the extractor reads no other text,
  so its result is the same up to offsets;
* an edit inside one top-level link or template (one no other encloses, with no tag in
  it, still one span after the edit) gets the previous result with that span's
  references and counts replaced by those of the span parsed alone, before and after:
  the extractor reads such a span without regard to the rest of the page.

Where few edits qualify, trying stops after a while (every 32nd edit is tried again, and
trying resumes when they qualify), so that looking costs no more than it saves.
Anything else is parsed from scratch, which stays the reference path; the property test
``tests/test_incremental.py`` checks the equality over generated edit histories.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import OrderedDict
from collections.abc import Iterable

from builder.extract.wikitext import (
    DEFAULT_FILE_ALIASES,
    ExtractionError,
    ExtractStats,
    ImageReference,
    _blank,
    _hide_inert_markup,
    _Tokens,
    extract_images,
)

__all__ = ["RevisionExtractor"]

TEXTS_KEPT = 16  # earlier texts of a page whose results are kept, for reverts
TRIAL_EDITS = 32  # while few edits qualify, one edit in this many is tried still
SUCCESS_WEIGHT = 0.05  # the weight of the latest try in the moving average of successes
WORTH_TRYING = 0.35  # the share of shifts below which trying costs more than it saves (finding an edit, the markup)
COMPARE_CHUNK = 4096  # characters compared at a time when looking for where two revisions differ
_MARKUP_CHARS = re.compile(r"[\[\]{}<>]")
# A link or template that holds no other markup, no namespace prefix and no parameter name: the extractor pairs
# it with itself and takes nothing from it, so adding or removing one where no markup is open changes nothing else.
_INERT_PAIR = re.compile(r"\[\[[^\[\]{}<>:]*\]\]|\{\{[^\[\]{}<>=]*\}\}")
_EDGE_CHARS = frozenset("[]{}<>-")
_ANGLE = re.compile(r"<[^<>]*>?")
_ANGLE_CHARS = re.compile(r"[<>]")


@dataclasses.dataclass
class _Parsed:
    """One text's result: its references, what it added to the counts, and where its markup is (once needed)."""

    text: str
    references: list[ImageReference]
    counts: ExtractStats
    markup: list[tuple[int, int]] | None = None
    tops: dict[int, int] | None = None  # the links and templates no other encloses: start → end


@dataclasses.dataclass
class IncrementalStats:
    """How each revision was extracted: from scratch, from an identical earlier text, or by shifting offsets."""

    parsed: int = 0
    repeated: int = 0
    shifted: int = 0
    respanned: int = 0


class RevisionExtractor:
    """Extracts the revisions of a dump in order, reusing what the previous revisions of the same page had.

    Call :meth:`extract` as :func:`~builder.extract.wikitext.extract_images` is called, with the
    page's id; a new id starts a new page. ``options`` are passed to ``extract_images``.
    """

    def __init__(self, file_aliases: Iterable[str] = DEFAULT_FILE_ALIASES, **options: object) -> None:
        self.aliases = tuple(file_aliases)
        self.options = options
        self.stats = IncrementalStats()
        self._page_id: int | None = None
        self._previous: _Parsed | None = None
        self._texts: OrderedDict[str, _Parsed] = OrderedDict()
        self._edits = 0
        self._success = 1.0  # the recent share of tried edits that got a shift or a span (a moving average)

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
            parsed = None
            if self._worth_trying():
                parsed = self._shifted(wikitext)
                self._success += SUCCESS_WEIGHT * ((parsed is not None) - self._success)
            if parsed is None:
                parsed = self._parse(wikitext, title, stats)
            self._texts[wikitext] = parsed
            if len(self._texts) > TEXTS_KEPT:
                self._texts.popitem(last=False)
        stats.add(parsed.counts)
        self._previous = parsed
        return list(parsed.references)

    def _worth_trying(self) -> bool:
        """Whether to look for a shift or a span: where edits mostly do not qualify, every 32nd edit only."""
        if self._previous is None:
            return False
        self._edits += 1
        return self._success >= WORTH_TRYING or self._edits % TRIAL_EDITS == 0

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
        """The previous result updated for the edit: offsets moved, or the one link or template it is in parsed
        again; None when the edit may have changed more."""
        previous = self._previous
        assert previous is not None
        old = previous.text
        start, old_end, new_end = _edit(old, wikitext)
        if previous.markup is None:
            previous.markup, previous.tops = markup_spans(old)
        markup = previous.markup
        shift = new_end - old_end
        index = bisect.bisect_left(markup, (start,))
        after = index
        while after < len(markup) and markup[after][1] <= old_end:
            after += 1  # a removed inert link or template
        plain = _plain(old[start:old_end]) and _plain(wikitext[start:new_end]) and not _at_edge(old, start, old_end)
        if plain and not (index > 0 and markup[index - 1][1] >= start) and not _inside(markup, after, old_end):
            references = _moved(previous.references, start, shift)
            self.stats.shifted += 1
            if _MARKUP_CHARS.search(wikitext, start, new_end):
                return _Parsed(wikitext, references, previous.counts)  # its markup is found again when needed
            moved = markup[:index] + [(first + shift, last + shift) for first, last in markup[after:]]
            tops = {
                first + (shift if first >= start else 0): last + (shift if first >= start else 0)
                for first, last in (previous.tops or {}).items()
                if not start <= first < old_end
            }
            return _Parsed(wikitext, references, previous.counts, moved, tops)
        return self._reparsed_span(previous, wikitext, start, old_end, shift, index)

    def _reparsed_span(
        self, previous: _Parsed, wikitext: str, start: int, old_end: int, shift: int, index: int
    ) -> _Parsed | None:
        """An edit inside one top-level link or template with no tag in it: that span alone is parsed, before and
        after the edit, and its references and counts replace the old ones.

        The span's opener is the first token no other encloses, and its closer pairs with it before and after the
        edit: the tokens before it and after it pair as they did, and the extractor reads nothing of the span in
        relation to the rest of the page (no tag in it can be closed or opened elsewhere).
        """
        markup, tops = previous.markup, previous.tops
        assert markup is not None and tops is not None
        container = index if index < len(markup) and markup[index][0] == start else index - 1
        if container < 0:
            return None
        first, last = markup[container]
        if tops.get(first) != last or old_end > last or _at_edge(previous.text, first, last):
            return None
        before, after = previous.text[first:last], wikitext[first : last + shift]
        if _ANGLE_CHARS.search(before) or _ANGLE_CHARS.search(after) or not _one_span(after):
            return None
        try:
            old_references, old_counts = _alone(before, self.aliases, self.options)
            new_references, new_counts = _alone(after, self.aliases, self.options)
        except ExtractionError:
            return None
        counts = ExtractStats()
        counts.add(previous.counts)
        counts.subtract(old_counts)
        counts.add(new_counts)
        if len(old_references) != sum(first <= reference.position < last for reference in previous.references):
            return None  # cannot be (the span's references are those it has alone), but the page is then parsed
        references = [reference for reference in previous.references if reference.position < first]
        references += [
            dataclasses.replace(reference, position=reference.position + first) for reference in new_references
        ]
        references += _moved(
            [reference for reference in previous.references if reference.position >= last], first, shift
        )
        moved = (
            markup[:container] + [(first, last + shift)] + [(a + shift, b + shift) for a, b in markup[container + 1 :]]
        )
        moved_tops = {a + (shift if a > first else 0): b + shift if a >= first else b for a, b in tops.items()}
        self.stats.respanned += 1
        return _Parsed(wikitext, references, counts, moved, moved_tops)


def _alone(
    span: str, aliases: tuple[str, ...], options: dict[str, object]
) -> tuple[list[ImageReference], ExtractStats]:
    counts = ExtractStats()
    return extract_images(span, "", aliases, counts, **options), counts  # type: ignore[arg-type]


def _one_span(text: str) -> bool:
    """Whether ``text`` is one link or template: its first token opens it and its last closes it."""
    tokens = _Tokens(text)
    return (
        len(tokens.positions) >= 2
        and tokens.positions[0] == 0
        and tokens.partner[0] == len(tokens.positions) - 1
        and tokens.positions[-1] == len(text) - 2
    )


def _at_edge(text: str, start: int, end: int) -> bool:
    """Whether a character next to ``text[start:end]`` is a bracket, an angle bracket or a ``-``."""
    return (start > 0 and text[start - 1] in _EDGE_CHARS) or (end < len(text) and text[end] in _EDGE_CHARS)


def _inside(spans: list[tuple[int, int]], index: int, end: int) -> bool:
    """Whether the span at ``index`` (if any) begins at or before ``end``."""
    return index < len(spans) and spans[index][0] <= end


def _moved(references: list[ImageReference], start: int, shift: int) -> list[ImageReference]:
    """The references with the positions from ``start`` on moved by ``shift``."""
    return [
        reference if reference.position < start else dataclasses.replace(reference, position=reference.position + shift)
        for reference in references
    ]


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


def markup_spans(text: str) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """Every stretch of ``text`` whose characters the extractor reads, merged and sorted; and the top-level spans.

    Found with the extractor's own scanners, as it reads the page: every paired ``[[…]]``
    and ``{{…}}`` (an opener that never closes runs to the end), every closer, every
    gallery's content and every ``<…>`` (tags, comment openers). The top-level spans are
    the paired links and templates that no other encloses, before any opener that never closes.
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
    tops: dict[int, int] = {}
    reach = 0
    unclosed = False
    for index, position in enumerate(tokens.positions):
        partner = tokens.partner[index]
        if partner < 0:
            closer = tokens.kinds[index] in ("]]", "}}")
            spans.append((position, position + 2 if closer else len(text)))
            unclosed = unclosed or not closer
        elif partner > index:
            end = tokens.positions[partner] + 2
            spans.append((position, end))
            if not unclosed and position >= reach:
                tops[position] = reach = end
    spans.extend(match.span() for match in _ANGLE.finditer(text))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for first, last in spans:
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged, tops
