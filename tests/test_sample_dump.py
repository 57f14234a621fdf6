"""The embedded sample dump, end to end, against counts worked out by hand from its pages.

Every number here was derived from the wikitext in ``builder/data/make_sample.py``
(see the comments), not copied from the pipeline's output.

The derivation assumes that every ``<gallery>`` line is a reference and that templates
are no source of their own. With galleries off, these numbers shift: the gallery-only
images (Hare in snow, Old Leuven map) leave step 0 (16 images, 44 references);
Saint Peter's Church keeps one reference and leaves at step 1; the Leuven town hall
keeps its infobox caption and "Leuven Town Hall" (too short at step 4), so it leaves
at step 6 and its pair is gone; the Hare gallery's "Postcard, 1907" (dropped at step 4
anyway) no longer counts in steps 0–3. A template source would add references
wherever a page's templates name an image outside the infobox keys read today.

With ``--identity redirect sha1`` and the sample's image table (galleries read), two merges:

* redirect: ``File:Dieric Bouts self portrait.jpg`` → ``File:Last Supper Bouts.jpg`` (a chain
  ``File:Bouts Last Supper detail.jpg`` → the portrait resolves there too; ``File:Leuven.jpg`` →
  the article Leuven is ignored). The painting's cluster holds the portrait's two references
  (captions A "Bouts may have painted himself…", B "The servant in the doorway…", two alt texts)
  and its own two (C "The Last Supper was painted…", "Last Supper by Dieric Bouts"): 4 captions
  and 2 alts, 6 + 1 pairs instead of 2 + 1 (portrait) and 1 (painting);
* sha1: ``Hare_in_snow.jpg`` and ``Lepus_europaeus_(Causse_Méjean).jpg`` have one SHA-1; the
  canonical image is the smaller title, ``File:Hare in snow.jpg``: the Lepus caption, the gallery
  caption and the gallery alt (5 words), 1 caption pair where both were used once.

Step 0: 18 - 2 = 16 images, 49 references, 59 texts, 114 + 4 + 1 = 119 pairs. Step 1: only the
old map, the tram map and the tram icon are used once (13, 46, 57, 119). Step 2 drops the flag
as before (12, 33, 44, 41); step 3 keeps all. Step 4 drops "Last Supper by Dieric Bouts" from a
cluster of 4 captions now (6 → 3 caption pairs) and the hare's 5-word alt (no pair): (12, 30, 40, 33).
Silver's verb rule drops the town hall's alt text only (12, 30, 39, 33); step 6 keeps the painting
(3 references, where Last Supper alone had 1) (12, 30, 39, 33); steps 7–9 take what they took
before: 3, 2 and 3 pairs, a reference and 3 texts: (12, 30, 39, 30), (12, 29, 36, 28), (12, 29, 36, 25).
Silver gains A–C and B–C (identity ``redirect``) and the hare pair (``sha1``); A–B stays a pair
of one title. Gold's sentence rule turns down B (as A–B is silver-only): gold gains A–C and the hare pair.
"""

from __future__ import annotations

import bz2
import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import wikipedia_ipc
from builder.config import GOLD, SILVER, SOURCES
from builder.data import make_sample
from builder.data.make_sample import IMAGE_TABLE
from builder.engines.local import build
from builder.extract.wikitext import ExtractStats, extract_images
from builder.sources.xml import DumpReader

SAMPLE = wikipedia_ipc.SAMPLE_DUMP
POSTCARD = "File:Easter Bunny Postcard 1907.jpg"
# The sample's pairs were worked out with its galleries, which the presets leave out unless asked.
WITH_GALLERIES = [dataclasses.replace(config, sources=SOURCES) for config in (GOLD, SILVER)]


def test_committed_sample_matches_its_source() -> None:
    assert bz2.decompress(SAMPLE.read_bytes()).decode("utf-8") == make_sample.sample_xml()


