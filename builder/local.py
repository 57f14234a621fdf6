"""The local engine: drives the stages on one machine with worker processes and DuckDB.

1. extraction – dump byte ranges (multistream) or whole files go to worker
   processes; each writes its image references to a parquet shard;
2. grouping – DuckDB sorts the shards by image (spilling to disk), and the
   sorted stream is cut into clusters, one image at a time;
3. steps 0–4 of Table 3 per cluster; survivors are written as candidates;
4. tagging – every unique surviving text is POS-tagged once, in batches;
5. steps 5–9 per cluster, then the pairs go to the dataset folder.

Memory stays flat: only one cluster and one batch are held at a time.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import importlib.metadata
import itertools
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from builder.captions import satisfies, tag_captions
from builder.clusters import Cluster, Reference
from builder.config import PipelineConfig
from builder.dump import (
    MAX_PROBLEMS,
    DumpError,
    DumpReader,
    DumpWarning,
    Problem,
    ReadStats,
    SiteInfo,
    check_dump_path,
    dump_compression,
    fingerprint,
    kind_from_name,
    read_siteinfo,
    scan_stream_offsets,
    split_ranges,
    stream_offsets,
)
from builder.history import FirstSeenPerPage
from builder.output import PairWriter, Publisher
from builder.pipeline import FilterChain, StageClock
from builder.tagging import Tagger, get_tagger
from builder.wikitext import DEFAULT_FILE_ALIASES, ExtractionError, ExtractStats, extract_images

REFERENCE_SCHEMA = pa.schema(
    [
        ("image", pa.string()),
        ("page", pa.string()),
        ("page_id", pa.int64()),
        ("revision_id", pa.int64()),
        ("position", pa.int64()),
        ("source", pa.string()),
        ("template", pa.string()),
        ("caption", pa.string()),
        ("alt", pa.string()),
    ]
)
TAG_SCHEMA = pa.schema([("text", pa.string()), ("tags", pa.list_(pa.list_(pa.string())))])
SORT_KEY = "image, page_id, revision_id, position"
BATCH_ROWS = 50_000
TAG_BATCH = 512
RANGES_PER_WORKER = 4
DUCKDB_MEMORY = "512MB"  # DuckDB's default is 80% of the machine's memory
_MEMORY_SIZE = re.compile(r"\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes)", re.IGNORECASE)
_DUMP_DATE = re.compile(r"-(\d{8}|latest)-")


@dataclasses.dataclass(frozen=True)
class ExtractTask:
    """One unit of extraction work: a dump file, or a byte range of a multistream dump."""

    dump: str
    byte_range: tuple[int, int] | None
    aliases: tuple[str, ...]
    namespaces: tuple[int, ...]
    shard: str
    first_seen: bool = False
    decompress_threads: int = 1


@dataclasses.dataclass
class ExtractResult:
    """What one task read, found and skipped; ``error`` says why a task failed.

    ``problems`` are the task's skipped parts (at most :data:`~builder.dump.MAX_PROBLEMS`)
    and ``last_good`` its last well-formed page: the build words every problem of a file
    from these, the same way however many tasks the file was cut into.
    """

    read: ReadStats
    extract: ExtractStats
    error: Problem | None = None
    problems: list[Problem] = dataclasses.field(default_factory=list)
    last_good: str | None = None

    def to_json(self) -> str:
        return json.dumps(
            {
                "read": dataclasses.asdict(self.read),
                "extract": dataclasses.asdict(self.extract),
                "problems": [dataclasses.asdict(problem) for problem in self.problems],
                "last_good": self.last_good,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ExtractResult:
        data = json.loads(text)
        problems = [Problem(**problem) for problem in data["problems"]]
        return cls(ReadStats(**data["read"]), ExtractStats(**data["extract"]), None, problems, data["last_good"])


def _reference_rows(page_title: str, page_id: int, revision_id: int, references: Iterable) -> list[dict]:
    return [
        {
            "image": reference.file,
            "page": page_title,
            "page_id": page_id,
            "revision_id": revision_id,
            "position": reference.position,
            "source": reference.source,
            "template": reference.template,
            "caption": reference.caption,
            "alt": reference.alt,
        }
        for reference in references
    ]


def iter_task_references(task: ExtractTask, result: ExtractResult, progress: tqdm | None = None) -> Iterator[dict]:
    """Stages 1–3 for one task: its pages' image references as rows; ``result`` counts as it goes."""
    reader = DumpReader(
        task.dump, task.namespaces, byte_range=task.byte_range, decompress_threads=task.decompress_threads
    )
    reader.stats = result.read
    reader.problems = result.problems
    first_seen = FirstSeenPerPage()
    try:
        for page in reader:
            try:
                references = extract_images(page.text, page.title, task.aliases, result.extract)
            except ExtractionError as error:
                result.extract.failed_pages += 1
                if len(result.problems) < MAX_PROBLEMS:
                    result.problems.append(Problem(f"{task.dump}: {error}; page skipped", with_page=False))
                continue
            if task.first_seen:
                references = first_seen.new_references(page.page_id, references)
            yield from _reference_rows(page.title, page.page_id, page.revision_id, references)
            if progress is not None:
                progress.update(1)
                progress.set_postfix(references=f"{result.extract.references:,}", refresh=False)
    finally:
        result.last_good = reader.last_good
    result.extract.repeated_in_history += first_seen.repeated


