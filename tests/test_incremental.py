"""Incremental extraction across revisions gives what extraction from scratch gives, revision by revision.

The reference is :func:`builder.extract.wikitext.extract_images` on every revision; the
generated histories are made of what editors and vandals do: edit words anywhere
(inside captions and markup too), rewrite a caption, move an image, add and remove
one, revert to an earlier revision, and break the markup (unclosed brackets, stray
comment and tag openers, single brackets); and what the real edits of the Anarchism
article's history showed (issue 38): changes in several places of one revision, a
stretch rewritten across links, templates and footnotes, footnotes and external links
added and removed, the page blanked. The pages are cut into short chunks, so that every
edit meets chunk boundaries. Derandomized and without an example database, so the run is
the same everywhere and writes nothing into the repository. 60 real revisions of that
history are checked too.
"""

from __future__ import annotations

import dataclasses
import lzma
import os
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from builder.data.make_sample import page_xml
from builder.extract.copies import text_digest
from builder.extract.incremental import RevisionExtractor, _chunked, _zones
from builder.extract.tasks import ExtractResult, ExtractTask, iter_task_references
from builder.extract.wikitext import ExtractionError, ExtractStats, extract_images, scan_and_extract
from builder.sources.files import ReadStats
from builder.sources.xml import DumpReader

os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path(tempfile.gettempdir()) / "wikipedia-ipc-hypothesis"))
PHASES = [Phase.explicit, Phase.generate, Phase.shrink]

BLOCKS = [
    "'''Harbour''' is a town on the coast. ",
    "The pier was built in 1850, and the lighthouse later.\n",
    "[[File:Harbour.jpg|thumb|Boats in the old harbour at dawn]]\n",
    "[[Image:Pier.png|left|200px|alt=A pier|The pier in 1900]]",
    "{{Infobox settlement|name=Harbour|image=Harbour view.jpg|caption=The harbour from the hill}}\n",
    "{{multiple image|image1=A.jpg|caption1=First|image2=B.jpg|caption2=Second}}",
    "<gallery>\nFile:G1.jpg|A gallery picture\nG2.jpg|Another one\n</gallery>\n",
    "<!-- a comment with [[File:Hidden.jpg|thumb|not read]] -->",
    "<ref>Smith, ''The harbour'', 1901</ref>",
    "See [[Lighthouse|the lighthouse]] and {{convert|3|km}}. ",
    "== History ==\n",
    "[[File:Nested.jpg|thumb|A map with [[Harbour]] and {{lang|fr|le port}}]]",
    "{{Infobox port|name=Harbour<br>town|image=Port.jpg|caption=The port<ref>Smith</ref> at noon<!-- check -->}}\n",
    "{{Infobox lighthouse|image=Light.jpg|caption=The light<br />at night, [[Pier]]<small>1900</small>}}",
    "{{Infobox never closed|image=Open.jpg|caption=Left open by an editor ",
    "[[Broken link with a stray }} in it]] and ]] stray",
]
WORDS = ["boats", " ", "the", "harbour", "\n", "pier", "café", "1850", "-", ":", "=", "|", "thumb", "File"]
WORDS += ["[[Paris]]", "[[Paris|the city]]", "{{convert|3|km}}", "{{Infobox|image=I.jpg}}", "[[File:W.jpg]]"]
WORDS += ["<br>", "<br />", "<small>", "</small>", "<ref>", "</ref>", "<!--", "-->", "}}", "]]", "{{", "[["]
VANDALISM = ["[[", "]]", "{{", "}}", "<!--", "-->", "<ref>", "</ref>", "<gallery>", "[", "]", "<", ">", "]]]", "|"]
CAPTIONS = ["Boats at dawn", "The old harbour", "Fishing boats were anchored in the harbour", "A pier"]
# what real editors add and remove in prose: footnotes (with citation templates, named, reused), external links
FOOTNOTES = [
    "<ref>{{cite book|last=Smith|title=The harbour|year=1901|page=4}}</ref>",
    '<ref name="smith">Smith, 1901, p. 4</ref>',
    '<ref name="smith" />',
    "<ref>[http://example.org/harbour The pier] at [[Harbour]]</ref>",
    "[http://example.org/harbour The harbour's site]",
    "\n* [http://example.org/pier Pier society] – a list item\n",
    "[[File:Ref.jpg|thumb|A picture<ref>Its source</ref> in a caption]]",
]
BLANKING = ["", "LOL", "the harbour is boring", "{{db|vandalism}}"]
REAL = Path(__file__).resolve().parent / "data" / "paraphrases" / "enwiki-anarchism-excerpt.xml.xz"


