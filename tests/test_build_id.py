"""Every build has an id, in its card and in each funnel.json, so that a user can tell which build a folder holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builder.common import OutputError
from builder.config import GOLD, SILVER
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build
from builder.publish.layout import card_build, card_manifest, read_built

POSTCARD = "Easter Bunny Postcard 1907.jpg"
CAPTIONS = [
    "The 1907 postcard shows the Easter Bunny with a basket.",
    "A rabbit is depicted on an Easter postcard from 1907.",
    "An old postcard shows a hare that carries a basket of eggs.",
]


def captions_dump(path: Path, captions: list[str]) -> Path:
    pages = [page_xml(f"Page {n}", f"[[File:{POSTCARD}|thumb|{caption}]]", n + 1) for n, caption in enumerate(captions)]
    path.write_text(dump_xml(pages), encoding="utf-8")
    return path


def funnel_build(folder: Path, config: str) -> str:
    return json.loads((folder / config / "funnel.json").read_text(encoding="utf-8"))["wikipedia_ipc"]["build"]


def test_the_card_and_each_funnel_name_the_build(tmp_path: Path, perceptron_available: None) -> None:
    """Same dumps, same id (the id hashes what was built); other dumps, another id; a kept config keeps its own."""
    first = captions_dump(tmp_path / "enwiki-20240101-pages-articles.xml", CAPTIONS)
    changed = [*CAPTIONS[:2], "A vintage card from 1907 shows a bunny that carries a basket."]
    second = captions_dump(tmp_path / "enwiki-20240201-pages-articles.xml", changed)
    out, again = tmp_path / "out", tmp_path / "again"
    build([first], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    build([first], [GOLD, SILVER], again, tagger="perceptron", show_progress=False)
    built = card_build(out)
    assert re.fullmatch(r"[0-9a-f]{16}", built or "")
    assert card_build(out, "gold") == card_build(out, "silver") == funnel_build(out, "gold") == built
    assert card_build(again) == built  # the same build, twice: the same id
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"This card was written by build `{built}`" in card and card.count(f"- Build: `{built}`") == 2

    build([second], [SILVER], out, tagger="perceptron", show_progress=False)  # gold is kept from the first build
    assert card_build(out) not in (None, built)
    assert card_build(out, "silver") == funnel_build(out, "silver") == card_build(out)
    assert card_build(out, "gold") == funnel_build(out, "gold") == built
    assert {name: config.record["wikipedia_ipc"]["build"] for name, config in read_built(out).items()} == {
        "gold": built,
        "silver": card_build(out),
    }


def test_a_funnel_of_another_build_than_the_card_names_is_refused(tmp_path: Path, perceptron_available: None) -> None:
    """A funnel.json of the same files but another build (a publish cut between the funnels and the card) is an
    unfinished publish to a reader, even where the parquet files are equal."""
    dump = captions_dump(tmp_path / "enwiki-20240101-pages-articles.xml", CAPTIONS)
    out, other = tmp_path / "out", tmp_path / "other"
    build([dump], [GOLD], out, tagger="perceptron", show_progress=False)
    build([dump], [GOLD], other, tagger="perceptron", show_progress=False, workers=2)
    record = json.loads((other / "gold" / "funnel.json").read_text(encoding="utf-8"))
    record["wikipedia_ipc"]["build"] = "0123456789abcdef"
    (out / "gold" / "funnel.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(OutputError, match=r"gold/funnel.json: of build 0123456789abcdef, but the card names build"):
        read_built(out)


def test_a_folder_built_before_ids_still_reads(tmp_path: Path, perceptron_available: None) -> None:
    """A card and funnel.json without ids (an earlier version's build) read as before."""
    dump = captions_dump(tmp_path / "enwiki-20240101-pages-articles.xml", CAPTIONS)
    out = tmp_path / "out"
    build([dump], [GOLD], out, tagger="perceptron", show_progress=False)
    funnel = out / "gold" / "funnel.json"
    record = json.loads(funnel.read_text(encoding="utf-8"))
    del record["wikipedia_ipc"]["build"]
    funnel.write_text(json.dumps(record), encoding="utf-8")
    card = (out / "README.md").read_text(encoding="utf-8")
    (out / "README.md").write_text(re.sub(r"\n *build: [0-9a-f]{16}", "", card), encoding="utf-8")
    assert card_build(out) is None and "build" not in card_manifest(out / "README.md")["configs"]["gold"]
    assert read_built(out)["gold"].record["rows"] > 0


def test_the_versions_are_of_the_libraries_that_decide_the_rows() -> None:
    """An extra installed beside the build (stanza, the web readers) is not in its versions, nor in its id."""
    from builder.config import CAPTIONS, GOLD, WEB
    from builder.engines.core import library_versions

    perceptron = "perceptron (nltk:averaged_perceptron_tagger_eng)"
    wiki = library_versions(GOLD, perceptron, ["en"])
    assert {"python", "pyarrow", "duckdb", "nltk", "mwparserfromhell"} <= set(wiki)
    assert not {"stanza", "spacy", "fastwarc", "Pillow", "datasets"} & set(wiki)  # installed here, used by none
    assert "stanza" in library_versions(GOLD, "stanza 1.10 (de: default)", ["de"])
    assert {"fastwarc", "selectolax", "webencodings", "Pillow"} <= set(library_versions(WEB, perceptron, ["en"]))
    assert "fastwarc" not in library_versions(CAPTIONS, "none: the config has no caption rule", ["en"])