@pytest.fixture(scope="module")
def pages() -> dict[str, object]:
    reader = DumpReader(SAMPLE)
    pages = {page.title: page for page in reader}
    # 47 pages: 2 redirects, 8 in other namespaces (Talk, User, Template, File ×4 of which three are
    # redirects, Category), 37 articles.
    assert (reader.stats.pages, reader.stats.skipped_redirect, reader.stats.skipped_namespace) == (47, 2, 8)
    return pages


def refs(page) -> list[tuple[str, str, str, str]]:
    return [(r.file, r.caption, r.alt, r.source) for r in extract_images(page.text, page.title)]


def test_link_with_alt_reference_and_hidden_images(pages) -> None:
    # the commented-out Old Easter card and the [[:File:…]] link are not uses of an image
    assert refs(pages["Easter Bunny"]) == [
        (
            POSTCARD,
            "The Easter Bunny brings eggs to the children in this postcard from 1907.",
            "A hare stands on its hind legs and carries several branches.",
            "link",
        )
    ]


def test_normalization_merges_spellings(pages) -> None:
    # Image:…_…, lower-case first letter with underscores, %20 escapes
    assert refs(pages["Ēostre"])[0][0] == POSTCARD
    assert refs(pages["Easter postcard"])[0][0] == POSTCARD
    assert refs(pages["Bridges in London"])[0][0] == "File:Tower Bridge at dusk.jpg"
    assert refs(pages["Mare Island Naval Shipyard"])[0][0] == "File:USS Monterey (BM-6) at Mare Island.jpg"


def test_infoboxes_with_bare_names_links_and_numbered_keys(pages) -> None:
    assert refs(pages["Easter postcard"]) == [
        (
            POSTCARD,
            "A postcard featuring the Easter Bunny and a basket of eggs",
            "A postcard shows a hare with a basket of colored eggs.",
            "template",
        )
    ]
    assert refs(pages["Belfast Blitz"]) == [
        (
            "File:Belfast Blitz rubble 1941.jpg",
            "Troops clearing rubble after the May air raid on Belfast",
            "Soldiers with shovels stand among ruined houses.",
            "template",
        )
    ]
    leuven = refs(pages["Leuven"])
    assert leuven[:2] == [
        ("File:Leuven Town Hall.jpg", "The Gothic town hall was built between 1448 and 1469.", "", "template"),
        ("File:Saint Peter's Church Leuven.jpg", "Saint Peter's Church stands opposite the town hall.", "", "template"),
    ]
    assert leuven[2:] == [
        (
            "File:Leuven Town Hall.jpg",
            "The late Gothic town hall stands on the Grote Markt.",
            "A stone facade with many statues and towers",
            "gallery",
        ),
        (
            "File:Saint Peter's Church Leuven.jpg",
            "Saint Peter's Church is the home of the Last Supper by Dieric Bouts.",
            "",
            "gallery",
        ),
        ("File:Old Leuven map.png", "A map of the city in 1600", "", "gallery"),
    ]


def test_templates_refs_and_html_in_captions(pages) -> None:
    assert refs(pages["USS Monterey (BM-6)"])[0][1] == "USS Monterey lies at anchor off Mare Island, c. 1900."
    assert refs(pages["Mare Island Naval Shipyard"])[0][1] == (
        "The monitor USS Monterey (BM-6) was photographed at the yard in 1898."
    )
    assert refs(pages["Mount Fuji"])[0][1] == "Mount Fuji (富士山, Fuji-san) rises 3776 m above the sea."
    assert (
        refs(pages["Fujikawaguchiko"])[0][1] == "The volcano is reflected in Lake Kawaguchi on a clear winter morning."
    )
    assert refs(pages["Paris"])[0][1] == "The Pont Neuf crosses the Seine at the western tip of the Île de la Cité."


def test_nested_icon_and_unclosed_markup(pages) -> None:
    assert refs(pages["Brussels tram network"]) == [
        ("File:Brussels tram map.png", "The route, marked by icons, runs along the inner ring boulevard.", "", "link"),
        ("File:Tram icon.svg", "", "", "link"),
    ]
    stats = ExtractStats()
    hare = [(r.file, r.source) for r in extract_images(pages["Hare"].text, "Hare", stats=stats)]
    assert hare == [
        ("File:Lepus europaeus (Causse Méjean).jpg", "link"),
        (POSTCARD, "gallery"),
        ("File:Hare in snow.jpg", "gallery"),
    ]
    assert stats.unclosed == 1


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    out = tmp_path_factory.mktemp("sample") / "wikipedia_ipc"
    build([SAMPLE], WITH_GALLERIES, out, tagger="perceptron", show_progress=False)
    return out


