"""The Spark engine: carries out the stages of :func:`builder.engines.core.run` on RDDs, with PySpark.

It builds whatever the local engine builds (several languages, the cross-lingual config,
history dumps cut inside pages) with the local engine's rows:

* extraction – dump files and multistream byte ranges are the partitions of an RDD;
  each runs :func:`builder.extract.tasks.iter_task_records` (a crawl's WARC files: :mod:`builder.engines.spark.web`,
  the references cached in pickled chunks, their captures and image URLs counted per file); the later copies of pages
  (:mod:`builder.extract.copies`) are found with a shuffle by page (a history: by revision)
  and left out of the references with another, which a build without copies never runs;
* identity (:mod:`.identity`) – the File redirects stay on the executors that read them; each image table is
  read by one task and its titles stay there; the identity map (:mod:`builder.filters.identity`)
  is computed from both in Spark SQL (:func:`builder.filters.identity.map_in_tables`), a table
  on the executors; the driver gets each table's counters and the map's counts;
* grouping by image – Spark's shuffle, after each reference was joined with the identity map
  and, in a cross-lingual build, the files local to a wiki were taken out by a join (never a
  broadcast: both grow with the input), the references of one image sorted as the local engine
  sorts them;
* steps 0–4 and 5–6 – :class:`builder.filters.chain.FilterChain` per cluster; each
  partition's funnel is collected and added up on the driver;
* tagging – each unique text of every config once per language, one tagger per Python worker
  (built by its first partition with texts, kept for the next), joined back by (language, text);
* step 7 – build-wide: every candidate pair gets its order key (image, index in the
  cluster's pairs), and a shuffle by the pair's digest keeps the smallest key, which is
  the pair the local engine keeps (the first in image order);
* steps 8–9 – per cluster on the executors, counted per image as the local engine counts;
* splits – the local engine's assignment (:mod:`builder.engines.spark.splits`): a config of few pairs in one
  executor task; a larger one contracted into components partition by partition, whose labels are linked through
  the nodes that several partitions hold (a shuffle of the nodes by digest), the links' union-find in one task (or
  Spark SQL's rounds, over a bound); each row routed to its image's split by a join (never a broadcast: the routes
  grow with the images); the driver gets the splits' totals and the overlap check;
* output – each split's pairs are range-partitioned by their order key, and each executor
  writes its partition as parquet shards into the config's staging folder; the driver
  only names the shards (content hashes, in partition order) and publishes them. No
  whole pair passes through the driver.

The staging folder lies inside the output folder: on a cluster, either on a file system that every
executor sees at the same path, or on an object store (``s3://…``, :mod:`builder.publish.bucket`), where
each executor uploads its parts under the build's staging prefix. Dumps, crawls and image tables are read
by the executors where they are, a local path or a URL (:mod:`builder.storage`).
Default master ``local[N]``; pass a ``SparkSession`` (or use ``spark-submit``) for a cluster.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from operator import itemgetter
from pathlib import Path

import pyarrow as pa

from builder.config import BuildOptions, PipelineConfig
from builder.engines.core import (
    BuildPlan,
    BuildReport,
    Selected,
    Written,
    dataset_parts,
    dataset_read,
    run,
    web_extraction,
    web_read,
    web_tasks,
)
from builder.engines.spark.deja import judge_partition
from builder.engines.spark.identity import Apart, SparkIdentity, mapped_references, without_left_out
from builder.engines.spark.images import image_stage
from builder.engines.spark.one_task import build_in_one_task, one_task_input
from builder.engines.spark.read import cached_apart, cached_once, counters
from builder.engines.spark.session import spark_session
from builder.engines.spark.shuffle import attached, cogrouped, grouped, looked_up, regrouped, shuffle_partitions
from builder.engines.spark.splits import SPLITS_IN_ONE_TASK, route_splits
from builder.engines.spark.sql import SparkTables, spark_schema, spill, warm_sql
from builder.engines.spark.web import first_captures, references_of, warc_partition, web_partition
from builder.engines.spark.write import write_split, write_splits
from builder.extract.copies import CopyGroup, copy_key, copy_kind, copy_unit, merge_examples, note_copies
from builder.extract.tasks import (
    Extraction,
    ExtractResult,
    ExtractTask,
    finish_extraction,
    iter_task_records,
    plan_tasks,
    task_failure,
)
from builder.extract.wikitext import ExtractStats
from builder.filters.captions import TAG_BATCH, rule_verdicts, tag_batch
from builder.filters.chain import FilterChain
from builder.filters.clusters import Cluster, Pair, build_pairs, cluster_from_rows, cluster_rows, sort_key
from builder.filters.funnel import Funnel
from builder.filters.identity import Identity
from builder.filters.pairs import candidate_key
from builder.filters.repetition import DEJA_CANDIDATE_SCHEMA, SENTENCE_SCHEMA, deja_graph, output_row
from builder.filters.situated import deja_pairs, paracaption_row
from builder.filters.tagging import get_tagger
from builder.filters.web import ImageTables, WebImages
from builder.publish.publisher import Publisher
from builder.publish.splits import split_names, split_record
from builder.publish.workdir import temporary_work_folder
from builder.publish.writer import finalize_parts, pair_row, reference_rows
from builder.sources.files import DumpError, ReadStats

__all__ = ["build_spark", "spark_session"]


def _settle_in_a_worker() -> None:
    """In a Python worker of Spark's, take what is loaded out of the garbage collector's view.

    PySpark runs a full ``gc.collect()`` after every task of a reused worker; with the toolkit's modules loaded that
    took tens of milliseconds per task, most of the executors' time in a small build (13 of 15 CPU seconds of the
    sample's Python workers). A worker imports this module with the toolkit's first task it runs (its functions
    come by reference), and what is loaded then lives as long as the worker. On the driver: nothing."""
    try:
        from pyspark import TaskContext
    except ImportError:  # the module imported without PySpark (a build needs it, and says so)
        return
    if TaskContext.get() is not None:
        gc.collect()
        gc.freeze()


@functools.lru_cache(maxsize=1)
def _worker_tagger(name: str, language: str):  # noqa: ANN202 - a Tagger
    """The worker's tagger for ``language``, built once per worker (a model loads in seconds; a tagger of another
    language replaces it), its model kept out of the garbage collector's view."""
    tagger = get_tagger(name, language)
    gc.freeze()
    return tagger


