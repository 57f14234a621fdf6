"""Incremental extraction across the revisions of a page: parse only what an edit can have changed.

A history dump repeats a page's whole text in every revision, and consecutive
revisions are nearly identical. :class:`RevisionExtractor` gives, for each revision,
exactly what :func:`builder.extract.wikitext.extract_images` gives on it from scratch (the
references, their positions, and the counts added to :class:`ExtractStats`), but parses
only what an edit changed:

* a text seen before in this page (a null edit, a revert) gets that revision's result;
* otherwise the page is held in chunks of about :data:`CHUNK` characters, cut where the
  extractor's reading of the page falls apart in two (:func:`_markup`, :func:`_cuts`): no
  cut lies inside a paired link or template, a comment, an extension-tag block or a
  gallery, after a ``<`` that no ``>`` has closed yet, in or right after the name of an
  opener that never pairs (an unclosed ``{{Infobox`` or ``[[File:`` is counted by its
  name), or between two brackets. Extracting each chunk alone gives the page's references
  and counts, chunk by chunk: the extractor pairs brackets on one stack and tags by
  searching forward for their closer, and nothing it pairs or matches spans a cut. What
  reaches past a chunk is kept with it: the kinds of opener and closer it leaves
  unpaired, and the tags it opens with no closer.

An edit touches the chunks between where the texts begin and stop differing; those among
them found unchanged further on split it into several stretches (an editor's changes in
two sections). A chunk whose edit changes nothing the extractor reads is taken as it is,
its references moved: words, links without a ``:`` and templates without a ``=`` edited in
prose (nothing nests in them, nothing reads them), or text inside a comment or a footnote
that keeps its closer. Any other stretch of new text is parsed alone, and kept if its
ends are cuts of the new text, which the chunks around it tell: it joins no two brackets
at its ends and leaves no ``<…`` or opener's name open at its end; no closer in it is
unpaired of a kind that a chunk before leaves open, and no opener of a kind that a chunk
after leaves a closer of; it closes no tag that a chunk before left unclosed, and leaves
none open that a closer after it would close (nor a comment, which would run to the end).
Where it would pair with something in a chunk around it (a vandal's ``[[`` and a stray
``]]`` further on), the stretch is widened to that chunk and parsed again. A long stretch
is cut again, so chunks stay short. A revision's digest (:meth:`RevisionExtractor.digest`)
is taken from its chunks' bytes, each encoded once.

Anything else is parsed from scratch, which stays the reference path, and is counted by
reason (:attr:`IncrementalStats.whole`). ``tests/test_incremental.py`` checks the equality
over generated edit histories (with the edits real editors make: several places at once,
footnotes and links added and removed, blanking) and over 60 real revisions;
``python benchmarks/history.py --check`` over the 15,180 revisions of the Anarchism article.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import operator
import re
from collections.abc import Iterable

from builder.extract.wikitext import (
    _INERT_CLOSE,
    _STAT_COUNTS,
    DEFAULT_FILE_ALIASES,
    ExtractionError,
    ExtractStats,
    ImageReference,
    MarkupScan,
    _inert_markup,
    _Tokens,
    scan_and_extract,
)

__all__ = ["IncrementalStats", "RevisionExtractor"]

TEXTS_KEPT = 16  # earlier texts of a page whose results are kept, for reverts
CHUNK = 1500  # characters: a page is cut about this far apart (an edit parses the chunks it touches again)
STRETCHES = 8  # an edit found in more separate stretches than this is parsed whole
EDIT_GUESS = 256  # characters: where an edit ends in a chunk is first looked for this close to where it starts
COMPARE_CHUNK = 16384  # characters compared at a time when looking for where an edit is in a chunk
_BRACKET_CHARS = re.compile(r"[\[\]{}]")
_SIZE = operator.attrgetter("size")
_ENCODED = operator.attrgetter("encoded")
_EDGE_CHARS = frozenset("[]{}<>-!")  # next to an edit of words, they could make a token, a tag or a comment mark
_BRACKETS = frozenset("[]{}")
_OPENER_BITS = {"[[": 1, "{{": 2}
_CLOSER_BITS = {"]]": 1, "}}": 2}
# Every "<" with what follows it up to the next "<" or ">": a cut there could split a tag the extractor reads
# (a comment's "<!--", an extension tag's opener or closer, whose attributes run to its ">").
_ANGLE = re.compile(r"<[^<>]*")
# An opener that never pairs, with the name after it: the extractor counts an unclosed "{{Infobox" and "[[File:"
# (wikitext._INFOBOX_NAME reads "{{" with the word after it, the file-link pattern "[[" up to its first colon)
_OPENER_NAME = re.compile(r"\{\{\s*\w*|\[\[[^\[\]{}<>|\n:]*:?")
_COUNTED = tuple(name for name in _STAT_COUNTS if name != "references")


class _Chunk:
    """A stretch of a page between two cuts, with what of it reaches past its ends; shared by the revisions that
    have it, and not changed but for caches: its text, kept as a place in the revision that made it until asked
    for (so that an edit inside a long comment does not copy the comment), and its bytes."""

    __slots__ = (
        *("_text", "_source", "_start", "size"),
        *("counts", "openers", "closers", "unclosed", "markup", "blanked", "encoded"),
    )

    def __init__(
        self,
        text: str | tuple[str, int, int],  # the text, or (a text that holds it, start, end)
        counts: ExtractStats | None,  # what extracting it alone counts; None: not known (cut from a page with counts)
        openers: int,  # the kinds of opener it leaves unpaired (bits of _OPENER_BITS)
        closers: int,  # the kinds of closer it leaves unpaired (bits of _CLOSER_BITS)
        unclosed: frozenset[str],  # the extension tags it opens with no closer after them
        markup: tuple[tuple[int, int], ...],  # where in it the extractor reads markup (:func:`_markup`), in order
        blanked: tuple[tuple[int, int, str], ...],  # its comments and tag blocks no markup reads into: content, name
    ) -> None:
        if isinstance(text, str):
            self._text, self._source, self._start, self.size = text, None, 0, len(text)
        else:
            self._text, (self._source, self._start, end) = None, text
            self.size = end - self._start
        self.counts, self.openers, self.closers, self.unclosed = counts, openers, closers, unclosed
        self.markup, self.blanked = markup, blanked
        self.encoded: bytes | None = None  # its text's digest_bytes, once a revision that has it is digested

    @property
    def text(self) -> str:
        if self._text is None:
            assert self._source is not None
            self._text = self._source[self._start : self._start + self.size]
            self._source = None  # the revision's text is let go
        return self._text

    def where(self) -> tuple[str, int]:
        """A text that holds this one, and where in it this one starts: read in place, not copied."""
        if self._text is not None:
            return self._text, 0
        assert self._source is not None
        return self._source, self._start

    def char(self, index: int) -> str:
        """Its character at ``index`` (``-1``: the last)."""
        text, base = self.where()
        return text[base + (index if index >= 0 else self.size + index)]


@dataclasses.dataclass
class _Parsed:
    """One text's result: its references, what it added to the counts, and its chunks (once needed)."""

    text: str
    references: list[ImageReference]
    counts: ExtractStats
    chunks: list[_Chunk] | None = None
    offsets: list[int] | None = None  # where each chunk starts, and the text's length last
    scan: MarkupScan | None = None  # a whole parse's view of the markup, until the text is cut
    digest: int | None = None  # its text_digest, once asked for
    unclosed: bool = True  # whether a chunk of it may leave a tag unclosed (True until its chunks tell)


