"""The local engine: drives the stages on one machine with worker processes and DuckDB.

1. extraction – the tasks of :mod:`builder.extract.tasks` go to worker processes; each
   writes its image references to a parquet shard;
2. grouping – DuckDB sorts the shards by image (spilling to disk), after joining the
   identity map (:mod:`builder.filters.identity`) when the build merges titles, and the
   sorted stream is cut into clusters, one image at a time;
3. steps 0–4 of Table 3 per cluster; survivors are written as candidates;
4. tagging – every unique surviving text is POS-tagged once, in batches;
5. steps 5–9 per cluster, then the pairs go to the dataset folder; with splits
   (:mod:`builder.publish.splits`) they go to a work file first, are assigned to splits from a
   streamed read of it, and are streamed again into one writer per split, in image order.

Memory stays flat: only one cluster and one batch are held at a time, besides the
build-wide digests of "unique candidates" and of the split assignment (at most about
730 bytes per pair while it is computed, see :mod:`builder.publish.splits`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import itertools
import os
import shutil
import signal
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from builder.common import (
    SCRIPT_GUARD,
    duckdb_connection,
    exit_with_parent,
    pool_size,
    process_memory,
    sql_list,
    sql_text,
    worker_pool,
)
from builder.config import DEFAULT_MEMORY_LIMIT, BuildOptions, PipelineConfig, default_workers, duckdb_memory
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
from builder.extract.copies import CopyGroup, note_copies
from builder.extract.tasks import (
    BATCH_ROWS,
    REFERENCE_SCHEMA,
    Extraction,
    ExtractResult,
    ExtractTask,
    finish_extraction,
    pages_file,
    plan_tasks,
    run_extract_task,
)
from builder.filters.captions import rule_verdicts, tag_batch, text_batches
from builder.filters.chain import FilterChain
from builder.filters.clusters import SORT_COLUMNS, Cluster, cluster_from_rows, cluster_rows
from builder.filters.identity import Identity, IdentityMap, InProcessIdentity
from builder.filters.repetition import SENTENCE_SCHEMA, DuckDBDejaTables, deja_graph, judge_texts, output_row
from builder.filters.situated import deja_pairs, paracaption_row
from builder.filters.tagging import Tagger, TaggerWarning, get_tagger
from builder.filters.web import DuckDBImageTables, ImageTables, WebImages
from builder.lang.wordnet import load_wordnet
from builder.progress import progress_bar
from builder.publish.publisher import Publisher
from builder.publish.splits import assign_files, check_files, split_record
from builder.publish.workdir import WorkDir
from builder.publish.writer import PairWriter, reference_rows
from builder.sources.files import DumpError

__all__ = ["build", "default_workers", "extract_references"]

# the references of the candidates: the title each used, and where its File redirects lead
CANDIDATE_SCHEMA = REFERENCE_SCHEMA.append(pa.field("file", pa.string())).append(pa.field("redirect", pa.string()))
TAG_SCHEMA = pa.schema([("language", pa.string()), ("text", pa.string()), ("tags", pa.list_(pa.list_(pa.string())))])
SORT_KEY = ", ".join(SORT_COLUMNS)


def quiet_interrupt() -> None:
    """In a worker: Ctrl-C (sent to the whole process group) ends it at once, without a traceback of its own;
    the build's process says what was kept. A build killed outright ends its workers too (:func:`exit_with_parent`)."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    exit_with_parent()


def run_tasks(
    tasks: Sequence[object],
    workers: int,
    show_progress: bool,
    runner: Callable[..., object] = run_extract_task,
    unit: str = "dump ranges",
) -> list:
    """Run the tasks (dump parts, or a web build's WARC files with ``runner``), in worker processes when
    there are several; results in task order. ``unit`` names the tasks on the progress bar, by input kind."""
    if workers <= 1 or len(tasks) == 1:
        if runner is not run_extract_task:
            return [runner(task) for task in tasks]
        with progress_bar(desc="pages", unit=" pages", disable=not show_progress) as progress:
            return [run_extract_task(task, progress) for task in tasks]
    results: list[ExtractResult | None] = [None] * len(tasks)
    # an executor, not a Pool: a worker killed from outside (out of memory, kill -9) ends
    # the build with an error instead of leaving it waiting for a result forever
    with (
        worker_pool(pool_size(workers, len(tasks)), fork_safe=True, initializer=quiet_interrupt) as executor,
        progress_bar(total=len(tasks), desc=unit, disable=not show_progress) as progress,
    ):
        try:  # a worker killed while tasks are still being submitted breaks the pool in submit() already
            futures = {executor.submit(runner, task): number for number, task in enumerate(tasks)}
            for future in concurrent.futures.as_completed(futures):
                results[futures[future]] = future.result()
                progress.update(1)
                found = sum(
                    done.references if hasattr(done, "references") else done.extract.references
                    for done in results
                    if done is not None
                )
                progress.set_postfix(references=f"{found:,}", refresh=False)
        except KeyboardInterrupt:
            executor.shutdown(wait=False, cancel_futures=True)  # ranges not begun are dropped, not read
            raise
        except concurrent.futures.BrokenExecutor:
            raise DumpError(
                "a worker process ended abruptly (killed, or out of memory) while reading the dumps; "
                "the parts it finished are kept with --work-dir, and --resume reads only the others; from a script, "
                'put the build under `if __name__ == "__main__":`'
            ) from None
    return [result for result in results if result is not None]