def from_scratch(texts: list[str]) -> list[tuple[object, ExtractStats]]:
    """The reference: every revision parsed on its own; a failure is its error message."""
    results: list[tuple[object, ExtractStats]] = []
    for text in texts:
        stats = ExtractStats()
        try:
            results.append((extract_images(text, "Harbour", stats=stats), stats))
        except ExtractionError as error:
            results.append((str(error), stats))
    return results


def incrementally(texts: list[str], extractor: RevisionExtractor | None = None) -> list[tuple[object, ExtractStats]]:
    """Every revision through one extractor; its digest of each (from the chunks) is the text's."""
    extractor = extractor or RevisionExtractor()
    results: list[tuple[object, ExtractStats]] = []
    for text in texts:
        stats = ExtractStats()
        try:
            results.append((extractor.extract(1, text, "Harbour", stats), stats))
        except ExtractionError as error:
            results.append((str(error), stats))
        else:
            assert extractor.digest() == text_digest(text)
    return results


def apply(draw: st.DrawFn, history: list[str]) -> str:
    """One editor's (or vandal's) change to the latest revision."""
    kind = draw(st.sampled_from(["edit", "edit", "edit", "edit", "several", "revert", "blank"]))
    if kind == "revert":
        return history[draw(st.integers(0, len(history) - 1))]
    if kind == "blank":
        return draw(st.sampled_from(BLANKING))
    text = history[-1]
    for _ in range(draw(st.integers(2, 3)) if kind == "several" else 1):  # several places changed at once
        text = edit(draw, text)
    return text


def edit(draw: st.DrawFn, text: str) -> str:
    """One change at one place of ``text``."""
    kind = draw(
        st.sampled_from(
            ["words", "words", "block", "caption", "move", "remove", "vandal", "footnote", "rewrite", "inside"]
        )
    )
    place = draw(st.integers(0, len(text)))
    if kind == "words":
        cut = draw(st.integers(0, 12))
        return text[:place] + draw(st.sampled_from(WORDS)) * draw(st.integers(0, 3)) + text[place + cut :]
    if kind == "block":
        return text[:place] + draw(st.sampled_from(BLOCKS)) + text[place:]
    if kind == "footnote":  # added, or one of them removed
        footnote = draw(st.sampled_from(FOOTNOTES))
        if footnote in text and draw(st.booleans()):
            return text.replace(footnote, "", 1)
        return text[:place] + footnote + text[place:]
    if kind == "inside":  # words, marks and closers among them, just inside a comment or a footnote
        opener = draw(st.sampled_from(["<!--", "<ref>", '<ref name="smith">']))
        found = text.find(opener, place)
        if found < 0:
            found = text.find(opener)
        if found < 0:
            return text
        at = found + len(opener) + draw(st.integers(0, 6))
        return text[:at] + draw(st.sampled_from(WORDS + [">", " >"])) + text[at + draw(st.integers(0, 2)) :]
    if kind == "rewrite":  # a stretch of any markup replaced by another stretch of the page, or by a block
        cut = draw(st.integers(1, 120))
        source = draw(st.integers(0, len(text)))
        replacement = text[source : source + draw(st.integers(0, 120))] or draw(st.sampled_from(BLOCKS))
        return text[:place] + replacement + text[place + cut :]
    if kind == "caption":
        old, new = draw(st.sampled_from(CAPTIONS)), draw(st.sampled_from(CAPTIONS))
        return text.replace(old, new, 1)
    if kind in ("move", "remove"):
        block = draw(st.sampled_from(BLOCKS))
        if block not in text:
            return text
        rest = text.replace(block, "", 1)
        if kind == "remove":
            return rest
        place = min(place, len(rest))
        return rest[:place] + block + rest[place:]
    return text[:place] + draw(st.sampled_from(VANDALISM)) + text[place + draw(st.integers(0, 3)) :]


