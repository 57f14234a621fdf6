"""Splits: no image and no text (by skeleton) in two splits, whole components, an assignment set by content alone."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import defaultdict, deque
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wikipedia_ipc
from builder.config import DEFAULT_FRACTIONS, GOLD, SILVER, SOURCES, SPLIT_NAMES, check_fractions, parse_splits
from builder.data.make_sample import IMAGE_TABLE
from builder.engines.local import build
from builder.engines.spark.splits import contract, hold
from builder.filters.pairs import skeleton
from builder.publish.card import SAMPLE_DUMP
from builder.publish.layout import split_of_file
from builder.publish.splits import assign, node_keys, shared_nodes, smallest_of_links
from builder.publish.splits import components as union_components

WORDS = ["Harbour", "harbour", "HARBOUR", "Harbour.", "harbour (1907)", "ＨＡＲＢＯＵＲ", "bridge", "Bridge", "tower"]
WORDS += ["castle", "river", "old", "new", "Straße", "STRASSE"]


def test_fractions_are_checked() -> None:
    assert check_fractions([0.7, 0.2, 0.1]) == (0.7, 0.2, 0.1)
    assert check_fractions(()) == ()
    with pytest.raises(ValueError, match="sum to 1"):
        check_fractions((0.8, 0.1, 0.2))
    with pytest.raises(ValueError, match="positive"):
        check_fractions((1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="3 fractions"):
        check_fractions((0.5, 0.5))
    with pytest.raises(ValueError, match="sum to 1"):
        dataclasses.replace(GOLD, splits=(0.5, 0.4, 0.4))


def test_the_command_line_form() -> None:
    assert parse_splits("80/10/10") == DEFAULT_FRACTIONS
    assert parse_splits("70/15/15") == (0.7, 0.15, 0.15)
    assert parse_splits("none") == ()
    for bad in ("80/20", "80/10/20", "eighty/10/10", "0/50/50"):
        with pytest.raises(ValueError, match="splits"):
            parse_splits(bad)


def components(rows: list[dict]) -> list[set[str]]:
    """Pair ids grouped by shared image or text skeleton, by breadth-first search (independent of the union-find)."""
    by_node: dict[tuple[str, str], list[int]] = {}
    for number, row in enumerate(rows):
        nodes = [("image", row["image"]), ("text", skeleton(row["sentence1"])), ("text", skeleton(row["sentence2"]))]
        for node in nodes:
            by_node.setdefault(node, []).append(number)
    neighbours = [set() for _ in rows]
    for members in by_node.values():
        for member in members:
            neighbours[member].update(members)
    seen: set[int] = set()
    groups = []
    for start in range(len(rows)):
        if start in seen:
            continue
        seen.add(start)
        queue, group = deque([start]), set()
        while queue:
            current = queue.popleft()
            group.add(rows[current]["id"])
            for other in neighbours[current] - seen:
                seen.add(other)
                queue.append(other)
        groups.append(group)
    return groups


def overlap(rows: list[dict], split_of: dict[str, str]) -> tuple[int, int]:
    """Images and text skeletons found in more than one split, counted with plain sets."""
    images: dict[str, set[str]] = {}
    texts: dict[str, set[str]] = {}
    for row in rows:
        split = split_of[row["id"]]
        images.setdefault(row["image"], set()).add(split)
        for text in (row["sentence1"], row["sentence2"]):
            texts.setdefault(skeleton(text), set()).add(split)
    return sum(len(s) > 1 for s in images.values()), sum(len(s) > 1 for s in texts.values())


@st.composite
def pair_graphs(draw: st.DrawFn) -> list[dict]:
    """Random pairs over a few images and texts; texts repeat in other cases, punctuation or forms ("Harbour.")."""
    images = draw(st.lists(st.sampled_from([f"File:{n}.jpg" for n in range(12)]), min_size=1, max_size=8, unique=True))
    texts = draw(st.lists(st.sampled_from(WORDS + [f"caption {n}" for n in range(20)]), min_size=2, max_size=14))
    count = draw(st.integers(1, 30))
    rows = []
    for number in range(count):
        first, second = draw(st.sampled_from(texts)), draw(st.sampled_from(texts))
        rows.append(
            {"id": str(number), "image": draw(st.sampled_from(images)), "sentence1": first, "sentence2": second}
        )
    return rows


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(rows=pair_graphs(), seed=st.integers(0, 2**32 - 1))
def test_the_assignment_is_a_function_of_the_content(rows: list[dict], seed: int) -> None:
    assignment = assign(rows, DEFAULT_FRACTIONS)
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    again = assign(shuffled, DEFAULT_FRACTIONS)
    assert again.by_image == assignment.by_image and again.stats == assignment.stats
    split_of = {row["id"]: assignment.split_of(row) for row in rows}
    assert overlap(rows, split_of) == (0, 0)
    assert shared_nodes((split_of[row["id"]], row) for row in rows).shared_images == 0
    groups = components(rows)
    assert all(len({split_of[member] for member in group}) == 1 for group in groups)
    assert assignment.stats.components == len(groups)
    assert assignment.stats.largest_component == max(len(group) for group in groups)
    assert sum(assignment.stats.pairs.values()) == len(rows)


def contracted_labels(rows: list[dict], partitions: int) -> tuple[dict[bytes, bytes], dict[bytes, int]]:
    """Each node's label and each label's pairs when the rows are cut into ``partitions`` slices and contracted as
    Spark's executors contract them (:mod:`builder.engines.spark.splits`), the shuffle by digest done in a dict."""
    items = [item for n in range(partitions) for item in contract(rows[n::partitions])]
    nodes: dict[bytes, list] = defaultdict(list)
    for kind, (key, value) in items:
        if kind == "node":
            nodes[key].append(value)
    held = list(hold(nodes.items()))
    merged = dict(smallest_of_links(value for kind, value in held if kind == "link"))
    labels = {key: merged.get(low, low) for key, found in nodes.items() for low in [min(label for label, _ in found)]}
    pairs: dict[bytes, int] = defaultdict(int)
    for kind, (label, counts) in items + held:
        if kind == "pairs":
            pairs[merged.get(label, label)] += counts[0]
    return labels, dict(pairs)


