"""Déjà's captioning by association (§3), INSTANCE (§4) and visual paraphrasing (§5): hand-checked small cases, then
the real COCO images of tests/data/deja/images with ranks pinned."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from builder.filters.association import (
    DevQuery,
    Pool,
    Scored,
    Shared,
    affinity,
    assoc,
    assoc_ranking,
    choose_sigma,
    instance,
    paraphrase_candidates,
    similarities,
    text_only_paraphrase,
    visual_paraphrase,
)

IMAGES = Path(__file__).resolve().parent / "data" / "deja" / "images"


def test_similarity_is_minus_the_squared_distance() -> None:
    images = np.array([[0, 0], [3, 4], [1, 1]])
    assert similarities(np.array([0, 0]), images).tolist() == [0.0, -25.0, -2.0]
    batch = similarities(np.array([[0, 0], [3, 4]]), images)
    assert batch.tolist() == [[0.0, -25.0, -2.0], [-25.0, 0.0, -13.0]]
    with pytest.raises(ValueError, match="query has 3 dimensions, the images 2"):
        similarities(np.array([0, 0, 0]), images)


def test_phi_is_the_mean_of_the_sigma_largest_similarities() -> None:
    q = np.array([0.0])
    neighbourhood = np.array([[4.0], [1.0], [2.0]])  # similarities −16, −1, −4
    assert affinity(q, neighbourhood, 1) == -1.0
    assert affinity(q, neighbourhood, 2) == -2.5  # (−1 − 4) / 2
    assert affinity(q, neighbourhood, None) == -7.0  # (−1 − 4 − 16) / 3
    assert affinity(q, neighbourhood, 3) == -7.0
    assert affinity(q, neighbourhood, 5) == -7.0  # σ > |N_c|: all of them (footnote 5)
    with pytest.raises(ValueError, match="σ must be a positive number"):
        affinity(q, neighbourhood, 0)


def corpus() -> Pool:
    """x has the single nearest image but two far ones; y three moderately near ones; z one far image; w shares
    image 3 with y and has image 6 with z. Feature f: positions on a line; feature g orders the images otherwise."""
    f = np.array([[1], [9], [9], [2], [2], [3], [20]], dtype=float)
    g = np.array([[5], [5], [5], [6], [6], [6], [0]], dtype=float)
    edges = [("x", 0), ("x", 1), ("x", 2), ("y", 3), ("y", 4), ("y", 5), ("z", 6), ("w", 3), ("w", 6)]
    return Pool.build(edges, {"f": f, "g": g})


Q = {"f": np.array([0.0]), "g": np.array([0.0])}


def test_instance_is_the_caption_of_the_nearest_image() -> None:
    pool = corpus()
    assert instance(Q, pool, "f") == Scored("x", -1.0)
    # image 6 is nearest by g and carries z and w: the smaller caption id
    assert instance(Q, pool, "g") == Scored("w", 0.0)


def test_instance_ties_between_images_go_to_the_smaller_caption_id() -> None:
    pool = Pool.build([("b", 0), ("a", 1), ("c", 2)], {"f": np.array([[1.0], [-1.0], [5.0]])})
    assert instance(np.array([0.0]), pool, "f") == Scored("a", -1.0)


def test_assoc_reranks_the_candidates_by_their_neighbourhoods() -> None:
    pool = corpus()
    # K = 2: images 0 (x) and 3 (y; tied with 4 at −4, the lower row first) → candidates w, x, y
    assert assoc_ranking(Q, pool, K=2, sigma=1, rerank_feature="f", candidate_feature="f") == [
        Scored("x", -1.0),
        Scored("w", -4.0),
        Scored("y", -4.0),
    ]
    assert assoc_ranking(Q, pool, K=2, sigma=2, rerank_feature="f", candidate_feature="f") == [
        Scored("y", -4.0),
        Scored("x", -41.0),
        Scored("w", -202.0),
    ]
    assert assoc(Q, pool, K=2, sigma=None, rerank_feature="f", candidate_feature="f") == Scored("y", -17 / 3)
    # z is no candidate among the 2 closest images; among all 7 it is, last
    assert [s.caption for s in assoc_ranking(Q, pool, K=7, sigma=None, rerank_feature="f", candidate_feature="f")] == [
        "y",
        "x",
        "w",
        "z",
    ]
    # candidates by f, reranked by g: w's image 6 is identical to q under g
    assert assoc_ranking(Q, pool, K=2, sigma=1, rerank_feature="g", candidate_feature="f") == [
        Scored("w", 0.0),
        Scored("x", -25.0),
        Scored("y", -36.0),
    ]


def test_excluding_a_caption_drops_it_and_all_its_images() -> None:
    pool = corpus().excluding(["y"])
    assert pool.captions == ("w", "x", "z")
    assert pool.active.tolist() == [True, True, True, False, False, False, True]
    assert pool.neighbourhood("w").tolist() == [6]  # its image 3 was y's
    # the two closest images left are 0 (x) and 1 (x): only x is a candidate
    assert assoc_ranking(Q, pool, K=2, sigma=None, rerank_feature="f", candidate_feature="f") == [Scored("x", -163 / 3)]
    assert instance(Q, pool, "f") == Scored("x", -1.0)
    assert instance(Q, corpus().excluding(["x"]), "f") == Scored("w", -4.0)
    with pytest.raises(ValueError, match="no caption"):
        instance(Q, corpus().excluding(["w", "x", "y", "z"]), "f")


def test_choose_sigma_on_a_development_set() -> None:
    pool = corpus()
    dev = [DevQuery(Q, pool, lambda caption: 1.0 if caption == "y" else 0.0)]
    sigma, means = choose_sigma(dev, (1, 2, 3, None), K=2, rerank_feature="f", candidate_feature="f")
    assert means == {1: 0.0, 2: 1.0, 3: 1.0, None: 1.0}
    assert sigma == 2  # equal means: the smaller σ


def test_bad_input_is_named() -> None:
    with pytest.raises(KeyError, match="no feature 'gist'"):
        instance(Q, corpus(), "gist")
    with pytest.raises(ValueError, match="image row 3, but the feature matrices have 2 rows"):
        Pool.build([("a", 3)], {"f": np.zeros((2, 1))})
    with pytest.raises(ValueError, match="disagree on the number of images"):
        Pool.build([("a", 0)], {"f": np.zeros((2, 1)), "g": np.zeros((3, 1))})
    with pytest.raises(ValueError, match="development set is empty"):
        choose_sigma([])


NOUNS = {
    "bird on a branch": {"bird", "branch"},
    "bird in the sky": {"bird", "sky"},
    "a bird and a tree branch": {"bird", "branch", "tree"},
    "birds on the branch of a tree": {"bird", "branch", "tree"},
    "sunset over the sea": {"sunset", "sea"},
}


def test_paraphrase_candidates_share_the_most_nouns() -> None:
    found = paraphrase_candidates({"bird", "branch"}, NOUNS, K=3, own="bird on a branch")
    assert found == [
        Shared("a bird and a tree branch", frozenset({"bird", "branch"})),
        Shared("birds on the branch of a tree", frozenset({"bird", "branch"})),
        Shared("bird in the sky", frozenset({"bird"})),
    ]
    assert [s.caption for s in paraphrase_candidates({"bird", "branch"}, NOUNS, K=1, own="bird on a branch")] == [
        "a bird and a tree branch"
    ]
    assert paraphrase_candidates({"whale"}, NOUNS, K=5) == []


def test_visual_paraphrase_reranks_by_the_image_and_text_only_does_not() -> None:
    candidates = paraphrase_candidates({"bird", "branch"}, NOUNS, K=10, own="bird on a branch")
    neighbourhoods = {
        "a bird and a tree branch": np.array([[5.0], [6.0]]),
        "birds on the branch of a tree": np.array([[9.0], [1.0]]),
        "bird in the sky": np.array([[2.0]]),
        "bird on a branch": np.array([[0.0]]),  # c itself: never its own paraphrase
    }
    ranked = visual_paraphrase(np.array([0.0]), "bird on a branch", candidates, neighbourhoods, sigma=1)
    assert ranked == [
        Scored("birds on the branch of a tree", -1.0),
        Scored("bird in the sky", -4.0),
        Scored("a bird and a tree branch", -25.0),
    ]
    assert visual_paraphrase(np.array([0.0]), "bird on a branch", candidates, neighbourhoods, sigma=None)[0] == Scored(
        "bird in the sky", -4.0
    )
    # PARAcaption: the most shared nouns, ties drawn by the MD5 of the pair (here, as caption order), no pixels
    assert text_only_paraphrase("bird on a branch", candidates) == "a bird and a tree branch"
    assert text_only_paraphrase("bird in the sky", [Shared("bird in the sky", frozenset({"bird"}))]) is None


# ---- real images -------------------------------------------------------------------------------------------


def thumbnail(path: Path) -> np.ndarray:
    """A plain pixel feature computed here (8×8 colour, 0–255), so the pinned ranks depend on this module alone and
    not on how builder.sources.features computes Tinyimage or GIST."""
    with Image.open(io.BytesIO(path.read_bytes())) as image:
        return np.asarray(image.convert("RGB").resize((8, 8), Image.BILINEAR), dtype=np.float64).reshape(-1)


@pytest.fixture(scope="module")
def real() -> tuple[list[str], dict[str, list[str]], Pool]:
    with (IMAGES / "captions.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    files = sorted({row["file"] for row in rows})
    row_of = {name: position for position, name in enumerate(files)}
    captions: dict[str, list[str]] = {}
    for row in rows:
        captions.setdefault(row["file"], []).append(row["caption"])
    matrix = np.stack([thumbnail(IMAGES / name) for name in files])
    pool = Pool.build([(row["caption"], row_of[row["file"]]) for row in rows], {"pixels": matrix})
    return files, captions, pool


def test_real_images_pinned_ranks(real: tuple[list[str], dict[str, list[str]], Pool]) -> None:
    files, captions, pool = real
    assert (len(files), len(pool.captions), len(pool.edge_image)) == (159, 795, 795)
    query = "000000011813.jpg"  # "A camera sits on a tripod connected to a laptop."
    own = pool.excluding(captions[query])
    assert own.active.sum() == 158 and len(own.captions) == 790  # its five captions and its image are gone
    q = pool.matrix("pixels")[files.index(query)]
    # the nearest image is 000000516916.jpg (a desk with computers); of its five captions, the smallest
    assert instance(q, own, "pixels") == Scored("A desk with five computers in a row on it.", -403615.0)
    top = assoc_ranking(q, own, K=2, sigma=None, rerank_feature="pixels", candidate_feature="pixels")
    assert [(s.caption, s.affinity) for s in top] == [
        ("A desk with five computers in a row on it.", -403615.0),
        ("A desk with several computers sitting on top of it.", -403615.0),
        ("A table with laptops, monitor screens, keyboards, mice, phone handsets and chairs", -403615.0),
        ("A very big work station with a bunch of computers.", -403615.0),
        ("An office chair at a desk filled with computers and phones.", -403615.0),
        ("A couple of zebra standing in a grass field.", -413488.0),
        ("Two giraffes eating grass on a grassy field.", -413488.0),
        ("Two zebras grazing in a large grassy field.", -413488.0),
        ("two zebras grazing in a field during the day.", -413488.0),
        ("two zebras standing in a grassy field grazing", -413488.0),
    ]
    assert files[int(own.neighbourhood(top[5].caption)[0])] == "000000281789.jpg"
    # without the exclusion, its own image comes first (sim 0), with the smallest of its own five captions
    assert instance(q, pool, "pixels") == Scored("A camera and tripod is shown with a laptop.", 0.0)


def test_real_images_without_repeated_captions_assoc_is_instance(
    real: tuple[list[str], dict[str, list[str]], Pool],
) -> None:
    """No caption of the sample has two images, so each neighbourhood is one image and ASSOC reranked by the
    candidate feature returns INSTANCE's caption for every query, whatever σ."""
    files, captions, pool = real
    assert np.bincount(pool.edge_caption).max() == 1
    matrix = pool.matrix("pixels")
    for row, name in enumerate(files):
        own = pool.excluding(captions[name])
        expected = instance(matrix[row], own, "pixels")
        for sigma in (1, None):
            assert assoc(matrix[row], own, 100, sigma, "pixels", "pixels") == expected