def _extract_partition(tasks: Iterable[tuple[int, ExtractTask]]) -> Iterator[tuple[str, object]]:
    """Rows tagged ``("row", ((task number, row number), row))``, page records ``("page", (task number,
    record))`` and File redirects ``("redirect", (task number, (source, target)))``, then one ``("stats", (task
    number, result))`` per task."""
    for number, task in tasks:
        result = ExtractResult(ReadStats(), ExtractStats())
        try:
            items = list(iter_task_records(task, result))
        except (DumpError, OSError) as error:  # a bad dump fails alone; the others go on
            items = []
            result.error = task_failure(task, error)
        rows = 0
        for kind, item in items:
            if kind == "row":
                yield "row", ((number, rows), item)
                rows += 1
            else:
                yield "page", (number, item)
        for redirect in result.redirects:  # kept on the executors for the identity map, out of the task's counts
            yield "redirect", (number, redirect)
        result.redirects = []
        yield "stats", (number, result)


def _later_copies(pages, languages: Sequence[str], history: bool):  # noqa: ANN001, ANN202 - RDDs
    """The rule of :mod:`builder.extract.copies` on RDDs: each later copy as (copy, first).

    A copy is (task, record, page id, revision id, title, digest, first row, rows, unit); the first of a
    key is the smallest, and a copy whose (task, unit) is not the first's is a later one.
    """

    def keyed(item: tuple[int, dict]) -> tuple[tuple, tuple]:
        number, page = item
        key = copy_key(languages[number], page["page_id"], page["revision_id"], history)
        fields = ("record", "page_id", "revision_id", "title", "digest", "first_row", "rows")
        unit = copy_unit(page["record"], page["element"], history)
        return key, (number, *(page[field] for field in fields), unit)

    records = pages.map(keyed)
    firsts = records.reduceByKey(min)
    return records.join(firsts).values().filter(lambda pair: (pair[0][0], pair[0][8]) != (pair[1][0], pair[1][8]))


def _copied_rows(pair: tuple[tuple, tuple]) -> Iterator[tuple[tuple[int, int], None]]:
    """The (task, row number) of a later copy's references."""
    copy = pair[0]
    for row in range(copy[6], copy[6] + copy[7]):
        yield (copy[0], row), None


def _copy_groups(later, dumps: Sequence[str], history: bool) -> list[CopyGroup]:  # noqa: ANN001 - an RDD
    """The later copies counted per (dump, first dump, kind), each group with its first copy as example."""

    def of_group(pair: tuple[tuple, tuple]) -> tuple[tuple[str, str, str], tuple[int, tuple]]:
        copy, first = pair
        kind = copy_kind(history, copy[5] == first[5])
        return (dumps[copy[0]], dumps[first[0]], kind), (1, copy[:5])

    groups = later.map(of_group).reduceByKey(merge_examples).collect()
    return [
        CopyGroup(dump, first, kind, count, (task, record), page_id, revision_id, title)
        for (dump, first, kind), (count, (task, record, page_id, revision_id, title)) in groups
    ]


def _before_rule(config: PipelineConfig, groups: Iterable[tuple[str, Iterable[dict]]]) -> Iterator[tuple[str, object]]:
    chain = FilterChain(config)
    for image, rows in groups:
        survivor = chain.before_rule(cluster_from_rows(image, sorted(rows, key=sort_key)))
        if survivor is not None:
            for row in cluster_rows(survivor):
                yield "row", row
    yield "funnel", chain.funnel.to_list()


