"""Déjà's "more than one user" rule (§2) over an image–caption dataset that names its users (issue 62, item 2): the
user column given (``--deja-user-column``) or found (RedCaps's ``author``, YFCC100M's ``user_nsid`` or ``owner``), each
sample's user carried from its metadata or caption TSV row to the graph, on both engines.

The folders are img2dataset's ``files`` layout over real COCO pictures (tests/data/deja/images) and real COCO captions:
"There is no image here to provide a caption for." is one crowd worker's boilerplate for 4 COCO val2017 images
(tests/data/deja/coco/captions_val2017.json); it passes §2's three rules, so only the users rule removes it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_deja_build import funnel, rows
from test_img2dataset import write_img2dataset

from benchmarks.deja_visual import enlarged_jpeg
from builder.config import DEJA
from builder.engines.local import build
from builder.sources.img2dataset import user_column

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "tests" / "data" / "deja" / "images"
BOILERPLATE = "There is no image here to provide a caption for."  # COCO val2017, one worker, 4 images
SKIS = "A man riding skis down a snow covered slope."  # COCO: written for 5 images by different workers


def _pictures(count: int) -> list[bytes]:
    """``count`` distinct real COCO pictures, enlarged to 400 pixels on their shorter side as §5.1.1 asks."""
    return [enlarged_jpeg(path)[0] for path in sorted(IMAGES.glob("*.jpg"))[:count]]


def write_folder(folder: Path, samples: list[tuple[str, str | None]], column: str | None = "author") -> Path:
    """An img2dataset ``files`` folder, one shard, a sample per ``(caption, user)`` on its own picture; the user in
    each sample's ``.json`` and in the shard's metadata parquet under ``column`` (img2dataset's
    ``--save_additional_columns``), none when ``column`` is None."""
    url = "https://images.cocodataset.test/val2017/{}.jpg"
    pictures = _pictures(len(samples))
    written = [
        (url.format(index), caption, data, "kept", {column: user} if column else {})
        for index, ((caption, user), data) in enumerate(zip(samples, pictures, strict=True))
    ]
    write_img2dataset(folder, "files", written, per_shard=len(written))
    return folder


# one worker's boilerplate for 4 images; the skis caption by two workers for two images, and once with no user
SAMPLES = [
    (BOILERPLATE, "worker-1"),
    (BOILERPLATE, "worker-1"),
    (BOILERPLATE, "worker-1"),
    (BOILERPLATE, "worker-1"),
    (SKIS, "worker-2"),
    (SKIS, "worker-3"),
    (SKIS, " "),
]


@pytest.fixture(scope="module")
def authored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_folder(tmp_path_factory.mktemp("deja-users") / "images", SAMPLES)


@pytest.fixture(scope="module")
def authored_build(authored: Path, tmp_path_factory: pytest.TempPathFactory, nltk_perceptron: None) -> Path:
    out = tmp_path_factory.mktemp("deja-users-build") / "out"
    build([authored], [DEJA], out, tagger="perceptron", show_progress=False)
    return out


def test_one_worker_s_boilerplate_is_dropped_by_the_users_rule(authored_build: Path) -> None:
    """RedCaps's ``author`` column found: the boilerplate's 4 images pass the images rule and fail the users rule
    (one worker); the skis caption of two workers is kept, the sample with a blank user counting for none."""
    assert funnel(authored_build) == [
        ("No filter", 7, 7, 2, 7),
        ("In English", 7, 7, 2, 7),
        ("Names a visible thing", 7, 7, 2, 7),
        ("No personal information", 7, 7, 2, 7),
        ("Has a verb, preposition or adjective", 7, 7, 2, 7),
        ("Images ≥ 2", 7, 7, 2, 7),
        ("Users ≥ 2", 3, 3, 1, 3),
    ]
    found = [(row["canonical"], row["user"], row["images"], row["users"], row["text"]) for row in rows(authored_build)]
    assert sorted(found, key=lambda row: str(row[1])) == [
        ("man ride ski IN snow cover slope", None, 3, 2, SKIS),
        ("man ride ski IN snow cover slope", "worker-2", 3, 2, SKIS),
        ("man ride ski IN snow cover slope", "worker-3", 3, 2, SKIS),
    ]
    record = json.loads((authored_build / "deja" / "funnel.json").read_text())
    assert (record["parameters"]["deja_user_column"], record["parameters"]["min_users"]) == ("author", 2)
    card = (authored_build / "README.md").read_text(encoding="utf-8")
    assert "A user is the value of the dataset's `author` column (a sample without one counts for no user" in card
    assert "| 6 | Users ≥ 2 |" in card and "could not be applied" not in card


def test_two_workers_keep_the_boilerplate(tmp_path: Path, nltk_perceptron: None) -> None:
    """The same 4 images, the boilerplate written by two workers: kept, 4 edges of 2 users."""
    samples = [(BOILERPLATE, "worker-1"), (BOILERPLATE, "worker-1"), (BOILERPLATE, "worker-2"), (BOILERPLATE, "")]
    folder = write_folder(tmp_path / "images", samples)
    out = tmp_path / "out"
    build([folder], [DEJA], out, tagger="perceptron", show_progress=False)
    assert funnel(out)[-2:] == [("Images ≥ 2", 4, 4, 1, 4), ("Users ≥ 2", 4, 4, 1, 4)]
    assert [(row["user"], row["images"], row["users"]) for row in rows(out)] == [
        ("worker-1", 4, 2),
        ("worker-1", 4, 2),
        ("worker-2", 4, 2),
        (None, 4, 2),
    ]


def test_without_a_user_column_the_card_says_the_rule_could_not_be_applied(
    tmp_path: Path, nltk_perceptron: None
) -> None:
    """No column of users: as before, no users step, and the boilerplate is kept by the images rule alone."""
    folder = write_folder(tmp_path / "images", SAMPLES, column=None)
    out = tmp_path / "out"
    build([folder], [DEJA], out, tagger="perceptron", show_progress=False)
    assert [row[0] for row in funnel(out)][-1] == "Images ≥ 2"
    assert funnel(out)[-1] == ("Images ≥ 2", 7, 7, 2, 7)
    assert {row["user"] for row in rows(out)} == {None} and {row["users"] for row in rows(out)} == {None}
    record = json.loads((out / "deja" / "funnel.json").read_text())
    assert "deja_user_column" not in record["parameters"] and "min_users" not in record["parameters"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert (
        "The users rule could not be applied: the dataset has no column of users (`author`, `user_nsid`, `owner`, "
        "`user` were looked for in its shards' metadata and caption TSV); name one with `--deja-user-column` "
        "(Conceptual Captions and COCO name no writer). A caption is kept when it is used for distinct images."
    ) in card
    assert "Users ≥" not in card


def test_a_column_the_dataset_lacks_is_refused_before_the_work(authored: Path, tmp_path: Path) -> None:
    config = dataclasses.replace(DEJA, deja_user_column="photographer")
    with pytest.raises(ValueError) as error:
        build([authored], [config], tmp_path / "out", tagger="perceptron", show_progress=False)
    held = pq.read_schema(authored / "00000.parquet").names  # img2dataset's metadata and the author column
    assert held[-1] == "author" and "photographer" not in held
    assert str(error.value) == (
        f"--deja-user-column photographer: {authored} has no column 'photographer' (its shards' metadata and "
        f"caption TSV have: {', '.join(held)})"
    )
    assert not (tmp_path / "out").exists()


def test_a_user_column_of_a_wiki_or_crawl_is_refused(deja_crawl: Path, tmp_path: Path) -> None:
    config = dataclasses.replace(DEJA, deja_user_column="author")
    with pytest.raises(ValueError, match="a column of users belongs to an image–caption dataset"):
        build([deja_crawl], [config], tmp_path / "out", tagger="perceptron", show_progress=False)


def test_the_user_columns_found(tmp_path: Path) -> None:
    """RedCaps's ``author``, YFCC100M's ``user_nsid`` and ``owner``, a plain ``user``, in that order; the column given
    wins; none found: ""."""
    samples = [(SKIS, "48600090482@N01")]
    for column in ("author", "user_nsid", "owner", "user"):
        assert user_column(write_folder(tmp_path / column, samples, column)) == column
    none = write_folder(tmp_path / "none", samples, column=None)
    assert user_column(none) == ""
    assert user_column(tmp_path / "owner", given="owner") == "owner"
    tsv = tmp_path / "captions.tsv"
    tsv.write_text(f"caption\turl\tuser_nsid\n{SKIS}\thttps://images.cocodataset.test/val2017/0.jpg\tw\n", "utf-8")
    assert user_column(none, tsv) == "user_nsid"


def test_a_caption_tsv_names_the_users(tmp_path: Path, nltk_perceptron: None) -> None:
    """Samples without users of their own take their TSV row's (img2dataset's ``--input_format tsv`` with a header
    naming ``user_nsid``): the boilerplate of one Flickr owner for 4 images is dropped."""
    folder = write_folder(tmp_path / "images", [(caption, None) for caption, _ in SAMPLES], column=None)
    lines = ["caption\turl\tuser_nsid"]
    lines += [
        f"{caption}\thttps://images.cocodataset.test/val2017/{n}.jpg\t{user}"
        for n, (caption, user) in enumerate(SAMPLES)
    ]
    tsv = tmp_path / "captions.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    build([folder], [DEJA], out, tagger="perceptron", show_progress=False, captions_tsv=tsv)
    assert funnel(out)[-1] == ("Users ≥ 2", 3, 3, 1, 3)
    assert sorted(str(row["user"]) for row in rows(out)) == ["None", "worker-2", "worker-3"]


def test_spark_gives_the_local_rows(spark, authored: Path, authored_build: Path, tmp_path: Path) -> None:
    from builder.engines.spark import build_spark

    out = tmp_path / "spark"
    build_spark([authored], [DEJA], out, tagger="perceptron", workers=2, spark=spark)
    assert rows(out) == rows(authored_build)
    records = [json.loads((where / "deja" / "funnel.json").read_text()) for where in (authored_build, out)]
    assert records[1]["funnel"] == records[0]["funnel"] and records[1]["deja"] == records[0]["deja"]