@st.composite
def histories(draw: st.DrawFn) -> list[str]:
    pieces = BLOCKS + FOOTNOTES
    history = ["".join(draw(st.lists(st.sampled_from(pieces), min_size=0, max_size=12)))]
    for _ in range(draw(st.integers(1, 40))):
        history.append(apply(draw, history))
    return history


@settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(histories(), st.sampled_from([6, 20, 60]))
def test_incremental_extraction_is_extraction_from_scratch(history: list[str], chunk: int) -> None:
    assert incrementally(history, RevisionExtractor(chunk=chunk)) == from_scratch(history)


def test_an_edit_reparses_the_chunks_it_touches() -> None:
    """Each edit of a chain, and how it is extracted: words, links and footnotes in prose and text in a footnote are
    moved, a caption parses its chunk again, two places far apart are two stretches, a revert reuses a result; a
    page blanked and a page changed throughout are parsed whole."""
    base = "".join(BLOCKS[index] + BLOCKS[0] + BLOCKS[1] for index in (2, 4, 9, 3, 5, 11, 10, 8, 6))
    footnote = FOOTNOTES[0]
    edits = [  # (the edit, what it does: the stats that grow by one)
        (lambda text: text.replace("a town", "a small town", 1), ("reparsed", "moved")),
        (lambda text: text.replace("is a town", "is a [[Town (place)|town]]", 1), ("reparsed", "moved")),
        (lambda text: text.replace("Boats in", "Ships in"), ("reparsed", "stretches")),
        (lambda text: text.replace("Ships in", "Boats in"), ("repeated",)),  # a revert
        (lambda text: text.replace("built in 1850", "built in 1851" + footnote, 1), ("reparsed", "moved")),
        (lambda text: text.replace("year=1901", "year=1902"), ("reparsed", "moved")),  # inside the footnote
        (lambda text: text.replace("small town", "city", 1).replace("Second", "The second"), ("reparsed", "moved")),
        (lambda text: "LOL", ("parsed",)),  # blanked
        (lambda text: base.replace("pier", "jetty"), ("parsed",)),  # everywhere
    ]
    extractor = RevisionExtractor(chunk=200)
    history = [base]
    incrementally(history, extractor)
    for edit, grown in edits:
        before = dataclasses.replace(extractor.stats)
        history.append(edit(history[-1]))
        incrementally(history[-1:], extractor)
        after = extractor.stats
        changed = {
            name
            for name in ("parsed", "repeated", "reparsed", "stretches", "moved")
            if getattr(after, name) > getattr(before, name)
        }
        assert set(grown) <= changed, (history[-1][:60], changed)
    assert extractor.stats.stretches == 2 and extractor.stats.moved == 5  # the two places: one moved, one parsed
    assert incrementally(history, RevisionExtractor(chunk=200)) == from_scratch(history)
    assert extractor.stats.whole == {
        "first of its page (or after one that failed)": 1,
        "changed from its first chunk to its last": 2,
    }


def test_a_page_of_twenty_thousand_revisions() -> None:
    """A long history of small edits, recaptions, vandalism and its reverts, checked revision by revision."""
    chooser = random.Random(19)
    prose = BLOCKS[0] + BLOCKS[1]
    text = "".join(prose * 3 + block for block in BLOCKS)
    history = [text]
    for _ in range(20_000):
        roll = chooser.random()
        place = chooser.randrange(len(text) + 1)
        if roll < 0.80:
            text = text[:place] + chooser.choice(WORDS[:8]) + text[place + chooser.randrange(3) :]
        elif roll < 0.85:  # vandalism, reverted at once
            history.append(text[:place] + chooser.choice(VANDALISM) + text[place:])
        elif roll < 0.90:
            text = history[-chooser.randrange(1, min(len(history), 4) + 1)]
        else:
            old, new = chooser.sample(CAPTIONS, 2)
            text = text.replace(old, new, 1)
        if len(text) > 12_000:
            text = history[0]
        history.append(text)
    extractor = RevisionExtractor(chunk=300)
    assert incrementally(history, extractor) == from_scratch(history)
    assert extractor.stats.reparsed > len(history) // 2  # not parsed from scratch