def _before_rule_apart(
    config: PipelineConfig, groups: Iterable[tuple[str, tuple[Sized, Sized]]]
) -> Iterator[tuple[str, object]]:
    """:func:`_before_rule` over references cogrouped with the images left out (an image of those keeps none of
    its references); then ``("apart", references left out)``."""
    left_out = [0]

    def kept() -> Iterator[tuple[str, list[dict]]]:
        for image, (rows, apart) in groups:
            if len(apart):
                left_out[0] += len(rows)
            elif len(rows):
                yield image, rows  # each with its own file and redirect (:func:`_keyed_own_files`)

    yield from _before_rule(config, kept())
    yield "apart", left_out[0]


def _texts_of(languages: frozenset[str], items: Iterable[tuple[str, dict]]) -> Iterator[tuple[tuple[str, str], str]]:
    """The texts of a partition of rows grouped by image, each ``((language, text), image)`` once per image: the
    captions and alt texts of the rows in a language that has a tagger (an empty text gets no tags)."""
    for image, rows in itertools.groupby(items, key=itemgetter(0)):
        keys = {
            (row["language"], row[column])
            for _, row in rows
            if row["language"] in languages
            for column in ("caption", "alt")
            if row[column]
        }
        for key in keys:
            yield key, image


def _tag_texts(
    taggers: Mapping[str, str], items: Iterable[tuple[tuple[str, str], str]]
) -> Iterator[tuple[str, tuple[tuple[str, str], list]]]:
    """A partition of ``((language, text), image)`` items sorted by text: each text tagged once, in batches, by the
    worker's tagger of its language (``taggers``: each language's tagger name); then ``(image, (text key, tags))``
    for each image that has the text: one shuffle of the texts (a distinct, then a join with the tags, was three)."""
    texts = ((key, {image for _, image in group}) for key, group in itertools.groupby(items, key=itemgetter(0)))
    for language, same in itertools.groupby(texts, key=lambda text: text[0][0]):
        tagger = _worker_tagger(taggers[language], language)
        while batch := list(itertools.islice(same, TAG_BATCH)):
            tagged = tag_batch([key[1] for key, _ in batch], tagger)
            for (key, images), tags in zip(batch, tagged, strict=True):
                for image in images:
                    yield image, (key, tags)


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


def _candidates(across: bool, item: tuple[str, Cluster]) -> Iterator[tuple[bytes, tuple[str, int]]]:
    """Each candidate pair of a cluster as (digest, order key): the key orders pairs as the local engine meets them."""
    image, cluster = item
    for index, pair in enumerate(build_pairs(cluster, across)):
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
    web = config.identity_label if config.web else ""
    rows = 0
    for image, (cluster, firsts) in groups:
        pairs = chain.filter_pairs(cluster, _first_in_build(frozenset(firsts)))
        for rank, pair in enumerate(pairs):
            yield "pair", ((image, rank), pair_row(pair, config.crosslingual, web))
        rows += len(pairs)
    yield "funnel", (chain.funnel.to_list(), rows)


def _tagged_groups(by_image, tags):  # noqa: ANN001, ANN202 - RDDs
    """The rows grouped by image, each with the tags of its caption and alt text in its language (an empty text, or
    one not tagged, gets none): the tags, already keyed by image (:meth:`SparkEngine.tag`), come to their image's
    rows where the grouping left them (:func:`builder.engines.spark.shuffle.attached`): the rows cross no shuffle."""
    return attached(by_image, tags).mapPartitions(_attach_tags, True)


def _rows_by_image(items: Iterable[tuple[str, object]]) -> Iterator[tuple[str, dict]]:
    """The rows of a partition of the steps before the rule, as (image, row), in the image order they came in."""
    return ((item[1]["image"], item[1]) for item in items if item[0] == "row")  # type: ignore[index]


def _where_they_are(rdd, kind: str):  # noqa: ANN001, ANN202 - an RDD of (kind, item); an RDD of items
    """The items of one kind of a stage's output, marked as partitioned as the stage's input was (by image): the
    pair stage's items change shape (rows grouped by image, clusters, pairs) but stay where their image's rows
    were, and a join by image with an RDD partitioned the same way then moves neither side. (PySpark keeps a
    partitioner only through operations told to keep it; the stage's own output is marked so too, and is only read
    through this function.)"""
    return rdd.mapPartitions(lambda part, k=kind: (item[1] for item in part if item[0] == k), True)