def run_extract_task(task: ExtractTask, progress: tqdm | None = None) -> ExtractResult:
    """Extract one task's references into its parquet shard.

    The shard is written under a temporary name and renamed when complete, then its
    ``.json`` with the task's counts (also renamed into place): a resumed build takes a
    shard only when both are there and the counts can be read back, so a build killed at
    any moment leaves nothing half-written that a resume would trust.
    A dump that cannot be read fails this task only; the error comes back in the result.
    """
    shard = Path(task.shard)
    done = shard.with_suffix(".json")
    if shard.is_file() and done.is_file():
        try:
            return ExtractResult.from_json(done.read_text(encoding="utf-8"))
        except (ValueError, KeyError, TypeError):  # not written by this version: read the part again
            done.unlink()
    result = ExtractResult(ReadStats(), ExtractStats())
    partial = shard.with_suffix(".partial")
    rows: list[dict] = []
    try:
        with pq.ParquetWriter(partial, REFERENCE_SCHEMA, compression="zstd") as writer:
            for row in iter_task_references(task, result, progress):
                rows.append(row)
                if len(rows) >= BATCH_ROWS:
                    writer.write_table(pa.Table.from_pylist(rows, schema=REFERENCE_SCHEMA))
                    rows.clear()
            writer.write_table(pa.Table.from_pylist(rows, schema=REFERENCE_SCHEMA))
    except (DumpError, OSError) as error:
        partial.unlink(missing_ok=True)
        result.error = task_failure(task, error)
        return result
    counts = done.with_suffix(".json.partial")
    counts.write_text(result.to_json(), encoding="utf-8")
    partial.rename(shard)
    counts.rename(done)
    return result


def task_failure(task: ExtractTask, error: DumpError | OSError) -> Problem:
    """Why a task failed, as a :class:`Problem` (a dump error carries its own)."""
    if isinstance(error, DumpError):
        return error.problem
    return Problem(f"{task.dump}: {error}", with_page=False)


def dump_date(path: str | Path) -> str:
    """The date in a Wikimedia dump file name (``enwiki-20220901-…``), or ``unknown``."""
    match = _DUMP_DATE.search(Path(path).name)
    return match.group(1) if match else "unknown"


@dataclasses.dataclass
class Extraction:
    """All reference shards of a build and what reading the dumps cost.

    ``read`` and ``extract`` count the dumps that were read to their end; a dump with a
    part that failed is left out whole (``failures`` says why), so that the output and
    the counts do not depend on how many parts the dump was cut into.
    """

    shards: list[Path]
    read: ReadStats
    extract: ExtractStats
    dumps: list[dict[str, str]]
    seconds: float
    failures: list[str] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)


def check_dump_kinds(dumps: Sequence[str | Path], history: bool) -> None:
    """Refuse, before any reading, a dump whose file name says it is of the other kind."""
    wanted = "history" if history else "articles"
    for dump in dumps:
        named = kind_from_name(dump)
        if named is not None and named != wanted:
            if history:
                raise ValueError(
                    f"{dump}: the file name says it holds the latest revisions only (pages-articles); "
                    "bronze reads the full edit history (a pages-meta-history dump)"
                )
            raise ValueError(
                f"{dump}: the file name says it holds the full edit history (pages-meta-history); "
                "gold and silver read the latest revisions (a pages-articles dump)"
            )


