"""The Spark engine runs the same stages as the local engine and must give the same rows (and bytes in one file).

Every test builds on the run's one ``local[2]`` session (``spark``, from conftest.py), which a build given a session
leaves running; the local engine's build of the sample, which several tests compare with, is made once per module.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_bronze import HISTORY
from test_pairs import MOORED, STEP_7_TO_9_PAGES, link

import builder.filters.chain
import builder.publish.writer
import wikipedia_ipc
from builder.config import BRONZE, GOLD, SILVER, SOURCES
from builder.data.make_sample import IMAGE_TABLE, dump_xml, page_xml
from builder.engines.core import STAGES
from builder.engines.local import build
from builder.engines.spark import build_spark
from builder.extract.tasks import plan_tasks


def same_output(first: Path, second: Path, config: str) -> None:
    """The same parquet files, split by split, byte for byte; the same funnel and split record."""
    one = sorted((first / config).glob("*.parquet"))
    two = sorted((second / config).glob("*.parquet"))
    assert [p.name for p in one] == [p.name for p in two]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(one, two, strict=True))
    record_one = json.loads((first / config / "funnel.json").read_text())
    record_two = json.loads((second / config / "funnel.json").read_text())
    assert record_one["funnel"] == record_two["funnel"]
    assert record_one.get("splits") == record_two.get("splits")


def same_rows(first: Path, second: Path, config: str) -> int:
    """The rows of both builds' shards, read in shard order, are equal one by one; returns how many."""
    one = pq.read_table(sorted((first / config).glob("*.parquet"))).to_pylist()
    two = pq.read_table(sorted((second / config).glob("*.parquet"))).to_pylist()
    assert one == two
    funnel_one = json.loads((first / config / "funnel.json").read_text())["funnel"]
    funnel_two = json.loads((second / config / "funnel.json").read_text())["funnel"]
    assert funnel_one == funnel_two
    return len(one)


