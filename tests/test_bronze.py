"""Bronze: an edit-history dump, where captions are repeated, rewritten, added and removed over time."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.config import BRONZE, GOLD
from builder.data.make_sample import dump_xml, page_xml
from builder.local import build

BOATS = "Boats are moored in the old harbour at dawn."
ANCHORED = "Fishing boats were anchored in the harbour in the early morning."
BUILT = "The harbour was built for the fishing fleet in 1850."
THE_LIGHTHOUSE = "The lighthouse is at the end of the pier."
A_LIGHTHOUSE = "A lighthouse is at the end of the pier."


def link(file: str, caption: str) -> str:
    return f"[[File:{file}|thumb|{caption}]]\n"


HISTORY = [
    page_xml(
        "Harbour",
        [
            "The harbour.\n" + link("Harbour.jpg", BOATS),  # revision 100
            "The harbour.\n" + link("Harbour.jpg", BOATS) + link("Lighthouse.jpg", THE_LIGHTHOUSE),  # 101: adds
            "The harbour.\n" + link("Harbour.jpg", ANCHORED) + link("Lighthouse.jpg", THE_LIGHTHOUSE),  # 102: rewrites
            "The harbour.\n" + link("Lighthouse.jpg", THE_LIGHTHOUSE),  # 103: removes the harbour photo
        ],
        1,
    ),
    page_xml("Fishing port", ["A port.\n" + link("Harbour.jpg", BUILT)] * 2, 2),  # revisions 200, 201
    page_xml(
        "Lighthouses of the coast",
        ["Lights.\n" + link("Lighthouse.jpg", A_LIGHTHOUSE), "Lights.\n" + link("Lighthouse.jpg", THE_LIGHTHOUSE)],
        3,
    ),
]


@pytest.fixture(scope="module")
def bronze(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    folder = tmp_path_factory.mktemp("history")
    dump = folder / "enwiki-20240101-pages-meta-history1.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    build([dump], [BRONZE], folder / "out", tagger="perceptron", show_progress=False)
    return folder / "out"


def test_bronze_pairs_and_same_page_marks(bronze: Path) -> None:
    rows = pq.read_table(sorted((bronze / "bronze").glob("*.parquet"))).to_pylist()
    found = {(r["image"], frozenset((r["sentence1"], r["sentence2"])), r["same_page"]) for r in rows}
    assert found == {
        ("File:Harbour.jpg", frozenset((BOATS, ANCHORED)), True),  # rewritten between revisions 100 and 102
        ("File:Harbour.jpg", frozenset((BOATS, BUILT)), False),
        ("File:Harbour.jpg", frozenset((ANCHORED, BUILT)), False),
        # Harbour@101 with Lighthouses@300; the same two wordings on Lighthouses (300 → 301) are
        # the same candidate again, so "unique candidates" keeps only the first
        ("File:Lighthouse.jpg", frozenset((THE_LIGHTHOUSE, A_LIGHTHOUSE)), False),
    }
    revisions = {(r["sentence1"], r["sentence2"]): (r["revision1"], r["revision2"]) for r in rows}
    assert revisions[(BOATS, ANCHORED)] == (100, 102)


def test_bronze_counts_a_reference_once_per_page_and_wording(bronze: Path) -> None:
    record = json.loads((bronze / "bronze" / "funnel.json").read_text())
    steps = [(row["images"], row["references"], row["captions"], row["pairs"]) for row in record["funnel"]]
    # Harbour.jpg: Harbour@100, Harbour@102 (rewritten), Fishing port@200;
    # Lighthouse.jpg: Harbour@101, Lighthouses@300, Lighthouses@301 (rewritten)
    assert steps[0] == (2, 6, 6, 6)
    # unique candidates: the Lighthouses 300/301 pair repeats Harbour@101 with Lighthouses@300;
    # divergent: Harbour@101 and Lighthouses@301 have the same wording
    assert [step[3] for step in steps[6:]] == [6, 5, 4, 4]
    assert record["skipped"]["references_repeated_by_later_revisions"] == 4  # 101, 102, 103 and 201
    assert record["revisions"] == 8 and record["pages"] == 3
    assert record["parameters"]["max_references"] == 180


def test_configs_of_one_build_read_one_kind_of_dump(tmp_path: Path) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    with pytest.raises(ValueError, match=r"same kind of dump; got gold \(articles\), bronze \(history\)"):
        build([dump], [GOLD, BRONZE], tmp_path / "out", tagger="perceptron", show_progress=False)
