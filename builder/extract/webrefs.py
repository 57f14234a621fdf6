"""A WARC file as a unit of a build's extraction: its web references as the rows every engine groups.

:mod:`builder.extract.web` reads a WARC file into web references (one row per image and caption kind) and
an image index. A build groups references as the Wikipedia build does (:data:`builder.extract.tasks.REFERENCE_SCHEMA`),
so this module turns a page's web references into reference rows: one row per image use (the page's
``<img>``), its caption from the ``<figure>``'s ``<figcaption>`` or the caption table (``caption``, the row's
``source`` names which), its ``alt`` text beside it, as a wiki reference holds a caption and an alt text.
The page's WARC record id and date and its ``<html lang>`` ride along (:data:`WEB_ROW_SCHEMA`), and a page is
numbered by its file's place in the build and its own place in the file, so rows sort the same in every
engine. Pages are told apart by their record's place in the file, never by the optional ``WARC-Record-ID``: two
pages without one, or sharing one, stay two pages. Both engines run :func:`iter_web_build_rows`: the local
engine through :func:`run_web_build_task` in worker processes, Spark on its executors.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from builder.extract.tasks import REFERENCE_SCHEMA
from builder.extract.web import WEB_IMAGE_SCHEMA, WebResult, WebTask, iter_web_rows, write_task_files

__all__ = [
    "DATASET_ROW_SCHEMA",
    "PAGE_STRIDE",
    "WEB_ROW_SCHEMA",
    "PixelInspector",
    "WebBuildResult",
    "WebBuildTask",
    "WebCrawl",
    "iter_web_build_rows",
    "merge_page",
    "run_build_task",
    "run_web_build_task",
]

# the page's record and language, and the WARC file, beside the columns of a wiki reference
WEB_ROW_SCHEMA = pa.schema(
    [
        *REFERENCE_SCHEMA,
        pa.field("record", pa.string()),
        pa.field("date", pa.string()),
        pa.field("page_language", pa.string()),
        pa.field("warc", pa.string()),
    ]
)
# an image–caption dataset's reference rows: a crawl's, with each sample's user (null where the dataset names none)
DATASET_ROW_SCHEMA = WEB_ROW_SCHEMA.append(pa.field("user", pa.string()))
PAGE_STRIDE = 1 << 40  # page ids: the file's number × PAGE_STRIDE + the page's number in its file
CAPTION_KINDS = ("figure", "table")


@dataclasses.dataclass(frozen=True, repr=False)
class PixelInspector:
    """The inspector a web build injects: :func:`builder.sources.images.inspect_image` at the config's hash
    length, and the image's feature vector when a Déjà paraphrases config asks for one (``feature``). A frozen
    dataclass (not a partial) so that its repr, and the task file names hashed from it, are the same in every
    run; a build without a feature keeps the names it had before features existed."""

    hash_size: int = 6
    feature: str = ""

    def __repr__(self) -> str:
        feature = f", feature={self.feature!r}" if self.feature else ""
        return f"PixelInspector(hash_size={self.hash_size}{feature})"

    def __call__(self, data: bytes) -> Any:
        from builder.sources.images import inspect_image

        describe = None
        if self.feature:
            from builder.sources.features import Describer

            describe = Describer(self.feature)
        return inspect_image(data, hash_size=self.hash_size, describe=describe).as_dict()


@dataclasses.dataclass(frozen=True)
class WebBuildTask:
    """One WARC source of a build: its number among the sources, the reader's task, the build's language.

    A task of the web family (this one, or :class:`builder.extract.datasetrefs.DatasetBuildTask`) gives both
    engines what they need of it: ``number``, ``shard`` and ``images`` (its two files), ``new_result()``, and
    ``rows(result)``: ``("reference", row)`` of :data:`WEB_ROW_SCHEMA` and ``("image", row)`` of the index."""

    number: int
    task: WebTask
    language: str = "en"

    @property
    def shard(self) -> Path:
        return Path(self.task.shard)

    @property
    def images(self) -> Path:
        return Path(self.task.images)

    def new_result(self) -> WebBuildResult:
        from builder.extract.html import HtmlStats
        from builder.sources.warc import WarcStats

        return WebBuildResult(WebResult(WarcStats(), HtmlStats()))

    def rows(self, result: WebBuildResult) -> Iterator[tuple[str, dict[str, Any]]]:
        return iter_web_build_rows(self, result)


@dataclasses.dataclass
class WebBuildResult:
    """A task's reading (:class:`WebResult`) and what the merge into reference rows did."""

    web: WebResult
    pages: int = 0  # pages with at least one reference
    references: int = 0  # image uses (reference rows)
    table_captions_left_out: int = 0  # an image with both a figure and a caption-table caption keeps the figure's

    @property
    def error(self) -> str | None:
        """Why the source could not be read at all (None: it was read, perhaps with counted skips)."""
        return self.web.error

    def problems(self) -> list[str]:
        return [*self.web.read.problems, *self.web.problems]

    def to_json(self) -> str:
        return json.dumps(
            {"web": json.loads(self.web.to_json()), **{k: v for k, v in dataclasses.asdict(self).items() if k != "web"}}
        )

    @classmethod
    def from_json(cls, text: str) -> WebBuildResult:
        data = json.loads(text)
        return cls(WebResult.from_json(json.dumps(data.pop("web"))), **data)


