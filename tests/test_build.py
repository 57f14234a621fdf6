"""The local engine end to end: dataset folder, card, load_dataset, CLI, builder class, determinism."""

from __future__ import annotations

import argparse
import bz2
import json
import re
import tempfile
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

import wikipedia_ipc
from builder.config import GOLD, SILVER
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build
from builder.publish.card import SAMPLE_DUMP
from builder.sources.files import DumpWarning

POSTCARD = "Easter Bunny Postcard 1907.jpg"
FLAG = "Flag of France.svg"
EASTER_BUNNY = (
    "The '''Easter Bunny''' is a folkloric figure.\n"
    f"[[File:{POSTCARD}|thumb|alt=A hare stands on its hind legs and carries several branches."
    "|The 1907 postcard shows the Easter Bunny with a basket.<ref>{{cite web|url=x}}</ref>]]\n"
    f"[[File:{FLAG}|20px]] Rabbits are popular."
)
EOSTRE = (
    "'''Ēostre''' is a goddess.\n"
    f"[[Image:{POSTCARD.replace(' ', '_')}|thumb|alt=A drawing shows an Easter bunny that carries branches."
    "|A rabbit is depicted on an [[Easter]] postcard from 1907.]]"
)
POSTCARD_PAGE = (
    "A '''postcard''' is a card.\n"
    f"[[file:{POSTCARD}|thumb|upright|A postcard featuring the Easter Bunny in 1907]]\n"
    f"[[File:{POSTCARD}|thumb|The 1907 postcard shows the Easter Bunny with a basket (detail).]]"
)
PAGES = [
    page_xml("Easter Bunny", EASTER_BUNNY, 1),
    page_xml("Ēostre", EOSTRE, 2),
    page_xml("Postcard", POSTCARD_PAGE, 3),
    *(
        page_xml(f"Commune {n}", f"[[File:{FLAG}|20px|The flag of France flies over the town hall.]]", 10 + n)
        for n in range(11)
    ),
    page_xml("Lonely", "[[File:Lonely.jpg|thumb|This picture is used on one page only.]]", 30),
]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dump") / "enwiki-20240101-pages-articles.xml"
    path.write_text(dump_xml(PAGES), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(dump: Path, tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    out = tmp_path_factory.mktemp("built") / "wikipedia_ipc"
    build([dump], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    return out


def pairs_of(folder: Path) -> set[tuple[str, str, frozenset[str]]]:
    table = pq.read_table(sorted(folder.glob("*.parquet")))
    return {(r["image"], r["caption_type"], frozenset((r["sentence1"], r["sentence2"]))) for r in table.to_pylist()}


def test_gold_and_silver_pairs(built: Path) -> None:
    image = f"File:{POSTCARD}"
    gold_caption = frozenset(
        {
            "The 1907 postcard shows the Easter Bunny with a basket.",
            "A rabbit is depicted on an Easter postcard from 1907.",
        }
    )
    alt = frozenset(
        {
            "A hare stands on its hind legs and carries several branches.",
            "A drawing shows an Easter bunny that carries branches.",
        }
    )
    detail = frozenset(
        {
            "A rabbit is depicted on an Easter postcard from 1907.",
            "The 1907 postcard shows the Easter Bunny with a basket (detail).",
        }
    )
    assert pairs_of(built / "gold") == {
        (image, "caption", gold_caption),
        (image, "caption", detail),
        (image, "alt", alt),
    }
    silver = pairs_of(built / "silver")
    assert (image, "caption", gold_caption) in silver
    assert (
        image,
        "caption",
        frozenset(
            {"A postcard featuring the Easter Bunny in 1907", "A rabbit is depicted on an Easter postcard from 1907."}
        ),
    ) in silver
    # "… with a basket (detail)." differs from "… with a basket." only by a bracketed expression.
    near_duplicate = frozenset(
        {
            "The 1907 postcard shows the Easter Bunny with a basket.",
            "The 1907 postcard shows the Easter Bunny with a basket (detail).",
        }
    )
    assert all(texts != near_duplicate for _, _, texts in silver)


def test_funnel_counts_the_paper_steps(built: Path) -> None:
    record = json.loads((built / "gold" / "funnel.json").read_text())
    rows = {row["name"]: row for row in record["funnel"]}
    assert [row["name"] for row in record["funnel"]] == [
        "No filter", "References ≥ 2", "References ≤ 10", "Has caption", "Caption words ≥ 6", "Caption is sentence",
        "References ≥ 2", "Unique candidates", "Divergent captions", "Significant caption diff",
    ]  # fmt: skip
    # Postcard: 4 references; flag: 12 (1 + 11 communes); lonely: 1.
    assert (rows["No filter"]["images"], rows["No filter"]["references"]) == (3, 17)
    assert rows["No filter"]["images_refs_ge5"] == 1
    assert record["funnel"][1]["images"] == 2  # the lonely image is gone
    assert record["funnel"][2]["images"] == 1  # the flag (12 references) is gone
    assert record["funnel"][2]["references"] == 4
    assert record["funnel"][-2]["pairs"] == 4  # the near-duplicate pair is still there
    assert record["funnel"][-1]["pairs"] == record["rows"] == 3
    assert record["skipped"]["redirects"] == 0
    assert record["tagger"].startswith("perceptron|nltk-")


def test_card_and_load_dataset_offline(built: Path, tmp_path: Path) -> None:
    card = (built / "README.md").read_text()
    assert "config_name: gold" in card and "config_name: silver" in card
    assert "license: cc-by-sa-4.0" in card and "Caption is sentence" in card
    assert "enwiki-20240101-pages-articles.xml" in card and "dump date 20240101" in card
    gold = datasets.load_dataset(str(built), "gold", split="train", cache_dir=str(tmp_path))
    assert gold.column_names == [
        "id", "image", "caption_type", "sentence1", "sentence2", "page1", "page2", "source1", "source2",
        "revision1", "revision2", "same_page", "file1", "file2", "identity",
    ]  # fmt: skip
    assert len(gold) == 3
    assert {gold[0]["page1"], gold[0]["page2"]} == {"Easter Bunny", "Ēostre"}


def test_same_dump_gives_byte_identical_parquet(dump: Path, built: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build([dump], [GOLD], again, tagger="perceptron", show_progress=False)
    first = sorted((built / "gold").glob("*.parquet"))
    second = sorted((again / "gold").glob("*.parquet"))
    assert [p.name for p in first] == [p.name for p in second]
    assert re.fullmatch(r"train-00000-of-00001-[0-9a-f]{16}\.parquet", first[0].name)
    assert first[0].read_bytes() == second[0].read_bytes()


def test_two_workers_on_a_multistream_dump_give_the_same_rows(write_dump, built: Path, tmp_path: Path) -> None:
    multi = write_dump(PAGES, name="enwiki-20240101-pages-articles-multistream.xml.bz2", multistream=True)
    out = tmp_path / "parallel"
    build([multi], [SILVER], out, tagger="perceptron", workers=2, show_progress=False)
    assert pairs_of(out / "silver") == pairs_of(built / "silver")


def test_cli_prints_the_funnel(
    dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    out = tmp_path / "cli"
    code = wikipedia_ipc.main(
        [
            "build",
            str(dump),
            "--configs",
            "gold",
            "--output",
            str(out),
            "--tagger",
            "perceptron",
            "--workers",
            "1",
            "--quiet",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "| 9 | Significant caption diff |" in printed
    assert f'load_dataset("{out}", "gold")' in printed
    assert "Read 15 pages: mined 15 for images, skipped 0 redirects and 0 pages of other namespaces" in printed
    assert "## gold: 3 pairs" in printed


def test_cli_says_one_page_not_one_pages(
    write_dump, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    single = write_dump([PAGES[0]], name="enwiki-20240101-pages-articles.xml")
    args = ["build", str(single), "--configs", "gold", "--output", str(tmp_path / "one"), "--tagger", "perceptron"]
    assert wikipedia_ipc.main([*args, "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "Read 1 page: mined 1 for images" in printed and "1 pages" not in printed


def test_every_command_option_has_help_text() -> None:
    commands = next(
        action for action in wikipedia_ipc.command_parser()._actions if isinstance(action, argparse._SubParsersAction)
    )
    for name in ("download", "build", "push"):
        for action in commands.choices[name]._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help text"


def test_cli_reports_a_missing_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = wikipedia_ipc.main(["build", str(tmp_path / "missing.xml.bz2"), "--output", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    assert "missing.xml.bz2" in capsys.readouterr().err


def test_datasets_builder_class(
    dump: Path, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    datasets.enable_progress_bars()
    builder = wikipedia_ipc.WikipediaIPC(
        config_name="gold", dump_paths=[str(dump)], tagger="perceptron", cache_dir=str(tmp_path / "cache")
    )
    builder.download_and_prepare()
    rows = builder.as_dataset(split="train")
    assert {(r["image"], r["caption_type"], frozenset((r["sentence1"], r["sentence2"]))) for r in rows} == pairs_of(
        built / "gold"
    )
    assert list(scratch.iterdir()) == []  # no build folder left behind
    assert "tagging" in capsys.readouterr().err  # the pipeline's own progress bars are shown


def test_datasets_builder_class_says_when_no_pair_survives(
    tmp_path: Path, write_dump, perceptron_available: None
) -> None:
    lonely = write_dump([PAGES[-1]], name="enwiki-20240101-pages-articles.xml")
    builder = wikipedia_ipc.WikipediaIPC(
        config_name="gold", dump_paths=[str(lonely)], tagger="perceptron", cache_dir=str(tmp_path / "cache")
    )
    with pytest.raises(ValueError, match="gold: no pair survived the filters"):
        builder.download_and_prepare()


def test_a_failed_dump_is_reported_and_the_others_go_on(dump: Path, tmp_path: Path, perceptron_available: None) -> None:
    broken = tmp_path / "enwiki-20240101-pages-articles2.xml.bz2"
    broken.write_bytes(bz2.compress(dump.read_bytes())[:-40])
    report = build([dump, broken], [SILVER], tmp_path / "out", tagger="perceptron", show_progress=False)
    assert (
        len(report.extraction.failures) == 1 and "pages-articles2.xml.bz2: truncated" in report.extraction.failures[0]
    )
    assert pairs_of(tmp_path / "out" / "silver")  # the good dump's pairs are there
    record = json.loads((tmp_path / "out" / "silver" / "funnel.json").read_text())
    assert record["skipped"]["dumps_that_failed"] == 1


def test_no_replacement_character_is_published(tmp_path: Path, perceptron_available: None) -> None:
    """Bytes that are not UTF-8 in a caption and an alt text: both dropped and counted, never published."""
    path = tmp_path / "enwiki-20240101-pages-articles.xml"
    data = dump_xml(PAGES).encode("utf-8")
    path.write_bytes(data.replace(b"A rabbit is", b"A rab\xffbit is").replace(b"A drawing", b"A dr\xc3awing"))
    out = tmp_path / "out"
    with pytest.warns(DumpWarning, match=r"articles\.xml: 1 invalid UTF-8 byte at byte \d+, in page 'Ēostre' \(id 2\)"):
        build([path], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    for config in ("gold", "silver"):
        record = json.loads((out / config / "funnel.json").read_text())
        assert (record["skipped"]["invalid_utf8_bytes"], record["skipped"]["captions_with_invalid_utf8"]) == (2, 2)
    card = (out / "README.md").read_text()
    assert "invalid utf8 bytes: 2, " in card and "captions with invalid utf8: 2, " in card
    published = [row for table in out.rglob("*.parquet") for row in pq.read_table(table).to_pylist()]
    assert len(published) > 0
    assert not any("\ufffd" in str(row) for row in published)


def test_resume_reuses_finished_parts(dump: Path, tmp_path: Path, perceptron_available: None) -> None:
    work = tmp_path / "work"
    first = build([dump], [GOLD], tmp_path / "one", tagger="perceptron", work_dir=work, show_progress=False)
    shards = sorted((work / "references").glob("*.parquet"))
    stamps = [shard.stat().st_mtime_ns for shard in shards]
    second = build(
        [dump], [GOLD], tmp_path / "two", tagger="perceptron", work_dir=work, show_progress=False, resume=True
    )
    assert [shard.stat().st_mtime_ns for shard in shards] == stamps  # not read again
    assert second.rows == first.rows and second.extraction.read.pages == first.extraction.read.pages
    one = sorted((tmp_path / "one" / "gold").glob("*.parquet"))[0].read_bytes()
    assert one == sorted((tmp_path / "two" / "gold").glob("*.parquet"))[0].read_bytes()
    with pytest.raises(ValueError, match="resume needs the work_dir"):
        build([dump], [GOLD], tmp_path / "three", resume=True)


def test_a_bad_memory_limit_is_refused_before_any_dump_is_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a size"):
        build([SAMPLE_DUMP], [GOLD], tmp_path / "out", tagger="perceptron", memory_limit="lots", show_progress=False)
    assert not (tmp_path / "out").exists()


def test_no_download_is_a_clear_error_naming_what_is_missing(tmp_path: Path) -> None:
    """The docs' build of a download, run where ``download`` never ran, ended in ``max() arg is an empty sequence``:
    the folder looked in and the command that fills it are named instead (round six, item 12)."""
    from builder.sources.download import newest_download

    dumps = tmp_path / "dumps"
    with pytest.raises(ValueError, match=r"^no finished download of simplewiki in .*dumps: ") as missing:
        newest_download("simplewiki", dumps)
    assert "python wikipedia_ipc.py download simplewiki" in str(missing.value)
    assert "wikipedia_ipc.SAMPLE_DUMP" in str(missing.value)  # what build() takes without a download
    (dumps / "simplewiki-20250101").mkdir(parents=True)  # a download stopped before its download.json
    with pytest.raises(ValueError, match=r"\(simplewiki-20250101 has no download\.json: its download stopped"):
        newest_download("simplewiki", dumps)
    for date in ("20240101", "20250201"):
        (dumps / f"simplewiki-{date}").mkdir(exist_ok=True)
        (dumps / f"simplewiki-{date}" / "download.json").write_text("{}", encoding="utf-8")
    (dumps / "simplewiki-20240101-copy").mkdir()  # not a run of download's naming
    (dumps / "enwiki-20990101").mkdir()
    (dumps / "enwiki-20990101" / "download.json").write_text("{}", encoding="utf-8")
    assert newest_download("simplewiki", dumps) == dumps / "simplewiki-20250201"
