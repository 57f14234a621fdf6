"""Extraction as units of work: dumps cut into tasks, each task's pages → image reference rows.

Both engines run the same tasks: a dump file, or a byte range of a multistream dump
(:func:`plan_tasks`). A task yields its references as rows of :data:`REFERENCE_SCHEMA`
(:func:`iter_task_references`), each page it read as a record for finding later copies
(:func:`iter_task_records`, :mod:`builder.extract.copies`), and counts what it read and skipped
in an :class:`ExtractResult`; :func:`combine_results` adds the results up per dump, the same
way however many tasks a dump was cut into. :func:`run_extract_task` writes a task's
rows and page records to parquet files that a resumed build can trust.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from builder.common import pool_size, publish_files
from builder.extract.copies import PAGE_SCHEMA
from builder.extract.history import FirstSeenPerPage
from builder.extract.incremental import RevisionExtractor
from builder.extract.inline import caption_rules, read_inline_table
from builder.extract.parameters import read_parameter_table, template_parameters
from builder.extract.wikitext import DEFAULT_FILE_ALIASES, ExtractionError, ExtractStats, normalize_title
from builder.lang.dumps import dump_language, given_language
from builder.lang.languages import language_for
from builder.sources.files import (
    MAX_PROBLEMS,
    DumpError,
    DumpWarning,
    Problem,
    ReadStats,
    check_dump_path,
    dump_compression,
    fingerprint,
    kind_from_name,
)
from builder.sources.multistream import history_ranges, split_ranges, stream_offsets
from builder.sources.xml import DumpReader, SiteInfo, read_siteinfo
from builder.storage import name_of, resolved

__all__ = [
    "BATCH_ROWS",
    "ExtractResult",
    "ExtractTask",
    "Extraction",
    "REFERENCE_SCHEMA",
    "check_dump_kinds",
    "combine_redirects",
    "combine_results",
    "dump_languages",
    "iter_task_records",
    "iter_task_references",
    "pages_file",
    "plan_tasks",
    "run_extract_task",
    "task_failure",
]

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
        ("language", pa.string()),
        ("parameters", pa.string()),
    ]
)
BATCH_ROWS = 50_000
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
    first_seen: bool = False
    decompress_threads: int = 1
    file_redirects: bool = False
    language: str = "en"  # the content language of the dump's wiki
    wiki: str = ""  # its db name (``dewiki``), whose own File namespace names count too; "" if not known
    template_parameters: str = ""  # a user's table of template parameter names (builder.lang.languages), if any
    read_ahead: bool = False  # decompress in a thread ahead of the parser: for a build with one worker
    inline_templates: str = ""  # a user's table of inline templates (builder.extract.inline), if any
    unrendered: str = "auto"  # the no-hole rule's policy (builder.extract.inline.UNRENDERED_POLICIES)
    history: bool = False  # an edit history: each page record carries a digest of its text


@dataclasses.dataclass
class ExtractResult:
    """What one task read, found and skipped; ``error`` says why a task failed.

    ``problems`` are the task's skipped parts (at most :data:`~builder.sources.files.MAX_PROBLEMS`)
    and ``last_good`` its last well-formed page: the build words every problem of a file
    from these, the same way however many tasks the file was cut into. ``redirects`` are the
    task's File redirects as normalized ``(source, target)`` titles; ``redirects_ignored``
    counts those whose target is no file (another namespace, or a section of a page).
    ``recorded`` counts the page records the task wrote (:func:`iter_task_records`).
    """

    read: ReadStats
    extract: ExtractStats
    error: Problem | None = None
    problems: list[Problem] = dataclasses.field(default_factory=list)
    last_good: str | None = None
    redirects: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    redirects_ignored: int = 0
    recorded: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "read": dataclasses.asdict(self.read),
                "extract": dataclasses.asdict(self.extract),
                "problems": [dataclasses.asdict(problem) for problem in self.problems],
                "last_good": self.last_good,
                "redirects": self.redirects,
                "redirects_ignored": self.redirects_ignored,
                "recorded": self.recorded,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ExtractResult:
        data = json.loads(text)
        problems = [Problem(**problem) for problem in data["problems"]]
        redirects = [(source, target) for source, target in data["redirects"]]
        return cls(
            ReadStats(**data["read"]),
            ExtractStats(**data["extract"]),
            None,
            problems,
            data["last_good"],
            redirects,
            data["redirects_ignored"],
            data["recorded"],
        )


def normalize_redirects(raw: Iterable[tuple[str, str]], aliases: Sequence[str], result: ExtractResult) -> None:
    """File redirect pages as normalized ``(source, target)`` titles; a target that is no file is counted."""
    for title, target in raw:
        source = normalize_title(title, aliases)
        resolved = normalize_title(target, aliases) if "#" not in target else None
        if source is None or resolved is None:
            result.redirects_ignored += 1
        elif resolved != source:
            result.redirects.append((source, resolved))


def _reference_rows(page_title: str, page_id: int, revision_id: int, references: Iterable, language: str) -> list[dict]:
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
            "language": language,
            "parameters": reference.parameters,
        }
        for reference in references
    ]


def iter_task_records(
    task: ExtractTask, result: ExtractResult, progress: tqdm | None = None
) -> Iterator[tuple[str, dict]]:
    """Extraction for one task: ``("page", record)`` for each page read, then ``("row", row)`` per reference.

    A page record (:data:`~builder.extract.copies.PAGE_SCHEMA`) is numbered in the task's order
    and says which of the task's rows are the page's references (``first_row``, ``rows``), so that
    a later copy of the page can be left out after every task is done (:mod:`builder.extract.copies`).
    A page that failed to parse is no record: a later copy of it is then read. ``result`` counts as it goes.
    """
    reader = DumpReader(
        task.dump,
        task.namespaces,
        byte_range=task.byte_range,
        decompress_threads=task.decompress_threads,
        file_redirects=task.file_redirects,
        read_ahead=task.read_ahead,
    )
    reader.stats = result.read
    reader.problems = result.problems
    first_seen = FirstSeenPerPage()
    language = language_for(task.wiki or task.language)
    user = read_parameter_table(task.template_parameters) if task.template_parameters else None
    parameters = template_parameters(task.language, user)
    inline = read_inline_table(task.inline_templates) if task.inline_templates else None
    rules = caption_rules(task.language, task.unrendered, user=inline, user_source=task.inline_templates)
    # a history's revisions reuse what the page's earlier ones had
    revisions = RevisionExtractor(task.aliases, language=language, parameters=parameters, rules=rules)
    written = 0
    try:
        for page in reader:
            try:
                references = revisions.extract(page.page_id, page.text, page.title, result.extract)
            except ExtractionError as error:
                result.extract.failed_pages += 1
                if len(result.problems) < MAX_PROBLEMS:
                    result.problems.append(Problem(f"{task.dump}: {error}; page skipped", with_page=False))
                continue
            if task.first_seen:
                references = first_seen.new_references(page.page_id, references)
            rows = _reference_rows(page.title, page.page_id, page.revision_id, references, task.language)
            record = {
                "record": result.recorded,
                "element": page.element,
                "page_id": page.page_id,
                "revision_id": page.revision_id,
                "title": page.title,
                "digest": revisions.digest() if task.history else 0,
                "first_row": written,
                "rows": len(rows),
            }
            result.recorded += 1
            written += len(rows)
            yield "page", record
            for row in rows:
                yield "row", row
            if progress is not None:
                progress.update(1)
                progress.set_postfix(references=f"{result.extract.references:,}", refresh=False)
    finally:
        result.last_good = reader.last_good
    result.extract.repeated_in_history += first_seen.repeated
    normalize_redirects(reader.redirects, task.aliases, result)


def iter_task_references(task: ExtractTask, result: ExtractResult, progress: tqdm | None = None) -> Iterator[dict]:
    """The reference rows of one task (:func:`iter_task_records` without its page records)."""
    for kind, item in iter_task_records(task, result, progress):
        if kind == "row":
            yield item


def pages_file(shard: str | Path) -> Path:
    """Where a task's page records are written, next to its shard of references."""
    return Path(shard).with_suffix(".pages.parquet")