def chain_of_pairs(length: int) -> list[dict]:
    """Images linked in one long chain by the captions they share: the most rounds of labels for its size."""
    return [
        {"id": str(n), "image": f"File:{n}.jpg", "sentence1": f"caption {n}", "sentence2": f"caption {n + 1}"}
        for n in range(length)
    ]


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(rows=pair_graphs(), partitions=st.integers(1, 5))
def test_contracted_partitions_give_the_union_finds_components(rows: list[dict], partitions: int) -> None:
    """Components contracted per slice of the pairs and linked through the nodes several slices hold: every node
    gets the whole graph's label (its component's smallest digest), every label its pairs."""
    whole = union_components(node_keys(row) for row in rows)
    labels, pairs = contracted_labels(rows, partitions)
    assert labels == dict(zip(whole.keys, whole.labels, strict=True))
    assert pairs == whole.pairs


def test_a_long_chain_cut_into_slices_is_one_component() -> None:
    rows = chain_of_pairs(40)
    labels, pairs = contracted_labels(rows, 4)
    assert len(set(labels.values())) == 1 and list(pairs.values()) == [40]
    assert contracted_labels([], 3) == ({}, {})


def test_the_overlap_check_finds_a_shared_image_and_text() -> None:
    one = {"image": "File:A.jpg", "sentence1": "A Harbour at dusk", "sentence2": "x"}
    two = {"image": "File:A.jpg", "sentence1": "a harbour at dusk", "sentence2": "y"}
    check = shared_nodes([("train", one), ("test", two)])
    assert (check.shared_images, check.shared_texts) == (1, 1)