@dataclasses.dataclass(frozen=True)
class _Refused:
    """Why a stretch's ends may not be cuts of the new text; and, where the stretch would pair with something in
    the chunks around it, the chunks to widen it to (``first``: of those before it, ``last``: after, exclusive)."""

    reason: str
    first: int | None = None
    last: int | None = None


@dataclasses.dataclass
class IncrementalStats:
    """How each revision was extracted: parsed whole, from an identical earlier text, or by parsing the stretches an
    edit changed; the characters parsed either way; and why each revision parsed whole was (``whole``: reason →
    revisions), to tell which edits to handle next."""

    parsed: int = 0
    repeated: int = 0
    reparsed: int = 0
    stretches: int = 0  # stretches of text parsed alone for the revisions reparsed
    moved: int = 0  # chunks taken as they were, their references moved: words edited in prose, text in a comment
    widened: int = 0  # stretches widened to the chunks that hold the other end of a bracket or tag they would pair
    characters: int = 0  # characters parsed, whole or in stretches
    whole: dict[str, int] = dataclasses.field(default_factory=dict)

    def refuse(self, reason: str) -> None:
        self.whole[reason] = self.whole.get(reason, 0) + 1


class RevisionExtractor:
    """Extracts the revisions of a dump in order, reusing what the previous revisions of the same page had.

    Call :meth:`extract` as :func:`~builder.extract.wikitext.extract_images` is called, with the
    page's id; a new id starts a new page. ``options`` are passed to ``extract_images``; ``chunk``
    is how long chunks are (the tests cut short pages into many).
    """

    def __init__(
        self, file_aliases: Iterable[str] = DEFAULT_FILE_ALIASES, *, chunk: int = CHUNK, **options: object
    ) -> None:
        self.aliases = tuple(file_aliases)
        self.chunk = chunk
        self.options = options
        self.stats = IncrementalStats()
        self._page_id: int | None = None
        self._previous: _Parsed | None = None
        self._texts: list[_Parsed] = []  # the latest last; compared by length, then text, never hashed
        self._lengths: list[int] = []  # their lengths, in the same order

    def extract(self, page_id: int, wikitext: str, title: str, stats: ExtractStats) -> list[ImageReference]:
        """The references of one revision, as ``extract_images(wikitext, title, aliases, stats)`` gives them."""
        if page_id != self._page_id:
            self._page_id = page_id
            self._previous = None
            self._texts.clear()
            self._lengths.clear()
        parsed = self._earlier(wikitext)
        if parsed is not None:
            self.stats.repeated += 1
        else:
            if self._previous is None:
                self.stats.refuse("first of its page (or after one that failed)")
            else:
                parsed = self._reparsed(self._previous, wikitext)
            if parsed is None:
                parsed = self._parse(wikitext, title, stats)
            self._texts.append(parsed)
            self._lengths.append(len(wikitext))
            if len(self._texts) > TEXTS_KEPT:
                del self._texts[0], self._lengths[0]
        stats.add(parsed.counts)
        self._previous = parsed
        return list(parsed.references)

    def digest(self) -> int:
        """:func:`~builder.extract.copies.text_digest` of the revision extracted last, from its chunks' bytes where it
        has chunks: each chunk is encoded once, for all the revisions that share it, not every revision whole."""
        from builder.extract.copies import digest_bytes, pieces_digest, text_digest  # with pyarrow: where used

        parsed = self._previous
        assert parsed is not None, "digest() follows an extract() that succeeded"
        if parsed.digest is None:
            if parsed.chunks is None:
                parsed.digest = text_digest(parsed.text)
            else:
                for chunk in parsed.chunks:
                    if chunk.encoded is None:
                        chunk.encoded = digest_bytes(chunk.text)
                parsed.digest = pieces_digest(map(_ENCODED, parsed.chunks))
        return parsed.digest

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

    def _parse(self, wikitext: str, title: str, stats: ExtractStats) -> _Parsed:
        counts = ExtractStats()
        try:
            references, scan = scan_and_extract(wikitext, title, self.aliases, counts, **self.options)  # type: ignore[arg-type]
        except ExtractionError:
            stats.add(counts)  # what it counted before it failed, as from scratch
            self._previous = None
            raise
        self.stats.parsed += 1
        self.stats.characters += len(wikitext)
        return _Parsed(wikitext, references, counts, scan=scan)

    def _reparsed(self, previous: _Parsed, wikitext: str) -> _Parsed | None:
        """The previous result with the chunks the edit touched replaced by its stretches of new text, each parsed
        alone; None (the reason counted) when a stretch's ends are not cuts of the new text."""
        if previous.chunks is None:
            assert previous.scan is not None
            previous.chunks, previous.offsets = _chunked(
                previous.text, previous.scan, previous.references, previous.counts, self.chunk
            )
            previous.scan = None
            previous.unclosed = any(chunk.unclosed for chunk in previous.chunks)
        chunks, offsets = previous.chunks, previous.offsets
        assert offsets is not None
        if not chunks:
            self.stats.refuse("empty before")
            return None
        old = previous.text
        zones, (start, old_end, new_end) = _zones(chunks, offsets, old, wikitext)
        if zones is None:
            self.stats.refuse("changed in too many places")
            return None
        counts = previous.counts  # copied once a stretch changes it
        references: list[ImageReference] = []
        unclosed = previous.unclosed  # whether a chunk leaves a tag unclosed (most pages: none)
        made: list[_Chunk] = []  # the new text's chunks so far
        done = 0  # old chunks before this one are in place
        read = 0  # old references before this one are in place
        old_references = previous.references
        for first, last, begin, end in zones:
            made += chunks[done:first]
            inside = None
            if last == first + 1 and end > begin:  # where in the chunk the edit is, if it is the only stretch
                at = offsets[first]
                edit = (start - at, old_end - at, new_end - at) if len(zones) == 1 else None
                around = (made[-1].char(-1) if made else " ") + (chunks[last].char(0) if last < len(chunks) else " ")
                open_tags = _open_before(made)[1] if unclosed else frozenset()
                inside = _inside(chunks[first], wikitext, begin, end, edit, around, open_tags)
            if inside is not None:  # nothing the extractor reads changed: the chunk's references move
                chunk, at = inside
                below = bisect.bisect_left(old_references, offsets[first], lo=read, key=_position)
                above = bisect.bisect_left(old_references, offsets[last], lo=below, key=_position)
                moving = bisect.bisect_left(old_references, offsets[first] + at, below, above, key=_position)
                references += _moved(old_references[read:moving], begin - offsets[first])
                references += _moved(old_references[moving:above], end - offsets[last])
                made.append(chunk)
                self.stats.moved += 1
                done, read = last, above
                continue
            piece = wikitext[begin:end]
            reason = "changed from its first chunk to its last"
            while True:
                if len(zones) == 1 and (first, last) == (0, len(chunks)):
                    self.stats.refuse(reason)
                    return None
                result = self._stretch(piece, made, chunks, offsets, last, old)
                if not isinstance(result, _Refused):
                    break
                reason = result.reason
                if len(zones) > 1 or (result.first is None and result.last is None):
                    self.stats.refuse(reason)
                    return None
                # one stretch: widened to the chunk that holds the other end of what it pairs, and parsed again
                wider_first = first if result.first is None else min(first, result.first)
                wider_last = last if result.last is None else max(last, result.last)
                begin -= offsets[first] - offsets[wider_first]
                end += offsets[wider_last] - offsets[last]
                first, last = wider_first, wider_last
                made = chunks[:first]
                piece = wikitext[begin:end]
                self.stats.widened += 1
            piece_references, piece_counts, scan = result
            below = bisect.bisect_left(old_references, offsets[first], lo=read, key=_position)
            above = bisect.bisect_left(old_references, offsets[last], lo=below, key=_position)
            references += _moved(old_references[read:below], begin - offsets[first])
            stale = _counts(chunks[first:last], previous.counts, above - below)
            if stale is None:  # parsed alone for what it counted: the page's counts are not all zero
                stale = self._counts_of(old[offsets[first] : offsets[last]])
                if stale is None:
                    self.stats.refuse("stretch before unparsable")
                    return None
            if counts is previous.counts:
                counts = ExtractStats()
                counts.add(previous.counts)
            counts.subtract(stale)
            counts.add(piece_counts)
            references += [_at(reference, reference.position + begin) for reference in piece_references]
            if scan is not None:
                cut = _chunked(piece, scan, piece_references, piece_counts, self.chunk)[0]
                unclosed = unclosed or any(chunk.unclosed for chunk in cut)
                made += cut
            done, read = last, above
        made += chunks[done:]
        references += _moved(old_references[read:], len(wikitext) - len(old))
        positions = list(itertools.accumulate(map(_SIZE, made), initial=0))
        self.stats.reparsed += 1
        if previous.unclosed:  # one may have gone
            unclosed = any(chunk.unclosed for chunk in made)
        return _Parsed(wikitext, references, counts, made, positions, unclosed=unclosed)

    def _stretch(
        self, piece: str, made: list[_Chunk], chunks: list[_Chunk], offsets: list[int], last: int, old: str
    ) -> tuple[list[ImageReference], ExtractStats, MarkupScan | None] | _Refused:
        """A stretch of new text parsed alone, between the chunks ``made`` (the new text's, before it) and
        ``chunks[last:]`` (the old text's, after it, from ``offsets[last]`` in ``old``); or why its ends may not be
        cuts of the new text, with the chunks to widen it to that hold the other end of what it would pair."""
        left = made[-1] if made else None
        right = chunks[last] if last < len(chunks) else None
        if not piece:  # chunks removed: their neighbours meet
            if left is not None and right is not None and left.char(-1) in _BRACKETS and right.char(0) in _BRACKETS:
                return _Refused("brackets joined at its ends", last=last + 1)
            return [], ExtractStats(), None
        if left is not None and left.char(-1) in _BRACKETS and piece[0] in _BRACKETS:
            return _Refused("brackets joined at its ends", first=len(made) - 1)
        if right is not None and piece[-1] in _BRACKETS and right.char(0) in _BRACKETS:
            return _Refused("brackets joined at its ends", last=last + 1)
        if right is not None and piece.rfind("<") > piece.rfind(">"):
            return _Refused("a tag open at its end", last=last + 1)
        kept_open, open_tags = _open_before(made)
        closing = {name for name in open_tags if name == "!--" or _INERT_CLOSE[name].search(piece)}
        if closing:  # the first chunk that leaves one of them unclosed holds the opener it would close
            first = next(index for index, chunk in enumerate(made) if chunk.unclosed & closing)
            return _Refused("a tag closed that was opened before it", first=first)
        counts = ExtractStats()
        try:
            references, scan = scan_and_extract(piece, "", self.aliases, counts, **self.options)  # type: ignore[arg-type]
        except ExtractionError:
            return _Refused("stretch unparsable")
        self.stats.stretches += 1
        self.stats.characters += len(piece)
        tokens = scan.tokens
        closers_after = _closers_after(chunks, last)
        for position in tokens.unmatched:
            kind = tokens.text[position : position + 2]
            if kind in _CLOSER_BITS:
                bit = _CLOSER_BITS[kind]
                if bit & kept_open:  # the innermost opener of its kind left open before would pair with it
                    first = max(index for index, chunk in enumerate(made) if chunk.openers & bit)
                    return _Refused("a closer of an opener left open before it", first=first)
                continue
            bit = _OPENER_BITS[kind]
            if bit & closers_after:  # the first closer of its kind left unpaired after would pair with it
                after = next(index for index in range(last, len(chunks)) if chunks[index].closers & bit)
                return _Refused("an opener of a closer left unpaired after it", last=after + 1)
            name = _OPENER_NAME.match(tokens.text, position)
            if right is not None and name is not None and name.end() == len(piece):
                return _Refused("an opener's name open at its end", last=last + 1)
        if right is not None:
            for _, name in scan.unclosed:
                if name == "!--":
                    return _Refused("a comment left open", last=len(chunks))
                closer = _INERT_CLOSE[name].search(old, offsets[last])
                if closer is not None:
                    holder = bisect.bisect_right(offsets, closer.start(), 0, len(chunks)) - 1
                    return _Refused("a tag opened that is closed after it", last=holder + 1)
        return references, counts, scan

    def _counts_of(self, text: str) -> ExtractStats | None:
        """What extracting ``text`` alone counts (None if it cannot be parsed)."""
        counts = ExtractStats()
        try:
            scan_and_extract(text, "", self.aliases, counts, **self.options)  # type: ignore[arg-type]
        except ExtractionError:
            return None
        self.stats.characters += len(text)
        return counts


