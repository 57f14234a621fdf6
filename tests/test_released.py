"""The authors' released JSONL, loaded with the columns of a build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wikipedia_ipc import released_pairs

# Two records in the shape the authors' pipeline serializes a pair (id, cluster-id, image, first, second, similarities).
RECORDS = [
    {
        "id": -1598013842,
        "cluster-id": 17,
        "image": "File:Easter Bunny postcard 1907.jpg",
        "first": {
            "caption-text": "An Easter postcard from 1907 depicting a rabbit",
            "caption-type": "CAPTION",
            "page": "https://en.wikipedia.org/wiki/Easter",
        },
        "second": {
            "caption-text": "A 1907 postcard featuring the Easter Bunny",
            "caption-type": "ALT",
            "page": "https://en.wikipedia.org/wiki/Easter_Bunny",
        },
        "similarities": {},
    },
    {
        "id": 42,
        "cluster-id": 18,
        "image": "File:Tower Bridge at dusk.jpg",
        "first": {"caption-text": "Tower Bridge lit up at dusk", "caption-type": "CAPTION", "page": "p"},
        "second": {"caption-text": "The bridge glows in the evening", "caption-type": "CAPTION", "page": "p"},
        "similarities": {"bleu": 0.1},
    },
]


def test_the_released_jsonl_loads_with_the_builds_columns(tmp_path: Path) -> None:
    path = tmp_path / "wikipedia-ipc-gold.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in RECORDS), encoding="utf-8")
    pairs = released_pairs(path, cache_dir=str(tmp_path / "cache"))
    assert pairs.column_names == [
        "id", "image", "caption_type", "sentence1", "sentence2", "page1", "page2", "same_page", "cluster_id"
    ]  # fmt: skip
    assert pairs[0] == {
        "id": "-1598013842",
        "image": "File:Easter Bunny postcard 1907.jpg",
        "caption_type": "caption/alt",
        "sentence1": "An Easter postcard from 1907 depicting a rabbit",
        "sentence2": "A 1907 postcard featuring the Easter Bunny",
        "page1": "https://en.wikipedia.org/wiki/Easter",
        "page2": "https://en.wikipedia.org/wiki/Easter_Bunny",
        "same_page": False,
        "cluster_id": 17,
    }
    assert (pairs[1]["caption_type"], pairs[1]["same_page"]) == ("caption", True)


def test_a_record_of_another_shape_is_named(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"id": 7, "sentence1": "a", "sentence2": "b"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"record 7 is not a pair of the released corpus \(no 'first'\)"):
        released_pairs(path, cache_dir=str(tmp_path / "cache"))
