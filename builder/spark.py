"""The Spark engine: schedules the same stages as :mod:`builder.local` on RDDs, with PySpark.

* extraction – dump files and multistream byte ranges are the partitions of an RDD;
  each runs :func:`builder.extraction.iter_task_references`;
* grouping by image – Spark's shuffle, after each reference went through a broadcast
  of the build's identity map (:mod:`builder.identity`), the references of one image
  sorted as the local engine sorts them;
* steps 0–4 and 5–6 – :class:`builder.pipeline.FilterChain` per cluster; each
  partition's funnel is collected and added up on the driver;
* tagging – each unique text once, one tagger per partition, joined back by text;
* step 7 – build-wide: every candidate pair gets its order key (image, index in the
  cluster's pairs), and a shuffle by the pair's digest keeps the smallest key, which is
  the pair the local engine keeps (the first in image order);
* steps 8–9 – per cluster on the executors, counted per image as the local engine counts;
* splits – the executors reduce each pair to its three 16-byte node digests
  (:func:`builder.splits.node_keys`); the driver streams them in, a partition at a time,
  into the local engine's :func:`builder.splits.assign_nodes`, then broadcasts the
  image → split map it returns. Driver memory: the union-find (a peak of at most about
  730 bytes per pair, see :mod:`builder.splits`); after the write, the driver reads the written files' image
  and text columns in batches for the overlap check;
* output – each split's pairs are range-partitioned by their order key, and each executor
  writes its partition as parquet shards into the config's staging folder; the driver
  only names the shards (content hashes, in partition order) and publishes them. No
  whole pair passes through the driver.

The staging folder lies inside the output folder, so on a cluster the output must be on
a file system that every executor sees at the same path (as the dumps must be).
Default master ``local[N]``; pass a ``SparkSession`` (or use ``spark-submit``) for a cluster.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from builder.captions import rule_verdicts, tag_batch, text_batches, word_counter_signature
from builder.clusters import Cluster, Pair, build_pairs, cluster_from_rows, cluster_rows, sort_key
from builder.config import PipelineConfig, configs_for_languages
from builder.dump import DumpError, DumpWarning, ReadStats, check_dump_path
from builder.extraction import (
    Extraction,
    ExtractResult,
    ExtractTask,
    check_dump_kinds,
    check_one_extraction,
    combine_redirects,
    combine_results,
    counts_first_seen,
    dump_languages,
    iter_task_references,
    language_overrides,
    plan_tasks,
    task_failure,
)
from builder.identity import build_identity, check_identities, pairs_per_identity, read_image_tables
from builder.output import ROWS_PER_SHARD, PairWriter, Publisher, finalize_parts, pair_row
from builder.pairs import candidate_key
from builder.pipeline import (
    BuildReport,
    FilterChain,
    Funnel,
    StageClock,
    funnel_record,
    tagger_signature,
    tagger_tagset,
    taggers_for,
)
from builder.splits import SplitAssignment, assign_nodes, check_files, node_keys, split_record
from builder.tagging import Tagger, get_tagger
from builder.wikitext import ExtractStats
from builder.workdir import temporary_work_folder


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


def _tag_partition(tagger_name: str, language: str, texts: Iterable[str]) -> Iterator[tuple[str, list]]:
    """One tagger per partition, texts tagged in batches."""
    tagger = get_tagger(tagger_name, language)
    for batch in text_batches(texts):
        yield from zip(batch, tag_batch(batch, tagger), strict=True)


def _apply_rule(
    config: PipelineConfig, tagsets: dict[str, str], groups: Iterable[tuple[str, Iterable[dict]]]
) -> Iterator[tuple[str, object]]:
    """Steps 5–6 per cluster; the surviving clusters go on to steps 7–9, keyed by image."""
    chain = FilterChain(config)
    for image, rows in groups:
        ordered = sorted(rows, key=sort_key)
        survivor = chain.apply_rule(
            cluster_from_rows(image, ordered), rule_verdicts(ordered, config.caption_rule, tagsets)
        )
        if survivor is not None:
            yield "cluster", (image, survivor)
    yield "funnel", chain.funnel.to_list()


def _candidates(item: tuple[str, Cluster]) -> Iterator[tuple[bytes, tuple[str, int]]]:
    """Each candidate pair of a cluster as (digest, order key): the key orders pairs as the local engine meets them."""
    image, cluster = item
    for index, pair in enumerate(build_pairs(cluster)):
        yield candidate_key(pair), (image, index)


def _first_in_build(firsts: frozenset[int]) -> Callable[[list[Pair]], list[Pair]]:
    """Step 7 for one cluster: the pairs (by their index in the cluster) that are first of their candidate."""

    def keep(pairs: list[Pair]) -> list[Pair]:
        return [pair for index, pair in enumerate(pairs) if index in firsts]

    return keep


def _filter_pairs(
    config: PipelineConfig, groups: Iterable[tuple[str, tuple[Cluster, Iterable[int]]]]
) -> Iterator[tuple[str, object]]:
    """Steps 7–9 per cluster, step 7 from the build-wide firsts; pair rows keyed by (image, rank), then the funnel."""
    chain = FilterChain(config)
    for image, (cluster, firsts) in groups:
        pairs = chain.filter_pairs(cluster, _first_in_build(frozenset(firsts)))
        for rank, pair in enumerate(pairs):
            yield "pair", ((image, rank), pair_row(pair))
    yield "funnel", chain.funnel.to_list()


def _write_partition(
    folder: str, rows_per_shard: int, split: str, partition: int, rows: Iterable[tuple[tuple[str, int], dict]]
) -> Iterator[tuple[int, list[str]]]:
    """Write one range partition of a split's sorted pairs as parquet parts named after the split and partition.

    The parts are written under names of this task attempt and renamed when complete,
    so that a retried or speculative attempt never leaves a half-written part under the
    name the driver will read.
    """
    from pyspark import TaskContext

    attempt = TaskContext.get().attemptNumber()
    writer = PairWriter(Path(folder), rows_per_shard, prefix=f"attempt-{split}-{partition:05d}-{attempt}")
    writer.write_rows(row for _, row in rows)
    parts = []
    for index, part in enumerate(writer.finish()):
        final = part.with_name(f"{split}-part-{partition:05d}-{index:05d}.tmp")
        os.replace(part, final)
        parts.append(str(final))
    yield writer.rows, parts


def _with_tags(rows, tags, column: str):  # noqa: ANN001, ANN202 - RDDs
    """Attach the tags of each row's ``column`` text (empty texts get none)."""
    keyed = rows.keyBy(lambda row: row[column])
    joined = keyed.leftOuterJoin(tags)
    return joined.map(lambda item: {**item[1][0], f"{column}_tags": item[1][1]})