def _inside(
    chunk: _Chunk,
    new: str,
    begin: int,
    end: int,
    edit: tuple[int, int, int] | None,
    around: str,
    open_tags: frozenset[str],
) -> tuple[_Chunk, int] | None:
    """The chunk with its text replaced by ``new[begin:end]``, if the edit changes nothing the extractor reads of it,
    and where in the chunk the edit begins; None otherwise. ``edit`` is where the texts differ (:func:`_edit`), if
    known; ``around`` the characters next to the chunk (the last one before it, the first one after it, or a space
    where there is none); ``open_tags`` the tags that the chunks before it leave unclosed. Both texts are read in
    place.

    Two edits qualify, tried in this order. Text inside a comment or an extension-tag block that no markup encloses
    or reads into: the extractor blanks it, and if the block's closer is the first one found after its opener
    still, and the edit brings no closer of a tag left open before (which would read on to it), its extent is the
    same. An edit in prose: widened over the stretches of markup it touches (:func:`_markup`), the edit's stretch
    holds, before and after, only what the extractor reads nothing from (:func:`_inert`: text, links without a
    ``:`` and templates without a ``=`` that nest nothing, whole footnotes and comments, other tags), and the
    characters around it are no bracket, angle bracket, ``-`` or ``!``: its brackets pair among themselves as they
    did, its tags close within it, it makes no tag or comment mark across its ends, and no caption or name holds
    it. Either way the extractor reads of the chunk what it read, moved.
    """
    old, base = chunk.where()
    size = chunk.size
    start, old_end, new_end = _edit(chunk.text, new[begin:end]) if edit is None else edit
    shift = new_end - old_end
    markup = chunk.markup
    for number, (inner, inner_end, name) in enumerate(chunk.blanked):
        if inner <= start and old_end <= inner_end:
            # a tag left open before searches on for its closer, through comments and footnotes too (the content had
            # none of its closers, or it would not be open; a comment left open runs to the end, after this block)
            open_before = (open_tags | chunk.unclosed) - {"!--"}
            if open_before and _closes(new[begin + inner : begin + inner_end + shift], open_before):
                break
            if name == "!--":  # the content had no "-->": a new one would be made by the edit
                found = new.find("-->", begin + max(inner, start - 2), min(begin + new_end + 2, end))
                if found >= 0 and found != begin + inner_end + shift:
                    break
            else:
                closer = _INERT_CLOSE[name].search(new, begin + inner, end)
                if closer is None or closer.start() != begin + inner_end + shift:
                    break
            within = bisect.bisect_right(markup, inner, key=_first) - 1  # the stretch of markup that holds it
            moved = _shifted(chunk, (new, begin, end), within + 1, inner_end, shift)
            blanked = list(moved.blanked)
            blanked[number] = (inner, inner_end + shift, name)
            markup_list = list(moved.markup)
            markup_list[within] = (markup[within][0], markup[within][1] + shift)
            moved.markup, moved.blanked = tuple(markup_list), tuple(blanked)
            return moved, start
        if inner > start:
            break
    last = bisect.bisect_right(markup, old_end, key=_first)  # the stretches of markup that begin before its end
    first = last
    while first > 0 and markup[first - 1][1] >= start:  # ... and end after its start
        first -= 1
    low = min(start, markup[first][0]) if first < last else start
    high = max(old_end, markup[last - 1][1]) if first < last else old_end
    before = old[base + low - 1] if low > 0 else around[0]
    after = old[base + high] if high < size else around[1]
    if before in _EDGE_CHARS or after in _EDGE_CHARS:
        return None
    open_before = open_tags | chunk.unclosed  # a tag left open before reads the stretch's closers
    if _inert(old[base + low : base + high], open_before) is None:
        return None
    stretch = _inert(new[begin + low : begin + high + shift], open_before)
    if stretch is None:
        return None
    moved = _shifted(chunk, (new, begin, end), last, high, shift)
    inner_markup, inner_blanked = stretch
    moved.markup = moved.markup[:first] + tuple((low + a, low + b) for a, b in inner_markup) + moved.markup[last:]
    blanked = tuple(block for block in chunk.blanked if block[0] < low)
    blanked += tuple((low + a, low + b, name) for a, b, name in inner_blanked)
    moved.blanked = blanked + tuple((a + shift, b + shift, name) for a, b, name in chunk.blanked if a >= high)
    return moved, start