def plan_tasks(
    dumps: Sequence[str | Path],
    workers: int,
    namespaces: tuple[int, ...],
    shard_dir: Path,
    history: bool = False,
    first_seen: bool = False,
) -> tuple[list[ExtractTask], list[dict[str, str]]]:
    """Cut the dumps into tasks: multistream files into ranges, other files whole.

    A shard's name hashes the dump's :func:`~builder.dump.fingerprint`, so a dump that
    changed since an interrupted build is read again on ``--resume``.
    """
    check_dump_kinds(dumps, history)
    if len({Path(dump).resolve() for dump in dumps}) < len(dumps):
        raise ValueError(f"a dump is given twice: {[str(dump) for dump in dumps]}")
    tasks: list[ExtractTask] = []
    described = []
    for dump in dumps:
        path = check_dump_path(dump)
        readable = True
        try:
            siteinfo = read_siteinfo(path)
        except DumpError:  # its extraction task will fail and report why; the other dumps go on
            siteinfo, readable = SiteInfo(), False
        aliases = tuple(dict.fromkeys(DEFAULT_FILE_ALIASES + tuple(filter(None, [siteinfo.namespaces.get(6, "")]))))
        described.append({"name": path.name, "dbname": siteinfo.dbname or "unknown", "date": dump_date(path)})
        ranges: list[tuple[int, int] | None] = [None]
        threads = 1
        if workers > 1 and readable and dump_compression(path) == "bz2":
            try:
                offsets = stream_offsets(path)
            except DumpError as error:  # a bad index must not change the verdict: find the streams instead
                warnings.warn(f"{error}; the bz2 streams are found by scanning the dump instead", DumpWarning, 2)
                offsets = scan_stream_offsets(path)
            if offsets == [0]:  # one stream: the workers decompress it as threads instead
                threads = workers
            else:
                cut = split_ranges(path, workers * RANGES_PER_WORKER, offsets)
                ranges = list(cut) if len(cut) > 1 else [None]
        stamp = fingerprint(path)
        for byte_range in ranges:
            identity = f"{path.resolve()}|{stamp}|{byte_range}|{namespaces}|{first_seen}"
            shard = shard_dir / f"references-{hashlib.sha1(identity.encode()).hexdigest()[:16]}.parquet"
            task = ExtractTask(str(path), byte_range, aliases, namespaces, str(shard), first_seen, threads)
            tasks.append(task)
    return tasks, described


def run_tasks(tasks: list[ExtractTask], workers: int, show_progress: bool) -> list[ExtractResult]:
    """Run the tasks, in worker processes when there are several; results in task order."""
    if workers <= 1 or len(tasks) == 1:
        with tqdm(desc="pages", unit=" pages", disable=not show_progress) as progress:
            return [run_extract_task(task, progress) for task in tasks]
    context = multiprocessing.get_context("spawn" if sys.platform == "darwin" else "fork")
    results: list[ExtractResult | None] = [None] * len(tasks)
    # an executor, not a Pool: a worker killed from outside (out of memory, kill -9) ends
    # the build with an error instead of leaving it waiting for a result forever
    with (
        concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as executor,
        tqdm(total=len(tasks), desc="dump ranges", disable=not show_progress) as progress,
    ):
        futures = {executor.submit(run_extract_task, task): number for number, task in enumerate(tasks)}
        try:
            for future in concurrent.futures.as_completed(futures):
                results[futures[future]] = future.result()
                progress.update(1)
                found = sum(done.extract.references for done in results if done is not None)
                progress.set_postfix(references=f"{found:,}", refresh=False)
        except concurrent.futures.BrokenExecutor:
            raise DumpError(
                "a worker process ended abruptly (killed, or out of memory) while reading the dumps; "
                "the parts it finished are kept with --work-dir, and --resume reads only the others"
            ) from None
    return [result for result in results if result is not None]