def _write_split(rows, folder: Path, rows_per_shard: int, split: str) -> tuple[int, list[Path]]:  # noqa: ANN001
    """One split's pairs (an RDD keyed by order key), range-partitioned and written by the executors."""
    total = rows.count()
    if not total:
        return 0, []
    ordered = rows.sortByKey(numPartitions=math.ceil(total / rows_per_shard))
    written = ordered.mapPartitionsWithIndex(
        lambda partition, part, where=str(folder), size=rows_per_shard: _write_partition(
            where, size, split, partition, part
        )
    ).collect()
    return sum(count for count, _ in written), [Path(part) for _, names in written for part in names]


def _write_pairs(  # noqa: ANN001 - clusters: an RDD of (image, Cluster)
    clusters, config: PipelineConfig, chain: FilterChain, folder: Path, rows_per_shard: int
) -> tuple[int, dict[str, list[Path]], SplitAssignment | None]:
    """Steps 7–9 and the output on the executors.

    The driver gets the funnels, the row count, each split's part names and (with splits) the assignment.
    """
    firsts = clusters.flatMap(_candidates).reduceByKey(min).values().groupByKey()
    pairs = clusters.join(firsts).mapPartitions(lambda part, c=config: _filter_pairs(c, part)).cache()
    for funnel in pairs.filter(lambda item: item[0] == "funnel").values().collect():
        chain.funnel.add(Funnel.from_list(funnel))
    rows = pairs.filter(lambda item: item[0] == "pair").values()
    if not config.splits:
        written, parts = _write_split(rows, folder, rows_per_shard, "train")
        pairs.unpersist()
        return written, {"train": parts}, None
    # streamed to the driver partition by partition: the driver holds the union-find, not a list of all digests
    assignment = assign_nodes(rows.map(lambda item: node_keys(item[1])).toLocalIterator(), config.splits)
    routes = rows.context.broadcast(assignment)
    written, parts_of = 0, {}
    for split in assignment.names:
        chosen = rows.filter(lambda item, r=routes, s=split: r.value.split_of(item[1]) == s)
        count, parts_of[split] = _write_split(chosen, folder, rows_per_shard, split)
        written += count
    routes.unpersist()
    pairs.unpersist()
    return written, parts_of, assignment


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
    rows_per_shard: int = ROWS_PER_SHARD,
    image_tables: Sequence[str | Path] = (),
    memory_limit: str = "512MB",
    languages: str | Mapping[str, str] | None = None,
    template_parameters: str | Path | None = None,
) -> BuildReport:
    """Build configs with Spark into the same dataset folder layout as :func:`builder.local.build`.

    The dumps must be of one language (``languages`` as for the local engine); builds over
    several languages and the cross-lingual config run on the local engine.

    The image tables of the ``sha1`` identity are read on the driver (grouped by DuckDB
    under ``memory_limit``); the identity map then goes to the executors as a broadcast.

    The pairs of a config are range-partitioned into about ``rows_per_shard`` rows per
    executor task and parquet file; a config with fewer pairs gives the local engine's single,
    byte-identical file.
    """
    if workers < 1:
        raise ValueError(f"workers must be 1 or more, not {workers}")
    check_one_extraction(configs)
    for dump in dumps:
        check_dump_path(dump)
    check_dump_kinds(dumps, configs[0].dump_kind == "history")
    check_identities(configs[0].identities, image_tables)
    given = language_overrides(dumps, languages)
    build_languages = dump_languages(dumps, given)
    configs = configs_for_languages(configs, build_languages)
    if len(build_languages) > 1:
        raise ValueError(
            f"the Spark engine builds one language at a time; these dumps are of {', '.join(build_languages)}: "
            "build them with the local engine (--engine local), or one language per Spark build"
        )
    taggers = taggers_for(configs, build_languages, tagger)
    word_counter_signature(build_languages[0])  # a language written without spaces needs its segmenter
    output = Path(output)
    publisher = Publisher(output, [config.name for config in configs], overwrite)
    with publisher:  # locked and writable before any dump is read
        session = spark if spark is not None else _session(workers)
        report = _build_with_session(
            session,
            dumps,
            configs,
            publisher,
            (tagger, build_languages[0], taggers),
            workers,
            rows_per_shard,
            image_tables,
            memory_limit,
            given,
            template_parameters,
        )
        if spark is None:
            session.stop()
    return report