def test_texts_that_step_9_holds_for_equal_are_one_text_for_the_splits() -> None:
    """Texts with equal skeletons join one component and count as shared by the check; containment does not."""
    thames = "The bridge over the River Thames"
    variants = [f"{thames}.", "the  bridge over the river Thames (1890)", "ＴＨＥ BRIDGE OVER THE RIVER THAMES!"]
    rows = [{"id": "0", "image": "File:0.jpg", "sentence1": thames, "sentence2": "A bridge in London"}]
    rows += [
        {"id": str(n), "image": f"File:{n}.jpg", "sentence1": variant, "sentence2": f"A caption of its own {n}"}
        for n, variant in enumerate(variants, 1)
    ]
    rows.append({"id": "9", "image": "File:9.jpg", "sentence1": f"{thames}, 1890", "sentence2": "Another one"})
    assignment = assign(rows, DEFAULT_FRACTIONS)
    assert assignment.stats.components == 2  # the four Thames texts link their images; the containing one does not
    assert len({assignment.split_of(row) for row in rows[:4]}) == 1
    assert sum(assignment.stats.texts.values()) == 7  # the four Thames wordings are one text
    check = shared_nodes([("train", rows[0]), ("test", rows[1]), ("validation", rows[2])])
    assert (check.shared_images, check.shared_texts) == (0, 1)


def test_split_sizes_follow_the_fractions_by_component() -> None:
    """Many small components: each split's share of the components is near its fraction."""
    generator = random.Random(7)
    rows = []
    for image in range(3000):
        texts = [f"caption {image} {n}" for n in range(generator.randint(2, 3))]
        rows += [
            {"id": f"{image}-{a}-{b}", "image": f"File:{image}.jpg", "sentence1": texts[a], "sentence2": texts[b]}
            for a in range(len(texts))
            for b in range(a + 1, len(texts))
        ]
    assignment = assign(rows, (0.7, 0.2, 0.1))
    assert assignment.stats.components == 3000
    shares = [assignment.stats.images[name] / 3000 for name in SPLIT_NAMES]
    for share, fraction in zip(shares, (0.7, 0.2, 0.1), strict=True):
        assert abs(share - fraction) < 0.04, shares


def split_rows(folder: Path) -> dict[str, list[dict]]:
    """Each split's rows as written, read file by file."""
    found: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.parquet")):
        found.setdefault(split_of_file(path), []).extend(pq.read_table(path).to_pylist())
    return found


@pytest.mark.parametrize(
    ("sources", "identities"),
    [(GOLD.sources, ("title",)), (SOURCES, ("title",)), (SOURCES, ("title", "redirect", "sha1"))],
)
def test_the_sample_splits_share_no_image_and_no_text(
    tmp_path: Path, sources: tuple[str, ...], identities: tuple[str, ...], perceptron_available: None
) -> None:
    configs = [dataclasses.replace(config, sources=sources, identities=identities) for config in (GOLD, SILVER)]
    tables = [IMAGE_TABLE] if "sha1" in identities else []
    build([SAMPLE_DUMP], configs, tmp_path / "split", tagger="perceptron", show_progress=False, image_tables=tables)
    whole = [dataclasses.replace(config, splits=()) for config in configs]
    build([SAMPLE_DUMP], whole, tmp_path / "whole", tagger="perceptron", show_progress=False, image_tables=tables)
    for config in ("gold", "silver"):
        by_split = split_rows(tmp_path / "split" / config)
        rows = [row for split in by_split.values() for row in split]
        split_of = {row["id"]: split for split, members in by_split.items() for row in members}
        assert overlap(rows, split_of) == (0, 0)
        titles: dict[str, set[str]] = {}  # the titles the pages used, merged or not by the identity map
        for row in rows:
            for title in (row["file1"], row["file2"]):
                titles.setdefault(title, set()).add(split_of[row["id"]])
        assert all(len(splits) == 1 for splits in titles.values())
        unsplit = split_rows(tmp_path / "whole" / config)
        assert list(unsplit) == ["train"]
        assert sorted(row["id"] for row in rows) == sorted(row["id"] for row in unsplit["train"])
        for members in by_split.values():  # image order within each split, as in the single set
            order = [row["id"] for row in unsplit["train"] if row["id"] in {m["id"] for m in members}]
            assert [row["id"] for row in members] == order
        record = json.loads((tmp_path / "split" / config / "funnel.json").read_text())
        assert record["parameters"]["splits"] == list(DEFAULT_FRACTIONS)
        assert (record["splits"]["shared_images"], record["splits"]["shared_texts"]) == (0, 0)
        assert record["splits"]["pairs"] == {name: len(by_split.get(name, [])) for name in SPLIT_NAMES}
        assert "splits" not in json.loads((tmp_path / "whole" / config / "funnel.json").read_text())
        if list(by_split) == ["train"]:  # routed through the work file, the rows are written as the direct path writes
            routed = [path.read_bytes() for path in sorted((tmp_path / "split" / config).glob("*.parquet"))]
            assert routed == [path.read_bytes() for path in sorted((tmp_path / "whole" / config).glob("*.parquet"))]
    card = (tmp_path / "split" / "README.md").read_text()
    assert "0 images and 0 texts are shared by two splits (checked on the written pairs; texts with equal" in card


