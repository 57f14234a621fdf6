"""Pair construction, the caption length of step 4 and the paraphrase filter of steps 7–9."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.config import SILVER
from builder.data.make_sample import page_xml
from builder.engines.local import build
from builder.filters.chain import FilterChain
from builder.filters.clusters import Cluster, Reference, build_pairs, count_pairs
from builder.filters.pairs import (
    UniqueCandidates,
    candidate_key,
    divergent_captions,
    fold,
    near_duplicates,
    significant_difference,
    skeleton,
)
from builder.lang.segmenters import has_min_words, word_count


def ref(page: str, caption: str = "", alt: str = "", page_id: int = 0) -> Reference:
    return Reference(page, page_id, 1, 0, "link", caption, alt, "File:A.jpg", "File:A.jpg")


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


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Algeria's capital city at dusk", 6),  # Algeria | 's | capital | city | at | dusk
        ("Tower Bridge – at dusk, 1894.", 5),  # the dash, the comma and the full stop are no words
        ("The lighthouse (pictured) isn't lit.", 6),  # The | lighthouse | pictured | is | n't | lit.
        ("富士山 seen from the lake shore", 6),  # letters of every script count
        ("U.S.-built steam locomotive, c. 1900", 5),  # hyphenated words and abbreviations stay whole
        ("", 0),
    ],
)
def test_caption_words_are_treebank_tokens_with_a_letter_or_digit(text: str, words: int) -> None:
    assert word_count(text) == words
    for minimum in (words - 1, words, words + 1):
        assert has_min_words(text, minimum) == (words >= minimum)


def test_the_whitespace_shortcut_agrees_with_the_treebank_count_on_real_captions() -> None:
    lines = (Path(__file__).parent / "data" / "labelled_captions.tsv").read_text(encoding="utf-8").splitlines()
    captions = [line.split("\t")[0] for line in lines if line and not line.startswith("#")][1:]
    assert len(captions) > 200
    for caption in captions:
        for minimum in (3, 6, 9, 12):
            assert has_min_words(caption, minimum) == (word_count(caption) >= minimum), caption


def test_divergent_ignores_case() -> None:
    cluster = Cluster("File:A.jpg", (ref("P1", "The old harbour"), ref("P2", "The Old Harbour"), ref("P3", "A quay")))
    kept = divergent_captions(build_pairs(cluster))
    assert [(p.first.page, p.second.page) for p in kept] == [("P1", "P3"), ("P2", "P3")]


def test_skeleton_drops_parentheses_non_greedily_and_every_non_word_character() -> None:
    assert skeleton("A postcard, featuring the Easter Bunny (1907).") == "apostcardfeaturingtheeasterbunny"
    # non-greedy: "(b (c)" goes, the unbalanced " d)" stays
    assert skeleton("A (b (c) d) e") == "ade"
    assert skeleton("Mount Fuji (富士山) über Lake_Kawaguchi") == "mountfujiüberlake_kawaguchi"


def test_near_duplicates_from_the_talk_slides_and_by_containment() -> None:
    base = "A postcard featuring the Easter Bunny"
    variants = [
        "A postcard featuring the easter bunny",  # casing
        "A postcard, featuring the Easter Bunny.",  # punctuation
        "A postcard featuring the Easter Bunny (1907)",  # bracket expression
        "A  postcard featuring\tthe Easter Bunny",  # whitespace
        "A postcard featuring the Easter Bunny, 1907",  # containment: the other text plus a date
    ]
    assert all(near_duplicates(base, variant) for variant in variants)
    # containment is of the whole skeleton: "postcard…" is inside "oldpostcard…", "apostcard…" is not
    assert near_duplicates("Postcard featuring the Easter Bunny", "Old postcard featuring the Easter Bunny")
    assert not near_duplicates(base, "Old postcard featuring the Easter Bunny")
    cluster = Cluster("File:A.jpg", (ref("P0", base), *(ref(f"P{n}", v) for n, v in enumerate(variants, 1))))
    assert significant_difference(build_pairs(cluster)) == []
    different = Cluster("File:A.jpg", (ref("P0", base), ref("P1", "An Easter postcard from 1907 depicting a rabbit")))
    assert len(significant_difference(build_pairs(different))) == 1


def test_scripts_and_accents_are_words_here() -> None:
    # Java's ASCII [\W] would delete 東京 and é, making both pairs near-duplicates
    assert not near_duplicates("Tokyo 東京 Tower at night", "Tokyo Tower at night")
    assert not near_duplicates("The Café de Flore in Paris", "The Cafe de Flore in Paris")


UNICODE_VARIANTS = [
    ("Café de Flore on the boulevard", "Cafe\u0301 de Flore on the boulevard"),  # NFC and NFD
    ("The ﬁrst ﬂoor of the old mill", "The first floor of the old mill"),  # ligatures
    ("ＡＢＣ studios in London", "ABC studios in London"),  # fullwidth letters
    ("Die Straße am Hafen von Kiel", "DIE STRASSE AM HAFEN VON KIEL"),  # ß upper-cases to SS
]


@pytest.mark.parametrize(("one", "two"), UNICODE_VARIANTS)
def test_unicode_variants_of_one_wording_are_one_text_for_steps_7_to_9(one: str, two: str) -> None:
    cluster = Cluster("File:A.jpg", (ref("P1", one, "A quay"), ref("P2", two, "A mill")))
    caption, alt = build_pairs(cluster)
    assert divergent_captions([caption, alt]) == [alt]  # step 8: the caption pair is one text
    assert near_duplicates(one, two) and skeleton(one) == skeleton(two)  # step 9
    assert near_duplicates(f"{one} (1907)", f"{two}, seen from the east")
    # step 7: each variant with a third text is one candidate
    other = build_pairs(Cluster("File:B.jpg", (ref("P3", one), ref("P4", "A third text here"))))[0]
    again = build_pairs(Cluster("File:C.jpg", (ref("P5", "a third text HERE"), ref("P6", two))))[0]
    assert candidate_key(other) == candidate_key(again)
    assert UniqueCandidates()([other, again]) == [other]


def test_fold_is_stable_and_ascii_is_only_lower_cased() -> None:
    assert fold("J̌") == fold("ǰ") == "ǰ"  # case folding decomposes it; the final NFKC composes it again
    assert skeleton("ǰ (x)") == "ǰ"  # so the skeleton keeps the caron rather than deleting a combining mark
    assert skeleton("\u1100(x)\u1161") == skeleton("\uac00") == "\uac00"  # Hangul jamo joined once the bracket went
    for text in ("Café", "ﬁ", "ＡＢＣ", "Straße", "İstanbul", "Ⅻ", "ǅ", "ΐ"):
        assert fold(fold(text)) == fold(text), text
    ascii_text = "".join(chr(code) for code in range(128))
    assert fold(ascii_text) == ascii_text.lower()
    assert fold("Über") == "über" and fold("ΣΊΣΥΦΟΣ") == "σίσυφοσ"


def test_candidate_key_is_unordered_case_blind_and_fixed_size() -> None:
    one = build_pairs(Cluster("File:A.jpg", (ref("P1", "Boats in the harbour"), ref("P2", "The old quay"))))[0]
    two = build_pairs(Cluster("File:B.jpg", (ref("P3", alt="the old quay"), ref("P4", alt="BOATS in the harbour"))))[0]
    assert candidate_key(one) == candidate_key(two)
    assert len(candidate_key(one)) == 16


def test_unique_candidates_across_images_and_caption_types() -> None:
    harbour = Cluster(
        "File:Harbour.jpg",
        (ref("P1", "Boats in the harbour", "A quay with boats"), ref("P2", "The old quay", "A quay with boats")),
    )
    # another image, the same two wordings (case aside) as alt texts, and a new caption pair
    quay = Cluster(
        "File:Quay.jpg",
        (
            ref("P3", "Fishing boats at dawn", "THE OLD QUAY"),
            ref("P4", "Nets drying on the quay", "boats in the harbour"),
        ),
    )
    unique = UniqueCandidates()
    first = unique(build_pairs(harbour))
    second = unique(build_pairs(quay))
    assert [(p.image, p.caption_type, p.first.page) for p in first] == [
        ("File:Harbour.jpg", "caption", "P1"),
        ("File:Harbour.jpg", "alt", "P1"),
    ]
    assert [(p.image, p.caption_type, p.sentence1) for p in second] == [
        ("File:Quay.jpg", "caption", "Fishing boats at dawn")
    ]
    assert len(unique) == 3


def test_chain_counts_steps_7_to_9_with_state_across_clusters() -> None:
    chain = FilterChain(SILVER)
    lighthouse = Cluster(
        "File:Lighthouse.jpg",
        (
            ref("Harbour", "The lighthouse is at the end of the pier.", page_id=1),
            ref("Lights", "The lighthouse is at the end of the pier.", page_id=2),
            ref("Coast", "A lighthouse stands where the pier ends.", page_id=3),
        ),
    )
    pier = Cluster(
        "File:Pier.jpg",
        (
            ref("Coast", "A lighthouse stands where the pier ends.", page_id=3),
            ref("Piers", "The lighthouse is at the end of the pier (1890).", page_id=4),
            ref("Walks", "The LIGHTHOUSE is at the end of the pier.", page_id=5),
        ),
    )
    kept = chain.filter_pairs(lighthouse) + chain.filter_pairs(pier)
    # lighthouse: Harbour/Lights (identical texts), Harbour/Coast, and Lights/Coast, which repeats
    # Harbour/Coast word for word (step 7); step 8 drops Harbour/Lights.
    # pier: Coast/Walks repeats Harbour/Coast ignoring case (step 7); Piers/Walks differ in case and
    # "(1890)" only, so step 9 drops them; Coast/Piers stays.
    assert [(p.first.page, p.second.page) for p in kept] == [("Harbour", "Coast"), ("Coast", "Piers")]
    steps = [(row.images, row.references, row.captions, row.pairs) for row in chain.funnel.rows[7:]]
    assert steps == [(2, 6, 6, 4), (2, 5, 5, 3), (2, 4, 4, 2)]


MOORED = "Boats are moored in the old harbour at dawn."
ANCHORED = "Fishing boats were anchored in the harbour in the early morning."
PIER = "The lighthouse is at the end of the pier."
REBUILT = "The Old Harbour was rebuilt after the storm of 1953."


def link(file: str, caption: str = "", alt: str = "") -> str:
    options = (f"|alt={alt}" if alt else "") + (f"|{caption}" if caption else "")
    return f"[[File:{file}|thumb{options}]]\n"


# The harbour photo's captions come first in the dump, but the anchorage photo comes first in
# image order, and its alt texts are the same two wordings (case aside): that pair is the one kept.
STEP_7_TO_9_PAGES = [
    page_xml("Harbour", "Text.\n" + link("Harbour.jpg", MOORED), 1),
    page_xml("Fishing", "Text.\n" + link("Harbour.jpg", ANCHORED), 2),
    page_xml("Anchorage", "Text.\n" + link("Anchorage.jpg", alt=ANCHORED.lower()), 3),
    page_xml("Moorings", "Text.\n" + link("Anchorage.jpg", alt=MOORED), 4),
    page_xml("Lighthouse", "Text.\n" + link("Pier.jpg", PIER), 5),
    page_xml("Piers", "Text.\n" + link("Pier.jpg", PIER[:-1] + ", 1890."), 6),  # contains the other
    page_xml("Storm", "Text.\n" + link("Storm.jpg", REBUILT), 7),
    page_xml("Storms", "Text.\n" + link("Storm.jpg", REBUILT.replace("Old Harbour", "old harbour")), 8),
]


def test_a_build_keeps_each_candidate_once_in_image_order(write_dump, tmp_path: Path, perceptron_available) -> None:
    dump = write_dump(STEP_7_TO_9_PAGES)
    build([dump], [SILVER], tmp_path / "out", tagger="perceptron", workers=2, show_progress=False)
    rows = pq.read_table(sorted((tmp_path / "out" / "silver").glob("*.parquet"))).to_pylist()
    assert [(r["image"], r["caption_type"], r["page1"], r["page2"]) for r in rows] == [
        ("File:Anchorage.jpg", "alt", "Anchorage", "Moorings")
    ]
    funnel = json.loads((tmp_path / "out" / "silver" / "funnel.json").read_text())["funnel"]
    steps = [(row["images"], row["references"], row["captions"], row["pairs"]) for row in funnel[6:]]
    # four images with two references and one pair each; step 7 drops the harbour photo's pair,
    # step 8 the storm captions (equal ignoring case), step 9 the pier captions (one contains the other)
    assert steps == [(4, 8, 8, 4), (3, 6, 6, 3), (2, 4, 4, 2), (1, 2, 2, 1)]