def test_the_draw_is_sql_s_md5() -> None:
    """The Python reference draws ties as the engines' SQL does (DuckDB's md5 here; Spark's is the same MD5)."""
    import duckdb

    from builder.filters.association import draw

    pairs = [("bird on a branch", "a bird and a tree branch"), ("Zürich's dog", "ein Hund"), ("", "x")]
    for c, p in pairs:
        ((found,),) = duckdb.sql("SELECT md5(concat($c, chr(31), $p))", params={"c": c, "p": p}).fetchall()
        assert found == draw(c, p)


def test_bleu1_is_the_clipped_unigram_precision_counted_by_hand() -> None:
    """Table 6's BLEU@1 without brevity penalty: "a dog a dog plays" against "A dog runs." keeps one "a" and one
    "dog" of its five words (clipped to the reference's counts), 2/5; against two references each word is clipped
    to its largest count in either ("a", "dog" twice in the second), 4/5; the corpus figure pools the counts."""
    from builder.filters.association import bleu1

    corpus, per = bleu1(["a dog a dog plays", "a dog a dog plays"], [["A dog runs."], ["a cat", "a dog and a dog"]])
    assert per == [pytest.approx(2 / 5), pytest.approx(4 / 5)]
    assert corpus == pytest.approx((2 + 4) / (5 + 5))


