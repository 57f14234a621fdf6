"""Déjà's visual paraphrases (§5 (2), ``--configs deja-paraphrases``): each kept caption's two images, its
candidates by shared physical-object nouns, reranked by φ over the images' features, σ chosen on a development set.

Every expected pair is derived again here from the images' bytes and the graph's edges with numpy
(:mod:`builder.filters.association`, whose functions are tested against the paper's definitions in
tests/test_association.py), never copied from the build's output: on a crawl, and on COCO's 159 real images with
their real captions (``min_images=1``, since no caption of those images is written for two of them).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_img2dataset import write_img2dataset

from benchmarks.deja_visual import write_coco_files
from builder.config import DEJA, DEJA_PARACAPTION, DEJA_PARAPHRASES, ExtractionSettings, preset
from builder.engines.local import build
from builder.engines.spark import build_spark
from builder.extract.webrefs import PixelInspector
from builder.filters.association import paraphrase_candidates, visual_paraphrase
from builder.sources.features import (
    VECTOR_KINDS,
    Describer,
    decode_vector,
    encode_vector,
    image_features,
    similarities,
    vector_bytes,
    vector_kind,
)
from builder.sources.images import inspect_image

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
NAME = "deja-paraphrases"


def pairs_of(out: Path, name: str = NAME) -> list[dict]:
    return pq.read_table(sorted((out / name).glob("*.parquet"))).to_pylist()


def record_of(out: Path, name: str = NAME) -> dict:
    return json.loads((out / name / "funnel.json").read_text())


def expected_pairs(
    edges: list[dict], tiny: dict[str, np.ndarray], sigma: int | None, query_image: bool = False
) -> dict[tuple[str, str], str]:
    """(caption, query image) → its visual paraphrase, by the paper's definitions over the graph's edges: the K
    captions sharing most nouns (association.paraphrase_candidates), reranked by φ (association.visual_paraphrase)
    over each candidate's images other than the query image (unless ``query_image``). Every caption here has at
    most two images, so both are its queries."""
    nouns = {edge["canonical"]: edge["nouns"] for edge in edges}
    images: dict[str, list[str]] = {}
    for edge in edges:
        images.setdefault(edge["canonical"], []).append(edge["image"])
    expected = {}
    for caption, own in images.items():
        assert len(own) <= 2
        candidates = paraphrase_candidates(nouns[caption], nouns, own=caption)
        for image in own:
            features = {
                c.caption: np.stack([tiny[j] for j in images[c.caption] if query_image or j != image])
                for c in candidates
                if query_image or images[c.caption] != [image]
            }
            ranked = visual_paraphrase(tiny[image], caption, candidates, features, sigma)
            if ranked:
                expected[(caption, image)] = (ranked[0].caption, ranked[0].affinity)
    return expected


def found_pairs(pairs: list[dict]) -> dict[tuple[str, str], tuple[str, float]]:
    return {(pair["canonical1"], pair["image"]): (pair["canonical2"], pair["affinity"]) for pair in pairs}


# ---- the vectors: encoded exactly, compared exactly ---------------------------------------------------------------


def test_vectors_round_trip_and_compare_exactly() -> None:
    from benchmarks.web_crawl import picture

    data = picture(7)
    features = image_features(data)
    tiny = encode_vector(features["tiny"])
    assert tiny.startswith("u1:") and np.array_equal(decode_vector(tiny), features["tiny"].astype(np.float64))
    gist = encode_vector(features["gist"])
    assert gist.startswith("f4:") and np.array_equal(decode_vector(gist), features["gist"].astype(np.float64))
    second = image_features(picture(8))["tiny"]  # picture()'s noise differs from call to call: one call
    other = encode_vector(second)
    expected = -float(np.square(features["tiny"].astype(np.float64) - second).sum())
    column = pa.array([vector_bytes(tiny, "u1"), vector_bytes(tiny, "u1"), None], pa.binary())
    against = pa.array([vector_bytes(other, "u1"), vector_bytes(tiny, "u1"), vector_bytes(other, "u1")], pa.binary())
    values = similarities(column, against, "u1")
    assert values[0] == expected and values[1] == 0.0 and np.isnan(values[2])
    assert vector_bytes(gist, "f4") == features["gist"].astype("<f4").tobytes() and vector_bytes(None, "f4") is None
    assert vector_bytes(tiny, "f4") == features["tiny"].astype("<f4").tobytes()  # whole numbers read as floats
    with pytest.raises(ValueError, match="whole numbers 0-255"):
        vector_bytes(gist, "u1")
    with pytest.raises(ValueError, match="3072 and 512 values cannot be compared"):  # a build has one feature
        similarities(pa.array([vector_bytes(tiny, "f4")]), pa.array([vector_bytes(gist, "f4")]), "f4")
    with pytest.raises(ValueError, match="512 and 3072 values cannot be compared"):
        similarities(pa.array([vector_bytes(gist, "f4"), vector_bytes(tiny, "f4")]), column[:2], "f4")
    with pytest.raises(ValueError, match="not an encoded feature vector"):
        decode_vector("x:abc")


@pytest.mark.parametrize("feature", ["tiny", "gist", "gist+tiny"])
def test_a_block_of_real_vectors_gives_each_pair_s_own_distance_bit_for_bit(feature: str) -> None:
    """The similarity runs on blocks of rows (numpy, not a Python call per pair: issue 62's item 4); on COCO's real
    pictures every row's value is that pair's −‖a − b‖² in float64, computed alone, bit for bit, whatever the block
    (sliced, chunked, one row, 64-bit offsets), so the engines' batch sizes cannot change a φ."""
    from PIL import Image

    describe = Describer(feature)
    kind = vector_kind(feature)
    vectors = []
    for path in sorted((DATA / "deja" / "images").glob("*.jpg"))[:24]:
        with Image.open(path) as image:  # the committed copies are 256 px: GIST's 400 px floor is the build's
            text = describe(image.resize((image.width * 2, image.height * 2)))
        vectors.append(vector_bytes(text, kind))
    firsts, seconds = zip(*[(a, b) for a in vectors for b in vectors], strict=True)
    expected = [
        -float(
            np.square(
                np.frombuffer(a, VECTOR_KINDS[kind]).astype(np.float64) - np.frombuffer(b, VECTOR_KINDS[kind])
            ).sum()
        )
        for a, b in zip(firsts, seconds, strict=True)
    ]
    first, second = pa.array(firsts, pa.binary()), pa.array(seconds, pa.binary())
    whole = similarities(first, second, kind)
    assert whole.tolist() == expected and len(set(expected)) > 200
    assert whole[:: len(vectors) + 1].tolist() == [0.0] * len(vectors)
    for start, stop in ((0, 1), (5, 6), (7, 300), (301, 576)):
        part = similarities(first.slice(start, stop - start), second.slice(start, stop - start), kind)
        assert part.tolist() == expected[start:stop]
    chunked = pa.chunked_array([first.slice(0, 100), first.slice(100)])
    assert similarities(chunked, second.cast(pa.large_binary()), kind).tolist() == expected
    holes = pa.array([None if row % 7 == 0 else value for row, value in enumerate(firsts)], pa.binary())
    gaps = similarities(holes, second, kind)  # images without a vector among them: NaN there, the rest unchanged
    assert np.isnan(gaps[::7]).all() and [v for row, v in enumerate(gaps.tolist()) if row % 7] == [
        v for row, v in enumerate(expected) if row % 7
    ]


def test_an_image_keeps_a_vector_only_when_the_build_asks() -> None:
    """The facts' JSON is as it was without a feature (task file names too), and holds the vector with one; an
    image GIST cannot describe keeps its facts without a vector."""
    from PIL import Image

    from benchmarks.web_crawl import picture

    data = picture(3)
    assert "vector" not in inspect_image(data).as_dict()
    assert repr(PixelInspector(6)) == "PixelInspector(hash_size=6)"
    assert repr(PixelInspector(6, "tiny")) == "PixelInspector(hash_size=6, feature='tiny')"
    facts = PixelInspector(6, "tiny")(data)
    assert decode_vector(facts["vector"]).shape == (3072,) and facts["pixels_md5"] == inspect_image(data).pixels_md5
    assert PixelInspector(6, "gist+tiny")(data)["vector"].startswith("f4:")
    assert Describer("gist")(Image.new("RGB", (4, 4), "red")) is None  # under GIST's 8 pixels a side
    with pytest.raises(ValueError, match="unknown image feature"):
        Describer("colour")


def test_the_preset_and_its_options() -> None:
    config = preset(NAME)
    assert (config.deja, config.deja_feature, config.deja_sigma) == ("paraphrases", "tiny", 0)
    assert {"deja_feature", "deja_sigma"} <= set(config.parameters())
    assert "deja_feature" not in preset("deja").parameters()
    with pytest.raises(ValueError, match="deja_feature must be one of"):
        dataclasses.replace(config, deja_feature="sift")
    with pytest.raises(ValueError, match="deja_sigma is a number of images"):
        dataclasses.replace(config, deja_sigma=-1)
    web = dataclasses.replace(config, dump_kind="web", sources=("figure",))
    edges = dataclasses.replace(DEJA, dump_kind="web", sources=("figure",))
    assert ExtractionSettings.of([web, edges]).feature == "tiny"
    with pytest.raises(ValueError, match="describe images by the same feature"):
        ExtractionSettings.of([web, dataclasses.replace(web, name="other", deja_feature="gist")])


def test_a_dump_has_no_pixels_refused_before_the_work(tmp_path: Path) -> None:
    from test_real_excerpt import EXCERPT

    with pytest.raises(ValueError, match=r"deja-paraphrases reranks by the images' pixels .* build deja-paracaption"):
        build([EXCERPT], [DEJA_PARAPHRASES], tmp_path / "out", show_progress=False)
    assert not (tmp_path / "out").exists()


# ---- a crawl: two sites, two images per caption -----------------------------------------------------------------


@pytest.fixture(scope="module")
def crawl_build(deja_crawl: Path, tmp_path_factory: pytest.TempPathFactory, nltk_perceptron: None) -> Path:
    out = tmp_path_factory.mktemp("visual-crawl-build") / "out"
    build([deja_crawl], [DEJA, DEJA_PARAPHRASES], out, tagger="perceptron", show_progress=False)
    return out


def crawl_images(path: Path, feature: str = "tiny") -> dict[str, np.ndarray]:
    """Every image record's feature (Tinyimage by default), read from the WARC file by warcio (not the toolkit's
    reader)."""
    from warcio.archiveiterator import ArchiveIterator

    found = {}
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type == "response" and record.http_headers.get_header("Content-Type") == "image/jpeg":
                uri = record.rec_headers.get_header("WARC-Target-URI")
                found[uri] = image_features(record.content_stream().read())[feature].astype(np.float64)
    return found


def test_a_crawl_s_visual_paraphrases(deja_crawl: Path, crawl_build: Path) -> None:
    """Two captions, each repeated by two sites for two images: each of the four (caption, image) queries gets the
    other caption (the only one sharing "bird"), with φ its nearest image's similarity (σ = 1: every σ ties on the
    development set, and the smallest wins)."""
    record = record_of(crawl_build)
    graph = record_of(crawl_build, "deja")["funnel"]
    assert record["funnel"][: len(graph)] == graph
    assert [(r["name"], r["images"], r["captions"], r["edges"]) for r in record["funnel"][len(graph) :]] == [
        ("Image has features", 4, 2, 4),
        ("Visual paraphrase (φ)", 4, 2, 4),
    ]
    chosen = record["deja"]["pairs"]
    assert (chosen["feature"], chosen["K"], chosen["sigma"], chosen["queries_per_caption"]) == ("tiny", 100, 1, 2)
    assert (chosen["development"]["images"], chosen["development"]["scored"]) == (4, 4)
    assert len(set(chosen["development"]["bleu1"].values())) == 1
    edges = pairs_of(crawl_build, "deja")
    pairs = pairs_of(crawl_build)
    assert found_pairs(pairs) == expected_pairs(edges, crawl_images(deja_crawl), 1)
    assert {(p["sentence1"], p["sentence2"]) for p in pairs} == {
        ("A bird flying into the blue sky", "Birds resting on the beach"),
        ("The bird flies in blue sky", "Birds resting on the beach"),
        ("Birds resting on the beach", "A bird flying into the blue sky"),
        ("A bird rests on the beach.", "A bird flying into the blue sky"),
    }
    assert all(p["identity"] == "visual" and p["shared_nouns"] == ["bird"] and p["affinity"] < 0 for p in pairs)
    card = (crawl_build / "README.md").read_text(encoding="utf-8")
    assert f"### `{NAME}` – 4 pairs" in card and "σ = 1, chosen on a development set of 4 images" in card


def test_a_given_sigma_feature_and_query_image_through_the_command_line(
    deja_crawl: Path, tmp_path: Path, nltk_perceptron: None
) -> None:
    """``--deja-sigma 2 --deja-feature gist --deja-query-image`` as a user types them: used, and said in
    funnel.json; the pairs are the reference implementation's on GIST vectors of the crawl's images."""
    import wikipedia_ipc

    out = tmp_path / "out"
    arguments = ["build", str(deja_crawl), "--configs", "deja", NAME, "--output", str(out), "--tagger", "perceptron",
                 "--deja-sigma", "2", "--deja-feature", "gist", "--deja-query-image", "--quiet"]  # fmt: skip
    assert wikipedia_ipc.main(arguments) == 0
    chosen = record_of(out)["deja"]["pairs"]
    assert (chosen["sigma"], chosen["development"], chosen["feature"], chosen["query_image"]) == (
        2, {"given": True}, "gist", True,
    )  # fmt: skip
    gist = crawl_images(deja_crawl, "gist")  # in float64; the build keeps GIST as float32, so φ agrees to 1e-6
    found = found_pairs(pairs_of(out))
    expected = expected_pairs(pairs_of(out, "deja"), gist, 2, query_image=True)
    assert {key: pick for key, (pick, _) in found.items()} == {key: pick for key, (pick, _) in expected.items()}
    assert all(abs(found[key][1] - expected[key][1]) < 1e-6 for key in expected)


def test_spark_gives_the_crawl_s_pairs(spark, deja_crawl: Path, crawl_build: Path, tmp_path: Path) -> None:
    """The crawl's three Déjà configs in one Spark build (sites as users: the registered domain, a Python function
    called from Spark SQL): the local engine's edges, funnels, statistics and pairs."""
    out = tmp_path / "spark"
    configs = [DEJA, DEJA_PARACAPTION, DEJA_PARAPHRASES]
    report = build_spark([deja_crawl], configs, out, tagger="perceptron", workers=2, spark=spark)
    assert report.rows == {"deja": 4, "deja-paracaption": 2, NAME: 4}
    local = tmp_path / "local"
    build([deja_crawl], [DEJA_PARACAPTION], local, tagger="perceptron", show_progress=False)
    for name, built in (("deja", crawl_build), (NAME, crawl_build), ("deja-paracaption", local)):
        assert pairs_of(out, name) == pairs_of(built, name), name
        assert record_of(out, name)["funnel"] == record_of(built, name)["funnel"], name
        assert record_of(out, name)["deja"] == record_of(built, name)["deja"], name
    assert len(pairs_of(local, "deja-paracaption")) == 2


# ---- COCO's real images and their real captions ----------------------------------------------------------------


@pytest.fixture(scope="module")
def coco_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_coco_files(tmp_path_factory.mktemp("visual-coco") / "images")


ONE_IMAGE = [dataclasses.replace(DEJA, min_images=1), dataclasses.replace(DEJA_PARAPHRASES, min_images=1)]
# the same graph with the query image among its candidates' images (--deja-query-image), in the same build
WITH_QUERY = dataclasses.replace(ONE_IMAGE[1], name="deja-paraphrases-query", deja_query_image=True, deja_sigma=1)


@pytest.fixture(scope="module")
def coco_build(coco_files: Path, tmp_path_factory: pytest.TempPathFactory, nltk_perceptron: None) -> Path:
    out = tmp_path_factory.mktemp("visual-coco-build") / "out"
    build([coco_files], [*ONE_IMAGE, WITH_QUERY], out, tagger="perceptron", show_progress=False)
    return out


@functools.lru_cache(maxsize=4)
def coco_images(folder: Path) -> dict[str, np.ndarray]:
    """Each sample's URL and the Tinyimage of its JPEG, read from the img2dataset folder as it lies (a picture's
    five samples, one per caption, hold the same bytes: its features are computed once, and once per folder)."""
    from builder.sources.images import decode_image

    describe, found, features = Describer("tiny"), {}, {}
    for meta in sorted(folder.glob("*/*.json")):
        url = json.loads(meta.read_text(encoding="utf-8"))["url"]
        data = meta.with_suffix(".jpg").read_bytes()
        if data not in features:
            with decode_image(data) as image:  # as image_features decodes it, without GIST (14 s for 159 pictures)
                features[data] = decode_vector(describe(image))
        found[url] = features[data]
    return found


def test_real_coco_images_pick_captions_of_other_pictures(coco_files: Path, coco_build: Path) -> None:
    """Every kept caption of COCO's 159 real images, in its image, with the query image left out of the candidates'
    images: each pick is a caption of another picture, the nearest by φ among those sharing a noun, as the
    reference implementation (builder.filters.association) picks it."""
    record = record_of(coco_build)
    assert [(r["name"], r["images"], r["captions"], r["edges"]) for r in record["funnel"][-3:]] == [
        ("Images ≥ 1", 159, 789, 789),
        ("Image has features", 159, 789, 789),
        ("Visual paraphrase (φ)", 159, 777, 777),  # 12 captions share no noun with another picture's
    ]
    chosen = record["deja"]["pairs"]
    # every σ ties on these 159 images (BLEU@1 0.368): σ decides nothing here, and the smallest is kept
    assert (chosen["sigma"], chosen["query_image"], len(set(chosen["development"]["bleu1"].values()))) == (1, False, 1)
    edges = pairs_of(coco_build, "deja")
    pairs = pairs_of(coco_build)
    assert found_pairs(pairs) == expected_pairs(edges, coco_images(coco_files), 1)
    pictures = {edge["canonical"]: edge["image"] for edge in edges}
    assert not any(pictures[pair["canonical2"]] == pair["image"] for pair in pairs)
    assert not any(pair["affinity"] == 0.0 for pair in pairs)
    assert {(p["sentence1"], p["sentence2"]) for p in pairs} >= {
        ("An airplane high in the sky over some electrical wires", "A colorful kite is flying high in the sky."),
        ("An adult polar bear stands next to a polar bear cub.", "a close up of a polar bear on a rock formation"),
    }


def test_real_coco_with_the_query_image_picks_the_same_picture(coco_files: Path, coco_build: Path) -> None:
    """``--deja-query-image``: the query image is among its candidates' images, and φ (σ = 1) prefers a caption
    of the very same picture, another writer's (similarity 0), wherever one shares a noun: the visual step then
    decides nothing, which is why it is left out by default."""
    record = record_of(coco_build, WITH_QUERY.name)
    assert [(r["name"], r["images"], r["captions"], r["edges"]) for r in record["funnel"][-3:]] == [
        ("Images ≥ 1", 159, 789, 789),
        ("Image has features", 159, 789, 789),
        ("Visual paraphrase (φ)", 159, 782, 782),
    ]
    assert record["deja"]["pairs"]["query_image"] is True
    edges, pairs = pairs_of(coco_build, "deja"), pairs_of(coco_build, WITH_QUERY.name)
    assert found_pairs(pairs) == expected_pairs(edges, coco_images(coco_files), 1, query_image=True)
    same = [pair for pair in pairs if pair["affinity"] == 0.0]
    assert len(same) == 759  # of 782: another writer's caption of the very picture, wherever one shares a noun
    assert {(p["sentence1"], p["sentence2"]) for p in pairs} >= {
        ("An adorable grey poodle standing next to a fire hydrant.", "A black poodle is leashed to a fire hydrant."),
        ("Baby brushing teeth while sitting on a toilet.",
         "A toddler with a toothbrush sitting on top of the lid of a toilet."),
    }  # fmt: skip


def test_spark_gives_coco_s_pairs(spark, coco_files: Path, coco_build: Path, tmp_path: Path) -> None:
    """COCO's real images on Spark: its pixel equivalence makes the same 159 images of 795 samples, and the graph
    and the visual paraphrases are the local engine's (one Spark build for both Déjà configs)."""
    out = tmp_path / "spark"
    build_spark([coco_files], ONE_IMAGE, out, tagger="perceptron", workers=2, spark=spark)
    assert pairs_of(out) == pairs_of(coco_build)
    assert pairs_of(out, "deja") == pairs_of(coco_build, "deja")
    for name in ("deja", NAME):
        assert record_of(out, name)["funnel"] == record_of(coco_build, name)["funnel"]
        assert record_of(out, name)["deja"] == record_of(coco_build, name)["deja"]
        assert record_of(out, name).get("dataset") == record_of(coco_build, name).get("dataset")
    assert record_of(out, "deja")["dataset"]["records"] == 795


# ---- σ decides: a development set where the nearest single image misleads ------------------------------------------

# three captions, each on two pictures of one grey (a level per picture, 3 apart per step): the wrong caption W has
# one picture next to every query and one far away, the right ones two pictures a little further; the nearest image
# (σ = 1) then picks W, the mean of the two nearest (σ = 2) the caption of the same scene
ON_THE_STREET = "A red bus driving on the street."
PARKED = "A red bus parked on the street."
ON_A_SEAT = "A cat sleeping on a bus seat."
GREYS = [(ON_THE_STREET, 0), (ON_THE_STREET, -2), (ON_A_SEAT, 1), (ON_A_SEAT, 50), (PARKED, 3), (PARKED, 4)]


def write_greys(folder: Path) -> Path:
    """An img2dataset ``files`` folder of ``GREYS``: each a 400 × 400 JPEG of one grey (100 + 3 × its step)."""
    from PIL import Image

    samples = []
    for index, (caption, step) in enumerate(GREYS):
        buffer = io.BytesIO()
        Image.new("RGB", (400, 400), (100 + 3 * step,) * 3).save(buffer, "JPEG", quality=100)
        samples.append((f"https://greys.test/{index}.jpg", caption, buffer.getvalue(), "kept"))
    write_img2dataset(folder, "files", samples, per_shard=len(samples))
    return folder


def test_sigma_chosen_where_it_decides(tmp_path: Path, nltk_perceptron: None) -> None:
    """Footnote 5's choice where σ changes the answer (issue 62, item 3): every picture is a development query;
    σ = 1 captions four of six with the bus-seat caption of the one nearest picture (BLEU@1 0.5 against their own
    captions), σ ≥ 2 with the other street caption (0.875), so the mean is 0.5 at σ = 1 and 0.75 from σ = 2 on, and
    σ = 2 is chosen (ties: the smaller). The visual paraphrases then differ from σ = 1's, both as the reference
    implementation derives them from the JPEGs."""
    folder = write_greys(tmp_path / "greys")
    fixed = dataclasses.replace(DEJA_PARAPHRASES, name="deja-paraphrases-one", deja_sigma=1)
    out = tmp_path / "out"
    build([folder], [DEJA, DEJA_PARAPHRASES, fixed], out, tagger="perceptron", show_progress=False)
    chosen = record_of(out)["deja"]["pairs"]
    bleu = {"1": 0.5, **{str(sigma): 0.75 for sigma in (2, 3, 4, 5, 7, 10, 15, 20, 30, 50)}, "all": 0.75}
    assert (chosen["sigma"], chosen["development"]) == (2, {"images": 6, "scored": 6, "bleu1": bleu})
    assert record_of(out, fixed.name)["deja"]["pairs"]["sigma"] == 1
    edges, tiny = pairs_of(out, "deja"), coco_images(folder)
    canonical = {edge["text"]: edge["canonical"] for edge in edges}
    street, parked, seat = canonical[ON_THE_STREET], canonical[PARKED], canonical[ON_A_SEAT]
    for name, sigma, picks in ((NAME, 2, (parked, street)), (fixed.name, 1, (seat, seat))):
        found = found_pairs(pairs_of(out, name))
        assert found == expected_pairs(edges, tiny, sigma)
        assert {found[key][0] for key in found if key[0] == street} == {picks[0]}  # the street bus's paraphrase
        assert {found[key][0] for key in found if key[0] == parked} == {picks[1]}  # the parked bus's
