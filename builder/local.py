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
from builder.dump import DumpError, DumpReader, ReadStats, SiteInfo, read_siteinfo, split_ranges
from builder.history import FirstSeenPerPage
from builder.output import PairWriter, write_card, write_funnel
from builder.pipeline import FilterChain
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
_DUMP_DATE = re.compile(r"-(\d{8}|latest)-")


@dataclasses.dataclass(frozen=True)
class ExtractTask:
    """One unit of extraction work: a dump file, or a byte range of a multistream dump."""

    dump: str
    byte_range: tuple[int, int] | None
    aliases: tuple[str, ...]
    namespaces: tuple[int, ...]
    shard: str
    history: bool = False
    decompress_threads: int = 1


@dataclasses.dataclass
class ExtractResult:
    """What one task read, found and skipped; ``error`` says why a task failed."""

    read: ReadStats
    extract: ExtractStats
    error: str | None = None

    def to_json(self) -> str:
        return json.dumps({"read": dataclasses.asdict(self.read), "extract": dataclasses.asdict(self.extract)})

    @classmethod
    def from_json(cls, text: str) -> ExtractResult:
        data = json.loads(text)
        return cls(ReadStats(**data["read"]), ExtractStats(**data["extract"]))


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
    first_seen = FirstSeenPerPage()
    for page in reader:
        try:
            references = extract_images(page.text, page.title, task.aliases, result.extract)
        except ExtractionError as error:
            warnings.warn(f"{task.dump}: {error}; page skipped", stacklevel=1)
            result.extract.failed_pages += 1
            continue
        if task.history:
            references = first_seen.new_references(page.page_id, references)
        yield from _reference_rows(page.title, page.page_id, page.revision_id, references)
        if progress is not None:
            progress.update(1)
            progress.set_postfix(references=f"{result.extract.references:,}", refresh=False)
    result.extract.repeated_in_history += first_seen.repeated


def run_extract_task(task: ExtractTask, progress: tqdm | None = None) -> ExtractResult:
    """Extract one task's references into its parquet shard.

    The shard is written under a temporary name and renamed when complete, beside a
    ``.json`` with the task's counts: a resumed build takes finished shards as they are.
    A dump that cannot be read fails this task only; the error comes back in the result.
    """
    shard = Path(task.shard)
    done = shard.with_suffix(".json")
    if shard.is_file() and done.is_file():
        return ExtractResult.from_json(done.read_text(encoding="utf-8"))
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
        result.error = str(error)
        return result
    partial.rename(shard)
    done.write_text(result.to_json(), encoding="utf-8")
    return result


def dump_date(path: str | Path) -> str:
    """The date in a Wikimedia dump file name (``enwiki-20220901-…``), or ``unknown``."""
    match = _DUMP_DATE.search(Path(path).name)
    return match.group(1) if match else "unknown"


@dataclasses.dataclass
class Extraction:
    """All reference shards of a build and what reading the dumps cost."""

    shards: list[Path]
    read: ReadStats
    extract: ExtractStats
    dumps: list[dict[str, str]]
    seconds: float
    failures: list[str] = dataclasses.field(default_factory=list)


def plan_tasks(
    dumps: Sequence[str | Path], workers: int, namespaces: tuple[int, ...], shard_dir: Path, history: bool = False
) -> tuple[list[ExtractTask], list[dict[str, str]]]:
    """Cut the dumps into tasks: multistream files into ranges, other files whole."""
    tasks: list[ExtractTask] = []
    described = []
    for dump in dumps:
        path = Path(dump)
        readable = True
        try:
            siteinfo = read_siteinfo(path)
        except DumpError:  # its extraction task will fail and report why; the other dumps go on
            siteinfo, readable = SiteInfo(), False
        aliases = tuple(dict.fromkeys(DEFAULT_FILE_ALIASES + tuple(filter(None, [siteinfo.namespaces.get(6, "")]))))
        described.append({"name": path.name, "dbname": siteinfo.dbname or "unknown", "date": dump_date(path)})
        ranges: list[tuple[int, int] | None] = [None]
        if workers > 1 and readable:
            cut = split_ranges(path, workers * RANGES_PER_WORKER)
            ranges = list(cut) if len(cut) > 1 else [None]
        # a file that cannot be cut into ranges gets the workers as decompression threads instead
        threads = workers if ranges == [None] else 1
        for byte_range in ranges:
            identity = f"{path.resolve()}|{path.stat().st_size}|{byte_range}|{namespaces}|{history}"
            shard = shard_dir / f"references-{hashlib.sha1(identity.encode()).hexdigest()[:16]}.parquet"
            task = ExtractTask(str(path), byte_range, aliases, namespaces, str(shard), history, threads)
            tasks.append(task)
    return tasks, described