def run_extract_task(task: ExtractTask, progress: tqdm | None = None) -> ExtractResult:
    """Extract one task's references into its parquet shard, and its page records next to it.

    The shard and the page records are written under temporary names and renamed when
    complete, then the ``.json`` with the task's counts (also renamed into place): a resumed
    build takes a shard only when all three are there and the counts can be read back, so a
    build killed at any moment leaves nothing half-written that a resume would trust.
    A dump that cannot be read fails this task only; the error comes back in the result.
    """
    shard = Path(task.shard)
    done = shard.with_suffix(".json")
    pages = pages_file(shard)
    if shard.is_file() and pages.is_file() and done.is_file():
        try:
            return ExtractResult.from_json(done.read_text(encoding="utf-8"))
        except (ValueError, KeyError, TypeError):  # not written by this version: read the part again
            done.unlink()
    result = ExtractResult(ReadStats(), ExtractStats())
    partial = shard.with_suffix(".partial")
    pages_partial = pages.with_suffix(".partial")
    batches: dict[str, list[dict]] = {"row": [], "page": []}
    try:
        with (
            pq.ParquetWriter(partial, REFERENCE_SCHEMA, compression="zstd") as writer,
            pq.ParquetWriter(pages_partial, PAGE_SCHEMA, compression="zstd") as page_writer,
        ):
            writers = {"row": (writer, REFERENCE_SCHEMA), "page": (page_writer, PAGE_SCHEMA)}
            for kind, item in iter_task_records(task, result, progress):
                batch = batches[kind]
                batch.append(item)
                if len(batch) >= BATCH_ROWS:
                    writers[kind][0].write_table(pa.Table.from_pylist(batch, schema=writers[kind][1]))
                    batch.clear()
            for kind, (output, schema) in writers.items():
                output.write_table(pa.Table.from_pylist(batches[kind], schema=schema))
    except (DumpError, OSError) as error:
        partial.unlink(missing_ok=True)
        pages_partial.unlink(missing_ok=True)
        result.error = task_failure(task, error)
        return result
    publish_files([(partial, shard), (pages_partial, pages)], done, result.to_json())
    return result