def _closes(text: str, tags: frozenset[str]) -> bool:
    """Whether ``text`` holds a closer of one of ``tags`` (a comment's ``-->`` for ``!--``)."""
    return any(("-->" in text) if name == "!--" else bool(_INERT_CLOSE[name].search(text)) for name in tags)


def _inert(text: str, open_tags: frozenset[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]] | None:
    """Where ``text`` holds markup, and its comments and footnotes (as :func:`_markup` gives them), if the extractor
    reads nothing from it, wherever it stands in prose; None otherwise.

    Its comments and extension-tag blocks close within it (the extractor blanks them; none is a gallery, whose
    lines it reads), and no ``<`` after its last ``>``, so that its tags pair with nothing around it; it holds no
    closer of a tag in ``open_tags`` (left open before it, and searching on). What is left, blanked, holds no
    bracket but those of links and templates each closed before the next opens (nothing nests, nothing is left
    open) that are read for nothing: a link holds no ``:`` (it is no file link, ``[[File:``), a template no ``=``
    (no image parameter).
    """
    hidden = text
    scan = None
    if "<" in text or ">" in text:
        if text.rfind("<") > text.rfind(">"):
            return None
        hidden, galleries, regions, unclosed = _inert_markup(text)
        if galleries or unclosed:
            return None
        if open_tags and (regions or _closes(text, open_tags)):
            return None
        scan = MarkupScan(_Tokens(hidden), regions, [])
    elif not _BRACKET_CHARS.search(text):
        return [], []
    tokens = scan.tokens if scan is not None else _Tokens(hidden)
    kinds, partner, positions = tokens.kinds, tokens.partner, tokens.positions
    if len(kinds) % 2:
        return None
    pairs = []
    for index in range(0, len(kinds), 2):
        if partner[index] != index + 1:
            return None
        start, end = positions[index], positions[index + 1] + 2
        if (":" if kinds[index] == "[[" else "=") in hidden[start + 2 : end - 2]:
            return None
        pairs.append((start, end))
    if scan is None:
        return pairs, []
    return _markup(text, scan)