def funnel(built: Path, config: str) -> list[tuple[int, int, int, int]]:
    rows = json.loads((built / config / "funnel.json").read_text())["funnel"]
    return [(row["images"], row["references"], row["captions"], row["pairs"]) for row in rows]


def test_funnel_steps_0_to_4(built: Path) -> None:
    expected = [
        # 18 images, 49 references on 37 articles, 59 texts; pairs: postcard 6+3, rubble 3+1, tower bridge
        # at dusk 10, flag C(13,2) = 78, portrait 1+1, town hall 3, Mount Fuji 1+1, six images with 1 pair.
        (18, 49, 59, 114),
        (13, 44, 54, 114),  # five images used once: hare, hare in snow, old map, tram map, tram icon
        (12, 31, 41, 36),  # the flag: Paris and twelve cities, 13 references
        (12, 31, 41, 36),  # every remaining reference has a caption or an alt text
        # Treebank tokens with a letter or digit: "Postcard, 1907" (2), "Last Supper by Dieric Bouts" (5),
        # "Leuven Town Hall" (3); "Saint Peter's" is three tokens, but no text is near the bound of 6
        (12, 28, 38, 30),
    ]
    assert funnel(built, "gold")[:5] == expected
    assert funnel(built, "silver")[:5] == expected


def pair_set(built: Path, config: str) -> set[tuple[str, str, frozenset[str]]]:
    rows = pq.read_table(sorted((built / config).glob("*.parquet"))).to_pylist()
    return {(r["image"][5:], r["caption_type"], frozenset((r["sentence1"], r["sentence2"]))) for r in rows}


def pair(image: str, kind: str, a: str, b: str) -> tuple[str, str, frozenset[str]]:
    return (image, kind, frozenset((a, b)))


BUNNY = "The Easter Bunny brings eggs to the children in this postcard from 1907."
RABBIT = "A rabbit is depicted on an Easter postcard from 1907."
FEATURING = "A postcard featuring the Easter Bunny and a basket of eggs"
HARE_ALT = "A hare stands on its hind legs and carries several branches."
DRAWING_ALT = "A drawing shows an Easter bunny that carries branches."
BASKET_ALT = "A postcard shows a hare with a basket of colored eggs."
DUSK = "Tower Bridge is lit up at dusk over the River Thames."
DUSK_VARIANTS = [DUSK, "Tower Bridge is lit up at dusk over the river Thames", DUSK[:-1] + " (2015)."]
COMPLETED = "The bridge was completed in 1894 and is lit every evening."

