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
  closes counts with the name after it), every gallery and every ``<…>`` tag; the removed
  and the inserted text may hold no bracket or angle bracket but in whole links without a
  ``:`` and templates without a ``=`` (which the extractor pairs and then ignores); and the
  characters around the edit may be none of these nor ``-`` (which ends comments). Such an
  edit cannot pair, unpair or blank any other token, and the extractor reads no other text,
  so its result is the same up to offsets;
* an edit inside one top-level link or template (one no other encloses, still one span
  after the edit, whose comment and extension-tag marks are the same before and after:
  ``<br>`` and ``<small>`` may come and go, ``<ref>``, ``<!--`` or ``<gallery>`` may not)
  gets the previous result with that span's references and counts replaced by those of
  the span parsed alone, before and after: the extractor reads such a span without
  regard to the rest of the page.

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
    _INERT_TAGS,
    DEFAULT_FILE_ALIASES,
    ExtractionError,
    ExtractStats,
    ImageReference,
    _blank,
    _hide_inert_markup,
    _Tokens,
    scan_and_extract,
)

__all__ = ["RevisionExtractor"]

TEXTS_KEPT = 16  # earlier texts of a page whose results are kept, for reverts
SPANS_KEPT = 8  # spans parsed alone whose results are kept (an edit's span after is the next one's before)
TRIAL_EDITS = 32  # while few edits qualify, one edit in this many is tried still
SUCCESS_WEIGHT = 0.05  # the weight of the latest try in the moving average of successes
WORTH_TRYING = 0.35  # the share of shifts below which trying costs more than it saves (finding an edit, the markup)
EDIT_GUESS = 256  # characters: where the edit ends is first looked for this close to where it starts
COMPARE_CHUNK = 16384  # characters compared at a time when looking for where two revisions differ
_MARKUP_CHARS = re.compile(r"[\[\]{}<>]")
# A link or template that holds no other markup, no namespace prefix and no parameter name: the extractor pairs
# it with itself and takes nothing from it, so adding or removing one where no markup is open changes nothing else.
_INERT_PAIR = re.compile(r"\[\[[^\[\]{}<>:]*\]\]|\{\{[^\[\]{}<>=]*\}\}")
_EDGE_CHARS = frozenset("[]{}<>-")
_CLOSERS = frozenset("]}>")  # the last character of a link, a template or a tag
_OPENERS = frozenset("[{<")  # the first character of one
_ANGLE = re.compile(r"<[^<>]*>?")
_CLOSER_OF = {"[[": "]]", "{{": "}}"}
# An opener that never pairs, with the name after it: the extractor counts an unclosed "{{Infobox" and "[[File:"
# (wikitext._INFOBOX_NAME reads "{{" with the word after it, the file-link pattern "[[" up to its first colon)
_OPENER_NAME = re.compile(r"\{\{\s*\w*|\[\[[^\[\]{}<>|\n:]*:?")
# What the extractor's scan for comments and extension tags (wikitext._hide_inert_markup) reacts to: a span whose
# sequence of these is unchanged by an edit pairs them as before, with the rest of the page as before.
_REGION_MARKS = re.compile(r"<!--|-->|</?(?:" + _INERT_TAGS + r"|gallery)\b[^<>]*>?", re.IGNORECASE)