def task_failure(task: ExtractTask, error: DumpError | OSError) -> Problem:
    """Why a task failed, as a :class:`Problem` (a dump error carries its own)."""
    if isinstance(error, DumpError):
        return error.problem
    return Problem(f"{task.dump}: {error}", with_page=False)


def dump_date(path: str | Path) -> str:
    """The date in a Wikimedia dump file name (``enwiki-20220901-…``), or ``unknown``."""
    match = _DUMP_DATE.search(name_of(path))
    return match.group(1) if match else "unknown"


@dataclasses.dataclass
class Extraction:
    """All reference shards of a build and what reading the dumps cost.

    ``read`` and ``extract`` count the dumps that were read to their end; a dump with a
    part that failed is left out whole (``failures`` says why), so that the output and
    the counts do not depend on how many parts the dump was cut into.
    ``later_copies`` and ``reused_revision_ids`` count the copies of pages read before, which the
    grouping leaves out (:mod:`builder.extract.copies`); for the local engine, ``later`` lists them
    as a parquet file of (shard, row number).
    """

    shards: list[Path]
    read: ReadStats
    extract: ExtractStats
    dumps: list[dict[str, str]]
    seconds: float
    failures: list[str] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)
    redirects: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    redirects_ignored: int = 0
    wikis: dict[str, str] = dataclasses.field(default_factory=dict)  # db name → language, of the dumps' wikis
    later_copies: int = 0  # later copies of a page (a history: of a revision, with the same text)
    copied_references: int = 0  # the references of the later copies (and reused revision ids), left out with them
    history: bool = False  # the dumps are edit histories: a copy is a revision
    reused_revision_ids: int = 0  # later revisions with the id of an earlier one of their page, another text
    later: Path | None = None
    web: Any = None  # a web build's crawl (builder.extract.webrefs.WebCrawl); None for dumps

    def reading(self) -> dict[str, object]:
        """The dumps' reading as the summary, the card and ``funnel.json`` (``read``) give it, adding up: each page
        read is a later copy of one read before, mined, a redirect or of another namespace (a history's copies are
        revisions, ``copies_of``: its pages are mined, redirects or of other namespaces); the references found are
        those of the pages mined, the copies' left out, as step 0 of a config of every source counts them."""
        read = self.read
        copies = 0 if self.history else self.later_copies
        return {
            "pages": read.pages,
            "revisions": read.revisions,
            "copies": self.later_copies,
            "copies_of": "revisions" if self.history else "pages",
            "mined": read.pages - copies - read.skipped_redirect - read.skipped_namespace,
            "redirects": read.skipped_redirect,
            "other_namespaces": read.skipped_namespace,
            "references": self.extract.references - self.copied_references,
        }


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
    file_redirects: bool = False,
    languages: Mapping[str, str] | None = None,
    parameter_table: str | Path | None = None,
    inline_table: str | Path | None = None,
    unrendered: str = "auto",
) -> tuple[list[ExtractTask], list[dict[str, str]]]:
    """Cut the dumps into tasks: multistream files into ranges, other files whole.

    A shard's name hashes the dump's :func:`~builder.sources.files.fingerprint`, so a dump that
    changed since an interrupted build is read again on ``--resume``. Each dump's language
    is the one :func:`~builder.lang.dumps.language_overrides` gives it, else its wiki's (:func:`dump_language`).
    ``parameter_table`` is a user's table of template parameter names (read before, so a bad one fails early);
    ``inline_table`` one of inline templates, and ``unrendered`` the no-hole rule's policy.
    """
    from builder.sources.download import (  # imported here: builder.sources.download reaches this module through output
        provenance,
    )

    check_dump_kinds(dumps, history)
    if len({resolved(dump) for dump in dumps}) < len(dumps):
        raise ValueError(f"a dump is given twice: {[str(dump) for dump in dumps]}")
    tasks: list[ExtractTask] = []
    described = []
    table = str(Path(parameter_table).resolve()) if parameter_table else ""
    table_stamp = hashlib.sha1(Path(table).read_bytes()).hexdigest() if table else ""
    inline = str(Path(inline_table).resolve()) if inline_table else ""
    inline_stamp = hashlib.sha1(Path(inline).read_bytes()).hexdigest() if inline else ""
    for dump in dumps:
        path = check_dump_path(dump)
        readable = True
        try:
            siteinfo = read_siteinfo(path)
        except DumpError:  # its extraction task will fail and report why; the other dumps go on
            siteinfo, readable = SiteInfo(), False
        aliases = tuple(dict.fromkeys(DEFAULT_FILE_ALIASES + tuple(filter(None, [siteinfo.namespaces.get(6, "")]))))
        language, wiki = dump_language(path, siteinfo, given_language(languages or {}, dump))
        described.append({"name": name_of(path), "dbname": siteinfo.dbname or "unknown", "date": dump_date(path)})
        described[-1]["language"] = language
        source = provenance(path)
        if source is not None:
            described[-1]["download"] = source
        ranges: list[tuple[int, int] | None] = [None]
        threads = 1
        if workers > 1 and readable and dump_compression(path) == "bz2":
            offsets = stream_offsets(path)  # a bad index is warned about and not used
            if offsets == [0]:  # one stream: the workers decompress it as threads instead
                threads = pool_size(workers)
            else:
                cut = split_ranges(path, workers * RANGES_PER_WORKER, offsets)
                ranges = list(cut) if len(cut) > 1 else [None]
        elif workers > 1 and readable and history and not first_seen and dump_compression(path) == "xml":
            cut = history_ranges(path, workers * RANGES_PER_WORKER)  # a page's revisions too are split
            ranges = list(cut) if len(cut) > 1 else [None]
        stamp = fingerprint(path)
        for byte_range in ranges:
            identity = (
                f"{resolved(path)}|{stamp}|{byte_range}|{namespaces}|{first_seen}|{language}|{wiki}|{table_stamp}"
            )
            if file_redirects:  # the task's counts then hold the File redirects too
                identity += "|file redirects"
            if language != "en" or inline or unrendered != "auto":  # shards cleaned by other rules are not reused
                identity += f"|inline templates {inline_stamp}|{unrendered}"
            if history:  # its page records carry digests
                identity += "|history"
            shard = shard_dir / f"references-{hashlib.sha1(identity.encode()).hexdigest()[:16]}.parquet"
            task = ExtractTask(
                str(path),
                byte_range,
                aliases,
                namespaces,
                str(shard),
                first_seen,
                threads,
                file_redirects,
                language,
                wiki,
                table,
                workers == 1,
                inline,
                unrendered,
                history,
            )
            tasks.append(task)
    check_one_wiki_per_language(tasks)
    if {task.language for task in tasks} == {"en"}:  # the card of an English build reads as it always did
        for description in described:
            del description["language"]
    return tasks, described


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
                # why, for the card's list of dumps: worded without the folders of the machine that built it
                description["failed"] = failures[-1].removeprefix(f"{dump}: ").replace(dump, description["name"])
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


