"""An image–caption dataset as a build (issue 29, item 5; thesis §5.1): an img2dataset folder → pairs of the
captions of equal images, through the one core, local and Spark; §5.1.1's skips and §5.1.2's bound counted."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_img2dataset import REAL, REAL_CAPTIONS, REAL_TSV, SAMPLES, TELEFLORA, photo, write_img2dataset

from builder.config import CAPTIONS, GOLD, WEB, ExtractionSettings
from builder.engines.local import build
from builder.filters.chain import FilterChain
from builder.sources.img2dataset import DATASET_SKIPS, LAYOUTS
from wikipedia_ipc import main

HARBOUR = photo((480, 400), 1)  # three samples of one picture, under three URLs, in two shards
BICYCLE = photo((500, 450), 5)  # two samples whose captions are one text: no paraphrase
QUAY = photo((600, 400), 6)  # another picture whose two captions repeat the harbour's: a candidate seen before
PLACEHOLDER = photo((400, 400), 9)  # "this image is no longer available", eight times
CAPTIONED = [
    ("http://a.example/1.jpg", "a harbour at dawn with fishing boats", HARBOUR, "kept"),
    ("http://b.example/copy.jpg", "fishing boats moored in a small harbour", HARBOUR, "kept"),
    ("http://c.example/x.jpg", "a red bicycle", BICYCLE, "kept"),
    ("http://d.example/y.jpg", "A red bicycle", BICYCLE, "kept"),
    ("http://e.example/q.jpg", "a harbour at dawn with fishing boats", QUAY, "kept"),
    ("http://f.example/q2.jpg", "fishing boats moored in a small harbour", QUAY, "kept"),
    *((f"http://p.example/{n}.jpg", f"caption of a lost picture number {n}", PLACEHOLDER, "kept") for n in range(8)),
    *SAMPLES[2:],  # a PNG, a small, a corrupt and an unreadable image, a failed download, no caption, a bomb
    ("http://g.example/dawn.jpg", "boats in a harbour at sunrise", HARBOUR, "kept"),
]
A, B, G = "http://a.example/1.jpg", "http://b.example/copy.jpg", "http://g.example/dawn.jpg"
# (file1, record1, file2, record2): five samples per shard, so the third harbour is key 000040001
EXPECTED = {(A, "000000000", B, "000000001"), (A, "000000000", G, "000040001"), (B, "000000001", G, "000040001")}


def rows_of(folder: Path) -> list[dict]:
    files = sorted((folder / "captions").glob("*.parquet"))
    return pa.concat_tables([pq.read_table(file) for file in files]).to_pylist()


def funnel_of(folder: Path) -> dict:
    return json.loads((folder / "captions" / "funnel.json").read_text(encoding="utf-8"))


def build_cli(dataset: Path, out: Path, *extra: str) -> int:
    return main(["build", str(dataset), "--configs", "captions", "--output", str(out)] + list(extra))


@pytest.fixture(scope="module")
def datasets_written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("img2dataset")
    for layout in LAYOUTS:
        write_img2dataset(root / layout, layout, CAPTIONED)
    return {layout: root / layout for layout in LAYOUTS}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_equal_pixels_pair_their_captions_and_every_step_is_counted(
    datasets_written: dict[str, Path], tmp_path: Path, layout: str
) -> None:
    out = tmp_path / "out"
    assert build_cli(datasets_written[layout], out, "--workers", "2", "--splits", "none", "--quiet") == 0
    rows = rows_of(out)
    assert {(r["file1"], r["record1"], r["file2"], r["record2"]) for r in rows} == EXPECTED
    texts = {
        A: "a harbour at dawn with fishing boats",
        B: "fishing boats moored in a small harbour",
        G: "boats in a harbour at sunrise",
    }
    for row in rows:  # each pair traces to its samples: keys, URLs, captions; the URL stands for the page
        assert (row["sentence1"], row["sentence2"]) == (texts[row["file1"]], texts[row["file2"]])
        assert (row["page1"], row["page2"]) == (row["file1"], row["file2"])
        assert row["identity"] == "pixels" and row["image"] == A and row["caption_type"] == "caption"
        assert row["source1"] == row["source2"] == "sample" and not row["same_page"]
        assert row["date1"] is None and row["html_lang1"] is None
    record = funnel_of(out)
    dataset = record["dataset"]
    assert (dataset["layout"], dataset["shards"], dataset["records"], dataset["images"]) == (layout, 5, 22, 15)
    unused = dict.fromkeys(
        ("missing_image", "outside_link", "too_large", "bad_metadata", "unreadable_caption", "no_url"), 0
    )
    assert dataset["skipped"] == {**dict.fromkeys(DATASET_SKIPS, 1), **unused}
    assert dataset["records"] == dataset["images"] + sum(dataset["skipped"].values())  # every sample, once
    assert record["dumps"][0]["kind"] == "dataset" and record["dumps"][0]["layout"] == layout
    # §5.1.2: sets of 3, 2, 2 and 8 images (μ 3.75, σ 2.49): sets of at most 3 kept, the placeholder's dropped
    bound = record["identity"]["set_bound"]
    assert bound["max_equal_images"] == 3 and bound["sets_that_yield_pairs"] == 4
    assert record["identity"]["equivalence_sets"] == 4 and record["identity"]["left_out"] == {}
    funnel = [(row["name"], row["references"], row["pairs"]) for row in record["funnel"]]
    assert funnel == [
        ("No filter", 15, 3 + 1 + 1 + 28),
        ("References ≥ 2", 15, 33),
        ("Equal images ≤ 3 (§5.1.2, z < 0.05)", 7, 5),
        ("Has caption", 7, 5),
        ("No caption rule", 7, 5),
        ("References ≥ 2", 7, 5),
        ("Unique candidates", 5, 4),  # the quay's pair repeats the harbour's texts
        ("Divergent captions", 3, 3),  # "a red bicycle" and "A red bicycle" are one text
    ]
    assert record["rows"] == 3 and record["parameters"]["max_equal_images"] == 3
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"img2dataset output folder `{datasets_written[layout]}`, {layout} layout, 5 shards" in card
    assert "Image equivalence (§4.6): `pixels`" in card and "MD5 of the decoded pixels" in card


def test_the_preset_runs_only_the_thesis_steps() -> None:
    """§5.1.2: no caption length, no caption rule, no references bound, no near-duplicate step."""
    names = [step.name for step in FilterChain(CAPTIONS).steps.values()]
    assert names == [
        "No filter",
        "References ≥ 2",
        "Equal images ≤ ∞ (§5.1.2, z < 0.05)",
        "Has caption",
        "No caption rule",
        "References ≥ 2",
        "Unique candidates",
        "Divergent captions",
    ]
    assert CAPTIONS.equivalence == "pixels" and CAPTIONS.dataset and CAPTIONS.web
    assert "max_references" not in CAPTIONS.parameters()


def test_a_caption_tsv_is_joined_by_url_and_its_rows_counted(tmp_path: Path) -> None:
    uncaptioned = [(url, "", data, said) for url, _, data, said in CAPTIONED[:2]]
    write_img2dataset(tmp_path / "ds", "files", uncaptioned)
    tsv = tmp_path / "Train_GCC-training.tsv"
    tsv.write_text(
        f"a harbour at dawn with fishing boats\t{A}\n"
        f"fishing boats moored in a small harbour\t{B}\n"
        "a row without its url\n"
        "a picture nobody downloaded\thttp://z.example/9.jpg\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert build_cli(tmp_path / "ds", out, "--captions-tsv", str(tsv), "--splits", "none", "--quiet") == 0
    [row] = rows_of(out)
    assert (row["sentence1"], row["sentence2"], row["source1"], row["source2"]) == (
        "a harbour at dawn with fishing boats",
        "fishing boats moored in a small harbour",
        "tsv",
        "tsv",
    )
    record = funnel_of(out)
    dataset = record["dataset"]
    assert (dataset["tsv_rows"], dataset["tsv_rows_matched"], dataset["tsv_rows_without_an_image"]) == (3, 2, 1)
    assert dataset["tsv_rows_unreadable"] == 1 and record["skipped"]["tsv_rows_unreadable"] == 1
    assert record["problems"] == [f"{tsv}:3: expected a caption and a URL separated by a tab, found 1 field(s)"]
    assert record["dumps"][0]["tsv"] == str(tsv)


def test_a_captions_config_loads_with_datasets(datasets_written: dict[str, Path], tmp_path: Path) -> None:
    import datasets

    build([str(datasets_written["parquet"])], [CAPTIONS], tmp_path / "out", workers=1, show_progress=False)
    loaded = datasets.load_dataset(str(tmp_path / "out"), "captions")
    assert sum(len(split) for split in loaded.values()) == 3
    first = next(iter(loaded.values()))
    assert set(first.column_names) >= {"record1", "record2", "file1", "file2", "identity"}


def test_a_perceptual_equivalence_is_chosen_per_build(datasets_written: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = build_cli(datasets_written["webdataset"], out, "--equivalence", "phash", "--splits", "none", "--quiet")
    assert code == 0
    assert {row["identity"] for row in rows_of(out)} == {"phash≤4"}
    assert funnel_of(out)["identity"]["hash_bits"] == 36


def test_spark_gives_the_local_rows(datasets_written: dict[str, Path], tmp_path: Path, spark) -> None:
    from conftest import import_or_skip

    import_or_skip("pyspark")
    from builder.engines.spark import build_spark

    config = CAPTIONS.__class__(**{**CAPTIONS.__dict__, "splits": ()})
    folder = [str(datasets_written["webdataset"])]
    build(folder, [config], tmp_path / "local", workers=2, show_progress=False)
    build_spark(folder, [config], tmp_path / "spark", workers=2, show_progress=False, spark=spark)
    local, spark = rows_of(tmp_path / "local"), rows_of(tmp_path / "spark")
    assert sorted(local, key=lambda row: row["id"]) == sorted(spark, key=lambda row: row["id"]) and len(local) == 3
    records = [funnel_of(tmp_path / side) for side in ("local", "spark")]
    for name in ("funnel", "identity", "dataset", "skipped"):
        assert records[0][name] == records[1][name]
    local_files = sorted((tmp_path / "local" / "captions").glob("*.parquet"))
    spark_files = sorted((tmp_path / "spark" / "captions").glob("*.parquet"))
    assert [file.read_bytes() for file in local_files] == [file.read_bytes() for file in spark_files]


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_links_out_of_the_folder_and_members_over_the_cap_are_counted_in_the_build(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    """Item 7 of issue 45 through a build: a caption linked to a private file outside the folder is not published,
    an image over the cap not read; the card and funnel.json count both, on both engines."""
    from builder.sources.img2dataset import MAX_MEMBER

    folder, private = tmp_path / "dataset", tmp_path / "private"
    write_img2dataset(folder, "files", CAPTIONED[:2] + CAPTIONED[-1:], per_shard=3)
    private.mkdir()
    (private / "diary.txt").write_text("the text of a private diary, never to be published", encoding="utf-8")
    (folder / "00000" / "000000001.txt").unlink()
    (folder / "00000" / "000000001.txt").symlink_to(private / "diary.txt")
    with (folder / "00000" / "000000002.jpg").open("r+b") as handle:
        handle.truncate(MAX_MEMBER + 1)  # sparse: never read
    config = CAPTIONS.__class__(**{**CAPTIONS.__dict__, "splits": ()})
    out = tmp_path / engine
    if engine == "spark":
        from builder.engines.spark import build_spark

        build_spark(
            [str(folder)], [config], out, workers=2, show_progress=False, spark=request.getfixturevalue("spark")
        )
    else:
        build([str(folder)], [config], out, workers=2, show_progress=False)
    record = funnel_of(out)
    dataset = record["dataset"]
    assert (dataset["records"], dataset["images"], dataset["links_outside_the_folder"]) == (3, 1, 1)
    assert dataset["skipped"]["outside_link"] == 1 and dataset["skipped"]["too_large"] == 1
    assert record["skipped"]["links_outside_the_folder"] == 1
    assert (
        f"{folder / '00000' / '000000001.txt'}: a symbolic link leading out of {folder}; not read" in record["problems"]
    )
    assert not any("diary" in json.dumps(value) for value in record.values())
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "outside link 1, too large 1" in card and "not followed: 1." in card and "diary" not in card


def test_a_dataset_is_not_mixed_with_dumps_or_crawls(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="read one kind of input: captions read an image–caption dataset"):
        ExtractionSettings.of([GOLD, CAPTIONS])
    with pytest.raises(ValueError, match=r"web read web crawls \(WARC files\), captions an image–caption dataset"):
        ExtractionSettings.of([WEB, CAPTIONS])
    with pytest.raises(ValueError, match="gold MediaWiki dumps"):
        build([str(tmp_path / "never-read")], [GOLD, CAPTIONS], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_bad_inputs_stop_the_build_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert build_cli(tmp_path / "empty", tmp_path / "out", "--quiet") == 2
    assert f"{tmp_path / 'empty'}: not an img2dataset output folder" in capsys.readouterr().err
    write_img2dataset(tmp_path / "ds", "files", CAPTIONED[:2])
    assert build_cli(tmp_path / "ds", tmp_path / "out", "--captions-tsv", str(tmp_path / "no.tsv"), "--quiet") == 2
    assert f"{tmp_path / 'no.tsv'}: no such caption TSV" in capsys.readouterr().err
    code = main(["build", str(tmp_path / "a.warc.gz"), "--configs", "web", "--captions-tsv", "x.tsv", "--quiet"])
    assert code == 2 and "--captions-tsv" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_dataset_deviations_are_in_the_docs() -> None:
    from builder.publish.fidelity import dataset_markdown_table

    docs = Path(__file__).resolve().parent.parent / "docs" / "web.md"
    assert dataset_markdown_table() in docs.read_text(encoding="utf-8")


# ---- a URL's captions do not depend on the sharding (one shard's task at a time) ----

R, S = "http://r.example/same.jpg", "http://s.example/same.jpg"
UNCAPTIONED = [  # the TSV gives the captions; two URLs twice each (sets of one URL each: no §5.1.2 bound)
    (R, "", BICYCLE, "kept"),
    (S, "", HARBOUR, "kept"),
    ("http://c.example/fail.jpg", "", None, "not_downloaded"),
    (R, "", BICYCLE, "kept"),
    (S, "", HARBOUR, "kept"),
]
UNCAPTIONED_TSV = (
    f"a red bicycle leaning on a wall\t{R}\n"
    f"a harbour at dawn with fishing boats\t{S}\n"
    "never downloaded\thttp://c.example/fail.jpg\n"
    f"a bicycle, red, by a wall\t{R}\n"
    f"fishing boats moored in a small harbour\t{S}\n"
)


def pairs_of(folder: Path) -> set[tuple[str, str, str, str]]:
    return {(r["file1"], r["sentence1"], r["file2"], r["sentence2"]) for r in rows_of(folder)}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_same_samples_in_one_shard_or_two_give_the_same_pairs(tmp_path: Path, layout: str) -> None:
    tsv = tmp_path / "cc.tsv"
    tsv.write_text(UNCAPTIONED_TSV, encoding="utf-8")
    found = {}
    for per_shard in (5, 3):  # one shard; each repeated URL's samples in shards 0 and 1
        write_img2dataset(tmp_path / f"by{per_shard}", layout, UNCAPTIONED, per_shard=per_shard)
        out = tmp_path / f"out{per_shard}"
        extra = ("--captions-tsv", str(tsv), "--workers", "2", "--splits", "none", "--quiet")
        assert build_cli(tmp_path / f"by{per_shard}", out, *extra) == 0
        found[per_shard] = pairs_of(out)
        dataset = funnel_of(out)["dataset"]
        assert (dataset["tsv_rows"], dataset["tsv_rows_matched"], dataset["records"], dataset["images"]) == (5, 5, 5, 4)
    assert found[5] == found[3]
    assert found[3] == {
        (R, "a red bicycle leaning on a wall", R, "a bicycle, red, by a wall"),
        (S, "a harbour at dawn with fishing boats", S, "fishing boats moored in a small harbour"),
    }


def test_real_img2dataset_output_gives_the_same_pairs_in_every_layout_and_sharding(tmp_path: Path) -> None:
    """img2dataset's own output of real rows (tests/data/captions/README.md): one URL with two captions, in two
    shards or in one, the shards' rows in the order the downloads finished; a caption holding tabs."""
    found = {}
    for folder in ("webdataset", "parquet", "parquet_one_shard", "files"):
        out = tmp_path / folder
        extra = () if folder == "files" else ("--captions-tsv", str(REAL_TSV))  # the files run kept its captions
        assert (
            build_cli(REAL / "img2dataset" / folder, out, *extra, "--workers", "2", "--splits", "none", "--quiet") == 0
        )
        found[folder] = pairs_of(out)
        record = funnel_of(out)
        dataset = record["dataset"]
        assert (dataset["records"], dataset["images"]) == (6, 4)
        assert dataset["skipped"]["not_downloaded"] == dataset["skipped"]["under_400x400"] == 1
        assert dataset["records"] == dataset["images"] + sum(dataset["skipped"].values())
        assert record["problems"] == []
    assert found["webdataset"] == found["parquet"] == found["parquet_one_shard"] == found["files"]
    assert (TELEFLORA, REAL_CAPTIONS[0], TELEFLORA, REAL_CAPTIONS[3]) in found["webdataset"]