@dataclasses.dataclass
class _Parsed:
    """One text's result: its references, what it added to the counts, and where its markup is (once needed)."""

    text: str
    references: list[ImageReference]
    counts: ExtractStats
    markup: list[tuple[int, int]] | None = None
    tops: dict[int, int] | None = None  # the links and templates no other encloses: start → end
    unpaired: dict[str, int] | None = None  # "[[" and "{{" → where the first opener of the kind that never pairs is
    scan: tuple[_Tokens, list[tuple[int, int]]] | None = None  # a parse's tokens and galleries, until markup is found


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
        self._texts: list[_Parsed] = []  # the latest last; compared by length, then text, never hashed
        self._lengths: list[int] = []  # their lengths, in the same order
        self._spans: OrderedDict[str, tuple[list[ImageReference], ExtractStats, list[str], _Tokens]] = OrderedDict()
        self._edits = 0
        self._success = 1.0  # the recent share of tried edits that got a shift or a span (a moving average)

    def extract(self, page_id: int, wikitext: str, title: str, stats: ExtractStats) -> list[ImageReference]:
        """The references of one revision, as ``extract_images(wikitext, title, aliases, stats)`` gives them."""
        if page_id != self._page_id:
            self._page_id = page_id
            self._previous = None
            self._texts.clear()
            self._lengths.clear()
            self._spans.clear()
        parsed = self._earlier(wikitext)
        if parsed is not None:
            self.stats.repeated += 1
        else:
            parsed = None
            if self._worth_trying():
                parsed = self._shifted(wikitext)
                self._success += SUCCESS_WEIGHT * ((parsed is not None) - self._success)
            if parsed is None:
                parsed = self._parse(wikitext, title, stats)
            self._texts.append(parsed)
            self._lengths.append(len(wikitext))
            if len(self._texts) > TEXTS_KEPT:
                del self._texts[0], self._lengths[0]
        stats.add(parsed.counts)
        self._previous = parsed
        return list(parsed.references)

    def _earlier(self, wikitext: str) -> _Parsed | None:
        """An earlier revision of the page with this very text (a null edit, a revert), made the latest kept.

        A dictionary would hash every revision's whole text; a length is known, and texts of one
        length are compared only until they differ.
        """
        size, lengths = len(wikitext), self._lengths
        index = 0
        while True:  # the kept texts are distinct: at most one is equal
            try:
                index = lengths.index(size, index)
            except ValueError:
                return None
            parsed = self._texts[index]
            if parsed.text == wikitext:
                self._texts.append(self._texts.pop(index))
                lengths.append(lengths.pop(index))
                return parsed
            index += 1

    def _worth_trying(self) -> bool:
        """Whether to look for a shift or a span: where edits mostly do not qualify, every 32nd edit only."""
        if self._previous is None:
            return False
        self._edits += 1
        return self._success >= WORTH_TRYING or self._edits % TRIAL_EDITS == 0

    def _parse(self, wikitext: str, title: str, stats: ExtractStats) -> _Parsed:
        counts = ExtractStats()
        try:
            references, tokens, galleries = scan_and_extract(wikitext, title, self.aliases, counts, **self.options)  # type: ignore[arg-type]
        except ExtractionError:
            stats.add(counts)  # what it counted before it failed, as from scratch
            self._previous = None
            raise
        self.stats.parsed += 1
        return _Parsed(wikitext, references, counts, scan=(tokens, galleries))

    def _shifted(self, wikitext: str) -> _Parsed | None:
        """The previous result updated for the edit: offsets moved, or the one link or template it is in parsed
        again; None when the edit may have changed more."""
        previous = self._previous
        assert previous is not None
        old = previous.text
        start, old_end, new_end = _edit(old, wikitext)
        if previous.markup is None:
            previous.markup, previous.tops, previous.unpaired = markup_spans(old, previous.scan)
            previous.scan = None
        markup = previous.markup
        shift = new_end - old_end
        index = bisect.bisect_left(markup, (start,))
        after = index
        while after < len(markup) and markup[after][1] <= old_end:
            after += 1  # a removed inert link or template
        if _words_only(old, wikitext, start, old_end, new_end):
            # text for text: a stretch may end where it starts with a closer, or begin where it ends with an opener
            before = markup[index - 1][1] if index else -1  # where the stretch before the edit ends
            behind = markup[after][0] if after < len(markup) else len(old) + 1  # where the one after it begins
            shiftable = (before < start or (before == start and old[start - 1] in _CLOSERS)) and (
                behind > old_end or (behind == old_end and old[old_end] in _OPENERS)
            )
        else:
            plain = _plain(old[start:old_end]) and _plain(wikitext[start:new_end]) and not _at_edge(old, start, old_end)
            touching = (index > 0 and markup[index - 1][1] >= start) or _inside(markup, after, old_end)
            shiftable = plain and not touching
        if shiftable:
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
            unpaired = {kind: at + (shift if at >= start else 0) for kind, at in (previous.unpaired or {}).items()}
            return _Parsed(wikitext, references, previous.counts, moved, tops, unpaired)
        return self._reparsed_span(previous, wikitext, start, old_end, shift)

    def _reparsed_span(self, previous: _Parsed, wikitext: str, start: int, old_end: int, shift: int) -> _Parsed | None:
        """An edit inside one top-level link or template: that span alone is parsed, before and after the edit,
        and its references and counts replace the old ones.

        The span's opener is the first token no other encloses, and its closer pairs with it before and after the
        edit: the tokens before it and after it pair as they did, and the extractor reads nothing of the span in
        relation to the rest of the page. Comments and extension tags are the one thing read across it: no region
        of them is open where the span starts (its opener is a token), and with the same marks in the same order
        before and after the edit, the span's own regions pair within it as they did, and those of the rest of
        the page as they did.
        """
        markup, tops, unpaired = previous.markup, previous.tops, previous.unpaired
        assert markup is not None and tops is not None and unpaired is not None
        starts = list(tops)  # in order: found in page order, and every update keeps it
        top = bisect.bisect_right(starts, start) - 1
        if top < 0:
            return None
        first = starts[top]
        last = tops[first]
        if old_end > last or _at_edge(previous.text, first, last) or _in_a_tag(previous.text, first):
            return None
        container = bisect.bisect_right(markup, (first, len(previous.text) + 1)) - 1  # the stretch that holds it
        before, after = previous.text[first:last], wikitext[first : last + shift]
        # an opener of the page before the span that never pairs would pair with a closer the span leaves unpaired
        kept_open = {_CLOSER_OF[kind] for kind, at in unpaired.items() if at < first}
        try:
            old_references, old_counts, old_marks, _ = self._span_result(before)  # mostly the edit before's after
            marks = _REGION_MARKS.findall(after) if "<" in after or "-->" in after else []
            if marks != old_marks:
                return None
            if "<" in after:  # tags hide markup from the extractor: its tokens are not those of the text
                if not _one_span(after, kept_open):
                    return None
                new_references, new_counts, _, _ = self._span_result(after, marks)
            else:  # no tag: the extractor's tokens are the text's, read once for both
                new_references, new_counts, _, tokens = self._span_result(after, marks)
                if not _one_span(after, kept_open, tokens):
                    return None
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
        held_from, held_to = markup[container]
        moved = (
            markup[:container]
            + [(held_from, held_to + shift)]
            + [(a + shift, b + shift) for a, b in markup[container + 1 :]]
        )
        moved_tops = {a + (shift if a > first else 0): b + shift if a >= first else b for a, b in tops.items()}
        moved_unpaired = {kind: at + (shift if at > first else 0) for kind, at in unpaired.items()}
        self.stats.respanned += 1
        return _Parsed(wikitext, references, counts, moved, moved_tops, moved_unpaired)

    def _span_result(
        self, span: str, marks: list[str] | None = None
    ) -> tuple[list[ImageReference], ExtractStats, list[str], _Tokens]:
        """A span parsed alone, with its region marks (``marks`` if known) and the extractor's tokens; the last few
        are kept, since an edit's span after is the next edit's span before."""
        result = self._spans.get(span)
        if result is None:
            counts = ExtractStats()
            references, tokens, _ = scan_and_extract(span, "", self.aliases, counts, **self.options)  # type: ignore[arg-type]
            marks = _REGION_MARKS.findall(span) if marks is None else marks
            result = self._spans[span] = (references, counts, marks, tokens)
            if len(self._spans) > SPANS_KEPT:
                self._spans.popitem(last=False)
        return result