def _attach_tags(groups: Iterable[tuple[str, tuple[Sized, Iterable]]]) -> Iterator[tuple[str, list[dict]]]:
    """Each image's rows with the tags its texts were joined with (an image that has only tags is none of the
    config's)."""
    for image, (rows, tags) in groups:
        if not len(rows):
            continue
        found = dict(tags)
        yield (
            image,
            [
                {
                    **row,
                    "caption_tags": found.get((row["language"], row["caption"])),
                    "alt_tags": found.get((row["language"], row["alt"])),
                }
                for row in rows  # type: ignore[attr-defined]
            ],
        )


def _write_pairs(  # noqa: ANN001 - session: a SparkSession, clusters: an RDD of (image, Cluster)
    session, clusters, config: PipelineConfig, chain: FilterChain, folder: str | Path, rows_per_shard: int
) -> tuple[int, dict[str, list[tuple[str, str]]], dict[str, object] | None]:
    """Steps 7–9 and the output on the executors.

    The driver gets the funnels, the row count, each split's part names and (with splits) the splits' record.
    """
    across = config.crosslingual
    web = config.identity_label if config.web else ""
    firsts = clusters.flatMap(lambda item, a=across: _candidates(a, item)).reduceByKey(min).values().groupByKey()
    # the clusters stay where they are: the candidates' firsts come to them (one partitioner on both sides)
    pairs = clusters.join(firsts).mapPartitions(lambda part, c=config: _filter_pairs(c, part), True).cache()
    count = 0  # the pair rows, counted by their tasks: no job counts them again
    for funnel, counted in pairs.filter(lambda item: item[0] == "funnel").values().collect():
        chain.funnel.add(Funnel.from_list(funnel))
        count += counted
    rows = _where_they_are(pairs, "pair")
    if not config.splits:
        written, parts = write_split(rows, folder, rows_per_shard, "train", across, web, total=count)
        pairs.unpersist()
        return written, {"train": parts}, None
    # each row gets its image's split by a join, and only totals reach the driver
    with SparkTables(session) as tables:
        routes, stats, check, cached = route_splits(
            session, rows.values(), config.splits, count, SPLITS_IN_ONE_TASK, tables
        )
        # the rows stay where their image's cluster was: the routes come to them
        keyed = rows.mapPartitions(lambda part: ((item[1]["image"], item) for item in part), True)
        routed = looked_up(keyed, routes)
        totals = {split: stats.pairs[split] for split in split_names(config.splits)}
        written, parts_of = write_splits(routed, totals, folder, rows_per_shard, across, web)
        for rdd in cached:
            rdd.unpersist()
    pairs.unpersist()
    return written, parts_of, split_record(stats, config.splits, check)


def _rows_of(extracted, kind: str, bad: frozenset[int], schema: pa.Schema):  # noqa: ANN001, ANN202 - RDDs
    """The rows of one kind of the tasks that did not fail, as tuples in ``schema``'s order."""
    names = schema.names
    rows = extracted.filter(lambda item: item[0] == kind).values().filter(lambda item: item[0] not in bad)
    return rows.map(lambda item: tuple(item[1][name] for name in names))


def build_spark(
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    options: BuildOptions | None = None,
    spark=None,  # noqa: ANN001 - a pyspark.sql.SparkSession
    **settings: object,
) -> BuildReport:
    """Build configs with Spark into the same dataset folder as :func:`builder.engines.local.build`.

    ``options`` and keyword ``settings`` as for the local engine (``workers`` is the ``local[N]``
    master's N; ``work_dir`` and ``resume`` are the local engine's). ``spark`` is a session to run
    on; without it one is made on the configured master (``spark-submit`` sets it), else
    ``local[workers]``, and stopped at the end.

    The image tables (of the ``sha1`` identity, and of a cross-lingual build's local files) are read on
    the executors, one task per table; the identity map is a table there, joined with the references. The pairs of a
    config are range-partitioned into about ``rows_per_shard`` rows per executor task and parquet
    file; a config with fewer pairs gives the local engine's single, byte-identical file. A build of a few local
    files (``spark_one_task_bytes``) runs as one task instead (:mod:`builder.engines.spark.one_task`).
    """
    options = BuildOptions.of(options, {"workers": 2, **settings} if options is None else settings)
    size = one_task_input(dumps, options)
    if size is not None:  # too small for the cluster's fixed costs (builder.engines.spark.one_task)
        return build_in_one_task(spark, dumps, configs, output, options, size)
    return run(SparkEngine(spark), dumps, configs, output, options)