def dump_kind(name: str, several_revisions: int, history: bool) -> tuple[str, str | None]:
    """What a dump that was read holds, and a warning when that is not what the build asked for.

    The file name decides when it tells; a page with several revisions shows an edit
    history whatever the name; otherwise the dump holds one revision per page.
    """
    named = kind_from_name(name)
    kind = "history" if several_revisions else named or "articles"
    if history and kind == "articles":
        return kind, (
            f"{name}: no page has more than one revision: this is not an edit history, "
            "so bronze from it holds no caption rewrites"
        )
    if not history and kind == "history":
        return kind, (
            f"{name}: {several_revisions:,} pages have several revisions: this is an edit history "
            "(pages-meta-history), and every revision was read as a page"
        )
    return kind, None


def combine_results(
    tasks: Sequence[ExtractTask],
    results: Sequence[ExtractResult],
    described: list[dict[str, str]],
    history: bool,
) -> tuple[ReadStats, ExtractStats, list[str], list[str], set[str]]:
    """Add up the task results per dump: counts, failures, problems and each dump's kind.

    A dump counts only when all its tasks succeeded. Problems and the failure are worded
    with the last good page before them, looked up in the earlier tasks of the same file
    when their own task had none yet; problems after a failure are dropped, as a single
    reader would never have seen them. Returns (read, extract, failures, problems, failed dumps).
    """
    by_dump: dict[str, list[tuple[ExtractTask, ExtractResult]]] = {}
    for task, result in zip(tasks, results, strict=True):
        by_dump.setdefault(task.dump, []).append((task, result))
    read, extract = ReadStats(), ExtractStats()
    failures: list[str] = []
    problems: list[str] = []
    failed: set[str] = set()
    mismatches: list[str] = []
    for description, (dump, parts) in zip(described, by_dump.items(), strict=True):
        earlier = ""
        dump_read, dump_extract = ReadStats(), ExtractStats()
        for _, result in parts:
            problems.extend(problem.render(earlier) for problem in result.problems)
            if result.error is not None:
                failures.append(result.error.render(earlier))
                failed.add(dump)
                break
            earlier = result.last_good if result.last_good is not None else earlier
            dump_read.add(result.read)
            dump_extract.add(result.extract)
        if dump in failed:
            description["kind"] = kind_from_name(dump) or "unknown"
            continue
        read.add(dump_read)
        extract.add(dump_extract)
        description["kind"], mismatch = dump_kind(dump, dump_read.pages_with_several_revisions, history)
        if mismatch:
            mismatches.append(mismatch)
    return read, extract, failures, (mismatches + problems)[:MAX_PROBLEMS], failed


def extract_references(
    dumps: Sequence[str | Path],
    shard_dir: Path,
    workers: int = 1,
    namespaces: tuple[int, ...] = (0,),
    show_progress: bool = True,
    history: bool = False,
    first_seen: bool = False,
) -> Extraction:
    """Stage 1–3 over all dumps: pages → image references with cleaned texts, as parquet shards.

    ``history``: the dumps are edit histories (every revision of a page); ``first_seen``:
    a reference repeated by later revisions of its page counts once (:mod:`builder.history`).
    Skipped parts of the dumps are reported as :class:`DumpWarning` and kept in
    :attr:`Extraction.problems`.
    """
    shard_dir.mkdir(parents=True, exist_ok=True)
    tasks, described = plan_tasks(dumps, workers, namespaces, shard_dir, history, first_seen)
    started = time.perf_counter()
    results = run_tasks(tasks, workers, show_progress)
    seconds = time.perf_counter() - started
    read, extract, failures, problems, failed = combine_results(tasks, results, described, history)
    for problem in problems:
        warnings.warn(problem, DumpWarning, stacklevel=2)
    shards = [Path(task.shard) for task in tasks if task.dump not in failed and Path(task.shard).is_file()]
    if not shards:
        raise DumpError("no dump could be read: " + "; ".join(failures))
    return Extraction(shards, read, extract, described, seconds, failures, problems)


def _stream_rows(connection: duckdb.DuckDBPyConnection, query: str) -> Iterator[dict]:
    """Rows of a query, fetched in record batches so that a huge result never sits in memory."""
    reader = connection.sql(query).to_arrow_reader(BATCH_ROWS)
    for batch in reader:
        yield from batch.to_pylist()


def _reference(row: dict) -> Reference:
    return Reference(
        page=row["page"],
        page_id=row["page_id"],
        revision_id=row["revision_id"],
        position=row["position"],
        source=row["source"],
        caption=row["caption"] or "",
        alt=row["alt"] or "",
    )