def _shifted(chunk: _Chunk, text: str | tuple[str, int, int], index: int, after: int, shift: int) -> _Chunk:
    """``chunk`` with the text ``text``, its markup from ``index`` on and its blocks after ``after`` moved."""
    markup = chunk.markup[:index] + tuple((first + shift, last + shift) for first, last in chunk.markup[index:])
    blanked = tuple(
        (inner + shift, end + shift, name) if inner > after else (inner, end, name)
        for inner, end, name in chunk.blanked
    )
    return _Chunk(text, chunk.counts, chunk.openers, chunk.closers, chunk.unclosed, markup, blanked)


def _first(interval: tuple[int, int]) -> int:
    return interval[0]


def _position(reference: ImageReference) -> int:
    return reference.position


def _moved(references: list[ImageReference], shift: int) -> list[ImageReference]:
    """The references with their positions moved by ``shift``."""
    if not shift:
        return list(references)
    return [_at(reference, reference.position + shift) for reference in references]


def _at(reference: ImageReference, position: int) -> ImageReference:
    """``reference`` at another position: :func:`dataclasses.replace` without its checks, a history moves many."""
    moved = object.__new__(ImageReference)
    moved.__dict__.update(reference.__dict__)
    moved.__dict__["position"] = position
    return moved


def _open_before(chunks: list[_Chunk]) -> tuple[int, frozenset[str]]:
    """The kinds of opener that ``chunks`` leave unpaired, and the tags they leave unclosed."""
    kinds = 0
    tags: frozenset[str] = frozenset()
    for chunk in chunks:
        kinds |= chunk.openers
        if chunk.unclosed:
            tags |= chunk.unclosed
    return kinds, tags


