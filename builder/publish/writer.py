"""Pair rows as the dataset folder stores them: the parquet schema, the row of a pair, and a
writer that cuts a config's pairs into content-named shards.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.config import ROWS_PER_SHARD
from builder.filters.clusters import Pair
from builder.filters.repetition import DEJA_ROW_SCHEMA
from builder.storage import filesystem, is_url, join

__all__ = [
    "REFERENCE_ROW_SCHEMA",
    "ROW_KINDS",
    "PairWriter",
    "file_digest",
    "finalize_parts",
    "pair_row",
    "reference_rows",
]

PAIR_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("image", pa.string()),
        ("caption_type", pa.string()),
        ("sentence1", pa.string()),
        ("sentence2", pa.string()),
        ("page1", pa.string()),
        ("page2", pa.string()),
        ("source1", pa.string()),
        ("source2", pa.string()),
        ("revision1", pa.int64()),
        ("revision2", pa.int64()),
        ("same_page", pa.bool_()),
        # which titles the two references used, and what made them one image (builder.filters.identity)
        ("file1", pa.string()),
        ("file2", pa.string()),
        ("identity", pa.string()),
    ]
)
# a cross-lingual config's pairs also say the language of each text (its wiki's content language)
CROSSLINGUAL_PAIR_SCHEMA = PAIR_SCHEMA.append(pa.field("language1", pa.string())).append(
    pa.field("language2", pa.string())
)
# a web config's pairs trace each text to its page record: the WARC-Record-ID, the WARC-Date and the page's
# <html lang> (no language is detected, thesis §4.5.2 aside); ``identity`` names the config's equivalence
WEB_COLUMNS = ("record1", "record2", "date1", "date2", "html_lang1", "html_lang2")
WEB_PAIR_SCHEMA = pa.schema([*PAIR_SCHEMA, *(pa.field(name, pa.string()) for name in WEB_COLUMNS)])


# a references config's rows: one per image–text record that step 0 counts (a reference without a text: one row, kind
# and text null), with where it was found (page, revision or WARC record or dataset key, date, <html lang>)
REFERENCE_ROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("image", pa.string()),  # the image as the build identifies it (its cluster: title, or equivalence set)
        ("file", pa.string()),  # the title or URL the page used
        ("page", pa.string()),
        ("page_id", pa.int64()),
        ("revision", pa.int64()),  # the revision id (0 for a crawl or a dataset)
        ("position", pa.int64()),  # the reference's number on its page
        ("source", pa.string()),  # where on the page: link, template, gallery; figure, table, alt; sample, tsv
        ("kind", pa.string()),  # caption or alt (a crawl's captions: figure or table)
        ("text", pa.string()),  # cleaned as the configs that pair them clean it
        ("language", pa.string()),  # the wiki's; a crawl's or dataset's: the build's (--language), not detected
        ("record", pa.string()),  # WARC-Record-ID, or a dataset sample's key
        ("date", pa.string()),  # WARC-Date
        ("html_lang", pa.string()),  # the page's <html lang>
    ]
)
_CAPTION_KINDS = frozenset({"figure", "table"})
# a Déjà config's visually situated paraphrases (i, c, p) (builder.filters.situated): a pair's columns, then the two
# captions' canonical forms, the nouns they share, their images, and φ(i, N_p) where the images were compared
DEJA_PAIR_SCHEMA = pa.schema(
    [
        *PAIR_SCHEMA,
        pa.field("canonical1", pa.string()),
        pa.field("canonical2", pa.string()),
        pa.field("shared_nouns", pa.list_(pa.string())),
        pa.field("images1", pa.int64()),
        pa.field("images2", pa.int64()),
        pa.field("affinity", pa.float64()),
    ]
)
# what a config writes besides pairs, and the schema of its rows
ROW_SCHEMAS = {"references": REFERENCE_ROW_SCHEMA, "deja": DEJA_ROW_SCHEMA, "deja-pairs": DEJA_PAIR_SCHEMA}
ROW_KINDS = ("pairs", *ROW_SCHEMAS)


def reference_rows(row: dict[str, object]) -> list[dict[str, object]]:
    """A reference's output rows: one per non-empty text (its caption, then its alt text), or one without a text."""
    source = row["source"]
    texts = [("caption", row.get("caption")), ("alt", row.get("alt"))]
    found = [(kind, text) for kind, text in texts if text]
    rows = []
    for kind, text in found or [(None, None)]:
        if kind == "caption" and source in _CAPTION_KINDS:
            kind = source  # a crawl's caption: from a <figure> or a caption table
        key = "\x1f".join(
            str(row.get(name)) for name in ("language", "page", "page_id", "revision_id", "position", "file", "record")
        )
        rows.append(
            {
                "id": hashlib.blake2b(f"{key}\x1f{kind}".encode(), digest_size=8).hexdigest(),
                "image": row["image"],
                "file": row["file"],
                "page": row["page"],
                "page_id": row["page_id"],
                "revision": row["revision_id"],
                "position": row["position"],
                "source": source,
                "kind": kind,
                "text": text,
                "language": row["language"],
                "record": row.get("record"),
                "date": row.get("date"),
                "html_lang": row.get("page_language"),
            }
        )
    return rows