def cluster_rows(cluster: Cluster) -> list[dict]:
    """The reference rows of a cluster: the inverse of :func:`cluster_from_rows`."""
    return [{"image": cluster.image, **dataclasses.asdict(reference)} for reference in cluster.references]


def cluster_from_rows(image: str, rows: list[dict]) -> Cluster:
    """A cluster from its reference rows, already in :data:`SORT_KEY` order."""
    return Cluster(image, tuple(_reference(row) for row in rows))


def _clusters(rows: Iterable[dict]) -> Iterator[tuple[Cluster, list[dict]]]:
    for image, group in itertools.groupby(rows, key=lambda row: row["image"]):
        members = list(group)
        yield cluster_from_rows(image, members), members


def sort_key(row: dict) -> tuple:
    """:data:`SORT_KEY` in Python, for engines that group without sorting."""
    return (row["image"], row["page_id"], row["revision_id"], row["position"])


def rule_verdicts(rows: Iterable[dict], rule: str) -> dict[str, bool]:
    """Each text of a cluster's rows, judged by the caption rule from its stored tags."""
    verdicts: dict[str, bool] = {}
    for row in rows:
        for text, tags in ((row["caption"], row["caption_tags"]), (row["alt"], row["alt_tags"])):
            if text:
                verdicts[text] = satisfies(rule, tags or [])
    return verdicts


def _parquet_list(paths: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(path).replace("'", "''") + "'" for path in paths) + "]"


def select_candidates(
    connection: duckdb.DuckDBPyConnection, shards: Sequence[Path], chain: FilterChain, out: Path
) -> None:
    """Steps 0–4 for one config over the image-sorted references; survivors go to ``out``."""
    sources = ", ".join(f"'{source}'" for source in chain.config.sources)
    query = f"SELECT * FROM read_parquet({_parquet_list(shards)}) WHERE source IN ({sources}) ORDER BY {SORT_KEY}"
    rows: list[dict] = []
    with pq.ParquetWriter(out, REFERENCE_SCHEMA, compression="zstd") as writer:
        for cluster, _ in _clusters(_stream_rows(connection, query)):
            survivor = chain.before_rule(cluster)
            if survivor is None:
                continue
            rows.extend(cluster_rows(survivor))
            if len(rows) >= BATCH_ROWS:
                writer.write_table(pa.Table.from_pylist(rows, schema=REFERENCE_SCHEMA))
                rows.clear()
        writer.write_table(pa.Table.from_pylist(rows, schema=REFERENCE_SCHEMA))


_worker_tagger: Tagger | None = None


def _init_tag_worker(spec: str) -> None:
    global _worker_tagger
    _worker_tagger = get_tagger(spec)


def _tag_in_worker(texts: list[str]) -> list[list[list[str]]]:
    assert _worker_tagger is not None
    return tag_batch(texts, _worker_tagger)


def tag_batch(texts: list[str], tagger: Tagger) -> list[list[list[str]]]:
    return [[[tag for _, tag in sentence] for sentence in tagged] for tagged in tag_captions(texts, tagger)]


def tag_texts(
    connection: duckdb.DuckDBPyConnection,
    candidates: Sequence[Path],
    out: Path,
    tagger: Tagger,
    by_name: bool,
    workers: int,
    show_progress: bool,
) -> int:
    """Tag every unique text of the candidates once; the tags go to ``out``."""
    files = _parquet_list(candidates)
    query = (
        f"SELECT text FROM (SELECT caption AS text FROM read_parquet({files}) UNION "
        f"SELECT alt AS text FROM read_parquet({files})) WHERE text <> '' ORDER BY text"
    )
    total = connection.sql(f"SELECT count(*) FROM ({query})").fetchall()[0][0]
    batches = text_batches(row["text"] for row in _stream_rows(connection, query))
    with (
        pq.ParquetWriter(out, TAG_SCHEMA, compression="zstd") as writer,
        tqdm(total=total, desc="tagging", unit=" texts", disable=not show_progress) as progress,
    ):
        for texts, tags in _tagged_batches(batches, tagger, by_name, workers):
            writer.write_table(pa.Table.from_pydict({"text": texts, "tags": tags}, schema=TAG_SCHEMA))
            progress.update(len(texts))
    return total