def test_load_dataset_gives_the_splits_with_rows(tmp_path: Path, perceptron_available: None) -> None:
    out = tmp_path / "out"
    report = build([SAMPLE_DUMP], [SILVER], out, tagger="perceptron", show_progress=False)
    loaded = datasets.load_dataset(str(out), "silver", cache_dir=str(tmp_path / "cache"))
    sizes = report.splits["silver"]["pairs"]
    assert {name: len(rows) for name, rows in loaded.items()} == {name: n for name, n in sizes.items() if n}
    assert len(loaded) >= 2  # the sample's silver pairs fall into more than one split
    card = (out / "README.md").read_text()
    assert all(f"split: {name}" in card for name in loaded)


def test_the_cli_option_and_the_printed_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    base = ["build", "--configs", "silver", "--tagger", "perceptron", "--workers", "1", "--quiet"]
    assert wikipedia_ipc.main([*base, "--output", str(tmp_path / "none"), "--splits", "none"]) == 0
    assert {split_of_file(path) for path in (tmp_path / "none" / "silver").glob("*.parquet")} == {"train"}
    assert "Splits:" not in capsys.readouterr().out
    card = (tmp_path / "none" / "README.md").read_text()
    assert "Every config is one `train` split (built with `--splits none`)" in card
    assert "- Splits: none; every pair is in `train`" in card
    assert wikipedia_ipc.main([*base, "--output", str(tmp_path / "split"), "--splits", "60/20/20"]) == 0
    record = json.loads((tmp_path / "split" / "silver" / "funnel.json").read_text())
    assert record["parameters"]["splits"] == [0.6, 0.2, 0.2]
    sizes = " · ".join(
        f"{name} {count:,} pair{'' if count == 1 else 's'}" for name, count in record["splits"]["pairs"].items()
    )
    assert f"Splits: {sizes};" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        wikipedia_ipc.main([*base, "--output", str(tmp_path / "bad"), "--splits", "90/20/10"])
    assert "give three percentages that sum to 100" in capsys.readouterr().err


def test_the_datasets_builder_returns_the_splits(tmp_path: Path, perceptron_available: None) -> None:
    builder = wikipedia_ipc.WikipediaIPC(
        config_name="silver", tagger="perceptron", cache_dir=str(tmp_path / "cache"), splits=(0.6, 0.2, 0.2)
    )
    builder.download_and_prepare()
    loaded = builder.as_dataset()
    direct = build(
        [SAMPLE_DUMP], [dataclasses.replace(SILVER, splits=(0.6, 0.2, 0.2))], tmp_path / "out", tagger="perceptron"
    )
    sizes = {name: count for name, count in direct.splits["silver"]["pairs"].items() if count}
    assert {name: len(rows) for name, rows in loaded.items()} == sizes