def pair_id(pair: Pair) -> str:
    """A stable id: the same image and texts give the same id in every build.

    A pair of one title keeps the id it has without an identity map, whatever its cluster merged with.
    """
    image = pair.first.file if pair.identity == "title" else pair.image
    key = "\x1f".join((image, pair.caption_type, pair.sentence1, pair.sentence2))
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def pair_row(pair: Pair, languages: bool = False, web: str = "") -> dict[str, object]:
    """A pair as an output row; ``languages`` adds the two texts' languages (cross-lingual configs); ``web``, a web
    config's equivalence label, adds the pages' records and names the equivalence that joined two image URLs."""
    row: dict[str, object] = {
        "id": pair_id(pair),
        "image": pair.image,
        "caption_type": pair.caption_type,
        "sentence1": pair.sentence1,
        "sentence2": pair.sentence2,
        "page1": pair.first.page,
        "page2": pair.second.page,
        "source1": pair.first.source,
        "source2": pair.second.source,
        "revision1": pair.first.revision_id,
        "revision2": pair.second.revision_id,
        "same_page": pair.first.page_key == pair.second.page_key,
        "file1": pair.first.file,
        "file2": pair.second.file,
        "identity": pair.identity,
    }
    if languages:
        row["language1"] = pair.first.language
        row["language2"] = pair.second.language
    if web:
        row["identity"] = "url" if pair.first.file == pair.second.file else web
        row["record1"], row["record2"] = pair.first.record, pair.second.record
        row["date1"], row["date2"] = pair.first.date, pair.second.date
        row["html_lang1"], row["html_lang2"] = pair.first.page_language, pair.second.page_language
    return row


def file_digest(path: Path) -> str:
    """16 hex digits of the file's content hash, read in chunks."""
    digest = hashlib.blake2b(digest_size=8)
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def finalize_parts(
    folder: str | Path, parts: Sequence[Path | tuple[str, str]], split: str = "train"
) -> list[Path | str]:
    """Give one split's written part files, in output order, their names ``{split}-XXXXX-of-YYYYY-<hash>.parquet``.

    A part is a file, or ``(name, content hash)`` as a worker that hashed it reported; a folder on an object store
    renames by the store's server-side copy.
    """
    files: list[Path | str] = []
    for index, part in enumerate(parts):
        source, digest = part if isinstance(part, tuple) else (part, file_digest(part))
        name = join(folder, f"{split}-{index:05d}-of-{len(parts):05d}-{digest}.parquet")
        if is_url(folder):
            fs, path = filesystem(str(source))
            fs.mv(path, filesystem(str(name))[1])
        else:
            Path(source).rename(name)
        files.append(name)
    return files