class SparkEngine:
    """The stages on RDDs: every step runs on the executors; the driver adds up funnels and names files."""

    def __init__(self, spark=None) -> None:  # noqa: ANN001 - a pyspark.sql.SparkSession
        self.given = spark
        self.session = spark
        self.references = None  # an RDD of the reference rows of the dumps that were read whole
        self.survivors: dict[str, object] = {}  # per config, an RDD of the rows that passed steps 0–4
        self.by_image: dict[str, object] = {}  # the same rows as (image, row), where their grouping left them
        self.tags = None  # an RDD of (image, ((language, text), tags))
        self.sentences = None  # a DataFrame of the sentences Déjà's rules judged (SENTENCE_SCHEMA)
        self.cached: list = []  # RDDs kept for the stages after theirs, released when the build ends
        self.web_records = None  # a web build's image records: (image, facts, skip, source number, record number)
        self.web_referenced = None  # a web build's (image URL, references), a URL in one or several counts
        self.redirects = None  # an RDD of the File redirects (source, target) of the dumps that were read whole

    @contextlib.contextmanager
    def open(self, plan: BuildPlan) -> Iterator[Path]:
        self.session = self.given if self.given is not None else spark_session(plan.options.workers)
        # while the executors read the input, the driver is idle; but a local driver's JVM is the executors' (the
        # warm-up's 4.8 s of CPU were taken from the extraction's cores), so there only for a build that runs SQL
        warming = None
        if _runs_sql(plan) or not self.session.sparkContext.master.startswith("local"):
            warming = threading.Thread(target=warm_sql, args=(self.session,), name="wikipedia-ipc-sql", daemon=True)
            warming.start()
        try:
            with temporary_work_folder("wikipedia-ipc-spark-") as scratch:
                yield Path(scratch)
        finally:
            if warming is not None:
                warming.join()
            for rdd in self.cached:  # a session the caller gave outlives the build: leave it nothing cached
                rdd.unpersist()
            if self.given is None:
                self.session.stop()

    def image_identity(self, plan: BuildPlan, work: Path) -> SparkIdentity:
        """The image tables read by the executors, one task per table (a bad table fails before any dump)."""
        return SparkIdentity(self, plan)

    def extract(self, plan: BuildPlan, work: Path) -> Extraction:
        settings, options = plan.settings, plan.options
        if settings.web:
            return self._extract_web(plan, work)
        tasks, described = plan_tasks(
            plan.dumps,
            options.workers,
            settings.namespaces,
            work,
            settings.history,
            settings.first_seen,
            settings.file_redirects,
            plan.given,
            options.template_parameters,
            options.inline_templates,
            plan.unrendered,
        )
        started = time.perf_counter()
        context = self.session.sparkContext
        extracted = context.parallelize(list(enumerate(tasks)), len(tasks)).mapPartitions(_extract_partition)
        extracted, small = cached_apart(extracted, "row")
        self.cached += [extracted, small]
        stats = counters(small)
        seconds = time.perf_counter() - started
        results = [stats[number] for number in range(len(tasks))]
        extraction, failed = finish_extraction(tasks, results, described, settings.history, seconds, shards=False)
        bad = frozenset(number for number, task in enumerate(tasks) if task.dump in failed)
        rows_of = extracted.filter(lambda item: item[0] == "row").values().filter(lambda item: item[0][0] not in bad)
        pages = small.filter(lambda item: item[0] == "page").values().filter(lambda item: item[0] not in bad)
        languages, dumps = [task.language for task in tasks], [task.dump for task in tasks]
        later = _later_copies(pages, languages, settings.history).persist(spill())
        self.cached.append(later)
        groups = _copy_groups(later, dumps, settings.history)
        extraction.later_copies, extraction.reused_revision_ids = note_copies(groups, extraction.problems)
        if groups:  # the references of the later copies are left out: a shuffle only a build with copies pays
            rows_of = rows_of.subtractByKey(later.flatMap(_copied_rows))
            extraction.copied_references = later.map(lambda pair: pair[0][7]).sum()  # each copy's reference rows
        self.references = rows_of.values()
        redirects = small.filter(lambda item: item[0] == "redirect").values()
        self.redirects = redirects.filter(lambda item: item[0] not in bad).values()
        extraction.seconds = time.perf_counter() - started
        return extraction

    def _extract_web(self, plan: BuildPlan, work: Path) -> Extraction:
        """A web build's extraction on the executors: one WARC source (or dataset shard) per partition, each read
        where it is (a URL goes to the executor as it is). The image records and each image URL's count of
        references stay on the executors, for the core's image stage (:meth:`image_stage`);
        only each source's counters come to the driver."""
        if plan.settings.dataset:
            return self._extract_dataset(plan, work)
        started = time.perf_counter()
        tasks = web_tasks(plan, work)
        context = self.session.sparkContext
        extracted = context.parallelize(tasks, len(tasks)).mapPartitions(warc_partition)
        # every item but the references, cached apart in a task per core: each later read of the image records and
        # the per-source counts passes these few items to a Python worker, not the references too (each pass over
        # the whole cache was seconds at 200 WARC files)
        extracted, small = cached_apart(extracted, "references")
        self.cached += [extracted, small]
        stats = counters(small)
        results = [stats[number] for number in range(len(tasks))]
        bad = frozenset(number for number, result in enumerate(results) if result.error is not None)

        def read(kind: str, items=small):  # noqa: ANN001, ANN202 - an RDD of one kind's items of the sources that did not fail
            return items.filter(lambda item, k=kind: item[0] == k).values().filter(lambda item: item[0] not in bad)

        self.web_records = read("image").map(
            lambda item: (item[1]["image"], item[1]["facts"], item[1]["skip"], item[0][0], item[0][1])
        )
        # a page captured twice is read once, from its first capture (input order)
        captures = read("captures").flatMap(lambda item: item[1])
        references = references_of(read("references", extracted))
        self.references, copies, copied = first_captures(references, captures)
        if copies:  # the kept references counted again, where they are (the image stage gathers the counts)
            self.web_referenced = self.references.map(lambda row: (row["image"], 1)).reduceByKey(lambda a, b: a + b)
        else:  # each source's counts, few and cached: the image stage adds up a URL's counts of several sources
            self.web_referenced = read("referenced").flatMap(lambda item: item[1])
        crawl = web_read(plan, tasks, results, [], None)
        return web_extraction(plan, crawl, [], time.perf_counter() - started, copies, copied)

    def _extract_dataset(self, plan: BuildPlan, work: Path) -> Extraction:
        """A dataset build's extraction on the executors: one shard per partition, and the caption TSV's parts,
        one per partition, each read where it is. The TSV is joined to the samples by URL in Spark SQL
        (:func:`builder.extract.captiontsv.join_captions`); the reference rows and image records of the samples it
        kept stay on the executors, for the image stage and the grouping. Only each task's counters, the join's
        counts and the first problems come to the driver."""
        from builder.extract.captiontsv import TSV_SCHEMA, join_captions, kept_images_query, kept_references_query
        from builder.extract.datasetrefs import LISTING_SCHEMA, SAMPLE_SCHEMA

        started = time.perf_counter()
        tasks, parts = web_tasks(plan, work), dataset_parts(plan, work)
        context = self.session.sparkContext
        read = []
        for units in (tasks, parts):
            rows = cached_once(context.parallelize(units, max(1, len(units))).mapPartitions(web_partition), spill())
            stats = counters(rows)
            read.append((rows, [stats[number] for number in range(len(units))]))
        (extracted, results), (lines, read_parts) = read
        bad = frozenset(number for number, result in enumerate(results) if result.error is not None)
        tables = SparkTables(self.session)
        tables.source("samples", _rows_of(extracted, "sample", bad, SAMPLE_SCHEMA), SAMPLE_SCHEMA)
        tables.source("listing", _rows_of(extracted, "listing", bad, LISTING_SCHEMA), LISTING_SCHEMA)
        tables.source("tsv", _rows_of(lines, "tsv", frozenset(), TSV_SCHEMA), TSV_SCHEMA)
        join = join_captions(tables)
        references = self.session.sql(kept_references_query(plan.languages[0]))
        records = self.session.sql(kept_images_query())
        tables.close(keep="joined", into=self.cached)  # the join's result, checkpointed, holds what the rows need
        for rdd in (extracted, lines):
            rdd.unpersist()
        self.references = references.rdd.map(lambda row: row.asDict())
        self.web_records = records.rdd.map(lambda row: (row["image"], row["facts"], None, row["task"], row["number"]))
        self.web_referenced = self.references.map(lambda row: (row["image"], 1)).reduceByKey(lambda a, b: a + b)
        crawl = dataset_read(plan, tasks, results, read_parts, join, [], None)
        return web_extraction(plan, crawl, [], time.perf_counter() - started)

    def image_stage(
        self, plan: BuildPlan, extraction: Extraction, work: Path, images: Callable[[ImageTables], WebImages]
    ) -> WebImages:
        """``images`` over the image records and referenced counts the extraction left on the executors
        (:mod:`builder.engines.spark.images`: one task's DuckDB, or Spark SQL)."""
        memory = plan.options.memory_limit
        return image_stage(self.session, self.web_records, self.web_referenced, images, memory, self.cached)

    def select(
        self, plan: BuildPlan, chains: Mapping[str, FilterChain], identity: Identity, excluded: Mapping[str, object]
    ) -> dict[str, Selected]:
        mapping = self._identity_map(identity)
        selected = {}
        for name, chain in chains.items():
            config = chain.config
            used = self.references.filter(lambda row, c=config: _selects(c, row))
            titles = used.map(lambda row: row["image"]).distinct().count() if mapping is not None else None
            kept_apart = 0
            apart = excluded.get(name)
            if apart is not None and not isinstance(apart, Apart):  # a web build's images left out everywhere
                apart = Apart(everywhere=apart.rdd.map(lambda row: row["image"]))
            if apart is not None and mapping is None and apart.languages is None:
                # the images left out and the grouping in one shuffle: no image of the map changes its group
                left_out = apart.everywhere.map(lambda image: (image, None))
                keyed = self.references.mapPartitions(lambda rows, c=config: _keyed_own_files(c, rows))
                groups = cogrouped(keyed, left_out)
                before = groups.mapPartitions(lambda part, c=config: _before_rule_apart(c, part), True)
            else:
                if apart is not None:  # joins, never broadcasts: what is left out grows with the input
                    kept = without_left_out(used, apart).persist(spill())
                    self.cached.append(kept)
                    kept_apart = used.count() - kept.count()
                    used = kept
                groups = grouped(mapped_references(used, mapping), lambda row: row["image"])
                before = groups.mapPartitions(lambda part, c=config: _before_rule(c, part), True)
            before = before.persist(spill())
            self.cached.append(before)
            for kind, counted in before.filter(lambda item: item[0] in ("funnel", "apart")).collect():
                if kind == "apart":
                    kept_apart += counted
                else:
                    chain.funnel.add(Funnel.from_list(counted))
            self.survivors[name] = before.filter(lambda item: item[0] == "row").values()
            self.by_image[name] = before.mapPartitions(_rows_by_image, True)
            selected[name] = Selected(titles, kept_apart)
        return selected

    def _identity_map(self, identity: Identity):  # noqa: ANN202 - an RDD of (title, (redirect, image)), or None
        """The titles the map changes, from the engine's table (a Wikipedia build's map, a web build's sets of
        equal images); None when it changes no title."""
        if not identity.map.changed_titles():
            return None
        assert identity.table is not None  # this engine's maps are DataFrames on the executors
        return identity.table.rdd.map(lambda row: (row["file"], (row["redirect"], row["image"])))

    def tag(self, plan: BuildPlan, chains: Mapping[str, FilterChain]) -> None:
        deja = [self.survivors[name] for name, chain in chains.items() if chain.config.deja]
        if deja:
            self._judge(plan, deja)
        ruled = [self.by_image[name] for name, chain in chains.items() if chain.config.caption_rule != "none"]
        if not ruled:
            return
        # each image's texts, sorted by text into partitions (a text in one), tagged once there and keyed by image
        taggers = {language: plan.tagger_name or tagger.name for language, tagger in plan.taggers.items()}
        languages = frozenset(taggers)
        texts = self.session.sparkContext.union(ruled).mapPartitions(lambda part, t=languages: _texts_of(t, part))
        # partitioned by Python's hash of the (language, text) key, the same in every worker (PySpark gives them one
        # PYTHONHASHSEED); PySpark's portable_hash walks a tuple in Python: 3 µs a key against 0.1 µs (issue 48)
        placed = texts.repartitionAndSortWithinPartitions(shuffle_partitions(texts), hash)
        # tagged here, in the tagging stage, not lazily inside the next one; cached by the JVM, not read back
        self.tags = cached_once(placed.mapPartitions(lambda part, t=taggers: _tag_texts(t, part)), spill())
        self.cached.append(self.tags)

    def _judge(self, plan: BuildPlan, survivors: list) -> None:
        """Déjà's rules on every sentence of the unique texts of its configs' records, on the executors: a
        DataFrame of judged sentences for the graph's SQL."""
        context = self.session.sparkContext
        judged = [rows for _, rows in _per_language(plan, _unique_texts(context, survivors), judge_partition)]
        frame = self.session.createDataFrame(context.union(judged), spark_schema(SENTENCE_SCHEMA))
        self.sentences = frame.persist(spill())
        self.cached.append(self.sentences)
        self.sentences.count()  # judged here, in the tagging stage, not lazily inside the next one

    def _write_deja(self, plan: BuildPlan, chain: FilterChain, publisher: Publisher) -> Written:
        """A Déjà config's graph (:func:`builder.filters.repetition.deja_graph`) in Spark SQL on the executors, its
        edges written in caption and image order, as the local engine writes them."""
        config = chain.config
        columns = DEJA_CANDIDATE_SCHEMA.names
        candidates = self.survivors[config.name].map(lambda row: tuple(row.get(column) for column in columns))
        tables = SparkTables(self.session, self.cached)
        try:
            tables.source("candidates", candidates, DEJA_CANDIDATE_SCHEMA)
            tables.frame("sentences", self.sentences)
            if config.deja == "paraphrases":  # the image records' facts hold their feature vectors
                tables.image_records(self.web_records)
            graph = deja_graph(config, tables)
            if config.deja_pairs:  # §5, §8.2: each caption paired with another
                situated = deja_pairs(config, tables)
                graph.funnel.extend(situated.funnel)
                graph.statistics.update({"pairs": situated.statistics} if situated.statistics else {})
                order = situated.order
                pairs = self.session.sql(situated.query).rdd.map(lambda row: row.asDict())
                keyed = pairs.map(lambda row: (tuple(row[column] for column in order), paracaption_row(row)))
                kind = "deja-pairs"
            else:
                edges = self.session.sql(graph.rows_query).rdd.map(lambda row: row.asDict())
                keyed = edges.map(lambda row: ((row["canonical"], row["image"]), output_row(row)))
                kind = "deja"
            chain.funnel.set_rows(graph.funnel)
            folder = publisher.shard_folder(config.name)
            written, parts = write_split(keyed, folder, plan.options.rows_per_shard, "train", False, "", kind)
        finally:
            tables.close()
        files = finalize_parts(folder, parts, "train") if parts else []
        if not files:
            files = publisher.writer(config.name, rows=kind).close()
        return Written(written, files, None, 0.0, graph.statistics)

    def write(self, plan: BuildPlan, chain: FilterChain, publisher: Publisher) -> Written:
        config = chain.config
        if config.deja:
            return self._write_deja(plan, chain, publisher)
        survivors = self.survivors[config.name]
        if config.references:  # the references step 0 counted, in the local engine's order: one train split
            folder = publisher.shard_folder(config.name)
            keyed = survivors.flatMap(
                lambda row: [((sort_key(row), number), out) for number, out in enumerate(reference_rows(row))]
            )
            written, parts = write_split(keyed, folder, plan.options.rows_per_shard, "train", False, "", "references")
            files = finalize_parts(folder, parts, "train") if parts else []
            if not files:
                files = publisher.writer(config.name, rows="references").close()
            return Written(written, files, None)
        by_image = self.by_image[config.name]
        if config.caption_rule == "none":
            untagged = by_image.mapValues(lambda row: {**row, "caption_tags": None, "alt_tags": None})
            groups = regrouped(untagged)
        else:
            groups = _tagged_groups(by_image, self.tags)
        tagsets = plan.tagsets()
        after = groups.mapPartitions(lambda part, c=config, t=tagsets: _apply_rule(c, t, part), True)
        after = after.cache()
        for funnel in after.filter(lambda item: item[0] == "funnel").values().collect():
            chain.funnel.add(Funnel.from_list(funnel))
        clusters = _where_they_are(after, "cluster")
        folder = publisher.shard_folder(config.name)
        written, parts, record = _write_pairs(
            self.session, clusters, config, chain, folder, plan.options.rows_per_shard
        )
        files: list[Path | str] = []
        for split, names in parts.items():
            files += finalize_parts(folder, names, split) if names else []
        if not files:  # no pair survived: one shard with no rows, as the local engine writes
            web = config.identity_label if config.web else ""
            files = publisher.writer(config.name, languages=config.crosslingual, web=web).close()
        after.unpersist()
        return Written(written, files, record)


