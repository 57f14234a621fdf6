"""A page given twice is read once: later copies of a page (a history: of a revision) are skipped and counted.

The first copy in the order of the dumps as given, then of the place in the file, is read, however
many workers read the dumps; every later copy is left out of the grouping, counted in
``funnel.json`` and named in a warning with both files.
"""

from __future__ import annotations

import bz2
import json
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_bronze import ANCHORED, BOATS, BUILT, HISTORY, link

import wikipedia_ipc
from builder.config import BRONZE, GOLD
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build
from builder.extract.tasks import plan_tasks
from builder.sources.files import DumpWarning
from builder.sources.xml import DumpReader

SAMPLE = Path(wikipedia_ipc.SAMPLE_DUMP)


def built(dumps: list[Path], out: Path, config=GOLD, **settings: object) -> tuple[dict, list[str]]:
    """Build one config; its funnel.json and the DumpWarnings the build gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build(dumps, [config], out, tagger="perceptron", show_progress=False, **settings)
    record = json.loads((out / config.name / "funnel.json").read_text(encoding="utf-8"))
    return record, [str(warning.message) for warning in caught if issubclass(warning.category, DumpWarning)]


def parquet_bytes(out: Path, config: str) -> list[bytes]:
    return [path.read_bytes() for path in sorted((out / config).glob("*.parquet"))]


def pair_rows(out: Path, config: str) -> list[dict]:
    return pq.read_table(sorted((out / config).glob("*.parquet"))).to_pylist()


@pytest.fixture(scope="module")
def sample_once(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    out = tmp_path_factory.mktemp("once") / "out"
    built([SAMPLE], out)
    return out


@pytest.fixture(scope="module")
def decompressed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample dump as its plain ``.xml``: the same pages under another file name."""
    path = tmp_path_factory.mktemp("plain") / "enwiki-20240101-sample-pages-articles.xml"
    path.write_bytes(bz2.decompress(SAMPLE.read_bytes()))
    return path


def test_the_sample_and_its_decompressed_copy_give_the_rows_of_one(
    sample_once: Path, decompressed: Path, tmp_path: Path
) -> None:
    record, warned = built([SAMPLE, decompressed], tmp_path / "twice", workers=2)
    once = json.loads((sample_once / "gold" / "funnel.json").read_text(encoding="utf-8"))
    assert parquet_bytes(tmp_path / "twice", "gold") == parquet_bytes(sample_once, "gold")
    assert record["funnel"] == once["funnel"]
    assert record["funnel"][0]["references"] == 44 and record["funnel"][-1]["pairs"] == 10
    pages = sum(1 for _ in DumpReader(SAMPLE))  # every page the build reads: articles, not redirects
    assert record["skipped"]["later_copies_of_pages"] == pages == 37
    assert record["skipped"]["repeated_revision_ids"] == 0
    assert once["skipped"]["later_copies_of_pages"] == 0
    expected = f"{decompressed}: 37 pages already read from {SAMPLE} skipped (the first: page 'Easter Bunny', id 1000)"
    assert warned == [expected] and record["problems"] == [expected]
    assert "later copies of pages: 37" in (tmp_path / "twice" / "README.md").read_text(encoding="utf-8")


def test_the_first_dump_given_is_the_one_read(decompressed: Path, tmp_path: Path, perceptron_available: None) -> None:
    record, warned = built([decompressed, SAMPLE], tmp_path / "out")
    assert record["skipped"]["later_copies_of_pages"] == 37
    assert warned[0].startswith(f"{SAMPLE}: 37 pages already read from {decompressed} skipped")