def _closers_after(chunks: list[_Chunk], first: int) -> int:
    """The kinds of closer that the chunks from ``first`` on leave unpaired."""
    kinds = 0
    for chunk in chunks[first:]:
        kinds |= chunk.closers
    return kinds


def _counts(chunks: list[_Chunk], page: ExtractStats, references: int) -> ExtractStats | None:
    """What extracting ``chunks`` alone counts: their own, or, where the ``page`` counted nothing but references,
    nothing but their ``references``; None if not known."""
    if all(chunk.counts is not None for chunk in chunks):
        total = ExtractStats()
        for chunk in chunks:
            total.add(chunk.counts)  # type: ignore[arg-type]
        return total
    return None if _counted(page) else ExtractStats(references=references)


def _counted(counts: ExtractStats) -> bool:
    """Whether ``counts`` hold anything but references."""
    values = counts.__dict__
    return any(values[name] for name in _COUNTED) or bool(counts.unrendered_templates)


def _zones(
    chunks: list[_Chunk], offsets: list[int], old: str, new: str
) -> tuple[list[tuple[int, int, int, int]] | None, tuple[int, int, int]]:
    """The stretches of ``new`` that replace chunks of ``old``, ``(first, last, begin, end)``: ``new[begin:end]``
    takes the place of ``chunks[first:last]``, in page order (None if there are more than :data:`STRETCHES`); and
    where the texts differ (:func:`_edit`).

    The chunks before the first difference stay, and those after the last; of the chunks between, those found
    further on in ``new``, in order, stay too, and split the edit into several stretches (an editor's changes in
    two sections).
    """
    start, old_end, new_end = edit = _edit(old, new)
    count = len(chunks)
    first = bisect.bisect_right(offsets, start, 0, count) - 1
    last = max(first + 1, bisect.bisect_left(offsets, old_end, 0, count + 1))
    begin, end = offsets[first], offsets[last] + new_end - old_end
    zones: list[tuple[int, int, int, int]] = []
    low = first
    for index in range(first + 1, last - 1):  # the first and the last chunk differ where they were
        text = chunks[index].text
        found = new.find(text, max(begin, start), new_end)
        if found < 0:
            continue
        if index > low or found > begin:
            zones.append((low, index, begin, found))
            if len(zones) >= STRETCHES:
                return None, edit
        low, begin = index + 1, found + len(text)
    zones.append((low, last, begin, end))
    return zones, edit