# ---- the caption TSV is joined to the samples by URL in the engine, never in a shard's task ----

U = [f"http://u.example/{n}.jpg" for n in range(8)]
MIXED = [  # repeated URLs across shards, own captions beside TSV ones, skips, an unusable URL, a small image
    (U[1], "", HARBOUR, "kept"),
    (U[2], "", BICYCLE, "kept"),
    (U[3], "its own caption", HARBOUR, "kept"),
    (U[1], "", HARBOUR, "kept"),
    (U[4], b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01", HARBOUR, "unreadable_caption"),
    (U[5], "", None, "not_downloaded"),
    (U[2], "", BICYCLE, "kept"),
    ("http://[unusable/x.jpg", "", QUAY, "kept"),
    (U[1], "", HARBOUR, "kept"),
    (U[6], " \t ", QUAY, "kept"),
    (U[7], "", photo((300, 500), 3), "kept"),
    (U[2], "", BICYCLE, "kept"),
]
MIXED_TSV = (
    f"the first of one\t{U[1]}\nthe only row of two\t{U[2]}\na row of three\t{U[3]}\na row of four\t{U[4]}\n"
    f"five, never downloaded\t{U[5]}\nthe second of one\t{U[1]}\na caption for an unusable URL\thttp://[unusable/x.jpg\n"
    f"six from the TSV\t{U[6]}\nseven, too small\t{U[7]}\nno tab here\nnobody downloaded me\thttp://z.example/0.jpg\n"
)


def references_of(folder: Path) -> set[tuple[str, str, str]]:
    files = sorted((folder / "references").glob("*.parquet"))
    rows = pa.concat_tables([pq.read_table(file) for file in files]).to_pylist()
    return {(row["record"], row["text"], row["source"]) for row in rows}


def filler_rows(rows: int) -> str:
    """TSV rows of pictures nobody downloaded, every URL twice."""
    return "".join(f"caption of a picture nobody downloaded {n}\thttp://x.example/{n // 2}.jpg\n" for n in range(rows))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_engines_join_gives_each_sample_the_readers_caption(tmp_path: Path, layout: str) -> None:
    """Every sample the build keeps has the caption and source the reader gives it, reading the whole folder and
    the TSV in one process (the rule of ImageDataset), whatever the sharding: a URL's TSV rows in order to its
    samples in key order, one row to every sample of a URL named once, none past a URL's rows, own captions
    first, an unreadable caption never replaced; a TSV row counts as matched once per shard it went to."""
    from builder.sources.img2dataset import ImageDataset

    tsv = tmp_path / "cc.tsv"
    tsv.write_text(MIXED_TSV, encoding="utf-8")
    for per_shard, matched in ((12, 9), (4, 11), (3, 11)):
        folder = tmp_path / f"by{per_shard}"
        write_img2dataset(folder, layout, MIXED, per_shard=per_shard)
        out = tmp_path / f"out{per_shard}"
        extra = ("--captions-tsv", str(tsv), "--workers", "2", "--quiet")
        assert main(["build", str(folder), "--configs", "references", "--output", str(out), *extra]) == 0
        kept = [r for r in ImageDataset(folder, tsv) if not isinstance(r.image, str) and r.key is not None]
        usable = {(r.key, r.caption, r.source) for r in kept if not r.url.startswith("http://[")}
        assert references_of(out) == usable and len(usable) == 7
        record = json.loads((out / "references" / "funnel.json").read_text(encoding="utf-8"))
        dataset = record["dataset"]
        said = {reason: n for reason, n in dataset["skipped"].items() if n}
        assert said == dict.fromkeys(
            ("not_downloaded", "unreadable_caption", "no_caption", "under_400x400", "no_url"), 1
        )
        assert (dataset["records"], dataset["images"], dataset["tsv_rows"], dataset["tsv_rows_unreadable"]) == (
            12,
            7,
            10,
            1,
        )
        assert (dataset["tsv_rows_matched"], dataset["tsv_rows_without_an_image"]) == (matched, max(0, 10 - matched))
        number, place = divmod(7, per_shard)  # MIXED[7]: the unusable URL
        shard = f"{number:05d}" + {"files": "", "webdataset": ".tar", "parquet": ".parquet"}[layout]
        assert record["problems"][0] == f"{tsv}:10: expected a caption and a URL separated by a tab, found 1 field(s)"
        assert f"{folder / shard}: sample {number:05d}{place:04d} has no usable URL; left out" in record["problems"]


def test_a_shard_task_holds_and_reads_nothing_of_the_tsv(tmp_path: Path) -> None:
    """The shards' tasks are the same objects (the same pickled bytes) whatever the TSV's size: none names it, so
    none reads it; the TSV is read in parts, each a task of its own bytes."""
    import pickle

    from builder.extract.captiontsv import MAX_PART_BYTES, tsv_part_tasks
    from builder.extract.datasetrefs import dataset_tasks

    write_img2dataset(tmp_path / "ds", "webdataset", MIXED, per_shard=4)
    pickled = []
    for rows in (1_000, 10_000):
        tsv = tmp_path / f"cc-{rows}.tsv"
        tsv.write_text(filler_rows(rows), encoding="utf-8")
        tasks = dataset_tasks(tmp_path / "ds", True, 6, tmp_path / "work")
        assert all(str(tsv) not in repr(task) for task in tasks)
        pickled.append([pickle.dumps(task) for task in tasks])
        parts = tsv_part_tasks(tsv, tmp_path / "work", 2)
        assert sum(part.end - part.start for part in parts) == tsv.stat().st_size
        assert all(part.end - part.start <= MAX_PART_BYTES for part in parts)
    assert pickled[0] == pickled[1]


def test_the_local_driver_holds_nothing_per_tsv_row(tmp_path: Path) -> None:
    """The build's own process peaks the same in Python memory for a TSV of 2,000 rows and one of 40,000 (before,
    it held the TSV's URLs in a dict to find the ones it repeats: 1.1 → 4.5 MB); the workers read the TSV."""
    import tracemalloc

    write_img2dataset(tmp_path / "ds", "files", MIXED, per_shard=4)
    peaks = []
    for number, rows in enumerate((2_000, 2_000, 40_000)):  # the first build imports and fills caches
        tsv = tmp_path / f"cc-{rows}.tsv"
        tsv.write_text(MIXED_TSV + filler_rows(rows), encoding="utf-8")
        options = {"workers": 2, "show_progress": False, "captions_tsv": str(tsv)}
        tracemalloc.start()
        build([str(tmp_path / "ds")], [CAPTIONS], tmp_path / f"out-{number}", **options)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert funnel_of(tmp_path / f"out-{number}")["dataset"]["tsv_rows"] == rows + 10
    assert peaks[2] < peaks[1] + 1_000_000, peaks


def test_what_reaches_the_spark_driver_does_not_grow_with_the_tsv(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TSV of 3,000 rows and one of 30,000 (most of them of images never downloaded, every URL twice): the
    driver receives each task's counters, the join's counts and the first problems, never a TSV row or a
    sample, and broadcasts nothing of them; the two engines write the same bytes and records."""
    from test_web_scale import DriverInbox

    from builder.engines.spark import build_spark

    config = CAPTIONS  # with its splits: assigned in Spark SQL, only totals reach the driver
    write_img2dataset(tmp_path / "ds", "webdataset", MIXED, per_shard=4)
    measured = []
    for rows in (3_000, 30_000):
        tsv = tmp_path / f"cc-{rows}.tsv"
        tsv.write_text(MIXED_TSV + filler_rows(rows), encoding="utf-8")
        folder, options = [str(tmp_path / "ds")], {"captions_tsv": str(tsv), "show_progress": False, "workers": 2}
        inbox = DriverInbox(monkeypatch)
        build_spark(folder, [config], tmp_path / f"spark-{rows}", spark=spark, **options)
        measured.append((inbox.received, inbox.broadcast))
        monkeypatch.undo()
        build(folder, [config], tmp_path / f"local-{rows}", **options)
        files = [sorted((tmp_path / f"{side}-{rows}" / "captions").glob("*")) for side in ("local", "spark")]
        assert [file.read_bytes() for file in files[0]] == [file.read_bytes() for file in files[1]]
        dataset = funnel_of(tmp_path / f"local-{rows}")["dataset"]  # the funnel.json compared above
        assert (dataset["images"], dataset["tsv_rows"]) == (7, rows + 10)
    (received_small, sent_small), (received_large, sent_large) = measured
    assert received_large < 1.2 * received_small + 5_000, measured
    assert sent_large < 1.2 * sent_small + 5_000, measured