def text_batches(texts: Iterable[str]) -> Iterator[list[str]]:
    """Texts in lists of :data:`TAG_BATCH`, the unit in which taggers work."""
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) >= TAG_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _tagged_batches(
    batches: Iterator[list[str]], tagger: Tagger, by_name: bool, workers: int
) -> Iterator[tuple[list[str], list]]:
    """Tag batches in order; in worker processes when the tagger can be rebuilt there by name."""
    if workers <= 1 or not by_name:
        for batch in batches:
            yield batch, tag_batch(batch, tagger)
        return
    # spawn, not fork: the parent holds a DuckDB connection with live threads.
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, initializer=_init_tag_worker, initargs=(tagger.name,)) as pool:
        while window := list(itertools.islice(batches, workers * 4)):
            yield from zip(window, pool.map(_tag_in_worker, window, chunksize=1), strict=True)


def write_pairs(
    connection: duckdb.DuckDBPyConnection, candidates: Path, tags: Path, chain: FilterChain, writer: PairWriter
) -> None:
    """Steps 5–9 for one config: caption rule from the stored tags, then pairs and pair filters."""
    query = (
        f"SELECT c.*, tc.tags AS caption_tags, ta.tags AS alt_tags FROM read_parquet({_parquet_list([candidates])}) c "
        f"LEFT JOIN read_parquet({_parquet_list([tags])}) tc ON c.caption = tc.text "
        f"LEFT JOIN read_parquet({_parquet_list([tags])}) ta ON c.alt = ta.text ORDER BY {SORT_KEY}"
    )
    for cluster, rows in _clusters(_stream_rows(connection, query)):
        writer.write(chain.after_rule(cluster, rule_verdicts(rows, chain.config.caption_rule).__getitem__))


def library_versions() -> dict[str, str]:
    """Versions of the libraries that shape the output, for the dataset card."""
    versions = {"python": sys.version.split()[0]}
    for package in ("mwparserfromhell", "nltk", "stanza", "duckdb", "pyarrow", "datasets"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


@dataclasses.dataclass
class BuildReport:
    """What a build produced, per config."""

    output: Path
    rows: dict[str, int]
    funnels: dict[str, FilterChain]
    extraction: Extraction
    clock: StageClock = dataclasses.field(default_factory=StageClock)


def build(
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    tagger: str | Tagger = "auto",
    workers: int = 1,
    work_dir: str | Path | None = None,
    show_progress: bool = True,
    resume: bool = False,
    overwrite: bool = False,
    memory_limit: str = DUCKDB_MEMORY,
) -> BuildReport:
    """Build the given configs from the given dumps into a Hub-ready dataset folder.

    ``memory_limit`` bounds DuckDB's grouping and tagging queries (e.g. ``"512MB"``,
    ``"4GB"``); past it they spill to the work folder, so memory stays flat as dumps grow.

    With ``work_dir`` and ``resume``, the reference shards that an interrupted build
    finished are used as they are, and only the rest of the dumps is read again.
    The output is published as :class:`builder.output.Publisher` describes; ``overwrite``
    allows a non-empty folder that holds no earlier build.
    """
    if resume and not work_dir:
        raise ValueError("resume needs the work_dir of the interrupted build")
    if not dumps:
        raise ValueError("no dump files given")
    check_one_extraction(configs)
    for dump in dumps:
        check_dump_path(dump)
    check_dump_kinds(dumps, configs[0].dump_kind == "history")
    check_memory_limit(memory_limit)
    tagger_instance = get_tagger(tagger)  # fail early, before hours of extraction, if no model
    output = Path(output)
    publisher = Publisher(output, [config.name for config in configs], overwrite)
    clock = StageClock()
    work = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="wikipedia-ipc-"))
    if not resume:
        shutil.rmtree(work / "references", ignore_errors=True)
    try:
        publisher.open()  # locked and writable before any dump is read
        with clock.stage("extraction"):
            extraction = extract_references(
                dumps,
                work / "references",
                workers,
                configs[0].namespaces,
                show_progress,
                history=configs[0].dump_kind == "history",
                first_seen=counts_first_seen(configs[0]),
            )
        connection = duckdb.connect()
        connection.execute(f"SET temp_directory = '{work / 'duckdb'}'")
        connection.execute(f"SET threads = {max(1, workers)}")
        connection.execute(f"SET memory_limit = '{memory_limit}'")
        chains = {config.name: FilterChain(config) for config in configs}
        candidates = {name: work / f"candidates-{name}.parquet" for name in chains}
        with clock.stage("grouping"):
            for name, chain in chains.items():
                select_candidates(connection, extraction.shards, chain, candidates[name])
        tags = work / "tags.parquet"
        with clock.stage("tagging"):
            tag_texts(
                connection,
                list(candidates.values()),
                tags,
                tagger_instance,
                isinstance(tagger, str),
                workers,
                show_progress,
            )
        rows = {}
        for name, chain in chains.items():
            with clock.stage("pair filters"):
                writer = publisher.writer(name)
                write_pairs(connection, candidates[name], tags, chain, writer)
                writer.close()
            clock.move(writer.seconds, "pair filters", "writing")
            rows[name] = writer.rows
            publisher.add_config(name, funnel_record(chain, writer.rows, extraction, tagger_instance))
        connection.close()
        with clock.stage("writing"):
            publisher.publish()
    finally:
        publisher.close()
        if not work_dir:
            shutil.rmtree(work, ignore_errors=True)
    return BuildReport(output, rows, chains, extraction, clock)


