"""The Déjà test excerpts parse, and the counts tests/data/deja/README.md states hold for them.

Plain Python on purpose (no toolkit code): these counts are the independent reference that the
Déjà configs' tests pin against. A caption is compared lower-cased with its whitespace collapsed.
"""

from __future__ import annotations

import bz2
import collections
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

DEJA = Path(__file__).parent / "data" / "deja"
MW = "{http://www.mediawiki.org/xml/export-0.10/}"
WIKI_LINK = re.compile(
    r"\[\[(?:Fichier|Fișier):([^|\]]+)\|(?:vignette|miniatura)(?:\|alt=[^|\]]*)?(?:\|([^|\]]*))?\]\]"
)


def key(caption: str) -> str:
    return " ".join(caption.lower().split())


def coco_edges() -> list[tuple[str, object]]:
    data = json.loads((DEJA / "coco" / "captions_val2017.json").read_text(encoding="utf-8"))
    assert list(data) == ["info", "licenses", "images", "type", "annotations"]
    assert data["type"] == "captions"
    ids = [image["id"] for image in data["images"]]
    assert len(ids) == len(set(ids))
    per_image = collections.Counter(a["image_id"] for a in data["annotations"])
    assert set(per_image) == set(ids)  # every image keeps its captions, every caption its image
    assert min(per_image.values()) >= 5
    return [(a["caption"], a["image_id"]) for a in data["annotations"]]


def flickr8k_edges() -> list[tuple[str, object]]:
    edges = []
    for line in (DEJA / "flickr8k" / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines():
        name, caption = line.split("\t")
        image, number = name.rsplit("#", 1)
        assert number in "01234" and caption.strip()
        edges.append((caption, image))
    return edges


def gcc_edges() -> list[tuple[str, object]]:
    edges = []
    for line in (DEJA / "conceptual_captions" / "Validation_GCC-1.1.0-Validation.tsv").read_text("utf-8").splitlines():
        caption, url = line.split("\t")
        assert url.startswith(("http://", "https://")) and caption.strip()
        edges.append((caption, url))
    return edges


def wiki_uses(language: str) -> list[tuple[str, str, str]]:
    """(caption, file, page title) of every captioned image link of the excerpt."""
    path = DEJA / "wikipedia" / f"{language}wiki-deja-pages-articles.xml.bz2"
    root = ET.fromstring(bz2.decompress(path.read_bytes()))
    uses = []
    for page in root.iter(f"{MW}page"):
        title = page.findtext(f"{MW}title")
        for line in page.findtext(f"{MW}revision/{MW}text").splitlines():
            link = WIKI_LINK.fullmatch(line)
            assert link, line
            if link.group(2):
                uses.append((link.group(2), link.group(1), title))
    return uses


EDGES = {
    "coco/captions_val2017.json": coco_edges,
    "flickr8k/Flickr8k.token.txt": flickr8k_edges,
    "conceptual_captions/Validation_GCC-1.1.0-Validation.tsv": gcc_edges,
    "wikipedia/frwiki-deja-pages-articles.xml.bz2": lambda: [(c, f) for c, f, _ in wiki_uses("fr")],
    "wikipedia/rowiki-deja-pages-articles.xml.bz2": lambda: [(c, f) for c, f, _ in wiki_uses("ro")],
}


def shared(edges: list[tuple[str, object]]) -> dict[str, set[object]]:
    images: dict[str, set[object]] = collections.defaultdict(set)
    for caption, image in edges:
        images[key(caption)].add(image)
    return {k: v for k, v in images.items() if len(v) >= 2}


def readme_counts() -> dict[str, list[int]]:
    """The README's counts table: file, bytes, captions, distinct captions, images, shared, their images, edges."""
    rows = {}
    for line in (DEJA / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0].startswith("`") and cells[1].replace(",", "").isdigit():
            rows[cells[0].strip("`")] = [int(cell.replace(",", "")) for cell in cells[1:]]
    return rows


def test_readme_counts_every_file():
    assert sorted(readme_counts()) == sorted(EDGES)


@pytest.mark.parametrize("name", sorted(EDGES))
def test_readme_counts_hold(name):
    edges = EDGES[name]()
    many = shared(edges)
    assert readme_counts()[name] == [
        (DEJA / name).stat().st_size,
        len(edges),
        len({key(c) for c, _ in edges}),
        len({image for _, image in edges}),
        len(many),
        len(set().union(*many.values())),
        sum(len(images) for images in many.values()),
    ]


def test_the_issue_s_captions_repeat_across_images():
    coco = shared(coco_edges())
    assert len(coco["a large long train on a steel track."]) == 11
    assert len(coco["a man riding a wave on top of a surfboard."]) == 8
    assert len(coco["i am unable to see an image above."]) == 5  # crowd-worker noise, first person
    assert len(shared(flickr8k_edges())["two dogs playing in the snow ."]) == 7
    assert len(shared(gcc_edges())["actor arrives at the premiere"]) == 9  # a hypernymised caption


def test_wikipedia_pages_share_captions_for_different_maps():
    pages: dict[str, set[str]] = collections.defaultdict(set)
    files: dict[str, set[str]] = collections.defaultdict(set)
    for caption, file, title in wiki_uses("ro"):
        pages[key(caption)].add(title)
        files[key(caption)].add(file)
    located = "localizare în cadrul județului"
    assert pages[located] == {
        "Comuna Apold, Mureș",
        "Comuna Dobra, Hunedoara",
        "Comuna Săuca, Satu Mare",
        "Comuna Zam, Hunedoara",
    }
    assert len(files[located]) == 4