def test_the_benchmark_reads_flickr8k_s_layout_and_groups_by_canonical_form(
    tmp_path: Path, nltk_perceptron: None
) -> None:
    """``benchmarks/deja_captioning.py`` on a folder laid out as Flickr8k is redistributed (``captions.txt``,
    ``Images/``), three real pictures: a caption of a picture not present is not read, and the paper's two wordings
    of one caption (§2) are one group of two images by canonical form, two groups by the normalised text."""
    import shutil
    import sys

    sys.path.insert(0, str(IMAGES.parents[3]))
    from benchmarks.deja_captioning import load

    (tmp_path / "Images").mkdir()
    pictures = sorted(IMAGES.glob("*.jpg"))[:3]
    for picture in pictures:
        shutil.copy(picture, tmp_path / "Images" / picture.name)
    first, second, third = (picture.name for picture in pictures)
    (tmp_path / "captions.txt").write_text(
        "image,caption\n"
        f"{first},The bird flies in blue sky\n"
        f"{second},A bird flying into the blue sky .\n"
        f'{third},"A dog runs, a cat sleeps ."\n'
        f"{third},There is no image here to provide a caption for .\n"
        "missing.jpg,A caption of a picture that is not there\n",
        encoding="utf-8",
    )
    normalised = load(tmp_path)
    assert normalised.files == [f"Images/{name}" for name in (first, second, third)]
    assert [len(captions) for captions in normalised.captions_of] == [1, 1, 2]
    assert len(normalised.pool.captions) == 4
    canonical = load(tmp_path, "canonical", "perceptron")
    assert canonical.captions_of == normalised.captions_of  # the references are the captions as written
    assert canonical.keys_of[0] == canonical.keys_of[1] == {"bird fly IN blue sky"}
    assert canonical.keys_of[2] == {"dog run cat sleep", "be image here provide caption IN"}
    assert canonical.text["bird fly IN blue sky"] == "The bird flies in blue sky"
    sizes = dict(zip(canonical.pool.captions, np.bincount(canonical.pool.edge_caption).tolist(), strict=True))
    assert sizes["bird fly IN blue sky"] == 2
    with pytest.raises(SystemExit, match="neither captions.tsv nor Flickr8k's captions.txt"):
        load(tmp_path / "Images")
