"""The real English Wikipedia excerpt that ships in the gensim wheel: counts and crash-freedom."""

from __future__ import annotations

import collections
from pathlib import Path

import gensim
import mwparserfromhell
import pytest

from builder.config import GOLD, SILVER
from builder.dump import DumpReader
from builder.local import build
from builder.wikitext import ExtractStats, extract_images, normalize_title

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
    assert sources == {"link": 1046, "gallery": 97, "infobox": 28}
    assert (stats.references, stats.unclosed, stats.unparsed) == (1171, 0, 0)


def test_links_agree_with_a_full_mwparserfromhell_parse(pages: list) -> None:
    """The pre-scan must find exactly the file links that a full parse of every page finds."""
    ours: collections.Counter = collections.Counter()
    from_infobox: collections.Counter = collections.Counter()
    full: collections.Counter = collections.Counter()
    for page in pages:
        for reference in extract_images(page.text, page.title):
            counter = ours if reference.source == "link" else from_infobox
            counter[(page.title, reference.file)] += 1
        for link in mwparserfromhell.parse(page.text).filter_wikilinks():
            title = normalize_title(str(link.title))
            if title is not None:
                full[(page.title, title)] += 1
    assert sum(ours.values()) == 1046
    # mwparserfromhell gives up on this link: its caption has unbalanced bold/italic quotes.
    # MediaWiki still shows the image, and so do we.
    assert ours - full == {("Ambiguity", "File:Structural analysis of an ambiguous spanish sentence.svg"): 1}
    only_full = full - ours  # three infoboxes (Asia, Ampere, American Revolutionary War) give a whole [[File:…]]
    assert sum(only_full.values()) == 3
    assert all(from_infobox[key] for key in only_full)


def test_build_runs_end_to_end(tmp_path: Path, perceptron_available: None) -> None:
    report = build([EXCERPT], [GOLD, SILVER], tmp_path / "out", tagger="perceptron", show_progress=False)
    funnel = report.funnels["silver"].funnel.rows
    assert (funnel[0].images, funnel[0].references) == (1163, 1171)
    assert report.rows["silver"] == funnel[-1].pairs
    assert (tmp_path / "out" / "README.md").is_file()
