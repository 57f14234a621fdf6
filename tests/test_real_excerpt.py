"""The real English Wikipedia excerpt that ships in the gensim wheel: counts and crash-freedom."""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path

import gensim
import mwparserfromhell
import pytest

from builder.config import GOLD, SILVER
from builder.engines.local import build
from builder.extract.wikitext import ExtractStats, extract_images, normalize_title
from builder.sources.xml import DumpReader

EXCERPT = (
    Path(gensim.__file__).parent
    / "test"
    / "test_data"
    / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)


@pytest.fixture(scope="module")
def pages() -> list:
    reader = DumpReader(EXCERPT)
    pages = list(reader)
    assert (reader.stats.pages, reader.stats.skipped_redirect, reader.stats.skipped_namespace) == (206, 99, 1)
    assert reader.stats.invalid_utf8_bytes == 0
    return pages


def test_reference_counts_by_source(pages: list) -> None:
    stats = ExtractStats()
    sources = collections.Counter(
        r.source for page in pages for r in extract_images(page.text, page.title, stats=stats)
    )
    assert len(pages) == 106
    assert sources == {"link": 1045, "template": 62, "gallery": 97}
    assert (stats.references, stats.unclosed, stats.unparsed) == (1204, 0, 0)


def by_title(pages: list, title: str) -> list[tuple[str, str, str]]:
    page = next(page for page in pages if page.title == title)
    return [(r.file, r.template, r.caption) for r in extract_images(page.text, title) if r.source == "template"]


def test_template_references_checked_by_hand(pages: list) -> None:
    # {{multiple image}} with numbered keys; image3 is commented out, so its caption3 has no image.
    assert by_title(pages, "Apollo 11") == [
        ("File:Apollo 11 first step.jpg", "Infobox spaceflight", ""),  # its caption key is image_caption
        (
            "File:Apollo 11 Launch2.jpg",
            "multiple image",
            "Saturn V carrying Apollo 11 rises past the launch tower camera",
        ),
        (
            "File:Earth from Apollo 11 after translunar injection.jpg",
            "multiple image",
            "Earth seen from Apollo 11 just after leaving Earth orbit (translunar injection)",
        ),
        (
            "File:NASA Apollo 11 command module.jpg",
            "multiple image",
            "Command Module at the National Air and Space Museum",
        ),
        (
            "File:Apollo11-LRO-March2012.jpg",
            "multiple image",
            "Lunar Module landing site photographed by the LRO in 2012",
        ),
    ]
    assert by_title(pages, "Animation") == [
        (
            "File:Animexample3edit.png",
            "multiple image",
            "The bouncing ball animation (below) consists of these six frames.",
        ),
        ("File:Animexample.gif", "multiple image", "This animation moves at 10 frames per second."),
    ]
    # A commented-out {{Infobox publication|image=…}} stays out (the authors' scanner would read it).
    assert by_title(pages, "Animalia (book)") == [("File:Animalia (book cover).jpg", "Infobox book", "")]
    # Infobox image given as a whole [[File:…|220px]]: the infobox's caption is the caption.
    assert by_title(pages, "Ampere")[0][:2] == ("File:Amperemeter hg.jpg", "Infobox Unit")
    assert by_title(pages, "Ampere")[0][2].startswith("Demonstration model of a moving iron ammeter.")
    assert by_title(pages, "Arthur Schopenhauer")[1][:2] == (
        "File:DAN-28a-Danzig-500MIL Mark (1923).jpg",
        "Css Image Crop",
    )


def test_links_agree_with_a_full_mwparserfromhell_parse(pages: list) -> None:
    """The pre-scan must find exactly the file links that a full parse of every page finds."""
    ours: collections.Counter = collections.Counter()
    from_template: collections.Counter = collections.Counter()
    full: collections.Counter = collections.Counter()
    for page in pages:
        for reference in extract_images(page.text, page.title):
            counter = ours if reference.source == "link" else from_template
            counter[(page.title, reference.file)] += 1
        for link in mwparserfromhell.parse(page.text).filter_wikilinks():
            title = normalize_title(str(link.title))
            if title is not None:
                full[(page.title, title)] += 1
    assert sum(ours.values()) == 1045
    # mwparserfromhell gives up on this link: its caption has unbalanced bold/italic quotes.
    # MediaWiki still shows the image, and so do we.
    assert ours - full == {("Ambiguity", "File:Structural analysis of an ambiguous spanish sentence.svg"): 1}
    # Four templates (Asia, Ampere, American Revolutionary War, Anthropology) give a whole [[File:…]]:
    # those links are template references.
    only_full = full - ours
    assert sorted(title for title, _ in only_full) == ["American Revolutionary War", "Ampere", "Anthropology", "Asia"]
    assert all(from_template[key] for key in only_full)


def test_build_runs_end_to_end(tmp_path: Path, perceptron_available: None) -> None:
    galleries = dataclasses.replace(SILVER, name="silver-galleries", sources=("gallery", "link", "template"))
    report = build([EXCERPT], [GOLD, SILVER, galleries], tmp_path / "out", tagger="perceptron", show_progress=False)
    funnel = report.funnels["silver"].funnel.rows
    assert (funnel[0].images, funnel[0].references) == (1101, 1045 + 62)  # the paper's sources: no galleries
    assert report.rows["silver"] == funnel[-1].pairs
    with_galleries = report.funnels["silver-galleries"].funnel.rows
    assert (with_galleries[0].images, with_galleries[0].references) == (1196, 1045 + 62 + 97)
    assert (tmp_path / "out" / "README.md").is_file()
