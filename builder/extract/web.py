"""A WARC file as one unit of extraction work: its pages → web image references, its images → an index.

A :class:`WebTask` reads one WARC source (:mod:`builder.sources.warc`), and writes two parquet files:
the references its HTML pages make to images (:data:`WEB_REFERENCE_SCHEMA`, one row per image and
caption kind, from :mod:`builder.extract.html`), and its image response records
(:data:`WEB_IMAGE_SCHEMA`, §4.2's index of physical images). Both are keyed by the image URL as the
injected ``normalize`` callable gives it, so the build can join them; what is known of an image's
pixels comes from the injected ``inspect`` callable (its facts as JSON, or the reason it skipped the
image). Rows come in the file's record order, a page's in the order of its images: the output is the
same on every run and every engine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from builder.common import publish_files
from builder.extract.html import HtmlStats, TooDeep, Undecodable, decode_page, extract_references
from builder.sources.files import MAX_PROBLEMS
from builder.sources.http import MAX_PAYLOAD
from builder.sources.mirror import Network
from builder.sources.warc import WarcError, WarcStats, iter_responses
from builder.storage import identity as input_identity

__all__ = [
    "Inspector",
    "Normalizer",
    "WEB_IMAGE_SCHEMA",
    "WEB_REFERENCE_SCHEMA",
    "WebResult",
    "WebTask",
    "callable_name",
    "iter_web_rows",
    "payload_digest",
    "run_web_task",
    "web_task",
    "write_task_files",
]

WEB_REFERENCE_SCHEMA = pa.schema(
    [
        ("image", pa.string()),  # the image URL, resolved against the page and <base href>, then normalized
        ("page", pa.string()),  # the page's URL (WARC-Target-URI)
        ("record_id", pa.string()),  # the page's WARC-Record-ID (optional in a WARC file, and may repeat)
        ("record_number", pa.int64()),  # the page record's place in its file: what tells two pages apart
        ("date", pa.string()),  # the page's WARC-Date
        ("position", pa.int64()),  # the image's number among the page's <img> elements
        ("kind", pa.string()),  # figure, table or alt (builder.extract.html.KINDS)
        ("caption", pa.string()),  # preprocessed (§4.5.1)
        ("language", pa.string()),  # the page's <html lang>, lower case; null if it names none
        ("warc", pa.string()),  # the WARC file or URL the page came from
    ]
)
WEB_IMAGE_SCHEMA = pa.schema(
    [
        ("image", pa.string()),  # the image's normalized URL (WARC-Target-URI)
        ("record_id", pa.string()),
        ("date", pa.string()),
        ("content_type", pa.string()),  # as the HTTP header says
        ("length", pa.int64()),  # the payload's bytes
        ("facts", pa.string()),  # what ``inspect`` returned, as JSON; null when it skipped the image
        ("skip", pa.string()),  # why ``inspect`` skipped the image; null when it did not
        ("warc", pa.string()),
    ]
)
BATCH_ROWS = 50_000
# what the reader hands on, as a task's file names remember it: a change of it (2: only successes are captures,
# pages told apart by their place in the file) is not met with the files of a task done before it
READER_VERSION = 2
Result = TypeVar("Result")  # a task's counts: a dataclass with ``error``, ``to_json`` and ``from_json``

Normalizer = Callable[[str], str]  # an image URL → the key that identifies it (raises ValueError: unusable)
Inspector = Callable[[bytes], Any]  # an image payload → its facts (a dataclass, mapping or string); raises to skip


def payload_digest(data: bytes) -> str:
    """The default image facts: the SHA-1 of the payload's bytes (no decoding of pixels)."""
    return hashlib.sha1(data).hexdigest()


def callable_name(function: Callable[..., Any] | None) -> str:
    """A callable's name and the revision of its rules (``rules``), if it has one: a task file made under other
    rules (``builder.filters.images.normalize_url``'s before the URL Standard) is not reused."""
    if function is None:
        return ""
    name = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"
    return name + (f"@{function.rules}" if getattr(function, "rules", None) else "")


@dataclasses.dataclass(frozen=True)
class WebTask:
    """One WARC source and where its two parquet files go; picklable (Spark ships it to executors)."""

    warc: str
    shard: str  # the references' parquet file
    images: str  # the image index's parquet file
    normalize: Normalizer | None = None  # None: the resolved URL as it is
    inspect: Inspector | None = payload_digest  # None: images are indexed without facts
    max_payload: int = MAX_PAYLOAD
    verify_digests: bool = True
    network: Network = dataclasses.field(default_factory=Network)


def web_task(warc: str, folder: str | Path, **options: Any) -> WebTask:
    """A task whose file names hash the source (its identity: a file or object rewritten under the same name is
    another source) and the callables, so a changed source or setting is not reused."""
    task = WebTask(warc, "", "", **options)
    identity = "|".join(
        [warc, callable_name(task.normalize), callable_name(task.inspect), str(task.max_payload)]
        + [str(task.verify_digests), f"reader {READER_VERSION}"]
    )
    if not warc.startswith(("http://", "https://")):  # a file on a disk or a store: rewritten, it is read again
        identity += f"|{input_identity(warc)}"
    stamp = hashlib.sha1(identity.encode()).hexdigest()[:16]
    folder = Path(folder)
    return dataclasses.replace(
        task, shard=str(folder / f"web-references-{stamp}.parquet"), images=str(folder / f"web-images-{stamp}.parquet")
    )