def _chunked(
    text: str, scan: MarkupScan, references: list[ImageReference], counts: ExtractStats, size: int
) -> tuple[list[_Chunk], list[int]]:
    """``text`` in chunks about ``size`` long (:func:`_cuts`), each with what of it reaches past its ends, and where
    each starts (the text's length last); ``scan``, ``references`` and ``counts`` are extracting ``text`` alone's."""
    if not text:
        return [], [0]
    markup, blanked = _markup(text, scan)
    bounds = [0, *_cuts(text, markup, size), len(text)]
    size = len(bounds) - 1
    openers, closers = [0] * size, [0] * size
    tokens = scan.tokens
    for position in tokens.unmatched:
        index = bisect.bisect_right(bounds, position) - 1
        kind = tokens.text[position : position + 2]
        if kind in _OPENER_BITS:
            openers[index] |= _OPENER_BITS[kind]
        else:
            closers[index] |= _CLOSER_BITS[kind]
    tags: list[set[str]] = [set() for _ in range(size)]
    for position, name in scan.unclosed:
        tags[bisect.bisect_right(bounds, position) - 1].add(name)
    if size == 1:
        chunk_counts: list[ExtractStats | None] = [counts]
    elif _counted(counts):
        chunk_counts = [None] * size  # which chunk counted what is not known
    else:
        chunk_counts = []
        for index in range(size):
            below = bisect.bisect_left(references, bounds[index], key=_position)
            above = bisect.bisect_left(references, bounds[index + 1], lo=below, key=_position)
            chunk_counts.append(ExtractStats(references=above - below))
    chunks = []
    for index in range(size):
        start, end = bounds[index], bounds[index + 1]
        low = bisect.bisect_left(markup, start, key=_first)
        high = bisect.bisect_left(markup, end, lo=low, key=_first)
        inner = bisect.bisect_left(blanked, start, key=_first)
        outer = bisect.bisect_left(blanked, end, lo=inner, key=_first)
        chunks.append(
            _Chunk(
                (text, start, end),
                chunk_counts[index],
                openers[index],
                closers[index],
                frozenset(tags[index]),
                tuple((first - start, last - start) for first, last in markup[low:high]),
                tuple((first - start, last - start, name) for first, last, name in blanked[inner:outer]),
            )
        )
    return chunks, bounds