@pytest.fixture(scope="module")
def local_sample(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    """The local engine's gold and silver of the sample (perceptron), built once for the tests that compare with it.

    A config's files do not depend on the build's other configs: this gold is a gold-only build's, byte for byte.
    """
    out = tmp_path_factory.mktemp("local-sample") / "local"
    build([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    return out


def test_sample_gold_and_silver(spark, tmp_path: Path, perceptron_available: None) -> None:
    """Gold, silver with three splits and silver without splits, from one build of the sample on each engine."""
    # gold keeps 80/10/10 (all its pairs fall into train); silver at 60/20/20 falls into all three splits;
    # "whole" is silver with no splits, which gives one train split and no split record
    whole = dataclasses.replace(SILVER, name="whole", splits=())
    configs = [GOLD, dataclasses.replace(SILVER, splits=(0.6, 0.2, 0.2)), whole]
    build([wikipedia_ipc.SAMPLE_DUMP], configs, tmp_path / "local", tagger="perceptron", show_progress=False)
    report = build_spark(
        [wikipedia_ipc.SAMPLE_DUMP], configs, tmp_path / "spark", tagger="perceptron", workers=2, spark=spark
    )
    assert report.rows == {"gold": 10, "silver": 20, "whole": 20}  # the presets' sources: no galleries
    assert list(report.clock.seconds()) == list(STAGES)  # each stage timed where Spark carries it out
    same_output(tmp_path / "local", tmp_path / "spark", "gold")
    same_output(tmp_path / "local", tmp_path / "spark", "silver")
    silver = {path.name.split("-")[0] for path in (tmp_path / "spark" / "silver").glob("*.parquet")}
    assert silver == {"train", "validation", "test"}
    assert {path.name.split("-")[0] for path in (tmp_path / "spark" / "gold").glob("*.parquet")} == {"train"}
    assert report.splits["silver"]["shared_images"] == report.splits["silver"]["shared_texts"] == 0
    # no splits gives one train split
    assert "whole" not in report.splits
    assert [path.name[:6] for path in (tmp_path / "spark" / "whole").glob("*.parquet")] == ["train-"]
    same_output(tmp_path / "local", tmp_path / "spark", "whole")


def test_splits_of_pairs_over_the_bound_are_the_local_engines(
    spark, tmp_path: Path, local_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config over the one-task bound (here 3 pairs): its pairs spread over more partitions and contracted
    partition by partition, the links merged as their number asks; the same files and split record as the local
    engine's."""
    import builder.engines.spark.engine

    monkeypatch.setattr(builder.engines.spark.engine, "SPLITS_IN_ONE_TASK", 3)
    report = build_spark([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path, tagger="perceptron", spark=spark)
    assert report.rows == {"gold": 10, "silver": 20}
    same_output(local_sample, tmp_path, "gold")
    same_output(local_sample, tmp_path, "silver")


def test_sample_with_the_identity_map(spark, tmp_path: Path, perceptron_available: None) -> None:
    """Redirects and SHA-1 merge the same clusters on both engines: same parquet bytes, funnels and identity counts."""
    configs = [replace(config, sources=SOURCES, identities=("redirect", "sha1")) for config in (GOLD, SILVER)]
    local, remote = tmp_path / "local", tmp_path / "spark"
    build(
        [wikipedia_ipc.SAMPLE_DUMP],
        configs,
        local,
        tagger="perceptron",
        show_progress=False,
        image_tables=[IMAGE_TABLE],
    )
    report = build_spark(
        [wikipedia_ipc.SAMPLE_DUMP],
        configs,
        remote,
        tagger="perceptron",
        workers=2,
        spark=spark,
        image_tables=[IMAGE_TABLE],
    )
    assert report.rows == {"gold": 14, "silver": 25}
    for config in ("gold", "silver"):
        same_output(local, remote, config)
        identity = [json.loads((out / config / "funnel.json").read_text())["identity"] for out in (local, remote)]
        assert identity[0] == identity[1]
        assert identity[0]["images_merged"] == 2


def test_bronze_history(spark, tmp_path: Path, perceptron_available: None) -> None:
    dump = tmp_path / "enwiki-20240101-pages-meta-history1.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    build([dump], [BRONZE], tmp_path / "local", tagger="perceptron", show_progress=False)
    build_spark([dump], [BRONZE], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark)
    same_output(tmp_path / "local", tmp_path / "spark", "bronze")


def test_unique_candidates_across_images(spark, tmp_path: Path, perceptron_available: None) -> None:
    """Step 7 is build-wide: the first pair in image order is kept, whatever the partitions."""
    dump = tmp_path / "enwiki-20240101-pages-articles.xml"
    dump.write_text(dump_xml(STEP_7_TO_9_PAGES), encoding="utf-8")
    build([dump], [SILVER], tmp_path / "local", tagger="perceptron", show_progress=False)
    report = build_spark([dump], [SILVER], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark)
    assert report.rows == {"silver": 1}
    same_output(tmp_path / "local", tmp_path / "spark", "silver")


def test_executors_write_range_partitioned_shards(
    spark, tmp_path: Path, local_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pairs are built, filtered and written on the executors only: the driver never makes a pair.

    Executors run in Python worker processes of their own, so breaking pair construction
    and pair rows in this (the driver's) process must not change the build.
    """

    def not_on_the_driver(*arguments: object) -> None:
        raise AssertionError("the driver made a pair")

    monkeypatch.setattr(builder.filters.chain, "build_pairs", not_on_the_driver)
    monkeypatch.setattr(builder.publish.writer, "pair_row", not_on_the_driver)
    out = tmp_path / "spark"
    report = build_spark(
        [wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], out, tagger="perceptron", workers=2, spark=spark, rows_per_shard=3
    )
    assert report.rows == {"gold": 10, "silver": 20}
    assert same_rows(local_sample, out, "gold") == 10
    assert same_rows(local_sample, out, "silver") == 20
    train = sorted((out / "silver").glob("train-*.parquet"))
    assert len(train) >= 2 and all(f"-of-{len(train):05d}-" in path.name for path in train)  # numbered per split
    gold = sorted((out / "gold").glob("*.parquet"))
    assert len(gold) >= 3  # 10 rows in ranges of about 3: several executors wrote shards
    assert all(f"-of-{len(gold):05d}-" in path.name for path in gold)
    card = json.loads((out / "gold" / "funnel.json").read_text())["wikipedia_ipc"]["files"]
    assert card == [path.name for path in gold]
    assert not list(out.glob(".wikipedia_ipc-staging-*"))


def test_a_python_worker_loads_its_tagger_once_and_settles(spark, perceptron_available: None) -> None:
    """Tagging tasks on one Python worker share its model (built on the first, not per partition), and a worker
    that ran the toolkit's first task has its loaded objects out of the collector's view (PySpark collects after
    every task: tens of milliseconds each, with the toolkit loaded)."""

    def worker_state(part):  # noqa: ANN001, ANN202 - shipped by value: the workers do not import the tests
        import gc

        from builder.engines.spark import engine

        list(engine._tag_texts({"en": "perceptron"}, [(("en", "A dog runs on the beach."), "Beach.jpg")]))
        yield os.getpid(), id(engine._worker_tagger("perceptron", "en")), gc.get_freeze_count() > 0

    seen = spark.sparkContext.parallelize(range(12), 12).mapPartitions(worker_state).collect()
    taggers: dict[int, set[int]] = {}
    for pid, tagger, frozen in seen:
        taggers.setdefault(pid, set()).add(tagger)
        assert frozen
    assert len(seen) == 12 and all(len(ids) == 1 for ids in taggers.values()), seen
    assert len(taggers) < 12  # the workers were reused: some worker tagged several partitions


def test_each_text_is_tagged_once_and_reaches_every_image_that_has_it(monkeypatch, perceptron_available: None) -> None:
    """The tagging stage's two steps on the executors: an image's texts once each (none in a language without a
    tagger), then, in a partition sorted by text, each text tagged once, its tags keyed by every image that has it."""
    from builder.engines.spark import engine
    from builder.filters.captions import tag_batch
    from builder.filters.tagging import get_tagger

    rows = [
        ("A.jpg", {"language": "en", "caption": "A dog runs.", "alt": ""}),
        ("A.jpg", {"language": "en", "caption": "A dog runs.", "alt": "Dog"}),
        ("B.jpg", {"language": "en", "caption": "A dog runs.", "alt": ""}),
        ("B.jpg", {"language": "xx", "caption": "Ein Hund.", "alt": ""}),
    ]
    texts = sorted(engine._texts_of(frozenset({"en"}), rows))
    dog, runs = ("en", "Dog"), ("en", "A dog runs.")
    assert texts == [(runs, "A.jpg"), (runs, "B.jpg"), (dog, "A.jpg")]
    batches: list[list[str]] = []

    def spied(batch: list[str], tagger):  # noqa: ANN001, ANN202 - the real tagging, its batches recorded
        batches.append(list(batch))
        return tag_batch(batch, tagger)

    monkeypatch.setattr(engine, "tag_batch", spied)
    found = sorted(engine._tag_texts({"en": "perceptron"}, texts))
    tags = dict(
        zip(["A dog runs.", "Dog"], tag_batch(["A dog runs.", "Dog"], get_tagger("perceptron", "en")), strict=True)
    )
    assert batches == [["A dog runs.", "Dog"]]
    assert found == sorted(
        [("A.jpg", (runs, tags["A dog runs."])), ("B.jpg", (runs, tags["A dog runs."])), ("A.jpg", (dog, tags["Dog"]))]
    )


def test_no_pair_survives(spark, tmp_path: Path, perceptron_available: None) -> None:
    """A config without pairs gets the local engine's one shard with no rows."""
    dump = tmp_path / "enwiki-20240101-pages-articles.xml"
    pages = [page_xml(title, "Text.\n" + link("Harbour.jpg", MOORED), number) for number, title in enumerate("AB")]
    dump.write_text(dump_xml(pages), encoding="utf-8")  # one pair, of equal captions: step 8 drops it
    build([dump], [SILVER], tmp_path / "local", tagger="perceptron", show_progress=False)
    report = build_spark([dump], [SILVER], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark)
    assert report.rows == {"silver": 0}
    same_output(tmp_path / "local", tmp_path / "spark", "silver")


def test_spark_submit_local_mode(tmp_path: Path, local_sample: Path) -> None:
    """The ``spark-submit`` command of docs/building.md builds the sample as the local engine does."""
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    root = Path(wikipedia_ipc.__file__).resolve().parent
    environment = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
    }
    command = [str(submit), "--master", "local[2]", "wikipedia_ipc.py", "build", "--engine", "spark"]
    command += ["--tagger", "perceptron", "--quiet", "--output", str(tmp_path / "spark")]
    done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    history = wikipedia_ipc.SAMPLE_DUMP.with_name("enwiki-20240101-sample-pages-meta-history.xml.bz2")
    build([history], [BRONZE], tmp_path / "local", tagger="perceptron", show_progress=False)
    for config in ("gold", "silver"):
        same_output(local_sample, tmp_path / "spark", config)
    same_output(tmp_path / "local", tmp_path / "spark", "bronze")  # no dump given: bronze too, from its history


def test_a_french_build_tags_in_french_on_the_executors(spark, tmp_path: Path) -> None:
    """The executors rebuild the French tagger (spaCy, UD), not the English one: the rows are the local engine's."""
    from test_french_build import FIXTURE

    from builder.filters.tagging import TaggerUnavailable, get_tagger

    try:
        get_tagger("auto", "fr")
    except TaggerUnavailable as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(error))
    build([FIXTURE], [GOLD, SILVER], tmp_path / "local", show_progress=False)
    report = build_spark([FIXTURE], [GOLD, SILVER], tmp_path / "spark", tagger="auto", workers=2, spark=spark)
    assert report.rows["gold"] > 0 and report.rows["silver"] > report.rows["gold"]
    for config in ("gold", "silver"):
        same_output(tmp_path / "local", tmp_path / "spark", config)


def test_several_languages_and_the_crosslingual_config(spark, tmp_path: Path) -> None:
    """A build over four editions (per-language silver and cross-lingual pairs) gives the local engine's rows."""
    from test_crosslingual import CROSSLINGUAL, berlin_dumps

    dumps = berlin_dumps(("de", "fr", "ja", "he"))
    configs = [replace(config, caption_rule="none") for config in (SILVER, CROSSLINGUAL)]
    local = build(list(dumps), configs, tmp_path / "local", workers=2, show_progress=False, languages=dumps)
    remote = build_spark(list(dumps), configs, tmp_path / "spark", workers=2, spark=spark, languages=dumps)
    assert set(remote.rows) == {"de.silver", "fr.silver", "he.silver", "ja.silver", "crosslingual"}
    assert remote.rows == local.rows and remote.rows["crosslingual"] > 0
    for config in remote.rows:
        same_output(tmp_path / "local", tmp_path / "spark", config)
    card = [(tmp_path / out / "README.md").read_text(encoding="utf-8") for out in ("local", "spark")]
    assert card[0] == card[1]


def test_crosslingual_pairs_tagged_in_each_language(spark, tmp_path: Path, perceptron_available: None) -> None:
    """English captions tagged by the perceptron, French ones by spaCy's French pipeline, on the executors."""
    from test_crosslingual import CROSSLINGUAL, berlin_dumps

    dumps = berlin_dumps(("en", "fr"))
    configs = [CROSSLINGUAL]
    local = build(list(dumps), configs, tmp_path / "local", show_progress=False, languages=dumps)
    remote = build_spark(list(dumps), configs, tmp_path / "spark", workers=2, spark=spark, languages=dumps)
    assert remote.rows == local.rows
    for config in remote.rows:
        same_output(tmp_path / "local", tmp_path / "spark", config)
    record = json.loads((tmp_path / "spark" / "crosslingual" / "funnel.json").read_text())
    assert record["tagger"].startswith("en: ") and "; fr: spacy" in record["tagger"]
    assert record["funnel"][4]["captions"] > 0  # the caption rule judged texts of both languages


def test_local_files_kept_apart_on_spark(spark, tmp_path: Path) -> None:
    """An image table of dewiki's own uploads takes the same references out of the cross-lingual config."""
    from test_crosslingual import CROSSLINGUAL, berlin_dumps

    dumps = berlin_dumps(("de", "en"))
    config = replace(CROSSLINGUAL, caption_rule="none", splits=())
    build(list(dumps), [config], tmp_path / "commons", show_progress=False, languages=dumps)
    local_file = pq.read_table(next((tmp_path / "commons" / "crosslingual").glob("*.parquet")))["image"][0].as_py()
    table = tmp_path / "dewiki-20190601-image.sql"
    name = local_file.removeprefix("File:").replace(" ", "_").replace("'", "\\'")
    table.write_text(
        "CREATE TABLE `image` (\n  `img_name` varbinary(255) NOT NULL DEFAULT ''\n) ENGINE=InnoDB;\n"
        f"INSERT INTO `image` VALUES ('{name}');\n",
        encoding="utf-8",
    )
    settings = {"languages": dumps, "image_tables": [table]}
    build(list(dumps), [config], tmp_path / "local", show_progress=False, **settings)
    build_spark(list(dumps), [config], tmp_path / "spark", workers=2, spark=spark, **settings)
    same_output(tmp_path / "local", tmp_path / "spark", "crosslingual")
    records = [json.loads((tmp_path / out / "crosslingual" / "funnel.json").read_text()) for out in ("local", "spark")]
    assert (
        records[0]["local_files"]
        == records[1]["local_files"]
        == {
            "image_tables": {"dewiki": 1},
            "references_kept_apart": 1,
        }
    )


def test_history_pages_split_across_tasks(spark, tmp_path: Path, write_dump, perceptron_available: None) -> None:
    """A history page of 1,500 revisions, cut into tasks inside the page, gives the local engine's bronze rows."""
    from test_history_split import long_history

    pages = [
        page_xml("Pier", ["[[File:Pier.jpg|thumb|The pier is long]]"] * 3, 1),
        page_xml("Harbour", long_history()[:1500], 2),
    ]
    dump = write_dump(pages, name="enwiki-20240101-pages-meta-history1.xml")
    tasks, _ = plan_tasks([dump], 2, (0,), tmp_path / "plan", history=True)
    assert len(tasks) > 2
    local = build([dump], [BRONZE], tmp_path / "local", tagger="perceptron", workers=1, show_progress=False)
    remote = build_spark([dump], [BRONZE], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark)
    assert remote.rows == local.rows
    assert remote.extraction.read == local.extraction.read and remote.extraction.problems == local.extraction.problems
    same_output(tmp_path / "local", tmp_path / "spark", "bronze")


@pytest.mark.parametrize("name", ["sample", "inside"])
def test_later_copies_are_left_out_as_the_local_engine_does(
    spark, tmp_path: Path, write_dump, local_sample: Path, name: str
) -> None:
    """The sample with its decompressed copy, and a page twice in one multistream dump cut into tasks."""
    import bz2

    from test_copies import harbour_twice

    if name == "sample":
        plain = tmp_path / "enwiki-20240101-sample-pages-articles.xml"
        plain.write_bytes(bz2.decompress(Path(wikipedia_ipc.SAMPLE_DUMP).read_bytes()))
        dumps = [wikipedia_ipc.SAMPLE_DUMP, plain]
    else:
        dumps = [write_dump(harbour_twice(), name="enwiki-20240101-pages-articles-copies.xml.bz2", multistream=True)]
    local = build(dumps, [GOLD], tmp_path / name / "local", tagger="perceptron", show_progress=False)
    remote = build_spark(dumps, [GOLD], tmp_path / name / "spark", tagger="perceptron", workers=2, spark=spark)
    same_output(tmp_path / name / "local", tmp_path / name / "spark", "gold")
    assert remote.extraction.later_copies == local.extraction.later_copies == (37 if name == "sample" else 1)
    assert remote.extraction.problems == local.extraction.problems
    if name == "sample":  # the sample read once: its copy changed nothing
        same_output(local_sample, tmp_path / "sample" / "spark", "gold")


def test_history_copies_on_spark(spark, tmp_path: Path, perceptron_available: None) -> None:
    """Overlapping history parts and a revision id given twice: the local engine's bronze and counts."""
    reused = page_xml("Pier", [link("Pier.jpg", "The pier is long"), link("Pier.jpg", "The pier was built")], 4)
    reused = reused.replace("<id>401</id>", "<id>400</id>")
    one = tmp_path / "enwiki-20240101-pages-meta-history1.xml"
    one.write_text(dump_xml(HISTORY[:2] + [reused]), encoding="utf-8")
    two = tmp_path / "enwiki-20240101-pages-meta-history2.xml"
    two.write_text(dump_xml([HISTORY[0], HISTORY[2]]), encoding="utf-8")
    local = build([one, two], [BRONZE], tmp_path / "local", tagger="perceptron", show_progress=False)
    remote = build_spark([one, two], [BRONZE], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark)
    assert (local.extraction.later_copies, local.extraction.reused_revision_ids) == (4, 1)
    assert (remote.extraction.later_copies, remote.extraction.reused_revision_ids) == (4, 1)
    assert remote.extraction.problems == local.extraction.problems
    same_output(tmp_path / "local", tmp_path / "spark", "bronze")


def test_spark_computes_the_identity_map_as_the_process_does(spark) -> None:
    """The map in Spark SQL, over RDDs as the engine holds them: IdentityMap's rows and counts, on chains, cycles
    and redirects into SHA-1 groups."""
    from test_identity import IDENTITY_CASES, file_titles, in_process, in_tables

    from builder.engines.spark.sql import SparkTables

    context = spark.sparkContext
    for case in ("cycles, and a chain into one", "a long tail into a long cycle", "a redirect into a SHA-1 group",
                 "groups joined through redirects and a cycle"):  # fmt: skip
        redirects, names = file_titles(*IDENTITY_CASES[case])
        with SparkTables(spark, []) as tables:
            tables.strings("redirects", context.parallelize(redirects, 2), ("source", "target"))
            tables.strings("image_names", context.parallelize(names, 2), ("name", "sha1"))
            assert in_tables(tables) == in_process(redirects, names), case


def test_spark_assigns_the_splits_as_the_union_find_does(spark) -> None:
    """The splits of pairs as the engine holds them, by each of its ways (one task; contracted partition by
    partition with the links in one task, or in Spark SQL's rounds; a partition over the bound spread first): the
    local engine's statistics and each image's split, on random graphs of texts shared across partitions and on
    one long chain."""
    import random

    from test_splits import WORDS, chain_of_pairs

    from builder.engines.spark.splits import route_splits
    from builder.engines.spark.sql import SparkTables
    from builder.publish.splits import assign, image_key

    generator = random.Random(7)
    texts = WORDS + [f"caption {n}" for n in range(40)]
    graphs = [
        [
            {"image": f"File:{generator.randrange(30)}.jpg", "sentence1": generator.choice(texts),
             "sentence2": generator.choice(texts)}
            for _ in range(60)
        ]
        for _ in range(2)
    ]  # fmt: skip
    sparse = [
        {"image": f"File:{n}.jpg", "sentence1": f"caption {n}", "sentence2": f"caption {n + 1 if n % 3 else n + 2}"}
        for n in range(90)
    ]  # chains of three images through shared captions, cut by the partitions
    for rows in [*graphs, sparse, chain_of_pairs(8)]:
        fractions = (1 / 3, 1 / 3, 1 / 3)
        expected = assign(rows, fractions)
        wanted = {row["image"]: expected.by_image[image_key(row["image"])] for row in rows}
        # links in SQL: twelve partitions, each within the bound, whose links exceed it (a bound of one pair would
        # spread the rows over a partition per pair first, and every stage after would run that many Python tasks)
        ways = {"one task": (1, 10**6), "links in one task": (3, 10**6), "links in SQL": (12, -(-len(rows) // 12)),
                "spread": (1, 25)}  # fmt: skip
        for way, (partitions, bound) in ways.items():
            with SparkTables(spark, []) as tables:
                pairs = spark.sparkContext.parallelize(rows, partitions)
                routes, stats, check, cached = route_splits(spark, pairs, fractions, len(rows), bound, tables)
                found = routes.collect()
                for rdd in cached:
                    rdd.unpersist()
                rounds = [name for name, _ in tables.frames if name.startswith("split_labels_")]
            assert rounds or way != "links in SQL", way
            assert stats == expected.stats, way
            assert (check.shared_images, check.shared_texts) == (0, 0), way
            assert len(found) == len(wanted) and dict(found) == wanted, way


def identity_input(folder: Path, chains: int) -> tuple[Path, Path]:
    """A dump of six articles and ``chains`` chains of two File redirects, and an image table in which each chain's
    end is uploaded again under two other names: the articles use the first chain and a copy of its end."""
    folder.mkdir()
    pages = [
        page_xml(f"Bridge {n}", f"Text.\n[[File:{image}.jpg|thumb|The old stone bridge at dawn, view {n}]]\n", n + 1)
        for n, image in enumerate(["Chain 0 0"] * 3 + ["Copy 0 b"] * 3)
    ]
    number = len(pages) + 1
    rows = []
    for chain in range(chains):
        for step in range(2):
            target = f"File:Chain {chain} {step + 1}.jpg"
            pages.append(page_xml(f"File:Chain {chain} {step}.jpg", f"#REDIRECT [[{target}]]", number, 6, target))
            number += 1
        sha1 = f"{chain:031d}"
        rows += [
            f"('Chain_{chain}_2.jpg','{sha1}')",
            f"('Copy_{chain}_a.jpg','{sha1}')",
            f"('Copy_{chain}_b.jpg','{sha1}')",
        ]
    dump = folder / "enwiki-20240101-pages-articles.xml"
    dump.write_text(dump_xml(pages), encoding="utf-8")
    table = folder / "enwiki-20240101-image.sql"
    table.write_text(
        "CREATE TABLE `image` (\n  `img_name` varbinary(255) NOT NULL DEFAULT '',\n"
        "  `img_sha1` varbinary(32) NOT NULL DEFAULT ''\n) ENGINE=InnoDB;\n"
        f"INSERT INTO `image` VALUES {','.join(rows)};\n",
        encoding="utf-8",
    )
    return dump, table


def test_what_reaches_the_spark_driver_does_not_grow_with_the_identity_map(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two builds whose File redirects and SHA-1 groups differ tenfold, with the same articles: the driver receives
    counters and funnels, never the redirects, the image tables' titles or the map, and broadcasts none of them;
    the rows are the local engine's."""
    from test_web_scale import DriverInbox

    config = replace(SILVER, identities=("redirect", "sha1"), caption_rule="none", splits=())
    measured = []
    for chains in (60, 600):
        dump, table = identity_input(tmp_path / f"input-{chains}", chains)
        settings = {"image_tables": [table]}
        inbox = DriverInbox(monkeypatch)
        build_spark([dump], [config], tmp_path / f"spark-{chains}", workers=2, spark=spark, **settings)
        measured.append((inbox.received, inbox.broadcast))
        monkeypatch.undo()
        build([dump], [config], tmp_path / f"local-{chains}", show_progress=False, **settings)
        same_output(tmp_path / f"local-{chains}", tmp_path / f"spark-{chains}", "silver")
        records = [
            json.loads((tmp_path / f"{engine}-{chains}" / "silver" / "funnel.json").read_text())
            for engine in ("local", "spark")
        ]
        assert records[0]["identity"] == records[1]["identity"]
        assert records[0]["identity"]["titles_merged_by_redirect"] == 2 * chains
        assert records[0]["identity"]["images_merged"] == 1 and records[0]["rows"] > 0
    (received_small, sent_small), (received_large, sent_large) = measured
    assert received_large < 1.1 * received_small + 2_000, measured  # before: 10 kB, then 62 kB (the redirects)
    assert sent_small == sent_large == 0, measured


def test_a_bad_image_table_fails_on_spark_before_any_dump_is_read(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executors read the image tables first, and the driver raises a table's error as the local engine does."""
    from builder.data.make_sample import sample_image_sql
    from builder.engines.spark import SparkEngine
    from builder.sources.sqldump import SqlDumpError

    table = tmp_path / "old-image.sql"
    table.write_bytes(sample_image_sql().replace(b"`img_sha1` varbinary(32)", b"`img_sha2` varbinary(32)"))
    monkeypatch.setattr(SparkEngine, "extract", lambda *arguments: pytest.fail("a dump was read"))
    config = replace(SILVER, identities=("sha1",))
    with pytest.raises(SqlDumpError, match=r"old-image\.sql: table `image` \(at line \d+\) has no column img_sha1"):
        build_spark(
            [wikipedia_ipc.SAMPLE_DUMP], [config], tmp_path / "out", workers=2, spark=spark, image_tables=[table]
        )