def harbour_twice() -> list[str]:
    """Harbour (id 1), Fishing port, then Harbour again with another caption: the second Harbour is a later copy."""
    return [
        page_xml("Harbour", "The harbour.\n" + link("Harbour.jpg", BOATS), 1),
        page_xml("Fishing port", "A port.\n" + link("Harbour.jpg", BUILT), 2),
        page_xml("Harbour", "The harbour.\n" + link("Harbour.jpg", ANCHORED), 1),
    ]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_page_twice_inside_one_dump(write_dump, tmp_path: Path, workers: int, perceptron_available: None) -> None:
    dump = write_dump(harbour_twice(), multistream=True)
    tasks, _ = plan_tasks([dump], workers, (0,), tmp_path / "plan")
    ids = [[page.page_id for page in DumpReader(dump, byte_range=task.byte_range)] for task in tasks]
    assert ids == ([[1, 2, 1]] if workers == 1 else [[], [1], [2], [1]])  # two workers: the copies in two tasks
    record, warned = built([dump], tmp_path / "out", workers=workers)
    assert record["funnel"][0]["references"] == 2
    assert [(row["sentence1"], row["sentence2"]) for row in pair_rows(tmp_path / "out", "gold")] == [(BOATS, BUILT)]
    assert record["skipped"]["later_copies_of_pages"] == 1
    assert warned == [f"{dump}: 1 page already read earlier in the same file skipped (the first: page 'Harbour', id 1)"]


def test_resume_keeps_the_page_records(decompressed: Path, tmp_path: Path, perceptron_available: None) -> None:
    """The page records are part of a finished task: a resumed build finds the copies from them, and a task
    whose records are missing is read again."""
    work = tmp_path / "work"
    first, _ = built([SAMPLE, decompressed], tmp_path / "one", work_dir=work)
    records = sorted((work / "references").glob("*.pages.parquet"))
    assert len(records) == 2
    shards = [path.with_name(path.name.replace(".pages.parquet", ".parquet")) for path in records]
    stamps = [shard.stat().st_mtime_ns for shard in shards]
    records[1].unlink()
    second, warned = built([SAMPLE, decompressed], tmp_path / "two", work_dir=work, resume=True)
    assert shards[0].stat().st_mtime_ns == stamps[0] and shards[1].stat().st_mtime_ns != stamps[1]
    assert records[1].is_file()
    assert second["skipped"] == first["skipped"] and second["skipped"]["later_copies_of_pages"] == 37
    assert parquet_bytes(tmp_path / "two", "gold") == parquet_bytes(tmp_path / "one", "gold")
    assert len(warned) == 1


def history_dump(folder: Path, name: str, pages: list[str]) -> Path:
    path = folder / f"enwiki-20240101-pages-meta-history{name}.xml"
    path.write_text(dump_xml(pages), encoding="utf-8")
    return path


def test_overlapping_history_parts_keep_each_revision_once(tmp_path: Path, perceptron_available: None) -> None:
    """Two parts that share Harbour's first revisions give the bronze of the whole history."""
    whole, _ = built([history_dump(tmp_path, "", HISTORY)], tmp_path / "whole", BRONZE)
    harbour = HISTORY[0]
    # part 1: Harbour's revisions 100 and 101, and Fishing port; part 2: all of Harbour, and the lighthouses
    later_revisions = harbour[harbour.index("    <revision>\n      <id>102</id>") : harbour.index("  </page>")]
    part1 = harbour.replace(later_revisions, "")
    assert part1.count("<revision>") == 2 and "<id>101</id>" in part1
    one = history_dump(tmp_path, "1", [part1, HISTORY[1]])
    two = history_dump(tmp_path, "2", [harbour, HISTORY[2]])
    record, warned = built([one, two], tmp_path / "parts", BRONZE)
    assert pair_rows(tmp_path / "parts", "bronze") == pair_rows(tmp_path / "whole", "bronze")
    assert record["funnel"] == whole["funnel"]
    assert record["skipped"]["later_copies_of_pages"] == 2 and record["skipped"]["repeated_revision_ids"] == 0
    assert warned == [
        f"{two}: 2 revisions already read from {one} skipped (the first: revision 100 of page 'Harbour', id 1)"
    ]


def test_a_revision_id_given_twice_in_a_page_keeps_the_first(tmp_path: Path, perceptron_available: None) -> None:
    """Two revisions of Harbour under the id 100, with two captions: the first in file order is read."""
    harbour = page_xml("Harbour", ["The harbour.\n" + link("Harbour.jpg", c) for c in (BOATS, ANCHORED)], 1)
    harbour = harbour.replace("<id>101</id>", "<id>100</id>")
    port = page_xml("Fishing port", "A port.\n" + link("Harbour.jpg", BUILT), 2)
    dump = history_dump(tmp_path, "1", [harbour, port])
    record, warned = built([dump], tmp_path / "out", BRONZE)
    rows = pair_rows(tmp_path / "out", "bronze")
    assert [(row["sentence1"], row["sentence2"], row["revision1"], row["revision2"]) for row in rows] == [
        (BOATS, BUILT, 100, 200)
    ]
    assert record["skipped"]["repeated_revision_ids"] == 1 and record["skipped"]["later_copies_of_pages"] == 0
    assert warned == [
        f"{dump}: 1 revision with the id of a revision of their page already read earlier in the same file but "
        "another text skipped; the first in file order is kept (the first: revision 100 of page 'Harbour', id 1)"
    ]