def test_where_an_edit_is_found_among_the_chunks() -> None:
    """The chunks in place at either end stay, those found unchanged between split the edit: the stretches and the
    chunks kept make the new text, in order, whatever the edit (several places, insertions at a cut, deletions)."""
    chooser = random.Random(7)
    for _ in range(400):
        text = "".join(chooser.choice(BLOCKS[:2] + BLOCKS[9:11]) for _ in range(chooser.randrange(1, 60)))
        references, scan = scan_and_extract(text)
        chunks, offsets = _chunked(text, scan, references, ExtractStats(), chooser.choice([10, 40, 200]))
        new = text
        for _ in range(chooser.randrange(1, 4)):
            place = chooser.randrange(len(new) + 1)
            new = new[:place] + chooser.choice(["", "x", BLOCKS[1]]) + new[place + chooser.randrange(0, 90) :]
        if new == text:
            continue
        zones, _ = _zones(chunks, offsets, text, new)
        if zones is None:
            continue
        rebuilt, done, kept = [], 0, 0
        for first, last, begin, end in zones:
            assert done <= first <= last and kept <= begin <= end
            rebuilt += [chunk.text for chunk in chunks[done:first]] + [new[begin:end]]
            assert "".join(rebuilt) == new[:end]
            done, kept = last, end
        rebuilt += [chunk.text for chunk in chunks[done:]]
        assert "".join(rebuilt) == new


def test_extracting_the_chunks_alone_is_extracting_the_page() -> None:
    """Each chunk extracted alone gives the page's references (moved by where the chunk starts) and counts, and
    leaves unpaired and unclosed what the chunk says: the cuts lie where the extractor's reading falls apart."""
    chooser = random.Random(3)
    pieces = [*BLOCKS, *FOOTNOTES, "{{open", "[[dangling", "[[File:Open", "]]", "}}", "]]]", "[", "<", ">", "<br>"]
    pieces += ["<!-- x -->", "<ref>unclosed", "</ref>", "<nowiki>[[x]]</nowiki>", "{{a|{{b}}}}", " text ", "\n", "-"]
    for _ in range(300):
        text = "".join(chooser.choice(pieces) for _ in range(chooser.randrange(1, 40)))
        if chooser.random() < 0.1:
            text += "<!-- never closed"
        page = ExtractStats()
        try:
            references, scan = scan_and_extract(text, stats=page)
        except ExtractionError:
            continue
        chunks, offsets = _chunked(text, scan, references, page, chooser.choice([3, 10, 30]))
        assert "".join(chunk.text for chunk in chunks) == text
        found, counts = [], ExtractStats()
        for chunk, start in zip(chunks, offsets, strict=False):
            alone = ExtractStats()
            pieces_references, piece_scan = scan_and_extract(chunk.text, stats=alone)
            found += [
                (reference.file, reference.caption, reference.position + start) for reference in pieces_references
            ]
            counts.add(alone)
            assert chunk.counts is None or chunk.counts == alone
            unpaired = {piece_scan.tokens.text[at : at + 2] for at in piece_scan.tokens.unmatched}
            assert chunk.openers == ("[[" in unpaired) + 2 * ("{{" in unpaired), text
            assert chunk.closers == ("]]" in unpaired) + 2 * ("}}" in unpaired), text
            assert chunk.unclosed == {name for _, name in piece_scan.unclosed}, text
        assert found == [(reference.file, reference.caption, reference.position) for reference in references], text
        assert counts == page, text


def test_an_edit_that_breaks_a_comment_end_is_parsed() -> None:
    """``-->`` lies outside every tag when the comment holds a ``>``: an edit next to a ``-`` is parsed anyway."""
    before = "Intro. <!-- a > b --> [[File:A.jpg|thumb|A caption]] end."
    history = [before, before.replace("-->", "-x->"), before.replace("-->", "--x>")]
    assert incrementally(history) == from_scratch(history)
    assert from_scratch(history)[1][0] == []