def extract_references(
    dumps: Sequence[str | Path],
    shard_dir: Path,
    workers: int = 1,
    namespaces: tuple[int, ...] = (0,),
    show_progress: bool = True,
    history: bool = False,
) -> Extraction:
    """Stage 1–3 over all dumps: pages → image references with cleaned texts, as parquet shards.

    ``history``: the dumps hold every revision; a reference repeated by later revisions
    of its page counts once (:mod:`builder.history`).
    """
    shard_dir.mkdir(parents=True, exist_ok=True)
    tasks, described = plan_tasks(dumps, workers, namespaces, shard_dir, history)
    read, extract = ReadStats(), ExtractStats()
    failures: list[str] = []
    started = time.perf_counter()
    if workers <= 1 or len(tasks) == 1:
        with tqdm(desc="pages", unit=" pages", disable=not show_progress) as progress:
            results = [run_extract_task(task, progress) for task in tasks]
    else:
        context = multiprocessing.get_context("spawn" if sys.platform == "darwin" else "fork")
        results = []
        with (
            context.Pool(workers) as pool,
            tqdm(total=len(tasks), desc="dump ranges", disable=not show_progress) as progress,
        ):
            for result in pool.imap_unordered(run_extract_task, tasks):
                results.append(result)
                progress.update(1)
                progress.set_postfix(references=f"{sum(r.extract.references for r in results):,}", refresh=False)
    for result in results:
        read.add(result.read)
        extract.add(result.extract)
        if result.error:
            failures.append(result.error)
    shards = [Path(task.shard) for task in tasks if Path(task.shard).is_file()]
    if not shards:
        raise DumpError("no dump could be read: " + "; ".join(failures))
    seconds = time.perf_counter() - started
    return Extraction(shards, read, extract, described, seconds, failures)


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


def build(
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    tagger: str | Tagger = "auto",
    workers: int = 1,
    work_dir: str | Path | None = None,
    show_progress: bool = True,
    resume: bool = False,
) -> BuildReport:
    """Build the given configs from the given dumps into a Hub-ready dataset folder.

    With ``work_dir`` and ``resume``, the reference shards that an interrupted build
    finished are used as they are, and only the rest of the dumps is read again.
    """
    if resume and not work_dir:
        raise ValueError("resume needs the work_dir of the interrupted build")
    if not dumps:
        raise ValueError("no dump files given")
    if not configs:
        raise ValueError("no configs given")
    kinds = {config.dump_kind for config in configs}
    if len(kinds) > 1:
        names = ", ".join(f"{config.name} ({config.dump_kind})" for config in configs)
        raise ValueError(f"configs of one build must read the same kind of dump; got {names}")
    for dump in dumps:
        if not Path(dump).is_file():
            raise FileNotFoundError(f"dump file not found: {dump}")
    tagger_instance = get_tagger(tagger)  # fail early, before hours of extraction, if no model
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    work = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="wikipedia-ipc-"))
    if not resume:
        shutil.rmtree(work / "references", ignore_errors=True)
    try:
        history = configs[0].dump_kind == "history"
        extraction = extract_references(
            dumps, work / "references", workers, configs[0].namespaces, show_progress, history
        )
        connection = duckdb.connect()
        connection.execute(f"SET temp_directory = '{work / 'duckdb'}'")
        connection.execute(f"SET threads = {max(1, workers)}")
        chains = {config.name: FilterChain(config) for config in configs}
        candidates = {name: work / f"candidates-{name}.parquet" for name in chains}
        for name, chain in chains.items():
            select_candidates(connection, extraction.shards, chain, candidates[name])
        tags = work / "tags.parquet"
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
            writer = PairWriter(output / name)
            write_pairs(connection, candidates[name], tags, chain, writer)
            writer.close()
            rows[name] = writer.rows
            write_funnel(output / name, funnel_record(chain, writer.rows, extraction, tagger_instance))
        connection.close()
        write_card(output)
    finally:
        if not work_dir:
            shutil.rmtree(work, ignore_errors=True)
    return BuildReport(output, rows, chains, extraction)


def funnel_record(chain: FilterChain, rows: int, extraction: Extraction, tagger: Tagger) -> dict[str, object]:
    skipped = {
        "redirects": extraction.read.skipped_redirect,
        "other_namespaces": extraction.read.skipped_namespace,
        "invalid_utf8_bytes": extraction.read.invalid_utf8_bytes,
        "unclosed_image_markup": extraction.extract.unclosed,
        "unparsable_image_references": extraction.extract.unparsed,
        "pages_that_failed_to_parse": extraction.extract.failed_pages,
        "references_repeated_by_later_revisions": extraction.extract.repeated_in_history,
        "dump_parts_that_failed": len(extraction.failures),
    }
    return {
        "config": chain.config.name,
        "rows": rows,
        "parameters": chain.config.parameters(),
        "dumps": extraction.dumps,
        "tagger": tagger.signature(),
        "versions": library_versions(),
        "failures": extraction.failures,
        "pages": extraction.read.pages,
        "revisions": extraction.read.revisions,
        "skipped": skipped,
        "funnel": chain.funnel.to_list(),
    }


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