def combine_redirects(
    tasks: Sequence[ExtractTask], results: Sequence[ExtractResult], failed: set[str]
) -> tuple[list[tuple[str, str]], int]:
    """The File redirects of the dumps that were read whole, in task order, and how many were ignored."""
    redirects: list[tuple[str, str]] = []
    ignored = 0
    for task, result in zip(tasks, results, strict=True):
        if task.dump not in failed:
            redirects.extend(result.redirects)
            ignored += result.redirects_ignored
    return redirects, ignored


def finish_extraction(
    tasks: Sequence[ExtractTask],
    results: Sequence[ExtractResult],
    described: list[dict[str, str]],
    history: bool,
    seconds: float,
    shards: bool = True,
) -> tuple[Extraction, set[str]]:
    """What every engine makes of its tasks' results: the build's :class:`Extraction` and the dumps that failed.

    The problems are warned of as :class:`~builder.sources.files.DumpWarning`; a build none of whose dumps
    could be read stops here. ``shards``: the tasks wrote parquet shards (the local engine), which the
    extraction lists, those of failed dumps left out.
    """
    read, extract, failures, problems, failed = combine_results(tasks, results, described, history)
    for problem in problems:
        warnings.warn(problem, DumpWarning, stacklevel=3)
    files = [Path(task.shard) for task in tasks if task.dump not in failed and Path(task.shard).is_file()]
    if len(failed) == len(described) or (shards and not files):
        raise DumpError("no dump could be read: " + "; ".join(failures))
    redirects, ignored = combine_redirects(tasks, results, failed)
    wikis = {task.wiki: task.language for task in tasks if task.wiki}
    extraction = Extraction(
        files if shards else [], read, extract, described, seconds, failures, problems, redirects, ignored, wikis
    )
    extraction.history = history
    return extraction, failed


def check_one_wiki_per_language(tasks: Sequence[ExtractTask]) -> None:
    """Two wikis of one language (``enwiki`` and ``simplewiki``) would mix page ids: refuse them together."""
    wikis: dict[str, set[str]] = {}
    for task in tasks:
        wikis.setdefault(task.language, set()).update(filter(None, [task.wiki]))
    for language, names in wikis.items():
        if len(names) > 1:
            raise ValueError(
                f"dumps of {len(names)} wikis of the language {language!r} ({', '.join(sorted(names))}) in one "
                "build: their page ids would mix; build them separately"
            )


def dump_languages(dumps: Sequence[str | Path], given: Mapping[str, str]) -> list[str]:
    """The languages of a build's dumps, sorted, read from their ``<siteinfo>`` before any page is.

    A dump whose start cannot be read counts as English here; its extraction reports why it failed.
    """
    languages = set()
    for dump in dumps:
        path = check_dump_path(dump)
        try:
            siteinfo = read_siteinfo(path)
        except DumpError:
            siteinfo = SiteInfo()
        languages.add(dump_language(path, siteinfo, given_language(given, dump))[0])
    return sorted(languages)