GOLD_PAIRS = {
    pair("Easter Bunny Postcard 1907.jpg", "caption", BUNNY, RABBIT),
    pair("Easter Bunny Postcard 1907.jpg", "alt", HARE_ALT, DRAWING_ALT),
    pair("Easter Bunny Postcard 1907.jpg", "alt", HARE_ALT, BASKET_ALT),
    pair("Easter Bunny Postcard 1907.jpg", "alt", DRAWING_ALT, BASKET_ALT),
    pair(
        "Leuven Town Hall.jpg",
        "caption",
        "The Gothic town hall was built between 1448 and 1469.",
        "The late Gothic town hall stands on the Grote Markt.",
    ),
    pair(
        "Saint Peter's Church Leuven.jpg",
        "caption",
        "Saint Peter's Church stands opposite the town hall.",
        "Saint Peter's Church is the home of the Last Supper by Dieric Bouts.",
    ),
    pair(
        "Mount Fuji from Lake Kawaguchi.jpg",
        "caption",
        "Mount Fuji (富士山, Fuji-san) rises 3776 m above the sea.",
        "The volcano is reflected in Lake Kawaguchi on a clear winter morning.",
    ),
    pair(
        "Mount Fuji from Lake Kawaguchi.jpg",
        "alt",
        "A snow-capped volcano is seen above a lake.",
        "A snow-capped volcano is reflected in a calm lake.",
    ),
    pair(
        "USS Monterey (BM-6) at Mare Island.jpg",
        "caption",
        "USS Monterey lies at anchor off Mare Island, c. 1900.",
        "The monitor USS Monterey (BM-6) was photographed at the yard in 1898.",
    ),
    # The four dusk captions are near-duplicates of each other (one twice, identical); each distinct
    # spelling still pairs with the different caption of Victorian engineering.
    *(pair("Tower Bridge at dusk.jpg", "caption", variant, COMPLETED) for variant in DUSK_VARIANTS),
}
TROOPS = "Troops clearing rubble after the May air raid on Belfast"
SOLDIERS = "Soldiers clearing rubble after the May air raid on Belfast"
CLEARED = "Soldiers cleared the rubble after the German air raid of May 1941."
SILVER_ONLY = {
    # fragments with a verb, and sentences that Table 4's rules turn down (a preposition before the verb)
    pair("Easter Bunny Postcard 1907.jpg", "caption", BUNNY, FEATURING),
    pair("Easter Bunny Postcard 1907.jpg", "caption", RABBIT, FEATURING),
    pair("Belfast Blitz rubble 1941.jpg", "caption", TROOPS, SOLDIERS),
    pair("Belfast Blitz rubble 1941.jpg", "caption", TROOPS, CLEARED),
    pair("Belfast Blitz rubble 1941.jpg", "caption", SOLDIERS, CLEARED),
    pair(
        "Water droplet on fabric.jpg",
        "caption",
        "Water bead on a fabric that has been made non-wetting by chemical treatment.",
        "Fluorine-containing durable water repellent makes a fabric water-resistant.",
    ),
    pair(
        "Dieric Bouts self portrait.jpg",
        "caption",
        "Bouts may have painted himself as a servant in the Last Supper.",
        "The servant in the doorway is often identified as the painter himself.",
    ),
    pair(
        "Dieric Bouts self portrait.jpg",
        "alt",
        "A man in a red hat looks out of a window.",
        "A man in a red hat stands in a doorway.",
    ),
    pair(
        "Seine at Pont Neuf.jpg",
        "caption",
        "The Pont Neuf crosses the Seine at the western tip of the Île de la Cité.",
        "The oldest bridge of Paris was finished under King Henry IV.",
    ),
    pair(
        "Tower Bridge bascules raised.jpg",
        "caption",
        "The bascules of Tower Bridge are raised for a passing ship.",
        "Both bascules are open while a ship passes through the bridge.",
    ),
}


def test_gold_pairs(built: Path) -> None:
    assert pair_set(built, "gold") == GOLD_PAIRS


def test_silver_pairs(built: Path) -> None:
    assert pair_set(built, "silver") == GOLD_PAIRS | SILVER_ONLY


def test_funnel_steps_5_to_9_for_silver(built: Path) -> None:
    assert funnel(built, "silver")[5:] == [
        (12, 28, 37, 30),  # the only text without a verb: the town hall's gallery alt text (a single alt)
        (11, 27, 36, 30),  # Last Supper keeps one reference after step 4
        # Unique candidates, keyed by the folded (lower-cased) pair of texts across the whole build: no two
        # images share a pair of wordings, so only Tower Bridge at dusk loses pairs. Its Tower Bridge and
        # Bascule bridge captions are identical, so three of the Bascule bridge text's pairs repeat a
        # Tower Bridge one; its pair with Tower Bridge stays. The "river Thames" spelling has no full
        # stop, so lower-cased it still differs from the others.
        (11, 27, 36, 27),
        # ...until "divergent" (equal ignoring case) takes that identical pair, and the rubble photo's
        # identical alt pair ("Soldiers with shovels…" twice): the Bascule reference and both alt texts
        # fall out
        (11, 26, 33, 25),
        # the three spellings of the dusk caption are near-duplicates (same letters and digits once
        # "(2015)" goes); each still pairs with 1894's text. No other pair has one skeleton inside the
        # other (e.g. "ussmontereyliesatanchor…" and "themonitorussmonterey…").
        (11, 26, 33, 22),
    ]
    assert funnel(built, "silver")[-1][3] == len(GOLD_PAIRS | SILVER_ONLY)


