"""The references config: every image–text record that step 0 counts, of every source and every input kind
(a Wikipedia dump, a crawl, an image–caption dataset), each with its page and provenance; local equals Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_img2dataset import SAMPLES, write_img2dataset

from benchmarks.web_crawl import write_shared_images_crawl
from builder.config import GOLD, REFERENCES, SOURCES, WEB, with_references
from builder.engines.local import build
from builder.publish.writer import REFERENCE_ROW_SCHEMA
from wikipedia_ipc import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2"
ARCHIVETEAM = ROOT / "tests" / "data" / "web" / "aut-issue-514.warc"


def rows_of(folder: Path, config: str = "references") -> list[dict]:
    files = sorted((folder / config).glob("*.parquet"))
    return pa.concat_tables([pq.read_table(file) for file in files]).to_pylist()


def funnel_of(folder: Path, config: str = "references") -> dict:
    return json.loads((folder / config / "funnel.json").read_text(encoding="utf-8"))


def references_in(rows: list[dict]) -> set[tuple]:
    return {(row["language"], row["page_id"], row["revision"], row["position"], row["file"]) for row in rows}


def test_a_wikipedia_build_publishes_every_reference_step_0_counts(tmp_path: Path) -> None:
    build([str(SAMPLE)], [GOLD, REFERENCES], tmp_path / "out", tagger="perceptron", workers=1, show_progress=False)
    rows = rows_of(tmp_path / "out")
    record = funnel_of(tmp_path / "out")
    assert [step["name"] for step in record["funnel"]] == ["No filter"]
    assert record["parameters"]["references"] is True and record["parameters"]["sources"] == list(SOURCES)
    assert (
        len(references_in(rows))
        == record["funnel"][0]["references"]
        > funnel_of(tmp_path / "out", "gold")["funnel"][0]["references"]
    )  # every source, not gold's two
    assert record["rows"] == len(rows) and len({row["id"] for row in rows}) == len(rows)
    blitz = [
        row for row in rows if row["page"] == "Belfast Blitz" and row["file"] == "File:Belfast Blitz rubble 1941.jpg"
    ]
    assert {(row["kind"], row["text"]) for row in blitz} == {
        ("caption", "Troops clearing rubble after the May air raid on Belfast"),
        ("alt", "Soldiers with shovels stand among ruined houses."),
    }
    assert all(row["revision"] > 0 and row["record"] is None for row in rows)
    assert {row["kind"] for row in rows} == {"caption", "alt", None}  # a reference with no text is one row
    assert all(row["text"] is None for row in rows if row["kind"] is None)
    assert {row["source"] for row in rows} == set(SOURCES)
    import datasets

    loaded = datasets.load_dataset(str((tmp_path / "out").resolve()), "references", split="train")
    assert loaded.num_rows == len(rows) and loaded.column_names == REFERENCE_ROW_SCHEMA.names
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert f"### `references` – {len(rows):,} image–text records" in card


def test_a_crawl_alone_gives_its_records_with_their_warc_provenance(tmp_path: Path) -> None:
    assert (
        main(["build", str(ARCHIVETEAM), "--configs", "references", "--output", str(tmp_path / "out"), "--quiet"]) == 0
    )
    rows = rows_of(tmp_path / "out")
    assert sorted((row["kind"], row["text"]) for row in rows) == [
        ("alt", "Archiveteam.jpg"),
        ("alt", "Archivetime.png"),
        ("alt", "Powered by MediaWiki"),
    ]
    for row in rows:
        assert row["page"] == "https://wiki.archiveteam.org/" and row["html_lang"] == "en"
        assert row["record"] == "<urn:uuid:c3de830a-1d9a-49cc-8e58-c6467ffc5b02>"
        assert row["date"] == "2021-05-11T18:14:01Z" and row["revision"] == 0


def test_a_dataset_alone_gives_one_record_per_kept_sample(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    write_img2dataset(folder, "files", SAMPLES)
    assert main(["build", str(folder), "--configs", "references", "--output", str(tmp_path / "out"), "--quiet"]) == 0
    rows = rows_of(tmp_path / "out")
    kept = [(url, caption) for url, caption, _, expected in SAMPLES if expected == "kept"]
    assert sorted((row["file"], row["text"]) for row in rows) == sorted(kept)
    assert {row["kind"] for row in rows} == {"caption"} and all(row["record"] for row in rows)


def test_the_references_config_takes_the_build_s_kind_and_identity() -> None:
    web = with_references([WEB.__class__(**{**WEB.__dict__, "equivalence": "phash"}), REFERENCES])[1]
    assert (web.dump_kind, web.equivalence, web.sources, web.splits) == ("web", "phash", ("figure", "table", "alt"), ())
    alone = with_references([REFERENCES], "history")[0]
    assert alone.dump_kind == "history" and alone.sources == SOURCES


def test_spark_gives_the_local_references(tmp_path: Path, spark) -> None:
    from conftest import import_or_skip

    import_or_skip("pyspark")
    from builder.engines.spark import build_spark

    crawl = write_shared_images_crawl(tmp_path / "shared.warc.gz")
    config = WEB.__class__(**{**WEB.__dict__, "equivalence": "pixels", "splits": ()})
    build([str(crawl)], [config, REFERENCES], tmp_path / "local", tagger="perceptron", workers=1, show_progress=False)
    build_spark(
        [str(crawl)],
        [config, REFERENCES],
        tmp_path / "spark",
        tagger="perceptron",
        workers=2,
        show_progress=False,
        spark=spark,
    )
    for name in ("web", "references"):
        local = sorted((tmp_path / "local" / name).glob("*.parquet"))
        spark = sorted((tmp_path / "spark" / name).glob("*.parquet"))
        assert [file.read_bytes() for file in local] == [file.read_bytes() for file in spark]
    rows = rows_of(tmp_path / "local")
    assert len(references_in(rows)) == funnel_of(tmp_path / "local")["funnel"][0]["references"]
    # the images are the pixel equivalence's sets: the PNG and its BMP copy are one image
    assert {row["image"] for row in rows if row["file"].endswith("b.bmp")} == {"https://shared.example.org/img/b.bmp"}


def test_references_with_the_merging_identities_are_summarized_and_carded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A references config pairs nothing: with redirects and SHA-1 merging, the summary and the card say what the
    map merged, and no pair counts (once a KeyError)."""
    from wikipedia_ipc import SAMPLE_DUMP

    table = SAMPLE_DUMP.with_name("enwiki-20240101-sample-image.sql.gz")
    out = tmp_path / "out"
    arguments = ["build", str(SAMPLE_DUMP), "--configs", "references", "gold"]
    arguments += ["--identity", "title", "redirect", "sha1"]
    assert main([*arguments, "--image-table", str(table), "--output", str(out)]) == 0
    assert "Identity map: 18 titles → 16 images\n" in capsys.readouterr().out
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "titles merged by redirect: 2, by SHA-1: 1; images 18 → 16 (2 merged)\n" in card