def merge_page(rows: list[dict[str, Any]], page_id: int, language: str, result: WebBuildResult) -> list[dict]:
    """One page's web references (in position order, each position's kinds in ``KINDS`` order) as reference
    rows: one per image use, ``caption`` from the figure (else the caption table), ``alt`` its alt text."""
    merged = []
    for position, group in itertools.groupby(rows, key=lambda row: row["position"]):
        kinds = {row["kind"]: row for row in group}
        captioned = [kind for kind in CAPTION_KINDS if kind in kinds]
        if len(captioned) > 1:
            result.table_captions_left_out += 1
        first = kinds[captioned[0]] if captioned else kinds["alt"]
        merged.append(
            {
                "image": first["image"],
                "page": first["page"],
                "page_id": page_id,
                "revision_id": 0,
                "position": position,
                "source": captioned[0] if captioned else "alt",
                "template": None,
                "caption": first["caption"] if captioned else "",
                "alt": kinds["alt"]["caption"] if "alt" in kinds else "",
                "language": language,
                "parameters": None,
                "record": first["record_id"],
                "date": first["date"],
                "page_language": first["language"],
                "warc": first["warc"],
            }
        )
    result.pages += 1
    result.references += len(merged)
    return merged


def iter_web_build_rows(task: WebBuildTask, result: WebBuildResult) -> Iterator[tuple[str, dict[str, Any]]]:
    """``("reference", row)`` of :data:`WEB_ROW_SCHEMA` and ``("image", row)`` of the index, in record order."""
    page: list[dict[str, Any]] = []
    pages = 0
    for kind, row in iter_web_rows(task.task, result.web):
        if kind == "image":
            yield kind, row
            continue
        if page and page[-1]["record_number"] != row["record_number"]:  # a record id is optional, and may repeat
            for merged in merge_page(page, task.number * PAGE_STRIDE + pages, task.language, result):
                yield "reference", merged
            pages += 1
            page = []
        page.append(row)
    if page:
        for merged in merge_page(page, task.number * PAGE_STRIDE + pages, task.language, result):
            yield "reference", merged


def run_build_task(task: Any) -> Any:
    """Write a web-family task's reference rows and image index (``task.shard`` and ``task.images``) and its
    counts beside them (:func:`builder.extract.web.write_task_files`). Both a WARC file's task and a dataset
    shard's."""
    files = {"reference": (Path(task.shard), WEB_ROW_SCHEMA), "image": (Path(task.images), WEB_IMAGE_SCHEMA)}
    return write_task_files(files, task.rows, task.new_result())


def run_web_build_task(task: WebBuildTask) -> WebBuildResult:
    """:func:`run_build_task` for a WARC source."""
    return run_build_task(task)


@dataclasses.dataclass
class WebCrawl:
    """What a web build's extraction read: its sources, each one's result, and the files the core reads after it.

    ``index`` are the image index files (:data:`WEB_IMAGE_SCHEMA`, in source order); ``referenced`` a parquet
    file of ``image, references``: how many references each image URL has in the crawl.
    """

    sources: list[str]
    results: list[WebBuildResult]
    index: list[Path]
    referenced: Path | None = None
    later_captures: int = 0  # later captures of pages read before (with references), which the engine left out
    later_capture_references: int = 0  # their references: counted in ``references``, not in step 0

    def failures(self) -> list[str]:
        """Each source that could not be read, with why."""
        return [
            f"{source}: {result.error}"
            for source, result in zip(self.sources, self.results, strict=True)
            if result.error is not None
        ]

    def problems(self) -> list[str]:
        return [problem for result in self.results for problem in result.problems()]

    def dumps(self) -> list[dict[str, object]]:
        """The inputs as funnel.json and the card name them."""
        return [
            {"name": Path(source).name if "://" not in source else source, "source": str(source), "kind": "web"}
            for source in self.sources
        ]

    def counts(self) -> dict[str, object]:
        """The crawl's counts in the thesis's terms, added over the sources that were read."""
        read = [result for result in self.results if result.web.error is None]
        warc: dict[str, int] = {}
        html: dict[str, int] = {}
        for result in read:
            for name, value in dataclasses.asdict(result.web.read).items():
                if name != "problems":
                    warc[name] = warc.get(name, 0) + value
            for name, value in dataclasses.asdict(result.web.html).items():
                html[name] = html.get(name, 0) + value
        return {
            "warc_files": len(self.sources),
            "warc_files_failed": len(self.results) - len(read),
            "records": warc.get("records", 0),
            "html_pages": warc.get("html", 0),
            "pages_with_references": sum(result.pages for result in read),
            "images_indexed": sum(result.web.images for result in read),
            "images_unreadable": sum(result.web.images_skipped for result in read),
            "unsuccessful_responses": warc.get("unsuccessful", 0),
            "references": sum(result.references for result in read),
            "references_of_later_captures": self.later_capture_references,
            "captions": {kind: html.get(kind, 0) for kind in ("figure", "table", "alt")},
            "table_captions_left_out": sum(result.table_captions_left_out for result in read),
            "unusable_urls": sum(result.web.unusable_urls for result in read),
            "revisits": warc.get("revisits", 0),
            "revisits_resolved_in_their_file": warc.get("revisits_resolved", 0),
            "bodies_used_as_stored": warc.get("bodies_as_stored", 0),
            "unknown_charsets": html.get("unknown_charsets", 0),
            "reader": warc,
            "html": html,
        }