def _markup(text: str, scan: MarkupScan) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Where the extractor reads ``text`` as markup, as open intervals, merged and in order; and the comments and
    extension-tag blocks that no link or template encloses and no opener's name reads into, by their content's
    ``(start, end)`` and name.

    Markup is every paired link or template (the whole of those no other encloses), every stretch the extractor
    blanks or reads as a gallery (a comment, which may run to the end, an extension-tag block), every ``<`` up to
    the next ``<`` or ``>`` (the extractor's tags and comment marks all lie within one), and every opener that
    never pairs with the name after it and the character after that (the extractor reads an unclosed
    ``{{Infobox`` by the word after it, an unclosed ``[[File:`` up to its colon).
    """
    tokens = scan.tokens
    positions, partner, kinds = tokens.positions, tokens.partner, tokens.kinds
    pairs: list[tuple[int, int]] = []  # the links and templates no other encloses
    names: list[tuple[int, int]] = []
    reach = 0
    for index, position in enumerate(positions):
        other = partner[index]
        if other > index:
            if position >= reach:
                reach = positions[other] + 2
                pairs.append((position, reach))
        elif other < 0 and kinds[index] in _OPENER_BITS:
            name = _OPENER_NAME.match(tokens.text, position)
            names.append((position, (name.end() if name else position + 2) + 1))
    blocked = pairs + names + [(region[0], region[1]) for region in scan.regions]
    blocked += [(match.start(), match.end() + 1) for match in _ANGLE.finditer(text)]
    blocked.sort()
    merged: list[tuple[int, int]] = []
    for first, last in blocked:
        if merged and first < merged[-1][1]:
            if last > merged[-1][1]:
                merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    blanked = []
    for start, _, inner, inner_end, name in scan.regions:
        if name == "gallery" or any(first < start <= last for first, last in names):
            continue
        index = bisect.bisect_left(pairs, start, key=_first) - 1
        if index < 0 or pairs[index][1] <= start:
            blanked.append((inner, inner_end, name))
    return merged, blanked


def _cuts(text: str, markup: list[tuple[int, int]], size: int) -> list[int]:
    """Where ``text`` can be cut, about ``size`` apart (at a line's start where one is near): extracting the pieces
    alone gives the references and counts of extracting ``text``, piece by piece.

    A cut lies inside no stretch of ``markup`` (:func:`_markup`) and between no two brackets (a token, or a run
    of ``]`` read from its end). The extractor then tokenizes, pairs and scans each side of a cut as it does the
    whole text: nothing it pairs or matches spans a cut. What it carries across (openers left unpaired, tags left
    unclosed) is what the chunks keep to check an edit against.
    """
    length = len(text)
    if length < 2 * size:
        return []
    starts = [first for first, _ in markup]
    cuts: list[int] = []
    goal = size
    while goal < length - size // 2:
        line = text.find("\n", goal, goal + size // 2)
        cut = line + 1 if line >= 0 else goal
        while cut < length:
            index = bisect.bisect_left(starts, cut) - 1
            if index >= 0 and markup[index][1] > cut:
                cut = markup[index][1]
            elif text[cut - 1] in _BRACKETS and text[cut] in _BRACKETS:
                cut += 1
            else:
                break
        if cut >= length:
            break
        cuts.append(cut)
        goal = cut + size
    return cuts


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
