"""The scale benchmark's dumps: seeded (the same bytes every time) and holding what they claim."""

from __future__ import annotations

from pathlib import Path

from benchmarks.synthetic_dump import write_dump
from builder.extract.wikitext import extract_images
from builder.sources.multistream import stream_offsets
from builder.sources.xml import DumpReader


def test_same_seed_same_bytes_and_every_placed_reference_is_found(tmp_path: Path) -> None:
    first = write_dump(tmp_path / "a", 3_000_000, seed=7, workers=1)
    second = write_dump(tmp_path / "b", 3_000_000, seed=7, workers=1)
    assert first.path.read_bytes() == second.path.read_bytes()
    assert first.index.read_bytes() == second.index.read_bytes()

    found = []
    for page in DumpReader(first.path, (0,)):
        found.extend(extract_images(page.text, page.title))
    assert len(found) == first.references > 100
    assert len({reference.file for reference in found}) == first.images
    assert {reference.source for reference in found} == {"link", "template"}
    captioned = sum(1 for reference in found if reference.caption) / len(found)
    assert 0.5 < captioned < 0.7  # the paper: about 60% of references carry a caption
    # Wikimedia's layout: 100 pages per bz2 stream, the index naming each stream's offset
    assert len(stream_offsets(first.path)) == first.pages // 100 + 2