def test_an_edit_history_read_by_gold_keeps_every_revision(tmp_path: Path, perceptron_available: None) -> None:
    """The revisions of one ``<page>`` are no copies of each other: a history read as pages keeps them all."""
    harbour = page_xml("Harbour", ["The harbour.\n" + link("Harbour.jpg", c) for c in (BOATS, ANCHORED)], 1)
    port = page_xml("Fishing port", "A port.\n" + link("Harbour.jpg", BUILT), 2)
    dump = tmp_path / "harbour.xml"  # the name does not tell: the content says it is a history
    dump.write_text(dump_xml([harbour, port]), encoding="utf-8")
    record, _ = built([dump], tmp_path / "out")
    assert record["funnel"][0]["references"] == 3 and record["revisions"] == 3
    assert record["skipped"]["later_copies_of_pages"] == 0


def test_the_summary_says_how_many_pages_were_copies(
    decompressed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """The sample as .bz2 and as .xml: 94 pages read, 37 of them copies left out, said in one line, not "94 pages";
    the counts add up (94 = 37 copies + 37 mined + 4 redirects + 16 of other namespaces), the references found are
    those of one copy (issue 45, item 9)."""
    from wikipedia_ipc import main

    with pytest.warns(DumpWarning):
        code = main(["build", str(SAMPLE), str(decompressed), "--configs", "gold", "--output", str(tmp_path / "o")])
    assert code == 0
    assert (
        "Read 94 pages, 37 of them copies of pages read before (left out): mined 37 for images, skipped 4 redirects "
        "and 16 pages of other namespaces; found 49 image references"
    ) in capsys.readouterr().out


@pytest.mark.parametrize("dumps", ["articles", "history"])
def test_the_reading_adds_up_alike_on_both_engines(decompressed: Path, tmp_path: Path, spark, dumps: str) -> None:
    """Item 9 of issue 45: a dump given twice is read as one (pages = copies + mined + redirects + other
    namespaces, the copies' references left out), and a references config counts its records, on both engines."""
    from builder.config import REFERENCES
    from builder.engines.spark import build_spark

    given = [SAMPLE, decompressed]
    if dumps == "history":
        history = SAMPLE.with_name("enwiki-20240101-sample-pages-meta-history.xml.bz2")
        plain = tmp_path / history.name.removesuffix(".bz2")
        plain.write_bytes(bz2.decompress(history.read_bytes()))
        given = [history, plain]
    config = REFERENCES  # it reads the kind of dump it is given
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DumpWarning)
        build(given, [config], tmp_path / "local", workers=2, show_progress=False)
        build_spark(given, [config], tmp_path / "spark", workers=2, show_progress=False, spark=spark)
    records = [json.loads((tmp_path / side / "references" / "funnel.json").read_text()) for side in ("local", "spark")]
    expected = {  # one copy of the sample: 37 mined pages (a history: 53 revisions) copied, 49 (66) references
        "articles": {"pages": 94, "revisions": 94, "copies": 37, "copies_of": "pages", "mined": 37},
        "history": {"pages": 94, "revisions": 126, "copies": 53, "copies_of": "revisions", "mined": 74},
    }[dumps]
    for record in records:
        read = record["read"]
        assert read == {**expected, "redirects": 4, "other_namespaces": 16, "references": read["references"]}
        assert read["references"] == record["funnel"][0]["references"] == (49 if dumps == "articles" else 66)
        assert record["funnel"][0]["records"] == record["rows"] == (60 if dumps == "articles" else 84)
    assert records[0]["funnel"] == records[1]["funnel"] and records[0]["read"] == records[1]["read"]