def test_a_history_dump_is_extracted_as_from_scratch(write_dump, tmp_path: Path) -> None:
    """The extraction task reads a history incrementally; rows and counts are those of every revision parsed alone."""
    texts = [BLOCKS[0] + BLOCKS[2] + BLOCKS[4], BLOCKS[0] + "More words. " + BLOCKS[2] + BLOCKS[4]]
    texts += [texts[1].replace("Boats in", "Ships in"), texts[0], texts[0] + "[[File:Broken.jpg|thumb|open"]
    dump = write_dump([page_xml("Harbour", texts, 1), page_xml("Pier", texts[::-1], 2)], name="history.xml")
    task = ExtractTask(str(dump), None, ("File", "Image"), (0,), str(tmp_path / "shard.parquet"))
    result = ExtractResult(ReadStats(), ExtractStats())
    rows = list(iter_task_references(task, result))
    expected_stats = ExtractStats()
    expected = []
    for page in DumpReader(dump):
        for reference in extract_images(page.text, page.title, ("File", "Image"), expected_stats):
            expected.append((page.title, page.revision_id, reference.file, reference.position, reference.caption))
    assert [(r["page"], r["revision_id"], r["image"], r["position"], r["caption"]) for r in rows] == expected
    assert result.extract == expected_stats
    assert len(rows) == 20 and expected_stats.unclosed == 2


def test_a_closer_inside_a_comment_closes_a_footnote_left_open_before() -> None:
    """A ``<ref>`` that never closes searches on for its closer through comments too: a closer written inside a later
    comment, whole or completed by the edit, closes it, and the page is extracted as from scratch."""
    before = "A <ref>note, and then [[File:A.jpg|thumb|The first]] text. " * 3 + "<!-- a </ref  comment -->"
    before += " and [[File:B.jpg|thumb|The second]] end."
    history = [before, before.replace("a </ref  comment", "a </ref> comment"), before.replace("comment", "</ref>")]
    for chunk in (8, 30, 1500):
        assert incrementally(history, RevisionExtractor(chunk=chunk)) == from_scratch(history)
    assert from_scratch(history)[0][0] != from_scratch(history)[1][0]


def test_a_link_whose_closer_is_removed_is_parsed_with_the_page() -> None:
    """Without its closer the link pairs with a stray ``]]`` further on, in another chunk: the page is parsed whole."""
    before = "A [[File:A.jpg|thumb|The caption]] and then a long stretch of words ]] the end."
    history = [before, before.replace("caption]]", "caption", 1)]
    extractor = RevisionExtractor(chunk=10)
    assert incrementally(history, extractor) == from_scratch(history)
    assert from_scratch(history)[1][0][0].caption == "The caption and then a long stretch of words"
    assert extractor.stats.whole["an opener of a closer left unpaired after it"] == 1


def test_words_replaced_next_to_markup_are_extracted_as_parsing_would_give() -> None:
    """Text replaced by text beside a closer, an opener, the name of an opener that never closes, a ``-`` or a ``!``:
    every revision as from scratch, whatever the neighbours and wherever the chunks are cut."""
    chooser = random.Random(23)
    marks = [*BLOCKS, "{{Infobox", "[[File:Open", "<!-", "<!--", "-->", "<ref>", "</ref>", "<br>", "]", "[", "!"]
    words = ["boats", "x", "café", "Harbour", "of the", "1850", "a-b", "!", "-", " "]
    for _ in range(300):
        text = "".join(chooser.choice([*marks, *words]) for _ in range(chooser.randrange(2, 14)))
        history = [text]
        for _ in range(12):
            place = chooser.randrange(len(text) + 1)
            cut = chooser.randrange(1, 4)
            text = text[:place] + chooser.choice(words) + text[place + cut :]
            history.append(text)
        extractor = RevisionExtractor(chunk=chooser.choice([4, 16, 64]))
        assert incrementally(history, extractor) == from_scratch(history), history


def test_real_revisions_are_extracted_as_from_scratch(tmp_path: Path) -> None:
    """60 consecutive revisions of the Anarchism article (2007): footnotes and links added, several places changed in
    one edit, a blanking and its revert; each is extracted as from scratch, and most by their chunks alone."""
    dump = tmp_path / "enwiki-anarchism-excerpt.xml"
    dump.write_bytes(lzma.decompress(REAL.read_bytes()))
    texts = [page.text for page in DumpReader(dump)]
    assert len(texts) == 60 and min(map(len, texts)) < 100 < 80_000 < max(map(len, texts))
    extractor = RevisionExtractor()
    assert incrementally(texts, extractor) == from_scratch(texts)
    stats = extractor.stats
    assert stats.parsed <= 4 and stats.repeated >= 10 and stats.reparsed >= 45
    assert stats.characters < sum(map(len, texts)) // 10