def extract_references(
    dumps: Sequence[str | Path],
    shard_dir: Path,
    workers: int = 1,
    namespaces: tuple[int, ...] = (0,),
    show_progress: bool = True,
    history: bool = False,
    first_seen: bool = False,
    file_redirects: bool = False,
    languages: Mapping[str, str] | None = None,
    parameter_table: str | Path | None = None,
    inline_table: str | Path | None = None,
    unrendered: str = "auto",
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> Extraction:
    """Extraction over all dumps: pages → image references with cleaned texts, as parquet shards.

    ``history``: the dumps are edit histories (every revision of a page); ``first_seen``:
    a reference repeated by later revisions of its page counts once (:mod:`builder.extract.history`);
    ``file_redirects``: the File-namespace redirects are collected too (:attr:`Extraction.redirects`).
    Skipped parts of the dumps are reported as :class:`DumpWarning` and kept in
    :attr:`Extraction.problems`. Later copies of pages already read are found once every task is
    done (:func:`find_later_copies`), warned of, and listed in :attr:`Extraction.later` for the grouping.
    """
    shard_dir.mkdir(parents=True, exist_ok=True)
    tasks, described = plan_tasks(
        dumps,
        workers,
        namespaces,
        shard_dir,
        history,
        first_seen,
        file_redirects,
        languages,
        parameter_table,
        inline_table,
        unrendered,
    )
    started = time.perf_counter()
    results = run_tasks(tasks, workers, show_progress)
    extraction, failed = finish_extraction(tasks, results, described, history, time.perf_counter() - started)
    later = shard_dir / "later-copies.parquet"
    later.unlink(missing_ok=True)  # an earlier build's, in a resumed work folder
    with duckdb_connection(shard_dir / "duckdb", memory_limit, workers) as connection:
        read = [(number, task) for number, task in enumerate(tasks) if task.dump not in failed]
        groups = find_later_copies(connection, read, history, later)
    extraction.later_copies, extraction.reused_revision_ids = note_copies(groups, extraction.problems)
    extraction.later = later if groups else None
    extraction.copied_references = pq.read_metadata(later).num_rows if groups else 0  # a row per reference left out
    extraction.seconds = time.perf_counter() - started
    return extraction


def find_later_copies(
    connection: duckdb.DuckDBPyConnection, tasks: Sequence[tuple[int, ExtractTask]], history: bool, out: Path
) -> list[CopyGroup]:
    """The rule of :mod:`builder.extract.copies` over the tasks' page records, in SQL.

    ``tasks`` are the numbered tasks of the dumps that were read whole. A record whose
    :func:`~builder.extract.copies.copy_unit` is not that of the first record of its
    :func:`~builder.extract.copies.copy_key` in (task, record) order is a later copy;
    the (shard, row number) of their references go to ``out`` (written only when there is a copy),
    and the groups come back.
    """
    if not tasks:
        return []
    table = pa.table(
        {
            "task": [number for number, _ in tasks],
            "dump": [task.dump for _, task in tasks],
            "language": [task.language for _, task in tasks],
            "shard": [task.shard for _, task in tasks],
            "pages": [str(pages_file(task.shard)) for _, task in tasks],
        }
    )
    connection.register("copy_tasks", table)
    files = sql_list([pages_file(task.shard) for _, task in tasks])
    revision, unit = ("p.revision_id", "p.record") if history else ("-1", "p.element")
    kind = "CASE WHEN digest = first_digest THEN 'revision' ELSE 'reused' END" if history else "'page'"
    connection.execute(
        "CREATE OR REPLACE TEMP TABLE later_copies AS "
        "WITH pages AS (SELECT t.task, t.dump, t.language, t.shard, p.*, "
        f"{revision} AS revision_key, {unit} AS unit FROM read_parquet({files}, filename = true) p "
        "JOIN copy_tasks t ON p.filename = t.pages), "
        "ranked AS (SELECT *, first_value(task) OVER w AS first_task, first_value(unit) OVER w AS first_unit, "
        "first_value(dump) OVER w AS first_dump, first_value(digest) OVER w AS first_digest FROM pages "
        "WINDOW w AS (PARTITION BY language, page_id, revision_key ORDER BY task, record)) "
        f"SELECT shard, first_row, rows, record, task, dump, first_dump, {kind} AS kind, page_id, revision_id, title "
        "FROM ranked WHERE task <> first_task OR unit <> first_unit"
    )
    rows = connection.sql(
        "SELECT dump, first_dump, kind, count(*) OVER g AS n, task, record, page_id, revision_id, title "
        "FROM later_copies WINDOW g AS (PARTITION BY dump, first_dump, kind) "
        "QUALIFY row_number() OVER (PARTITION BY dump, first_dump, kind ORDER BY task, record) = 1"
    ).fetchall()
    if rows:
        expanded = "SELECT shard, unnest(range(first_row, first_row + rows)) AS row FROM later_copies WHERE rows > 0"
        connection.execute(f"COPY ({expanded}) TO {sql_text(out)} (FORMAT parquet)")
    connection.execute("DROP TABLE later_copies")
    connection.unregister("copy_tasks")
    return [
        CopyGroup(later, first, kind, count, (task, record), page_id, revision_id, title)
        for later, first, kind, count, task, record, page_id, revision_id, title in rows
    ]


def _stream_rows(connection: duckdb.DuckDBPyConnection, query: str) -> Iterator[dict]:
    """Rows of a query, fetched in record batches so that a huge result never sits in memory."""
    reader = connection.sql(query).to_arrow_reader(BATCH_ROWS)
    for batch in reader:
        yield from batch.to_pylist()


def _clusters(rows: Iterable[dict]) -> Iterator[tuple[Cluster, list[dict]]]:
    for image, group in itertools.groupby(rows, key=lambda row: row["image"]):
        members = list(group)
        yield cluster_from_rows(image, members), members


def _references(shards: Sequence[Path], later: Path | None) -> str:
    """The build's reference rows as a SQL relation, the later copies of pages (``later``) left out."""
    files = sql_list(shards)
    if later is None:
        return f"read_parquet({files})"
    return (
        f"(SELECT r.* EXCLUDE (filename, file_row_number) FROM read_parquet({files}, filename = true, "
        f"file_row_number = true) r ANTI JOIN read_parquet({sql_list([later])}) l "
        "ON r.filename = l.shard AND r.file_row_number = l.row)"
    )


def _selection(chain: FilterChain, table: str = "") -> str:
    """The SQL condition on a reference row for the config: its sources and, in a multi-language build, its language."""
    prefix = f"{table}." if table else ""
    sources = ", ".join(f"'{source}'" for source in chain.config.sources)
    condition = f"{prefix}source IN ({sources})"
    if chain.config.language:
        condition += f" AND {prefix}language = '{chain.config.language}'"
    return condition


def select_candidates(
    connection: duckdb.DuckDBPyConnection,
    shards: Sequence[Path],
    chain: FilterChain,
    out: Path,
    identity: IdentityMap | Path | None = None,
    local: Path | None = None,
    later: Path | None = None,
    schema: pa.Schema = CANDIDATE_SCHEMA,
) -> int:
    """Steps 0–4 for one config over the image-sorted references; survivors go to ``out``.

    The identity map (in this process, or a web build's parquet file of ``file, redirect, image`` rows) is joined
    before the sort: a reference's cluster is its title's canonical image.
    ``local`` lists images whose references the config leaves out (``language``, ``image``; a null language
    stands for every language): the files uploaded locally to a wiki (:func:`builder.filters.identity.local_files`),
    which a cross-lingual config keeps apart from the Commons file of the same name, or a web config's images
    that failed a rule (:mod:`builder.filters.web`). Returns how many references that left out. ``later``: the
    later copies of pages, left out (:attr:`Extraction.later`). ``schema``: the candidates' columns (a web
    build's rows carry their page records).
    """
    if isinstance(identity, Path):
        connection.execute(f"CREATE TEMP VIEW identity_map AS SELECT * FROM read_parquet({sql_list([identity])})")
    else:
        connection.register("identity_map", (identity or IdentityMap()).table())
    condition = _selection(chain, "r")
    references = _references(shards, later)
    kept_apart = 0
    if local is not None:
        files = sql_list([local])
        local_file = (
            f"SELECT 1 FROM read_parquet({files}) l "
            "WHERE l.image = r.image AND (l.language IS NULL OR l.language = r.language)"
        )
        counted = f"SELECT count(*) FROM {references} r WHERE {condition}"
        kept_apart = connection.sql(f"{counted} AND EXISTS ({local_file})").fetchall()[0][0]
        condition += f" AND NOT EXISTS ({local_file})"
    query = (
        "SELECT * FROM (SELECT r.* REPLACE (coalesce(m.image, r.image) AS image), r.image AS file, "
        f"coalesce(m.redirect, r.image) AS redirect FROM {references} r "
        f"LEFT JOIN identity_map m ON r.image = m.file WHERE {condition}) ORDER BY {SORT_KEY}"
    )
    rows: list[dict] = []
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for cluster, _ in _clusters(_stream_rows(connection, query)):
            survivor = chain.before_rule(cluster)
            if survivor is None:
                continue
            rows.extend(cluster_rows(survivor))
            if len(rows) >= BATCH_ROWS:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                rows.clear()
        writer.write_table(pa.Table.from_pylist(rows, schema=schema))
    if isinstance(identity, Path):
        connection.execute("DROP VIEW identity_map")
    else:
        connection.unregister("identity_map")
    return kept_apart


def count_titles(
    connection: duckdb.DuckDBPyConnection, shards: Sequence[Path], chain: FilterChain, later: Path | None = None
) -> int:
    """The distinct titles the config's references use: its images before an identity map that changes titles."""
    query = f"SELECT count(DISTINCT image) FROM {_references(shards, later)} WHERE {_selection(chain)}"
    return connection.sql(query).fetchall()[0][0]


_worker_tagger: Tagger | None = None


def _init_tag_worker(spec: str, language: str) -> None:
    """A tagging worker builds its own tagger by name; what that tagger warns of, the build already said once."""
    global _worker_tagger
    quiet_interrupt()
    warnings.simplefilter("ignore", TaggerWarning)
    _worker_tagger = get_tagger(spec, language)


def _tag_in_worker(texts: list[str]) -> list[list[list[str]]]:
    assert _worker_tagger is not None
    return tag_batch(texts, _worker_tagger)


def _unique_texts(
    connection: duckdb.DuckDBPyConnection, candidates: Sequence[Path], language: str
) -> tuple[int, Iterator[list[str]]]:
    """How many unique non-empty texts (captions and alt texts) the candidates hold in ``language``, and those
    texts in sorted order, in the batches taggers work in, streamed from DuckDB."""
    files = sql_list(candidates)
    texts = (
        f"SELECT language, caption AS text FROM read_parquet({files}) UNION "
        f"SELECT language, alt AS text FROM read_parquet({files})"
    )
    query = f"SELECT text FROM ({texts}) WHERE text <> '' AND language = '{language}' ORDER BY text"
    count = connection.sql(f"SELECT count(*) FROM ({query})").fetchall()[0][0]
    return count, text_batches(row["text"] for row in _stream_rows(connection, query))


def tag_texts(
    connection: duckdb.DuckDBPyConnection,
    candidates: Sequence[Path],
    out: Path,
    taggers: Mapping[str, Tagger],
    by_name: bool,
    workers: int,
    show_progress: bool,
) -> int:
    """Tag every unique text of the candidates once per language, by that language's tagger; tags go to ``out``."""
    total = 0
    with pq.ParquetWriter(out, TAG_SCHEMA, compression="zstd") as writer:
        for language, tagger in sorted(taggers.items()):
            count, batches = _unique_texts(connection, candidates, language)
            total += count
            description = "tagging" if len(taggers) == 1 else f"tagging {language}"
            with progress_bar(total=count, desc=description, unit=" texts", disable=not show_progress) as progress:
                here = functools.partial(tag_batch, tagger=tagger)
                work = _in_order(batches, here, _tag_in_worker, tagger, language, by_name, workers, "tagging")
                for batch, tags in work:
                    table = {"language": [language] * len(batch), "text": batch, "tags": tags}
                    writer.write_table(pa.Table.from_pydict(table, schema=TAG_SCHEMA))
                    progress.update(len(batch))
    return total


def _in_order(
    batches: Iterator[list[str]],
    here: Callable[[list[str]], list],
    worker: Callable[[list[str]], list],
    tagger: Tagger,
    language: str,
    by_name: bool,
    workers: int,
    what: str,
) -> Iterator[tuple[list[str], list]]:
    """Each batch of texts with what ``here`` makes of it in this process, in order; or ``worker`` in worker
    processes that build the tagger again by name (:func:`_init_tag_worker`), when the build has workers and the
    tagger a name."""
    if workers <= 1 or not by_name:
        for batch in batches:
            yield batch, here(batch)
        return
    # not a fork of this process: it holds a DuckDB connection with live threads. An executor, not a Pool: a worker
    # that dies at its start (a script without a main guard, where workers import it) ends the build at once.
    size = pool_size(workers)  # as many processes as cores, however many workers were asked for
    with worker_pool(size, False, initializer=_init_tag_worker, initargs=(tagger.name, language)) as executor:
        try:
            while window := list(itertools.islice(batches, size * 4)):
                yield from zip(window, executor.map(worker, window), strict=True)
        except concurrent.futures.BrokenExecutor:
            raise RuntimeError(f"a {what} worker ended abruptly (killed, or out of memory; {SCRIPT_GUARD})") from None


def _judge_here(language: str, tagger: Tagger, texts: list[str]) -> list[dict]:
    """Déjà's rules on a batch: WordNet is loaded once per process, where it is first used."""
    return judge_texts(language, texts, tagger, load_wordnet())


def _judge_in_worker(language: str, texts: list[str]) -> list[dict]:
    assert _worker_tagger is not None
    return _judge_here(language, _worker_tagger, texts)


def judge_sentences(
    connection: duckdb.DuckDBPyConnection,
    candidates: Sequence[Path],
    out: Path,
    taggers: Mapping[str, Tagger],
    by_name: bool,
    workers: int,
    show_progress: bool,
) -> int:
    """Déjà's rules (§2) on every sentence of every unique text of the candidates, once per language; the judged
    sentences (:data:`builder.filters.repetition.SENTENCE_SCHEMA`) go to ``out``. Returns the texts judged."""
    total = 0
    with pq.ParquetWriter(out, SENTENCE_SCHEMA, compression="zstd") as writer:
        for language, tagger in sorted(taggers.items()):
            count, batches = _unique_texts(connection, candidates, language)
            total += count
            here = functools.partial(_judge_here, language, tagger)  # WordNet loaded where used, once
            worker = functools.partial(_judge_in_worker, language)
            with progress_bar(total=count, desc="deja sentences", unit=" texts", disable=not show_progress) as bar:
                for batch, rows in _in_order(batches, here, worker, tagger, language, by_name, workers, "Déjà"):
                    writer.write_table(pa.Table.from_pylist(rows, schema=SENTENCE_SCHEMA))
                    bar.update(len(batch))
    return total


def write_pairs(
    connection: duckdb.DuckDBPyConnection,
    candidates: Path,
    tags: Path,
    chain: FilterChain,
    writer: PairWriter,
    tagsets: Mapping[str, str],
) -> None:
    """Steps 5–9 for one config: caption rule from the stored tags, then pairs and pair filters."""
    tagged = sql_list([tags])
    query = (
        f"SELECT c.*, tc.tags AS caption_tags, ta.tags AS alt_tags FROM read_parquet({sql_list([candidates])}) c "
        f"LEFT JOIN read_parquet({tagged}) tc ON c.caption = tc.text AND c.language = tc.language "
        f"LEFT JOIN read_parquet({tagged}) ta ON c.alt = ta.text AND c.language = ta.language ORDER BY {SORT_KEY}"
    )
    for cluster, rows in _clusters(_stream_rows(connection, query)):
        writer.write(chain.after_rule(cluster, rule_verdicts(rows, chain.config.caption_rule, tagsets)))


def write_splits(
    pairs: Sequence[Path], fractions: tuple[float, ...], folder: Path, languages: bool = False, web: str = ""
) -> tuple[list[PairWriter], dict[str, object]]:
    """Route the pairs of the work files into one writer per split, keeping their order; the splits' record.

    A split without pairs gets no file; a config without any pair gets the usual empty ``train`` shard.
    ``languages``: the pairs are a cross-lingual config's, with their languages; ``web``: a web config's
    (its equivalence label), with their page records.
    """
    assignment = assign_files(pairs, fractions)
    writers = {
        split: PairWriter(folder, prefix=f"part-{split}", split=split, languages=languages, web=web)
        for split in assignment.names
    }
    for part in pairs:
        for batch in pq.ParquetFile(part).iter_batches(BATCH_ROWS):
            for row in batch.to_pylist():
                writers[assignment.split_of(row)].write_rows([row])
    for writer in writers.values():
        writer.finish()  # rows are counted when written
    used = [writer for writer in writers.values() if writer.rows] or [writers["train"]]
    files = [file for writer in used for file in writer.close()]
    return used, split_record(assignment.stats, fractions, check_files(files))


def web_candidate_schema(dataset: bool = False) -> pa.Schema:
    """The candidates of a web build: its reference rows (a dataset's with their users), with the title each used
    and its redirect."""
    from builder.extract.webrefs import DATASET_ROW_SCHEMA, WEB_ROW_SCHEMA

    rows = DATASET_ROW_SCHEMA if dataset else WEB_ROW_SCHEMA
    return rows.append(pa.field("file", pa.string())).append(pa.field("redirect", pa.string()))


def extract_web(plan: BuildPlan, folder: Path) -> Extraction:
    """A web build's extraction: one task per WARC source (or dataset shard) in worker processes, each writing its
    reference rows and image index (:func:`builder.extract.webrefs.run_build_task`); then each image URL's
    references, counted by DuckDB, for the image filter of the core."""
    from builder.extract.webrefs import run_build_task

    if plan.settings.dataset:
        return extract_dataset(plan, folder)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tasks = web_tasks(plan, folder)
    results = run_tasks(tasks, plan.options.workers, plan.options.show_progress, run_build_task, "crawl files")
    read = [task for task, result in zip(tasks, results, strict=True) if result.error is None]
    shards = [task.shard for task in read]
    referenced = folder / "referenced.parquet"
    later = folder / "later-captures.parquet"
    copies = copied = 0
    with duckdb_connection(folder / "duckdb", plan.options.memory_limit) as connection:
        if shards:
            copies, copied = later_captures(connection, shards, later)
        counted = f'SELECT image, count(*) AS "references" FROM {_references(shards, later if copies else None)} '
        counted += "GROUP BY image"
        if not shards:
            counted = "SELECT ''::VARCHAR AS image, 0::BIGINT AS \"references\" WHERE false"
        connection.execute(f"COPY ({counted} ORDER BY image) TO {sql_text(referenced)} (FORMAT parquet)")
    crawl = web_read(plan, tasks, results, [task.images for task in read], referenced)
    extraction = web_extraction(plan, crawl, shards, time.perf_counter() - started, copies, copied)
    extraction.later = later if copies else None
    return extraction


class DuckDBTables:
    """:class:`builder.extract.captiontsv.SqlTables` on a DuckDB connection: each table a temporary table, under
    the connection's memory limit, spilling to its folder."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self.connection = connection

    def source(self, name: str, files: Sequence[Path], schema: pa.Schema) -> None:
        """View ``name`` over parquet files of ``schema`` (none: an empty table)."""
        if files:
            self.connection.execute(
                f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM read_parquet({sql_list(files)})"
            )
        else:
            self.connection.register(f"{name}_empty", schema.empty_table())
            self.connection.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM {name}_empty")

    def table(self, name: str, query: str) -> None:
        self.connection.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {query}")

    def rows(self, query: str) -> list[tuple]:
        return self.connection.execute(query).fetchall()

    def write(self, query: str, out: Path, schema: pa.Schema) -> None:
        """A query's rows into a parquet file of ``schema``, a batch at a time (no row passes through Python)."""
        with pq.ParquetWriter(out, schema, compression="zstd") as writer:
            for batch in self.connection.sql(query).to_arrow_reader(BATCH_ROWS):
                writer.write_table(pa.Table.from_batches([batch]).select(schema.names).cast(schema))


def extract_dataset(plan: BuildPlan, folder: Path) -> Extraction:
    """A dataset build's extraction: the shards' tasks and the caption TSV's parts in worker processes, each
    writing its samples (or TSV rows) to parquet; then DuckDB joins the TSV to the samples by URL
    (:func:`builder.extract.captiontsv.join_captions`) and writes the reference rows and the image index of the
    samples it kept, and each image URL's references, for the image stage of the core. No TSV row, sample or
    reference passes through this process."""
    from builder.extract.captiontsv import TSV_SCHEMA, join_captions, kept_images_query, kept_references_query
    from builder.extract.datasetrefs import LISTING_SCHEMA, SAMPLE_SCHEMA, run_dataset_task
    from builder.extract.web import WEB_IMAGE_SCHEMA
    from builder.extract.webrefs import DATASET_ROW_SCHEMA

    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tasks, parts = web_tasks(plan, folder), dataset_parts(plan, folder)
    unit = "dataset shards and TSV parts" if parts else "dataset shards"
    done = run_tasks([*tasks, *parts], plan.options.workers, plan.options.show_progress, run_dataset_task, unit)
    results, read_parts = done[: len(tasks)], done[len(tasks) :]
    read = [task for task, result in zip(tasks, results, strict=True) if result.error is None]
    shards, index = [folder / "dataset-references.parquet"], [folder / "dataset-images.parquet"]
    referenced = folder / "referenced.parquet"
    with duckdb_connection(folder / "duckdb", plan.options.memory_limit) as connection:
        tables = DuckDBTables(connection)
        tables.source("samples", [task.samples for task in read], SAMPLE_SCHEMA)
        tables.source("listing", [task.listing for task in read], LISTING_SCHEMA)
        tables.source("tsv", [part.path for part in parts], TSV_SCHEMA)
        join = join_captions(tables)
        references = f"{kept_references_query(plan.languages[0])} ORDER BY task, number"
        tables.write(references, shards[0], DATASET_ROW_SCHEMA)
        tables.write(f"{kept_images_query()} ORDER BY task, number", index[0], WEB_IMAGE_SCHEMA)
        counted = f'SELECT image, count(*) AS "references" FROM {_references(shards, None)} GROUP BY image'
        connection.execute(f"COPY ({counted} ORDER BY image) TO {sql_text(referenced)} (FORMAT parquet)")
    if not read:  # as a crawl none of whose files could be read: nothing for the stages after
        shards, index = [], []
    crawl = dataset_read(plan, tasks, results, read_parts, join, index, referenced)
    return web_extraction(plan, crawl, shards, time.perf_counter() - started)


def later_captures(connection: duckdb.DuckDBPyConnection, shards: Sequence[Path], out: Path) -> tuple[int, int]:
    """A page captured more than once (one URL, in one WARC file or several) is read once, from its first capture
    in input order (the smallest ``page_id``): the reference rows of its later captures go to ``out`` (``shard``,
    ``row``, as :func:`_references` leaves them out). Returns how many later captures there are, and their
    references (rows), which the crawl's counters found and step 0 does not see."""
    files = sql_list(shards)
    connection.execute(
        "CREATE OR REPLACE TEMP TABLE later_captures AS "
        f"SELECT r.filename AS shard, r.file_row_number AS row, r.page_id FROM read_parquet({files}, filename = true, "
        f"file_row_number = true) r JOIN (SELECT page, min(page_id) AS first FROM read_parquet({files}) GROUP BY page) "
        "f ON r.page = f.page WHERE r.page_id > f.first"
    )
    copies, copied = connection.execute("SELECT count(DISTINCT page_id), count(*) FROM later_captures").fetchone()
    if copies:
        connection.execute(f"COPY (SELECT shard, row FROM later_captures ORDER BY shard, row) TO {sql_text(out)}")
    connection.execute("DROP TABLE later_captures")
    return int(copies), int(copied)


def build(
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    options: BuildOptions | None = None,
    **settings: object,
) -> BuildReport:
    """Build the given configs from the given dumps into a Hub-ready dataset folder, on this machine.

    ``options`` (:class:`builder.config.BuildOptions`) are the build's settings; keyword
    ``settings`` override them one by one (``build(dumps, [GOLD], out, workers=2)``).
    """
    return run(LocalEngine(), dumps, configs, output, BuildOptions.of(options, settings))


class LocalEngine:
    """The stages on one machine: worker processes read the dumps, DuckDB groups and joins on disk."""

    def __init__(self) -> None:
        self.work = Path()
        self.connection: duckdb.DuckDBPyConnection | None = None
        self.extraction: Extraction | None = None
        self.candidates: dict[str, Path] = {}

    @contextlib.contextmanager
    def open(self, plan: BuildPlan) -> Iterator[Path]:
        options = plan.options
        owned = WorkDir.claim(options.work_dir, options.resume) if options.work_dir else WorkDir.temporary()
        try:
            if not options.resume:
                owned.clear("references")
            self.work = owned.path
            yield owned.path
        finally:
            if self.connection is not None:
                self.connection.close()
                self.connection = None
            owned.close()

    def image_identity(self, plan: BuildPlan, work: Path) -> InProcessIdentity:
        """The SHA-1 groups by DuckDB on disk, then the map in this process (it holds the File redirects and the
        titles of files uploaded twice, a small part of the input)."""
        options = plan.options
        return InProcessIdentity(plan.settings.identities, options.image_tables, work, options.memory_limit)

    def extract(self, plan: BuildPlan, work: Path) -> Extraction:
        settings, options = plan.settings, plan.options
        if settings.web:
            self.extraction = extract_web(plan, work / "references")
            return self.extraction
        self.extraction = extract_references(
            plan.dumps,
            work / "references",
            options.workers,
            settings.namespaces,
            options.show_progress,
            history=settings.history,
            first_seen=settings.first_seen,
            file_redirects=settings.file_redirects,
            languages=plan.given,
            parameter_table=options.template_parameters,
            inline_table=options.inline_templates,
            unrendered=plan.unrendered,
            memory_limit=options.memory_limit,
        )
        return self.extraction

    def image_stage(
        self, plan: BuildPlan, extraction: Extraction, work: Path, images: Callable[[ImageTables], WebImages]
    ) -> WebImages:
        """``images`` in DuckDB over the image index files and the referenced counts the extraction wrote."""
        crawl = extraction.web
        with DuckDBImageTables(crawl.index, crawl.referenced, work, plan.options.memory_limit) as tables:
            return images(tables)

    def _connect(self, plan: BuildPlan) -> duckdb.DuckDBPyConnection:
        """One DuckDB connection for the stages after extraction (opened after the workers are gone)."""
        if self.connection is None:
            # --memory bounds the process, not DuckDB alone: what the process holds (imports, the extraction's
            # records) is taken from DuckDB's share
            budget = duckdb_memory(plan.options.memory_limit, process_memory())
            self.connection = duckdb_connection(self.work / "duckdb", f"{budget // 10**6}MB", plan.options.workers)
        return self.connection

    def select(
        self, plan: BuildPlan, chains: Mapping[str, FilterChain], identity: Identity, excluded: Mapping[str, object]
    ) -> dict[str, Selected]:
        assert self.extraction is not None
        connection = self._connect(plan)
        shards = self.extraction.shards
        selected = {}
        schema = web_candidate_schema(plan.settings.dataset) if plan.settings.web else CANDIDATE_SCHEMA
        for name, chain in chains.items():
            self.candidates[name] = self.work / f"candidates-{name}.parquet"
            apart = excluded.get(name)
            later = self.extraction.later
            out = self.candidates[name]
            mapping = identity.table  # a web build's map is a file of the image stage, None when it changes no URL
            if mapping is None and isinstance(identity.map, IdentityMap):
                mapping = identity.map
            kept_apart = select_candidates(connection, shards, chain, out, mapping, apart, later, schema)
            titles = count_titles(connection, shards, chain, later) if identity.map.changed_titles() else None
            selected[name] = Selected(titles, kept_apart)
        return selected

    def tag(self, plan: BuildPlan, chains: Mapping[str, FilterChain]) -> None:
        ruled = [self.candidates[name] for name, chain in chains.items() if chain.config.caption_rule != "none"]
        options = plan.options
        deja = [self.candidates[name] for name, chain in chains.items() if chain.config.deja]
        if deja:  # Déjà's rules judge every sentence of its records' texts (§2)
            judge_sentences(
                self._connect(plan),
                deja,
                self.work / "deja-sentences.parquet",
                plan.taggers,
                plan.tagger_name is not None,
                options.workers,
                options.show_progress,
            )
        tag_texts(  # the file is written whatever is tagged: the configs without a caption rule join it too
            self._connect(plan),
            ruled,
            self.work / "tags.parquet",
            plan.taggers if ruled else {},
            plan.tagger_name is not None,
            options.workers,
            options.show_progress,
        )

    def write(self, plan: BuildPlan, chain: FilterChain, publisher: Publisher) -> Written:
        if chain.config.deja:
            return self._write_deja(plan, chain, publisher)
        if chain.config.references:  # the references step 0 counted, as they are: one train split
            writer = publisher.writer(chain.config.name, rows="references")
            with pq.ParquetFile(self.candidates[chain.config.name]) as candidates:
                for batch in candidates.iter_batches(batch_size=BATCH_ROWS):
                    writer.write_rows(row for reference in batch.to_pylist() for row in reference_rows(reference))
            writer.close()
            return Written(writer.rows, list(writer.files), None, writer.seconds)
        name, fractions, across = chain.config.name, chain.config.splits, chain.config.crosslingual
        web = chain.config.identity_label if chain.config.web else ""
        folder = self.work / f"pairs-{name}"
        if fractions:
            writer = PairWriter(folder, languages=across, web=web)
        else:
            writer = publisher.writer(name, languages=across, web=web)
        tags = self.work / "tags.parquet"
        write_pairs(self._connect(plan), self.candidates[name], tags, chain, writer, plan.tagsets())
        if not fractions:
            writer.close()
            return Written(writer.rows, list(writer.files), None, writer.seconds)
        writers, record = write_splits(writer.finish(), fractions, publisher.config_folder(name), across, web)
        shutil.rmtree(folder)
        files = [file for done in writers for file in done.files]
        seconds = writer.seconds + sum(done.seconds for done in writers)
        return Written(writer.rows, files, record, seconds)

    def _write_deja(self, plan: BuildPlan, chain: FilterChain, publisher: Publisher) -> Written:
        """A Déjà config's graph (:func:`builder.filters.repetition.deja_graph`) in DuckDB, its edges written in
        caption and image order into one ``train`` split."""
        name = chain.config.name
        connection = self._connect(plan)
        index = self.extraction.web.index if chain.config.deja == "paraphrases" else []
        tables = DuckDBDejaTables(connection, self.candidates[name], self.work / "deja-sentences.parquet", index)
        try:
            graph = deja_graph(chain.config, tables)
            query, kind, convert = graph.rows_query, "deja", output_row
            if chain.config.deja_pairs:  # §5, §8.2: each caption paired with another
                pairs = deja_pairs(chain.config, tables)
                graph.funnel.extend(pairs.funnel)
                graph.statistics.update({"pairs": pairs.statistics} if pairs.statistics else {})
                query, kind, convert = pairs.query, "deja-pairs", paracaption_row
            chain.funnel.set_rows(graph.funnel)
            writer = publisher.writer(name, rows=kind)
            for batch in connection.sql(query).to_arrow_reader(BATCH_ROWS):
                writer.write_rows(convert(row) for row in batch.to_pylist())
            writer.close()
        finally:
            tables.close()
        return Written(writer.rows, list(writer.files), None, writer.seconds, graph.statistics)