def _build_with_session(  # noqa: ANN001 - a pyspark.sql.SparkSession
    session,
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    publisher: Publisher,
    tagging: tuple[str | Tagger, str, dict[str, Tagger]],
    workers: int,
    rows_per_shard: int,
    image_tables: Sequence[str | Path],
    memory_limit: str,
    given: dict[str, str],
    parameter_table: str | Path | None,
) -> BuildReport:
    """The build once the session is there; ``tagging`` is the tagger as asked, the language and its taggers."""
    spec, language, taggers = tagging
    context = session.sparkContext
    output = publisher.output
    with temporary_work_folder("wikipedia-ipc-spark-") as scratch:
        history = configs[0].dump_kind == "history"
        first_seen = counts_first_seen(configs[0])
        identities = configs[0].identities
        groups, table_stats = read_image_tables(identities, image_tables, Path(scratch) / "identity", memory_limit)
        file_redirects = "redirect" in identities
        tasks, described = plan_tasks(
            dumps,
            workers,
            configs[0].namespaces,
            Path(scratch),
            history,
            first_seen,
            file_redirects,
            given,
            parameter_table,
        )
        # Spark runs lazily: each stage is timed where an action makes Spark carry it out.
        clock = StageClock()
        started = time.perf_counter()
        numbered = list(enumerate(tasks))
        extracted = context.parallelize(numbered, len(tasks)).mapPartitions(_extract_partition).cache()
        with clock.stage("extraction"):
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
        redirects, ignored = combine_redirects(tasks, results, failed)
        extraction = Extraction([], read, extract, described, seconds, failures, problems, redirects, ignored)
        identity = build_identity(identities, extraction, groups, table_stats)
        identity_map = context.broadcast(identity.map)
        chains: dict[str, FilterChain] = {}
        rows: dict[str, int] = {}
        splits: dict[str, dict[str, object]] = {}
        merged: dict[str, dict] = {}
        for config in configs:
            chain = FilterChain(config)
            sources = set(config.sources)
            used = references.filter(lambda row, s=sources: row["source"] in s)
            mapped = used.map(lambda row, m=identity_map: m.value.apply(row))
            grouped = mapped.groupBy(lambda row: row["image"])
            before = grouped.mapPartitions(lambda part, c=config: _before_rule(c, part)).cache()
            survivors = before.filter(lambda item: item[0] == "row").values()
            texts = survivors.flatMap(lambda row: [row["caption"], row["alt"]]).filter(bool).distinct()
            if config.caption_rule == "none":
                tagged = survivors.map(lambda row: {**row, "caption_tags": None, "alt_tags": None})
            else:
                name = spec if isinstance(spec, str) else taggers[language].name
                tags = texts.mapPartitions(lambda part, n=name, code=language: _tag_partition(n, code, part))
                tagged = _with_tags(_with_tags(survivors, tags, "caption"), tags, "alt")
            tagsets = {code: tagger_tagset(tagger) for code, tagger in taggers.items()}
            after = tagged.groupBy(lambda row: row["image"]).mapPartitions(
                lambda part, c=config, t=tagsets: _apply_rule(c, t, part)
            )
            after = after.cache()
            with clock.stage("grouping"):
                titles = used.map(lambda row: row["image"]).distinct().count() if identity.map.image else None
                for funnel in before.filter(lambda item: item[0] == "funnel").values().collect():
                    chain.funnel.add(Funnel.from_list(funnel))
            with clock.stage("tagging"):
                for funnel in after.filter(lambda item: item[0] == "funnel").values().collect():
                    chain.funnel.add(Funnel.from_list(funnel))
            clusters = after.filter(lambda item: item[0] == "cluster").values()
            with clock.stage("pair filters"):  # steps 7–9 and the executors' parquet writing
                folder = publisher.config_folder(config.name)
                written, parts, assignment = _write_pairs(clusters, config, chain, folder, rows_per_shard)
                files: list[Path] = []
                for split, names in parts.items():
                    files += finalize_parts(folder, names, split) if names else []
                if not files:  # no pair survived: one shard with no rows, as the local engine writes
                    files = publisher.writer(config.name).close()
                merged[config.name] = identity.record(titles, chain.funnel.rows[0].images, pairs_per_identity(files))
                if assignment is not None:
                    splits[config.name] = split_record(assignment, config.splits, check_files(files))
                signature = tagger_signature(config, taggers, [language])
                recorded = [language] if language != "en" else []
                record = funnel_record(
                    chain, written, extraction, signature, merged[config.name], splits.get(config.name), recorded
                )
            rows[config.name] = written
            chains[config.name] = chain
            publisher.add_config(config.name, record, files)
        with clock.stage("writing"):
            publisher.publish()
    return BuildReport(output, rows, chains, extraction, clock, merged, splits)
