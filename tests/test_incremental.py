"""Incremental extraction across revisions gives what extraction from scratch gives, revision by revision.

The reference is :func:`builder.extract.wikitext.extract_images` on every revision; the
generated histories are made of what editors and vandals do: edit words anywhere
(inside captions and markup too), rewrite a caption, move an image, add and remove
one, revert to an earlier revision, and break the markup (unclosed brackets, stray
comment and tag openers, single brackets). Derandomized and without an example
database, so the run is the same everywhere and writes nothing into the repository.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from builder.data.make_sample import page_xml
from builder.extract.incremental import RevisionExtractor, _edit, markup_spans
from builder.extract.tasks import ExtractResult, ExtractTask, iter_task_references
from builder.extract.wikitext import ExtractionError, ExtractStats, extract_images
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
    extractor = extractor or RevisionExtractor()
    results: list[tuple[object, ExtractStats]] = []
    for text in texts:
        stats = ExtractStats()
        try:
            results.append((extractor.extract(1, text, "Harbour", stats), stats))
        except ExtractionError as error:
            results.append((str(error), stats))
    return results


def apply(draw: st.DrawFn, history: list[str]) -> str:
    """One editor's (or vandal's) change to the latest revision."""
    text = history[-1]
    kind = draw(st.sampled_from(["words", "words", "words", "block", "caption", "move", "remove", "revert", "vandal"]))
    place = draw(st.integers(0, len(text)))
    if kind == "words":
        cut = draw(st.integers(0, 12))
        return text[:place] + draw(st.sampled_from(WORDS)) * draw(st.integers(0, 3)) + text[place + cut :]
    if kind == "block":
        return text[:place] + draw(st.sampled_from(BLOCKS)) + text[place:]
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
    if kind == "revert":
        return history[draw(st.integers(0, len(history) - 1))]
    return text[:place] + draw(st.sampled_from(VANDALISM)) + text[place + draw(st.integers(0, 3)) :]


@st.composite
def histories(draw: st.DrawFn) -> list[str]:
    history = ["".join(draw(st.lists(st.sampled_from(BLOCKS), min_size=0, max_size=8)))]
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
@given(histories())
def test_incremental_extraction_is_extraction_from_scratch(history: list[str]) -> None:
    assert incrementally(history) == from_scratch(history)


def test_the_shortcuts_are_taken() -> None:
    """Word edits away from markup shift offsets, a caption's link is parsed alone, reverts reuse a result."""
    base = BLOCKS[0] + BLOCKS[2] + BLOCKS[1] + BLOCKS[4]
    history = [
        base,
        base.replace("a town", "a small town"),  # words: shifted
        base.replace("a town", "a small town").replace("Boats in", "Ships in"),  # a caption: its link
        base,  # a revert: repeated
        base.replace("built in 1850", "built in 1851"),  # words: shifted
        base.replace("built in 1850", "built in [[1851]] by {{lang|fr|Lyon}}"),  # an inert link and template: shifted
        base.replace("built in 1850", "built in [[Image:Pier.jpg]]"),  # an image: parsed
    ]
    extractor = RevisionExtractor()
    assert incrementally(history, extractor) == from_scratch(history)
    stats = extractor.stats
    assert (stats.parsed, stats.shifted, stats.respanned, stats.repeated) == (2, 3, 1, 1)


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
    extractor = RevisionExtractor()
    assert incrementally(history, extractor) == from_scratch(history)
    assert extractor.stats.shifted + extractor.stats.respanned > len(history) // 4  # not parsed from scratch


@pytest.mark.parametrize("chunk", [16384, 64])
def test_where_two_revisions_differ(chunk: int, monkeypatch) -> None:
    """Whatever the chunk, the edit found is the one made (small chunks cross many chunk boundaries)."""
    import builder.extract.incremental

    monkeypatch.setattr(builder.extract.incremental, "COMPARE_CHUNK", chunk)
    chooser = random.Random(7)
    for _ in range(2000):
        old = "".join(chooser.choice("ab\n") for _ in range(chooser.randrange(0, 9000)))
        start = chooser.randrange(len(old) + 1)
        end = chooser.randrange(start, len(old) + 1)
        inserted = chooser.randrange(4) if chooser.random() < 0.8 else chooser.randrange(200, 900)  # long ones too
        new = old[:start] + "".join(chooser.choice("abc") for _ in range(inserted)) + old[end:]
        first, old_end, new_end = _edit(old, new)
        assert old[:first] == new[:first] and old[old_end:] == new[new_end:]
        assert old[:first] + new[first:new_end] + old[old_end:] == new
        assert first <= min(old_end, new_end)
        if old != new:  # nothing longer is common
            assert old_end - first >= 0 and (first == len(old) or first == len(new) or old[first] != new[first])


def test_markup_spans_cover_the_markup() -> None:
    text = "Intro [[File:A.jpg|thumb|Cap]] mid {{Infobox|image=B.jpg}} <ref>x</ref> end {{open|and [[B]] after"
    spans, tops, unpaired = markup_spans(text)
    # an opener that never pairs is markup with its name only: the text after it is read as before it
    assert spans == [(6, 30), (35, 58), (59, 64), (65, 71), (76, 82), (87, 92)]
    assert tops == {6: 30, 35: 58, 87: 92}
    assert unpaired == {"{{": 76}


def test_markup_found_from_a_parse_is_the_markup_found_afresh() -> None:
    """After a revision is parsed, its markup is found from the parse's own tokens: the same spans as a fresh scan."""
    from builder.extract.wikitext import scan_and_extract

    chooser = random.Random(3)
    pieces = [
        "[[File:A.jpg|thumb|Cap [[B]]]]",
        "{{Infobox|image=C.jpg|caption=D}}",
        "<!-- x [[File:E.jpg]] -->",
        "<gallery>\nF.jpg|G\n</gallery>",
        "<ref>{{cite|x}}</ref>",
        "{{open",
        "[[dangling",
        "]]",
        "}}",
        "<nowiki>[[x]]</nowiki>",
        " text ",
        "\n",
        "<br>",
        "-->",
        "{{a|{{b}}}}",
    ]
    for _ in range(300):
        text = "".join(chooser.choice(pieces) for _ in range(chooser.randrange(1, 25)))
        _, tokens, galleries = scan_and_extract(text)
        assert markup_spans(text, (tokens, galleries)) == markup_spans(text), text


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


def test_a_span_whose_closer_is_removed_is_parsed_with_the_page() -> None:
    """Without its closer the link pairs with a stray ``]]`` further on: the span alone cannot tell."""
    before = "A [[File:A.jpg|thumb|The caption]] and then ]] the end."
    history = [before, before.replace("caption]]", "caption", 1)]
    extractor = RevisionExtractor()
    assert incrementally(history, extractor) == from_scratch(history)
    assert from_scratch(history)[1][0][0].caption == "The caption and then"
    assert extractor.stats.respanned == 0


def test_words_replaced_next_to_markup_shift_as_parsing_would_give() -> None:
    """Text replaced by text beside a closer or an opener is shifted; beside the name of an opener that never
    closes, a ``-`` or a ``!`` it is not: every revision as from scratch, whatever the neighbours."""
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
        extractor = RevisionExtractor()
        assert incrementally(history, extractor) == from_scratch(history), history