def _one_span(text: str, kept_open: frozenset[str] | set[str] = frozenset(), tokens: _Tokens | None = None) -> bool:
    """Whether ``text`` is one link or template: its first token opens it and its last closes it, and no closer
    of a kind in ``kept_open`` is left unpaired in it (it would pair with an opener of the page left open).
    ``tokens`` are the text's, if read already."""
    tokens = _Tokens(text) if tokens is None else tokens
    return (
        len(tokens.positions) >= 2
        and tokens.positions[0] == 0
        and tokens.partner[0] == len(tokens.positions) - 1
        and tokens.positions[-1] == len(text) - 2
        and not (kept_open and any(text[at : at + 2] in kept_open for at in tokens.unmatched))
    )


def _in_a_tag(text: str, position: int) -> bool:
    """Whether ``position`` lies inside a ``<…>`` (``<gallery caption="{{…}}">``): an edit there may change the tag."""
    opener = text.rfind("<", 0, position)
    return opener >= 0 and text.find(">", opener, position) < 0


def _words_only(old: str, new: str, start: int, old_end: int, new_end: int) -> bool:
    """Whether an edit replaces text by text: neither side empty, no bracket or angle bracket in either, and no
    ``-`` or ``!`` at either side's ends or next to the edit (they could make ``<!--`` or ``-->``).

    Such an edit makes no token and joins none (a character that is no bracket stays between its neighbours),
    so a stretch of markup that ends just before it with a closer, or begins just after it with an opener, reads
    as before; only the name of an opener that never pairs (``{{Infobox``) grows into the text after it, and
    that stretch ends with a letter, not a closer.
    """
    removed, added = old[start:old_end], new[start:new_end]
    if not removed or not added or _MARKUP_CHARS.search(removed) or _MARKUP_CHARS.search(added):
        return False
    ends = removed[0] + removed[-1] + added[0] + added[-1]
    ends += (old[start - 1] if start else "") + (old[old_end] if old_end < len(old) else "")
    return "-" not in ends and "!" not in ends


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
    """Where two texts differ: ``old[start:new_end]`` was replaced by ``new[start:new_end]``.

    Chunks of ``old`` are matched against ``new`` in place (``startswith``/``endswith`` at an offset),
    from each end; the first chunk that differs is then halved, each half matched from where the equal
    part ends, so that each character of ``old`` is copied about twice and none of ``new``.
    """
    limit = min(len(old), len(new))
    start = 0
    while start < limit and new.startswith(old[start : start + COMPARE_CHUNK], start):
        start += COMPARE_CHUNK
    start = min(start, limit)
    high = min(start + COMPARE_CHUNK, limit)
    while start < high:  # the first differing offset in old[start:high]
        middle = (start + high + 1) // 2
        if new.startswith(old[start:middle], start):
            start = middle
        else:
            high = middle - 1 if middle - start == 1 else middle
    room = limit - start  # the common suffix may not overlap the common prefix
    size, end = len(old), len(new)
    suffix = 0
    if room > EDIT_GUESS and new.endswith(old[size - room + EDIT_GUESS :], 0, end):
        suffix = room - EDIT_GUESS  # an edit is mostly short: all but its last characters are equal
    while suffix < room:
        step = min(COMPARE_CHUNK, room - suffix)
        if not new.endswith(old[size - suffix - step : size - suffix], 0, end - suffix):
            high = suffix + step
            while suffix < high:  # the first differing offset from the end in that piece
                middle = (suffix + high + 1) // 2
                if new.endswith(old[size - middle : size - suffix], 0, end - suffix):
                    suffix = middle
                else:
                    high = middle - 1 if middle - suffix == 1 else middle
            break
        suffix += step
    return start, size - suffix, end - suffix


