"""Bronze: an edit-history dump, where captions are repeated, rewritten, added and removed over time."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import wikipedia_ipc
from builder.config import BRONZE, GOLD, PipelineConfig
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build

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


def build_history(folder: Path, config: PipelineConfig) -> Path:
    dump = folder / "enwiki-20240101-pages-meta-history1.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    build([dump], [config], folder / "out", tagger="perceptron", show_progress=False)
    return folder / "out"


@pytest.fixture(scope="module")
def bronze(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    return build_history(tmp_path_factory.mktemp("history"), BRONZE)


@pytest.fixture(scope="module")
def bronze_first_seen(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    return build_history(tmp_path_factory.mktemp("first-seen"), replace(BRONZE, history_references="first_seen"))


def pair_set(out: Path) -> set[tuple[str, frozenset[str], bool]]:
    rows = pq.read_table(sorted((out / "bronze").glob("*.parquet"))).to_pylist()
    return {(r["image"], frozenset((r["sentence1"], r["sentence2"])), r["same_page"]) for r in rows}


EXPECTED_PAIRS = {
    ("File:Harbour.jpg", frozenset((BOATS, ANCHORED)), True),  # rewritten between revisions 100 and 102
    ("File:Harbour.jpg", frozenset((BOATS, BUILT)), False),
    ("File:Harbour.jpg", frozenset((ANCHORED, BUILT)), False),
    # Harbour@101 with Lighthouses@300; the same two wordings on Lighthouses (300 → 301) are
    # the same candidate again, so "unique candidates" keeps only the first
    ("File:Lighthouse.jpg", frozenset((THE_LIGHTHOUSE, A_LIGHTHOUSE)), False),
}


def funnel_of(out: Path) -> dict:
    return json.loads((out / "bronze" / "funnel.json").read_text())


def steps_of(record: dict) -> list[tuple[int, int, int, int]]:
    return [(row["images"], row["references"], row["captions"], row["pairs"]) for row in record["funnel"]]


def test_bronze_pairs_and_same_page_marks(bronze: Path, bronze_first_seen: Path) -> None:
    assert pair_set(bronze) == pair_set(bronze_first_seen) == EXPECTED_PAIRS
    for out in (bronze, bronze_first_seen):
        rows = pq.read_table(sorted((out / "bronze").glob("*.parquet"))).to_pylist()
        revisions = {(r["sentence1"], r["sentence2"]): (r["revision1"], r["revision2"]) for r in rows}
        assert revisions[(BOATS, ANCHORED)] == (100, 102)
        assert revisions[(THE_LIGHTHOUSE, A_LIGHTHOUSE)] == (101, 300)


def test_bronze_counts_every_revision_as_a_reference(bronze: Path) -> None:
    record = funnel_of(bronze)
    # Harbour.jpg: Harbour@100, @101 (same caption), @102 (rewritten), Fishing port@200, @201 (same);
    # Lighthouse.jpg: Harbour@101, @102, @103 (same caption), Lighthouses@300, @301 (rewritten to
    # Harbour's wording). 5 + 5 references, one caption each, 10 + 10 pairs; every caption has 9 or
    # more words and a verb, so steps 0–6 keep everything.
    assert steps_of(record)[:7] == [(2, 10, 10, 20)] * 7
    # step 7, Harbour.jpg: 100/101 (boats twice), 100/102, 100/200 and 102/200 are new wordings, and
    # 200/201 (built twice); the other four repeat one of those: 5 pairs over all 5 references.
    # Lighthouse.jpg: 101/102 (pier twice) and 101/300; the other eight repeat them: 2 pairs, 3 references.
    # step 8 drops the three pairs of a caption with itself (100/101, 200/201, 101/102); the
    # references 101, 201 and 102 of Lighthouse.jpg fall out. Step 9 finds no near-duplicate.
    assert steps_of(record)[7:] == [(2, 8, 8, 7), (2, 5, 5, 4), (2, 5, 5, 4)]
    assert record["skipped"]["references_repeated_by_later_revisions"] == 0
    assert record["revisions"] == 8 and record["pages"] == 3
    assert record["parameters"]["max_references"] == 180
    assert record["parameters"]["history_references"] == "revision"


def test_first_seen_counts_a_reference_once_per_page_and_wording(bronze_first_seen: Path) -> None:
    record = funnel_of(bronze_first_seen)
    steps = steps_of(record)
    # Harbour.jpg: Harbour@100, Harbour@102 (rewritten), Fishing port@200;
    # Lighthouse.jpg: Harbour@101, Lighthouses@300, Lighthouses@301 (rewritten)
    assert steps[0] == (2, 6, 6, 6)
    # unique candidates: the Lighthouses 300/301 pair repeats Harbour@101 with Lighthouses@300;
    # divergent: Harbour@101 and Lighthouses@301 have the same wording
    assert [step[3] for step in steps[6:]] == [6, 5, 4, 4]
    assert record["skipped"]["references_repeated_by_later_revisions"] == 4  # 101, 102, 103 and 201
    assert record["parameters"]["history_references"] == "first_seen"


def test_configs_of_one_build_read_one_kind_of_dump(tmp_path: Path) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    with pytest.raises(ValueError, match=r"same kind of dump; got gold \(articles\), bronze \(history\)"):
        build([dump], [GOLD, BRONZE], tmp_path / "out", tagger="perceptron", show_progress=False)


def test_configs_of_one_build_count_history_one_way(tmp_path: Path) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    first_seen = replace(BRONZE, name="bronze-first-seen", history_references="first_seen")
    with pytest.raises(ValueError, match=r"count history references the same way; got bronze \(revision\)"):
        build([dump], [BRONZE, first_seen], tmp_path / "out", tagger="perceptron", show_progress=False)
    with pytest.raises(ValueError, match="history_references must be 'revision' or 'first_seen', not 'page'"):
        replace(BRONZE, history_references="page")


def test_cli_chooses_the_history_counting(tmp_path: Path, perceptron_available: None) -> None:
    dump = tmp_path / "enwiki-20240101-pages-meta-history1.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    out = tmp_path / "out"
    arguments = ["build", str(dump), "--configs", "bronze", "--output", str(out), "--tagger", "perceptron"]
    assert wikipedia_ipc.main([*arguments, "--history-references", "first_seen", "--quiet", "--workers", "1"]) == 0
    assert steps_of(funnel_of(out))[0] == (2, 6, 6, 6)