def test_cli_builds_the_sample_by_default(tmp_path: Path, perceptron_available: None) -> None:
    out = tmp_path / "wikipedia_ipc"
    assert wikipedia_ipc.main(["build", "--output", str(out), "--tagger", "perceptron", "--quiet"]) == 0
    assert sorted(path.name for path in out.iterdir()) == ["README.md", "bronze", "gold", "silver"]


def test_cli_sources_option_is_recorded(tmp_path: Path, perceptron_available: None) -> None:
    out = tmp_path / "wikipedia_ipc"
    arguments = ["build", "--output", str(out), "--tagger", "perceptron", "--quiet", "--configs", "silver"]
    assert wikipedia_ipc.main([*arguments, "--sources", "gallery", "link", "template"]) == 0
    record = json.loads((out / "silver" / "funnel.json").read_text(encoding="utf-8"))
    assert record["parameters"]["sources"] == ["link", "template", "gallery"]
    assert record["funnel"][-1]["pairs"] == len(GOLD_PAIRS | SILVER_ONLY)
    assert "`sources`: `['link', 'template', 'gallery']`" in (out / "README.md").read_text(encoding="utf-8")


def test_the_presets_without_galleries(tmp_path: Path, perceptron_available: None) -> None:
    """The shifts the module docstring derives by hand for the presets' sources (no galleries)."""
    out = tmp_path / "wikipedia_ipc"
    build([SAMPLE], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    assert funnel(out, "gold")[0][:2] == (16, 44)  # Hare in snow and the old Leuven map were gallery-only
    gallery_dependent = {
        # Saint Peter's Church keeps one reference (leaves at step 1); the town hall keeps one text of
        # six words or more (leaves at step 6)
        pair(
            "Saint Peter's Church Leuven.jpg",
            "caption",
            "Saint Peter's Church stands opposite the town hall.",
            "Saint Peter's Church is the home of the Last Supper by Dieric Bouts.",
        ),
        pair(
            "Leuven Town Hall.jpg",
            "caption",
            "The Gothic town hall was built between 1448 and 1469.",
            "The late Gothic town hall stands on the Grote Markt.",
        ),
    }
    assert pair_set(out, "gold") == GOLD_PAIRS - gallery_dependent
    assert pair_set(out, "silver") == (GOLD_PAIRS | SILVER_ONLY) - gallery_dependent


BOUTS_A = "Bouts may have painted himself as a servant in the Last Supper."
BOUTS_B = "The servant in the doorway is often identified as the painter himself."
BOUTS_C = "The Last Supper was painted by Dieric Bouts for a church in Leuven."
HARES = (
    "A European hare is sitting in the snow on the Causse Méjean.",
    "A mountain hare changes its coat to white in winter.",
)
PAINTING = "Last Supper Bouts.jpg"
PORTRAIT_PAIRS = {pair for pair in SILVER_ONLY if pair[0] == "Dieric Bouts self portrait.jpg"}
GOLD_ADDED = {
    pair(PAINTING, "caption", BOUTS_A, BOUTS_C): "redirect",
    pair("Hare in snow.jpg", "caption", *HARES): "sha1",
}
SILVER_ADDED = {**GOLD_ADDED, pair(PAINTING, "caption", BOUTS_B, BOUTS_C): "redirect"}


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    out = tmp_path_factory.mktemp("identity") / "wikipedia_ipc"
    configs = [dataclasses.replace(config, identities=("redirect", "sha1")) for config in WITH_GALLERIES]
    build([SAMPLE], configs, out, tagger="perceptron", show_progress=False, image_tables=[IMAGE_TABLE])
    return out


def identities(out: Path, config: str) -> dict[tuple[str, str, frozenset[str]], str]:
    rows = pq.read_table(sorted((out / config).glob("*.parquet"))).to_pylist()
    return {
        (r["image"][5:], r["caption_type"], frozenset((r["sentence1"], r["sentence2"]))): r["identity"] for r in rows
    }


def test_identity_map_funnel(merged: Path) -> None:
    steps_0_to_4 = [(16, 49, 59, 119), (13, 46, 57, 119), (12, 33, 44, 41), (12, 33, 44, 41), (12, 30, 40, 33)]
    assert funnel(merged, "gold")[:5] == steps_0_to_4
    assert funnel(merged, "silver") == steps_0_to_4 + [
        (12, 30, 39, 33),
        (12, 30, 39, 33),
        (12, 30, 39, 30),
        (12, 29, 36, 28),
        (12, 29, 36, 25),
    ]


def test_identity_map_pairs_and_their_identities(merged: Path) -> None:
    # the portrait's own pairs now belong to the painting's image, still linked by one title
    moved = {(PAINTING, kind, texts) for _, kind, texts in PORTRAIT_PAIRS}
    gold = {key: "title" for key in GOLD_PAIRS} | GOLD_ADDED
    silver = {key: "title" for key in (GOLD_PAIRS | SILVER_ONLY) - PORTRAIT_PAIRS | moved} | SILVER_ADDED
    assert identities(merged, "gold") == gold
    assert identities(merged, "silver") == silver


def test_title_pairs_keep_their_ids(merged: Path, built: Path) -> None:
    def ids(out: Path) -> dict[tuple[str, str, str], str]:
        rows = pq.read_table(sorted((out / "silver").glob("*.parquet"))).to_pylist()
        return {(r["caption_type"], r["sentence1"], r["sentence2"]): r["id"] for r in rows if r["identity"] == "title"}

    before, after = ids(built), ids(merged)
    assert after.items() <= before.items() and len(after) == len(before)


def test_identity_counts_in_funnel_and_card(merged: Path) -> None:
    record = json.loads((merged / "silver" / "funnel.json").read_text(encoding="utf-8"))
    assert record["parameters"]["identities"] == ["title", "redirect", "sha1"]
    assert record["identity"] == {
        "identities": ["title", "redirect", "sha1"],
        "file_redirects": 3,
        "file_redirects_ignored": 1,  # File:Leuven.jpg → the article Leuven
        "redirect_cycles": 0,
        "redirect_conflicts": 0,
        "image_table_rows": 18,
        "image_table_rows_without_sha1": 1,  # Broken_hare.jpg
        "image_table_rows_with_unusable_names": 0,
        "sha1_groups": 1,
        "titles_merged_by_redirect": 2,  # the portrait, and the detail that redirects to it
        "titles_merged_by_sha1": 1,
        "images_before": 18,
        "images_after": 16,
        "images_merged": 2,
        "pairs": {"title": 22, "redirect": 2, "sha1": 1},
    }
    card = (merged / "README.md").read_text(encoding="utf-8")
    assert "images 18 → 16 (2 merged); pairs added by redirect: 2, by SHA-1: 1 (of 25)" in card
    assert "pairs added by redirect: 1, by SHA-1: 1 (of 14)" in card


def test_cli_identity_with_the_presets(tmp_path: Path, perceptron_available: None) -> None:
    """Without galleries Hare in snow is not used, so only the redirect merges clusters."""
    out = tmp_path / "wikipedia_ipc"
    arguments = ["build", "--output", str(out), "--tagger", "perceptron", "--quiet", "--identity", "redirect", "sha1"]
    assert wikipedia_ipc.main([*arguments, "--image-table", str(IMAGE_TABLE)]) == 0
    gold = json.loads((out / "gold" / "funnel.json").read_text(encoding="utf-8"))["identity"]
    silver = json.loads((out / "silver" / "funnel.json").read_text(encoding="utf-8"))["identity"]
    assert (silver["images_before"], silver["images_after"]) == (16, 15)
    assert silver["pairs"] == {"title": 20, "redirect": 2, "sha1": 0}  # the presets give 20 and 10 pairs
    assert gold["pairs"] == {"title": 10, "redirect": 1, "sha1": 0}
