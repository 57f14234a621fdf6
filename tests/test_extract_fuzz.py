"""Extraction on generated wikitext: no exception, and only well-formed caption markup handed on.

The pages are strings of markup pieces, so every kind of broken and nested markup
turns up. The examples are derandomized and no example database is kept, so every
run (and CI) tries the same pages.

What reaches a dataset row is the cleaner's rendering of what extraction hands it.
Extraction's part is to hand on caption and alt texts whose brackets pair up and
that have no pipe outside brackets (so no image option such as ``|thumb`` leaks into
a caption); the cleaned captions that come out hold no leftover markup (``[[``,
``]]``, ``{{``, ``}}``, ``<ref``, ``|thumb``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

import builder.extract.wikitext
from builder.extract.cleaning import Rendering
from builder.extract.inline import InlineTable
from builder.extract.wikitext import ExtractStats, extract_images

PIECES = [
    "[[", "]]", "{{", "}}", "|", "File:", "thumb", "alt=", "<gallery>", "</gallery>", "<ref>", "</ref>",
    "<!--", "-->", "<nowiki>", "'''", "=", "image1=", "caption1=", "image=", "caption=", "multiple image",
    "A.jpg", "b", "The bridge at dusk", " ", "\n",
]  # fmt: skip
# Beginnings of image markup, so that generated pages hold images often enough.
STARTS = [
    "[[File:A.jpg|", "[[File:A.jpg|thumb|", "[[image:b.png|alt=", "{{multiple image|image1=A.jpg|caption1=",
    "{{Infobox|image=B.jpg|alt=", "<gallery>\nA.jpg|", "\nb.png|thumb|",
]  # fmt: skip
LEFTOVER_MARKUP = ("[[", "]]", "{{", "}}", "<ref", "|thumb")
EXAMPLES = 1500
RUN = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None)

pages = st.lists(st.sampled_from(PIECES) | st.sampled_from(STARTS), max_size=40).map("".join)


@contextlib.contextmanager
def handed_to_cleaner() -> Iterator[list[str]]:
    """Record every text extraction passes to the real cleaner."""
    texts: list[str] = []
    cleaner = builder.extract.wikitext.render_caption

    def recording(wikitext: str, table: InlineTable | None = None) -> Rendering:
        texts.append(wikitext)
        return cleaner(wikitext, table)

    builder.extract.wikitext.render_caption = recording
    try:
        yield texts
    finally:
        builder.extract.wikitext.render_caption = cleaner


def well_formed(text: str) -> bool:
    """Each ``[[``/``{{`` closed by its own kind, innermost first, and no pipe outside them."""
    stack: list[str] = []
    for token in re.findall(r"\[\[|\]\]|\{\{|\}\}|\|", text):
        if token in ("[[", "{{"):
            stack.append(token)
        elif token == "|":
            if not stack:
                return False
        elif not stack or stack.pop() != {"]]": "[[", "}}": "{{"}[token]:
            return False
    return not stack


@RUN
@given(page=pages)
def test_extraction_hands_on_well_formed_caption_markup(page: str) -> None:
    with handed_to_cleaner() as texts:
        extract_images(page, "Fuzz", stats=ExtractStats())
    for text in texts:
        assert well_formed(text), (page, text)


@RUN
@given(page=pages)
def test_references_are_sound(page: str) -> None:
    stats = ExtractStats()
    references = extract_images(page, "Fuzz", stats=stats)
    assert stats.references == len(references)
    assert [r.position for r in references] == sorted(r.position for r in references)
    for reference in references:
        assert reference.file.startswith("File:") and not set(reference.file) & set("[]{}|<>\n"), page
        assert 0 <= reference.position < len(page)
        assert reference.source in ("link", "template", "gallery")
        assert (reference.source == "template") == bool(reference.template), page
        for text in (reference.caption, reference.alt):
            assert text == text.strip() and "\n" not in text, (page, text)
            if "<nowiki>" not in page:  # <nowiki> content is kept as written, brackets and all, by design
                assert [markup for markup in LEFTOVER_MARKUP if markup in text] == [], (page, text)