@dataclasses.dataclass
class WebResult:
    """What one task read and found; ``error`` says why a source could not be read at all."""

    read: WarcStats
    html: HtmlStats
    references: int = 0
    images: int = 0  # image records indexed
    images_skipped: int = 0  # of which ``inspect`` skipped (their reason is in the index)
    unusable_urls: int = 0  # image or page URLs the normalizer refused
    error: str | None = None
    problems: list[str] = dataclasses.field(default_factory=list)  # html and normalizer problems, named

    def note(self, problem: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> WebResult:
        data = json.loads(text)
        return cls(WarcStats(**data.pop("read")), HtmlStats(**data.pop("html")), **data)


def _facts_json(facts: Any) -> str:
    """Facts as JSON with sorted keys: a dataclass or mapping as an object, anything else as its string."""
    if callable(getattr(facts, "as_dict", None)):  # ImageFacts: its optional vector only when it has one
        facts = facts.as_dict()
    elif dataclasses.is_dataclass(facts) and not isinstance(facts, type):
        facts = dataclasses.asdict(facts)
    if not isinstance(facts, dict):
        facts = str(facts)
    return json.dumps(facts, sort_keys=True, default=str)


def _normalized(task: WebTask, url: str, result: WebResult, where: str) -> str | None:
    if task.normalize is None:
        return url
    try:
        return task.normalize(url)
    except ValueError as error:
        result.unusable_urls += 1
        result.note(f"{where}: {url!r} is no usable image URL ({error})")
        return None


def iter_web_rows(task: WebTask, result: WebResult) -> Iterator[tuple[str, dict[str, Any]]]:
    """``("reference", row)`` and ``("image", row)`` in record order; ``result`` counts as it goes.

    A source that cannot be opened sets ``result.error`` and yields nothing.
    """
    try:
        for response in iter_responses(task.warc, result.read, task.max_payload, task.verify_digests, task.network):
            where = f"{task.warc}: record {response.record_id}"
            if response.kind == "image":
                yield "image", _image_row(task, response, result, where)
                continue
            try:
                text = decode_page(response.payload, response.charset, result.html)
            except Undecodable as error:
                result.note(f"{where} ({response.uri}): {error}")
                continue
            try:
                page = extract_references(text, response.uri, result.html)
            except TooDeep as error:
                result.note(f"{where} ({response.uri}): {error}")
                continue
            for reference in page.references:
                image = _normalized(task, reference.image, result, where)
                if image is None:
                    continue
                result.references += 1
                yield (
                    "reference",
                    {
                        "image": image,
                        "page": response.uri,
                        "record_id": response.record_id,
                        "record_number": response.number,
                        "date": response.date,
                        "position": reference.position,
                        "kind": reference.kind,
                        "caption": reference.caption,
                        "language": page.language or None,
                        "warc": task.warc,
                    },
                )
    except WarcError as error:
        result.error = str(error)


def _image_row(task: WebTask, response: Any, result: WebResult, where: str) -> dict[str, Any]:
    result.images += 1
    facts = skip = None
    if task.inspect is not None:
        try:
            facts = _facts_json(task.inspect(response.payload))
        except Exception as error:  # noqa: BLE001 - any failure on an image's bytes is that image's skip
            skip = str(error) or type(error).__name__
            result.images_skipped += 1
    image = _normalized(task, response.uri, result, where)
    return {
        "image": image if image is not None else response.uri,
        "record_id": response.record_id,
        "date": response.date,
        "content_type": response.content_type,
        "length": len(response.payload),
        "facts": facts,
        "skip": skip if image is not None else "unusable URL",
        "warc": task.warc,
    }


def run_web_task(task: WebTask) -> WebResult:
    """Run a task and write its two parquet files and its counts beside them (:func:`write_task_files`)."""
    files = {"reference": (Path(task.shard), WEB_REFERENCE_SCHEMA), "image": (Path(task.images), WEB_IMAGE_SCHEMA)}
    return write_task_files(files, lambda result: iter_web_rows(task, result), WebResult(WarcStats(), HtmlStats()))


def write_task_files(
    files: Mapping[str, tuple[Path, pa.Schema]],
    rows: Callable[[Result], Iterable[tuple[str, dict[str, Any]]]],
    result: Result,
) -> Result:
    """Write a task's rows, by kind, into their parquet files and its counts beside the first file, all moved into
    place once complete; a task done before (its ``.json`` there) is not run again, and a source that could not
    be read (``result.error``) leaves no file, so that a resumed build tries it again.

    ``rows(result)`` yields ``(kind, row)`` and counts into ``result`` as it goes.
    """
    done = next(iter(files.values()))[0].with_suffix(".json")
    if done.is_file() and all(path.is_file() for path, _ in files.values()):
        return type(result).from_json(done.read_text(encoding="utf-8"))
    partials = {kind: path.with_suffix(".parquet.partial") for kind, (path, _) in files.items()}
    batches: dict[str, list[dict[str, Any]]] = {kind: [] for kind in files}
    try:
        with contextlib.ExitStack() as stack:
            writers = {
                kind: stack.enter_context(pq.ParquetWriter(partials[kind], schema, compression="zstd"))
                for kind, (_, schema) in files.items()
            }
            for kind, row in rows(result):
                batch = batches[kind]
                batch.append(row)
                if len(batch) >= BATCH_ROWS:
                    writers[kind].write_table(pa.Table.from_pylist(batch, schema=files[kind][1]))
                    batch.clear()
            for kind, writer in writers.items():
                writer.write_table(pa.Table.from_pylist(batches[kind], schema=files[kind][1]))
    except BaseException:
        for partial in partials.values():
            partial.unlink(missing_ok=True)
        raise
    if result.error is not None:
        for partial in partials.values():
            partial.unlink(missing_ok=True)
        return result
    publish_files([(partials[kind], path) for kind, (path, _) in files.items()], done, result.to_json())
    return result