def _runs_sql(plan: BuildPlan) -> bool:
    """Whether a build's stages run Spark SQL whatever its size: the identity map of redirects or SHA-1s, a dataset's
    caption TSV, Déjà's graph (a web build's image stage and a split assignment only over their one-task bounds)."""
    settings = plan.settings
    return bool(set(settings.identities) - {"title"}) or settings.dataset or any(c.deja for c in plan.configs)


def _unique_texts(context, survivors: list):  # noqa: ANN001, ANN202 - a SparkContext; an RDD of (language, text)
    """The unique texts of the rows' captions and alt texts, with their language, on the executors."""
    pairs = context.union(survivors).flatMap(
        lambda row: [(row["language"], row["caption"]), (row["language"], row["alt"])]
    )
    return pairs.filter(lambda item: bool(item[1])).distinct()


def _per_language(plan: BuildPlan, texts, run: Callable) -> list[tuple[str, object]]:  # noqa: ANN001 - an RDD
    """Each language's texts run through ``run(tagger name, language, texts)`` on the executors, in as many
    partitions as workers: what tagging and Déjà's rules both do per language."""
    found = []
    for language, tagger in sorted(plan.taggers.items()):
        name = plan.tagger_name or tagger.name
        own = texts.filter(lambda item, code=language: item[0] == code).values().coalesce(plan.options.workers)
        found.append((language, own.mapPartitions(lambda part, n=name, code=language: run(n, code, part))))
    return found


def _selects(config: PipelineConfig, row: dict) -> bool:
    """Whether a config reads a reference: its sources and, in a build over several languages, its language."""
    return row["source"] in config.sources and (not config.language or row["language"] == config.language)


def _keyed_own_files(config: PipelineConfig, rows: Iterable[dict]) -> Iterator[tuple[str, dict]]:
    """The rows a config reads keyed by image, each with its own file and redirect, in one pass (a filter, a keyBy
    and a map were a call or two each per row); set in place: each read of the references unpickles its own rows."""
    for row in rows:
        if _selects(config, row):
            row["file"] = row["redirect"] = row["image"]
            yield row["image"], row


_settle_in_a_worker()  # at import: in a worker, with the toolkit's first task
