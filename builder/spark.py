"""The Spark engine: the same stages as :mod:`builder.local`, distributed with PySpark.

* extraction – dump files and multistream byte ranges are the partitions of an RDD;
  each runs :func:`builder.extraction.iter_task_references`;
* grouping by image – Spark's shuffle, the references of one image sorted as the
  local engine sorts them;
* steps 0–4 and 5–6 – :class:`builder.pipeline.FilterChain` per cluster; each
  partition's funnel is collected and added up on the driver;
* steps 7–9 – on the driver, over the surviving clusters in image order: step 7
  keeps the first of each candidate in the whole build, which needs one ordered
  pass (the pair filters are cheap next to tagging, and the driver writes the
  output anyway);
* tagging – each unique text once, one tagger per partition, joined back by text;
* output – the pairs, in image order, through the same writer as the local engine,
  so both engines give byte-identical parquet.

Default master ``local[N]``; pass a ``SparkSession`` (or use ``spark-submit``) for a cluster.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from builder.captions import rule_verdicts, tag_batch, text_batches
from builder.clusters import cluster_from_rows, cluster_rows, sort_key
from builder.config import PipelineConfig
from builder.dump import DumpError, DumpWarning, ReadStats, check_dump_path
from builder.extraction import (
    Extraction,
    ExtractResult,
    ExtractTask,
    check_dump_kinds,
    check_one_extraction,
    combine_results,
    counts_first_seen,
    iter_task_references,
    plan_tasks,
    task_failure,
)
from builder.output import Publisher
from builder.pipeline import BuildReport, FilterChain, Funnel, funnel_record
from builder.tagging import Tagger, get_tagger
from builder.wikitext import ExtractStats


def _extract_partition(tasks: Iterable[tuple[int, ExtractTask]]) -> Iterator[tuple[str, object]]:
    """Rows tagged ``("row", (dump, row))``, then one ``("stats", (task number, result))`` per task."""
    for number, task in tasks:
        result = ExtractResult(ReadStats(), ExtractStats())
        try:
            rows = list(iter_task_references(task, result))
        except (DumpError, OSError) as error:  # a bad dump fails alone; the others go on
            rows = []
            result.error = task_failure(task, error)
        for row in rows:
            yield "row", (task.dump, row)
        yield "stats", (number, result)


def _before_rule(config: PipelineConfig, groups: Iterable[tuple[str, Iterable[dict]]]) -> Iterator[tuple[str, object]]:
    chain = FilterChain(config)
    for image, rows in groups:
        survivor = chain.before_rule(cluster_from_rows(image, sorted(rows, key=sort_key)))
        if survivor is not None:
            for row in cluster_rows(survivor):
                yield "row", row
    yield "funnel", chain.funnel.to_list()


def _tag_partition(tagger_name: str, texts: Iterable[str]) -> Iterator[tuple[str, list]]:
    """One tagger per partition, texts tagged in batches."""
    tagger = get_tagger(tagger_name)
    for batch in text_batches(texts):
        yield from zip(batch, tag_batch(batch, tagger), strict=True)


def _apply_rule(config: PipelineConfig, groups: Iterable[tuple[str, Iterable[dict]]]) -> Iterator[tuple[str, object]]:
    """Steps 5–6 per cluster; the survivors go to the driver for steps 7–9."""
    chain = FilterChain(config)
    for image, rows in groups:
        ordered = sorted(rows, key=sort_key)
        survivor = chain.apply_rule(
            cluster_from_rows(image, ordered), rule_verdicts(ordered, config.caption_rule).__getitem__
        )
        if survivor is not None:
            yield "cluster", (image, survivor)
    yield "funnel", chain.funnel.to_list()


def _with_tags(rows, tags, column: str):  # noqa: ANN001, ANN202 - RDDs
    """Attach the tags of each row's ``column`` text (empty texts get none)."""
    keyed = rows.keyBy(lambda row: row[column])
    joined = keyed.leftOuterJoin(tags)
    return joined.map(lambda item: {**item[1][0], f"{column}_tags": item[1][1]})


