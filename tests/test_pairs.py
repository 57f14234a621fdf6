"""Pair construction and the paraphrase filter (steps 7–9)."""

from __future__ import annotations

from builder.clusters import Cluster, Reference, build_pairs, count_pairs
from builder.pairs import divergent_captions, significant_difference, skeleton, unique_candidates


def ref(page: str, caption: str = "", alt: str = "", position: int = 0) -> Reference:
    return Reference(page, hash(page) % 1000, 1, position, "link", caption, alt)


def test_pairs_join_texts_of_one_type_and_never_a_reference_with_itself() -> None:
    cluster = Cluster("File:A.jpg", (ref("P1", "c1", "a1"), ref("P2", "c2"), ref("P3", "c3", "a3")))
    pairs = build_pairs(cluster)
    assert [(p.caption_type, p.sentence1, p.sentence2) for p in pairs] == [
        ("caption", "c1", "c2"),
        ("caption", "c1", "c3"),
        ("caption", "c2", "c3"),
        ("alt", "a1", "a3"),
    ]
    assert count_pairs(cluster) == len(pairs) == 4


def test_unique_and_divergent() -> None:
    cluster = Cluster("File:A.jpg", (ref("P1", "x"), ref("P2", "x"), ref("P3", "y")))
    pairs = build_pairs(cluster)  # x-x, x-y, x-y
    unique = unique_candidates(pairs)
    assert [(p.first.page, p.second.page) for p in unique] == [("P1", "P2"), ("P1", "P3")]
    assert [(p.first.page, p.second.page) for p in divergent_captions(unique)] == [("P1", "P3")]


def test_near_duplicates_from_the_talk_slides() -> None:
    base = "A postcard featuring the Easter Bunny"
    variants = [
        "A postcard featuring the easter bunny",  # casing
        "A postcard, featuring the Easter Bunny.",  # punctuation
        "A postcard featuring the Easter Bunny (1907)",  # bracket expression
        "A  postcard featuring\tthe Easter Bunny",  # whitespace
    ]
    assert {skeleton(variant) for variant in variants} == {skeleton(base)}
    cluster = Cluster("File:A.jpg", (ref("P0", base), *(ref(f"P{n}", v) for n, v in enumerate(variants, 1))))
    assert significant_difference(build_pairs(cluster)) == []
    different = Cluster("File:A.jpg", (ref("P0", base), ref("P1", "An Easter postcard from 1907 depicting a rabbit")))
    assert len(significant_difference(build_pairs(different))) == 1