def markup_spans(
    text: str, scan: tuple[_Tokens, list[tuple[int, int]]] | None = None
) -> tuple[list[tuple[int, int]], dict[int, int], dict[str, int]]:
    """Every stretch of ``text`` whose characters the extractor reads, merged and sorted; the top-level spans;
    and where the first opener of each kind that never pairs is.

    Found with the extractor's own scanners, as it reads the page: every paired ``[[…]]``
    and ``{{…}}``, every closer, every opener that never closes with the name after it
    (an unclosed ``{{Infobox`` or ``[[File:`` is counted by its name), every gallery's content,
    every mark of a comment or an extension tag (``<!--``, ``-->``, ``<ref …>``, ``</ref>``) and
    every ``<…>`` outside them. The top-level spans are the paired links and templates that no
    other encloses.

    An opener that never closes is text to the extractor, and stays so through the edits
    that are shifted (they add no closer) or reparsed in a span (:func:`_one_span`: no
    closer of its kind is left unpaired in the span), so the text after it is not markup for them.
    """
    if scan is not None:  # the extractor's own, from parsing this text
        tokens, galleries = scan
        hidden = tokens.text
    else:
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
    unpaired: dict[str, int] = {}
    reach = 0
    for index, position in enumerate(tokens.positions):
        partner = tokens.partner[index]
        if partner < 0:
            kind = tokens.kinds[index]
            if kind in _CLOSER_OF:
                unpaired.setdefault(kind, position)
            name = _OPENER_NAME.match(hidden, position) if kind in _CLOSER_OF else None
            spans.append((position, name.end() if name else position + 2))
        elif partner > index:
            end = tokens.positions[partner] + 2
            spans.append((position, end))
            if position >= reach:
                tops[position] = reach = end
    # the marks of comments and extension tags, and the tags outside them: inside a comment (even one that never
    # closes) or a footnote, text is blanked for the extractor, so an edit there that adds no mark changes nothing
    spans.extend(match.span() for match in _REGION_MARKS.finditer(text))
    spans.extend(match.span() for match in _ANGLE.finditer(hidden))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for first, last in spans:
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged, tops, unpaired