def _session(workers: int):  # noqa: ANN202 - a pyspark.sql.SparkSession
    """A session on the configured master (spark-submit sets it), else ``local[workers]``."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("wikipedia-ipc")
    configured = SparkConf()
    if not configured.contains("spark.master"):
        builder = builder.master(f"local[{workers}]")
    if configured.get("spark.master", "local").startswith("local") and not configured.contains("spark.pyspark.python"):
        # local workers run on this machine: give them this interpreter (and its packages),
        # not whatever ``python3`` is first on the PATH
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return builder.getOrCreate()


def build_spark(
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    tagger: str = "auto",
    workers: int = 2,
    spark=None,  # noqa: ANN001 - a pyspark.sql.SparkSession
    overwrite: bool = False,
) -> BuildReport:
    """Build configs with Spark into the same dataset folder layout as :func:`builder.local.build`."""
    check_one_extraction(configs)
    for dump in dumps:
        check_dump_path(dump)
    check_dump_kinds(dumps, configs[0].dump_kind == "history")
    tagger_instance = get_tagger(tagger)
    output = Path(output)
    publisher = Publisher(output, [config.name for config in configs], overwrite)
    with publisher:  # locked and writable before any dump is read
        session = spark if spark is not None else _session(workers)
        report = _build_with_session(session, dumps, configs, publisher, tagger_instance, workers)
        if spark is None:
            session.stop()
    return report


def _build_with_session(  # noqa: ANN001 - a pyspark.sql.SparkSession
    session,
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    publisher: Publisher,
    tagger_instance: Tagger,
    workers: int,
) -> BuildReport:
    context = session.sparkContext
    output = publisher.output
    with tempfile.TemporaryDirectory(prefix="wikipedia-ipc-spark-") as scratch:
        history = configs[0].dump_kind == "history"
        first_seen = counts_first_seen(configs[0])
        tasks, described = plan_tasks(dumps, workers, configs[0].namespaces, Path(scratch), history, first_seen)
        started = time.perf_counter()
        numbered = list(enumerate(tasks))
        extracted = context.parallelize(numbered, len(tasks)).mapPartitions(_extract_partition).cache()
        stats = dict(extracted.filter(lambda item: item[0] == "stats").values().collect())
        seconds = time.perf_counter() - started
        results = [stats[number] for number in range(len(tasks))]
        read, extract, failures, problems, failed = combine_results(tasks, results, described, history)
        for problem in problems:
            warnings.warn(problem, DumpWarning, stacklevel=2)
        if len(failed) == len(described):
            raise DumpError("no dump could be read: " + "; ".join(failures))
        rows_of = extracted.filter(lambda item: item[0] == "row").values()
        references = rows_of.filter(lambda item, bad=frozenset(failed): item[0] not in bad).values()
        extraction = Extraction([], read, extract, described, seconds, failures, problems)
        chains: dict[str, FilterChain] = {}
        rows: dict[str, int] = {}
        for config in configs:
            chain = FilterChain(config)
            sources = set(config.sources)
            grouped = references.filter(lambda row, s=sources: row["source"] in s).groupBy(lambda row: row["image"])
            before = grouped.mapPartitions(lambda part, c=config: _before_rule(c, part)).cache()
            survivors = before.filter(lambda item: item[0] == "row").values()
            texts = survivors.flatMap(lambda row: [row["caption"], row["alt"]]).filter(bool).distinct()
            tags = texts.mapPartitions(lambda part, name=tagger_instance.name: _tag_partition(name, part))
            tagged = _with_tags(_with_tags(survivors, tags, "caption"), tags, "alt")
            after = tagged.groupBy(lambda row: row["image"]).mapPartitions(lambda part, c=config: _apply_rule(c, part))
            after = after.cache()
            for funnel in before.filter(lambda item: item[0] == "funnel").values().collect():
                chain.funnel.add(Funnel.from_list(funnel))
            for funnel in after.filter(lambda item: item[0] == "funnel").values().collect():
                chain.funnel.add(Funnel.from_list(funnel))
            writer = publisher.writer(config.name)
            # steps 7–9 on the driver, over the clusters in image order: "unique candidates" is
            # global and keeps the first pair in image order, exactly as the local engine does
            ordered = after.filter(lambda item: item[0] == "cluster").values().sortByKey()
            for _, cluster in ordered.toLocalIterator():
                writer.write(chain.filter_pairs(cluster))
            writer.close()
            rows[config.name] = writer.rows
            chains[config.name] = chain
            publisher.add_config(config.name, funnel_record(chain, writer.rows, extraction, tagger_instance))
        publisher.publish()
    return BuildReport(output, rows, chains, extraction)