def check_memory_limit(memory_limit: str) -> None:
    """A DuckDB memory size such as ``512MB``, checked before any dump is read."""
    if not _MEMORY_SIZE.fullmatch(memory_limit):
        raise ValueError(f"memory limit {memory_limit!r} is not a size such as 512MB or 4GB")
    with duckdb.connect() as connection:
        try:
            connection.execute(f"SET memory_limit = '{memory_limit}'")
        except duckdb.Error as error:
            raise ValueError(f"memory limit {memory_limit!r} is not a size such as 512MB or 4GB ({error})") from None


def check_one_extraction(configs: Sequence[PipelineConfig]) -> None:
    """The configs of one build share one extraction: the same dump kind and history counting."""
    if not configs:
        raise ValueError("no configs given")
    kinds = {(config.dump_kind, config.history_references) for config in configs}
    if len({kind for kind, _ in kinds}) > 1:
        names = ", ".join(f"{config.name} ({config.dump_kind})" for config in configs)
        raise ValueError(f"configs of one build must read the same kind of dump; got {names}")
    if len(kinds) > 1:
        names = ", ".join(f"{config.name} ({config.history_references})" for config in configs)
        raise ValueError(f"configs of one build must count history references the same way; got {names}")


def counts_first_seen(config: PipelineConfig) -> bool:
    """Whether extraction drops the references that an earlier revision of the page had."""
    return config.dump_kind == "history" and config.history_references == "first_seen"


def funnel_record(chain: FilterChain, rows: int, extraction: Extraction, tagger: Tagger) -> dict[str, object]:
    skipped = {
        "redirects": extraction.read.skipped_redirect,
        "other_namespaces": extraction.read.skipped_namespace,
        "invalid_utf8_bytes": extraction.read.invalid_utf8_bytes,
        "unclosed_image_markup": extraction.extract.unclosed,
        "unparsable_image_references": extraction.extract.unparsed,
        "pages_that_failed_to_parse": extraction.extract.failed_pages,
        "captions_the_cleaner_could_not_render": extraction.extract.captions_dropped,
        "references_repeated_by_later_revisions": extraction.extract.repeated_in_history,
        "malformed_pages": extraction.read.malformed_pages,
        "malformed_revisions": extraction.read.malformed_revisions,
        "content_outside_pages": extraction.read.content_outside_pages,
        "dumps_with_a_wrong_root_element": extraction.read.wrong_root_element,
        "dumps_that_failed": len(extraction.failures),
    }
    return {
        "config": chain.config.name,
        "rows": rows,
        "parameters": chain.config.parameters(),
        "dumps": extraction.dumps,
        "tagger": tagger.signature(),
        "versions": library_versions(),
        "failures": extraction.failures,
        "problems": extraction.problems,
        "pages": extraction.read.pages,
        "revisions": extraction.read.revisions,
        "skipped": skipped,
        "funnel": chain.funnel.to_list(),
    }


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