class PairWriter:
    """Write one split's pairs into ``{split}-XXXXX-of-YYYYY-<hash>.parquet`` shards of a (staging) config folder.

    Shards are written as ``<prefix>-*.tmp`` and get their final, content-hashed names on
    :meth:`close`. A config without pairs gets one shard with no rows (the schema, for
    parquet readers); the card leaves it out of ``configs:``, as ``datasets`` cannot load it.
    A writer that holds one slice of the output (a Spark partition) stops at :meth:`finish`
    instead, under a ``prefix`` of its own, and the parts of all slices are named together
    by :func:`finalize_parts`. ``languages`` writes :data:`CROSSLINGUAL_PAIR_SCHEMA`; ``web`` (a web config's
    equivalence label) :data:`WEB_PAIR_SCHEMA`; ``rows`` names what else a config writes: ``references``, a
    references config's :data:`REFERENCE_ROW_SCHEMA`; ``deja``, a Déjà config's caption–image edges
    (:data:`builder.filters.repetition.DEJA_ROW_SCHEMA`).
    """

    def __init__(
        self,
        folder: Path,
        rows_per_shard: int = ROWS_PER_SHARD,
        batch_size: int = 10_000,
        prefix: str = "part",
        split: str = "train",
        languages: bool = False,
        web: str = "",
        rows: str = "pairs",
    ) -> None:
        self.folder = folder
        self.languages = languages
        self.web = web
        if rows not in ROW_KINDS:
            raise ValueError(f"rows must be one of {list(ROW_KINDS)}, not {rows!r}")
        self.schema = (
            ROW_SCHEMAS[rows]
            if rows != "pairs"
            else WEB_PAIR_SCHEMA
            if web
            else CROSSLINGUAL_PAIR_SCHEMA
            if languages
            else PAIR_SCHEMA
        )
        self.split = split
        self.rows_per_shard = rows_per_shard
        self.batch_size = batch_size
        self.prefix = prefix
        self.rows = 0
        self.seconds = 0.0  # spent encoding and writing parquet, for the build's stage times
        self.files: list[Path | str] = []
        self._batch: list[dict[str, object]] = []
        self._parts: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_part = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, pairs: Iterable[Pair]) -> None:
        self.write_rows(pair_row(pair, self.languages, self.web) for pair in pairs)

    def write_rows(self, rows: Iterable[dict[str, object]]) -> None:
        """Rows already made by :func:`pair_row` (engines that build them on workers)."""
        for row in rows:
            self._batch.append(row)
            if len(self._batch) >= self.batch_size:
                self._flush()

    def _flush(self) -> None:
        started = time.perf_counter()
        self._write_batch()
        self.seconds += time.perf_counter() - started

    def _write_batch(self) -> None:
        while self._batch:
            if self._writer is None or self._in_part >= self.rows_per_shard:
                self._open_part()
            room = self.rows_per_shard - self._in_part
            chunk, self._batch = self._batch[:room], self._batch[room:]
            self._writer.write_table(pa.Table.from_pylist(chunk, schema=self.schema))  # type: ignore[union-attr]
            self._in_part += len(chunk)
            self.rows += len(chunk)

    def _open_part(self) -> None:
        if self._writer is not None:
            self._writer.close()
        part = self.folder / f"{self.prefix}-{len(self._parts):05d}.tmp"
        self._parts.append(part)
        self._writer = pq.ParquetWriter(part, self.schema, compression="zstd")
        self._in_part = 0

    def finish(self) -> list[Path]:
        """Write what is left and close the last part; the parts written, none if no row came."""
        self._flush()
        started = time.perf_counter()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.seconds += time.perf_counter() - started
        return list(self._parts)

    def close(self) -> list[Path | str]:
        """Finish the last shard and give the shards their final names."""
        self.finish()
        started = time.perf_counter()
        if not self._parts:
            self._open_part()
            self._writer.close()  # type: ignore[union-attr]
            self._writer = None
        self.files = finalize_parts(self.folder, self._parts, self.split)
        self.seconds += time.perf_counter() - started
        return self.files
