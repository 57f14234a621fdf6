"""Adapters for the paraphrase corpora of the paper's comparison (Table 7), each read as released.

Every adapter yields :class:`PairRecord` s – ``(id, sentence1, sentence2, label, group)``,
where ``group`` ties pairs that share a source (an image, a paraphrase set) – and
fills a :class:`ReadReport` with the records it read and the ones it skipped, and
why. A missing, empty, binary or non-UTF-8 file and a malformed line raise
:class:`CorpusError` naming the file and the line, unless the release itself is known
to hold such lines (then they are skipped and counted).

Corpora with a well-known copy on the Hugging Face Hub (:data:`HUB_COPIES`) can also be
loaded without a path, through ``datasets``; their rows become the same records.
"""

from __future__ import annotations

import collections
import contextlib
import csv
import dataclasses
import gzip
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from builder.publish.layout import read_config
from builder.publish.released import released_row


class CorpusError(ValueError):
    """A corpus file that is missing or malformed; the message names the file and the line."""


class HubUnavailable(CorpusError):
    """A Hub copy that cannot be loaded: the Hub is out of reach (``reason``) and the copy is not in the cache."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class MissingText(CorpusError):
    """A pair without one of its texts (null, absent or an empty field); the message names the file and the row."""

    def __init__(self, column: str, where: str) -> None:
        super().__init__(
            f"{where}: no {column} (a missing text); every pair needs both texts: fill it in or drop the row"
        )


def pair_text(value: object, column: str, where: str) -> str:
    """One text of a pair as a file gives it; a missing one is an error naming ``where`` (``file:line``).

    Missing is ``None`` (a JSON null or an absent key, a parquet null): every reader of pairs, the
    comparison's and ``python -m metrics score``'s, asks here, so a pair without a text stops the run
    where it is read, not as a nameless error of the scorer. The TSV and CSV readers pass an empty field
    as ``None``: pandas and ``datasets`` read it as a missing value (a JSON or parquet ``""`` is a text).
    """
    if value is None:
        raise MissingText(column, where)
    if not isinstance(value, str):
        raise CorpusError(f"{where}: {column} is {value!r} ({type(value).__name__}), not a text")
    return value


PARQUET_TEXTS = ("sentence1", "sentence2")  # a build's parquet files: the two texts of a pair


def read_pairs_parquet(files: Sequence[Path], columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of a build's parquet files, in order; a null text is an error naming its file and row index.

    A null reaches no scorer (its error would name neither the file nor the row): the first is reported
    as ``FILE: row index N`` (counted from 0 in that file, as pyarrow and pandas count).
    """
    source = files[0] if len(files) == 1 else list(files)  # one file: pyarrow's errors name what is wrong with it
    table = pq.read_table(source, columns=None if columns is None else list(columns))
    for column in PARQUET_TEXTS:
        if column not in table.column_names or not table.column(column).null_count:
            continue
        index = pc.index(table.column(column).is_null(), True).as_py()
        for file in files:
            rows = pq.read_metadata(file).num_rows
            if index < rows:
                raise MissingText(column, f"{file}: row index {index}")
            index -= rows
    return table


@dataclasses.dataclass(frozen=True)
class PairRecord:
    id: str
    sentence1: str
    sentence2: str
    label: int | None
    group: str


@dataclasses.dataclass
class ReadReport:
    """How many records an adapter read, and how many it skipped for which reason."""

    read: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1


@dataclasses.dataclass(frozen=True)
class Corpus:
    """A corpus of Table 7: its name, acquisition type (C, G, H) and how to read it."""

    name: str
    title: str
    type: str
    files: Callable[[Path], list[Path]]
    read: Callable[[Path, ReadReport], Iterator[PairRecord]]


def _need(path: Path, *names: str) -> list[Path]:
    """The release files under ``path`` (or ``path`` itself), each as released or gzip-compressed (``name.gz``,
    as the package keeps its training copies); an error lists what was looked for."""
    if path.is_file():
        return [path]
    found = [
        next(candidate for candidate in (path / name, path / f"{name}.gz") if candidate.is_file())
        for name in names
        if (path / name).is_file() or (path / f"{name}.gz").is_file()
    ]
    if not found:
        raise CorpusError(f"{path}: none of {', '.join(names)} found")
    return found


def _decode(path: Path, number: int, raw: bytes, encoding: str) -> str:
    """One line as text; binary data or another encoding is an error naming the file and the line."""
    if b"\0" in raw:
        raise CorpusError(f"{path}:{number}: binary data (a NUL byte), not a text file of this corpus")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise CorpusError(
            f"{path}:{number}: not UTF-8 text (byte 0x{raw[error.start]:02x} at column {error.start + 1}); "
            "the release files are UTF-8, convert this one (e.g. iconv -f latin1 -t utf-8)"
        ) from None


def _lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Numbered lines without their line ends (LF or CRLF), each checked to be text in ``encoding``."""
    if path.is_dir():
        raise CorpusError(f"{path}: a folder, not a file")
    if not path.is_file():
        raise CorpusError(f"{path}: no such file")
    if path.stat().st_size == 0:
        raise CorpusError(f"{path}: empty file")
    try:
        # closed by the with below; opened apart to name the error
        handle = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115
    except OSError as error:
        raise CorpusError(f"{path}: cannot read ({error.strerror or error})") from None
    with handle:
        numbered = enumerate(handle, 1)
        while True:
            try:
                number, raw = next(numbered)
            except StopIteration:
                return
            except (OSError, EOFError) as error:  # a truncated or corrupt .gz copy
                raise CorpusError(f"{path}: cannot read ({error})") from None
            # utf-8-sig drops the BOM of the first line; a BOM cannot start a later one
            text = _decode(path, number, raw, encoding if number == 1 else encoding.removesuffix("-sig"))
            yield number, text.removesuffix("\n").removesuffix("\r")


def _stem(file: Path) -> str:
    """The release file's name without its suffix, whether the copy is compressed or not (``dev.tsv.gz`` → ``dev``)."""
    return Path(file.name.removesuffix(".gz")).stem


def _within_groups(groups: dict[str, list[str]], prefix: str) -> Iterator[PairRecord]:
    """All unordered pairs of texts inside each group (captions of an image, a paraphrase set)."""
    for group, texts in groups.items():
        for (i, a), (j, b) in itertools.combinations(enumerate(texts), 2):
            yield PairRecord(f"{prefix}{group}-{i}-{j}", a, b, None, group)


def read_msrpc(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """``msr_paraphrase_{train,test}.txt``: UTF-8 with BOM, CRLF, ``Quality #1 ID #2 ID #1 String #2 String``."""
    for file in _need(path, "msr_paraphrase_train.txt", "msr_paraphrase_test.txt"):
        lines = _lines(file, encoding="utf-8-sig")
        _, header = next(lines, (0, ""))
        if not header.startswith("Quality\t#1 ID"):
            raise CorpusError(f"{file}:1: expected the header 'Quality\\t#1 ID\\t#2 ID\\t#1 String\\t#2 String'")
        for number, line in lines:
            fields = line.split("\t")
            if len(fields) != 5 or fields[0] not in ("0", "1"):
                raise CorpusError(f"{file}:{number}: expected 5 tab-separated fields with quality 0 or 1")
            report.read += 1
            yield PairRecord(f"{_stem(file)}-{fields[1]}-{fields[2]}", fields[3], fields[4], int(fields[0]), fields[1])


def read_paws(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """PAWS-Wiki Labeled (Final): ``train.tsv``, ``dev.tsv``, ``test.tsv`` with ``id sentence1 sentence2 label``."""
    folder = path / "final" if (path / "final").is_dir() else path  # the release unpacks into final/
    for file in _need(folder, "train.tsv", "dev.tsv", "test.tsv"):
        lines = _lines(file)
        _, header = next(lines, (0, ""))
        if header.split("\t") != ["id", "sentence1", "sentence2", "label"]:
            raise CorpusError(f"{file}:1: expected the header 'id\\tsentence1\\tsentence2\\tlabel'")
        for number, line in lines:
            fields = line.split("\t")
            if len(fields) != 4 or fields[3] not in ("0", "1"):
                raise CorpusError(f"{file}:{number}: expected 4 tab-separated fields with label 0 or 1")
            report.read += 1
            yield PairRecord(
                f"{_stem(file)}-{fields[0]}", fields[1], fields[2], int(fields[3]), f"{_stem(file)}-{fields[0]}"
            )


STS_PARAPHRASE = 4.0  # STS 4 of 5: "mostly equivalent, but some unimportant details differ" (Agirre et al. 2013)


@dataclasses.dataclass(frozen=True)
class ScoredPair:
    """An STS Benchmark pair: its genre (``main-captions``, ``main-news``, ``main-forums``), source and 0-5 score."""

    id: str
    genre: str
    source: str
    score: float
    sentence1: str
    sentence2: str

    @property
    def label(self) -> int:
        """Paraphrase when people scored it at least :data:`STS_PARAPHRASE`."""
        return int(self.score >= STS_PARAPHRASE)


def read_stsb(path: Path, report: ReadReport) -> Iterator[ScoredPair]:
    """The STS Benchmark's ``sts-{train,dev,test}.csv``: ``genre file year id score sentence1 sentence2 [licence…]``,
    tab-separated without quoting (a text may hold quotes), each score the mean of several people's 0-5."""
    for file in _need(path, "sts-train.csv", "sts-dev.csv", "sts-test.csv"):
        for number, line in _lines(file):
            fields = line.split("\t")
            try:
                score = float(fields[4]) if len(fields) >= 7 else math.nan
            except ValueError:
                score = math.nan
            if not 0 <= score <= 5 or not fields[5] or not fields[6]:
                raise CorpusError(
                    f"{file}:{number}: expected 'genre file year id score sentence1 sentence2' with a 0-5 score"
                )
            report.read += 1
            yield ScoredPair(f"{_stem(file)}-{number}", fields[0], fields[1], score, fields[5], fields[6])


def read_tapaco(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """TaPaCo ``en.txt``: ``paraphrase_set_id  sentence_id  paraphrase  lists  tags``; pairs inside a set."""
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for file in _need(path, "en.txt"):
        for number, line in _lines(file):
            fields = line.split("\t")
            if number == 1 and fields[0] == "paraphrase_set_id":
                continue
            if len(fields) < 3 or not fields[0].isdigit():
                raise CorpusError(f"{file}:{number}: expected 'paraphrase_set_id\\tsentence_id\\tparaphrase\\t…'")
            report.read += 1
            groups[fields[0]].append(fields[2])
    yield from _within_groups(groups, "tapaco-")


def read_ppdb(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """PPDB 2.0 (a ``-phrasal`` or ``-all`` file): ``[LHS] ||| phrase1 ||| phrase2 ||| features ||| …``.

    As in the paper, only phrasal pairs with at least 4 tokens on both sides and no
    ``[X]`` non-terminals are kept; the others are counted as skipped.
    """
    sizes = ("s", "m", "l", "xl", "xxl", "xxxl")
    files = _need(path, *(f"ppdb-2.0-{size}-{part}" for part in ("phrasal", "all") for size in sizes))
    if len(files) > 1:  # each size contains the smaller ones, and "all" contains "phrasal"
        raise CorpusError(f"{path}: several PPDB files ({', '.join(f.name for f in files)}); name the one to read")
    for file in files:
        for number, line in _lines(file):
            fields = line.split(" ||| ")
            if len(fields) < 3:
                raise CorpusError(f"{file}:{number}: expected '[LHS] ||| phrase1 ||| phrase2 ||| …'")
            report.read += 1
            first, second = fields[1].strip(), fields[2].strip()
            if "[" in first + second or "]" in first + second:
                report.skip("non-terminal")
            elif len(first.split()) < 4 or len(second.split()) < 4:
                report.skip("fewer than 4 tokens")
            else:
                yield PairRecord(f"ppdb-{number}", first, second, None, first)


def read_paranmt(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """ParaNMT: ``reference\\tparaphrase`` (the 50M release adds a score column)."""
    for file in _need(path, "para-nmt-5m-processed.txt", "para-nmt-50m.txt"):
        for number, line in _lines(file):
            fields = line.split("\t")
            if len(fields) not in (2, 3):
                raise CorpusError(f"{file}:{number}: expected 'reference\\tparaphrase[\\tscore]'")
            report.read += 1
            yield PairRecord(f"paranmt-{number}", fields[0], fields[1], None, f"paranmt-{number}")


def read_flickr8k(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """``Flickr8k.token.txt``: ``image.jpg#N\\tcaption``; pairs of captions of one image."""
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for file in _need(path, "Flickr8k.token.txt"):
        for number, line in _lines(file):
            key, tab, caption = line.partition("\t")
            image, hash_sign, index = key.partition("#")
            if not tab or not hash_sign or not index.isdigit():
                raise CorpusError(f"{file}:{number}: expected 'image.jpg#N\\tcaption'")
            report.read += 1
            groups[image].append(caption.strip())
    yield from _within_groups(groups, "")


def read_pascal(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """PASCAL sentences: ``sentence/<category>/<image>.txt``, one sentence a line; pairs within an image."""
    root = path / "sentence" if (path / "sentence").is_dir() else path
    files = sorted(root.glob("*/*.txt"))
    if not files:
        raise CorpusError(f"{path}: no sentence/<category>/<image>.txt files found")
    groups: dict[str, list[str]] = {}
    for file in files:
        sentences = [line.strip() for _, line in _lines(file) if line.strip()]
        report.read += len(sentences)
        groups[f"{file.parent.name}/{file.stem}"] = sentences
    yield from _within_groups(groups, "")


def read_coco(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """MS-COCO ``annotations/captions_{train,val}{2014,2017}.json``; pairs within an ``image_id``.

    2014 and 2017 hold the same images and captions, split differently: a folder with both
    is read once, from the 2017 files (the authors' choice).
    """
    folder = path / "annotations" if (path / "annotations").is_dir() else path
    year = 2017 if any((folder / f"captions_{split}2017.json").is_file() for split in ("train", "val")) else 2014
    names = [f"captions_{split}{year}.json" for split in ("train", "val")]
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for file in _need(folder, *names):
        try:
            annotations = json.loads(file.read_text(encoding="utf-8"))["annotations"]
        except UnicodeDecodeError as error:
            raise CorpusError(f"{file}: not UTF-8 JSON (byte offset {error.start}); not a COCO captions file") from None
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise CorpusError(f"{file}: not a COCO captions file ({type(error).__name__}: {error})") from None
        for number, annotation in enumerate(annotations):
            if not isinstance(annotation, dict) or "image_id" not in annotation or "caption" not in annotation:
                raise CorpusError(f"{file}: annotation {number} has no image_id or caption")
            report.read += 1
            groups[f"{file.stem}-{annotation['image_id']}"].append(" ".join(str(annotation["caption"]).split()))
    yield from _within_groups(groups, "")


def read_wikipedia_ipc(path: Path, report: ReadReport) -> Iterator[PairRecord]:
    """A config folder built by this toolkit, or the authors' released JSONL."""
    if path.is_dir():
        rows: list[dict] = []
        files = read_config(path).files  # the build's own files, not others in the folder
        if not files:
            configs = sorted(p.parent.name for p in path.glob("*/funnel.json"))
            hint = f"; name a config folder, e.g. {path / configs[0]}" if configs else ""
            raise CorpusError(f"{path}: no parquet files{hint}")
        for file in files:
            try:
                table = read_pairs_parquet([file], columns=["id", "sentence1", "sentence2", "image"])
            except pa.ArrowInvalid as error:  # not parquet, or without the columns
                raise CorpusError(f"{file}: not a Wikipedia-IPC parquet file ({error})") from None
            rows.extend(table.to_pylist())
        for row in rows:
            report.read += 1
            yield PairRecord(row["id"], row["sentence1"], row["sentence2"], None, row["image"])
        return
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise TypeError(f"a JSON {type(record).__name__}, not an object")
            row = released_row(record)
        except (json.JSONDecodeError, ValueError, TypeError) as error:
            raise CorpusError(
                f"{path}:{number}: not a Wikipedia-IPC record ({type(error).__name__}: {error})"
            ) from None
        first, second = (pair_text(row[side], side, f"{path}:{number}") for side in PARQUET_TEXTS)
        yield PairRecord(row["id"], first, second, None, str(row["cluster_id"]))
        report.read += 1


# A user's file of pairs (``--corpus NAME=PATH`` with a name of no known corpus): the two text columns
# as paraphrase corpora and tools name them, looked up in this order (case-insensitively).
PAIR_COLUMNS = (
    ("sentence1", "sentence2"),
    ("text1", "text2"),
    ("first", "second"),
    ("sentence_1", "sentence_2"),
    ("text_1", "text_2"),
    ("text_a", "text_b"),
    ("question1", "question2"),
    ("#1 String", "#2 String"),
)
PAIRS_FILE_SUFFIXES = (".tsv", ".csv", ".jsonl")


def _pair_columns(where: str, names: list[str], columns: tuple[str, str] | None) -> tuple[str, str]:
    """The two text columns among ``names``: those given, else the first known pair (:data:`PAIR_COLUMNS`)."""
    if columns is not None:
        missing = [column for column in columns if column not in names]
        if missing:
            raise CorpusError(f"{where}: no column {missing[0]!r} (--columns); it has {', '.join(map(repr, names))}")
        return columns
    folded = {name.casefold(): name for name in names}
    for first, second in PAIR_COLUMNS:
        if first.casefold() in folded and second.casefold() in folded:
            return folded[first.casefold()], folded[second.casefold()]
    known = ", ".join(f"{a}/{b}" for a, b in PAIR_COLUMNS)
    raise CorpusError(
        f"{where}: no known pair of text columns among {', '.join(map(repr, names))} ({known}); name them with "
        "--columns FIRST,SECOND"
    )


def read_pairs_file(path: Path, report: ReadReport, columns: tuple[str, str] | None = None) -> Iterator[PairRecord]:
    """A user's corpus: a TSV, CSV (header line first) or JSONL file of pairs, one pair a row.

    TSV fields are taken verbatim (no quoting, as ``python -m metrics score`` reads them); CSV is
    quoted as the csv module and spreadsheets write it. Each pair is a group of its own; a row without
    both texts (an empty field, a JSON null or absent key: :func:`pair_text`) is an error naming the
    file and the line.
    """
    if path.suffix not in PAIRS_FILE_SUFFIXES:
        raise CorpusError(f"{path}: a file of pairs must be {', '.join(PAIRS_FILE_SUFFIXES)}, named so")
    stem = path.stem
    if path.suffix == ".jsonl":
        chosen = None
        for number, line in _lines(path, encoding="utf-8-sig"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise CorpusError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(record, dict):
                raise CorpusError(f"{path}:{number}: a JSON {type(record).__name__}, not an object of a pair")
            chosen = chosen or _pair_columns(f"{path}:{number}", list(record), columns)
            texts = [pair_text(record.get(column), column, f"{path}:{number}") for column in chosen]
            report.read += 1
            yield PairRecord(f"{stem}-{number}", texts[0], texts[1], None, f"{stem}-{number}")
        if chosen is None:
            raise CorpusError(f"{path}: no JSON objects, no pairs")
        return
    lines = _lines(path, encoding="utf-8-sig")
    rows = _csv_rows(path, lines) if path.suffix == ".csv" else ((number, line.split("\t")) for number, line in lines)
    _, header = next(rows, (0, []))
    first, second = _pair_columns(f"{path}:1", header, columns)
    positions = header.index(first), header.index(second)
    for number, fields in rows:
        if fields in ([], [""]):  # an empty line
            continue
        if len(fields) != len(header):
            raise CorpusError(f"{path}:{number}: expected {len(header)} fields as in the header, found {len(fields)}")
        texts = [
            pair_text(fields[position] or None, column, f"{path}:{number}")
            for position, column in zip(positions, (first, second), strict=True)
        ]
        report.read += 1
        yield PairRecord(f"{stem}-{number}", texts[0], texts[1], None, f"{stem}-{number}")


def _csv_rows(path: Path, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, list[str]]]:
    """CSV records with the line each starts on (a quoted field may span lines)."""
    numbers: list[int] = []

    def texts() -> Iterator[str]:
        for number, line in lines:
            numbers.append(number)
            yield line + "\n"

    reader = csv.reader(texts(), strict=True)
    while True:
        start = len(numbers)  # the reader takes lines one by one, as the record needs them
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise CorpusError(f"{path}:{numbers[-1]}: not CSV ({error})") from None
        yield numbers[start], fields


def _release_files(*names: str) -> Callable[[Path], list[Path]]:
    def files(path: Path) -> list[Path]:
        if path.is_file():
            return [path]
        return sorted(file for name in names for file in path.rglob(name))

    return files


CORPORA: dict[str, Corpus] = {
    corpus.name: corpus
    for corpus in (
        Corpus("wikipedia_ipc", "Wikipedia-IPC", "C", _release_files("*.parquet", "*.jsonl"), read_wikipedia_ipc),
        Corpus("flickr8k", "Flickr8k", "C", _release_files("Flickr8k.token.txt"), read_flickr8k),
        Corpus("pascal", "PASCAL", "C", _release_files("*.txt"), read_pascal),
        Corpus("coco", "MS-COCO", "C", _release_files("captions_*.json"), read_coco),
        Corpus("paws", "PAWS", "G", _release_files("*.tsv"), read_paws),
        Corpus("paranmt", "ParaNMT", "G", _release_files("para-nmt-*.txt"), read_paranmt),
        Corpus("msrpc", "MSRPC", "H", _release_files("msr_paraphrase_*.txt"), read_msrpc),
        Corpus("ppdb", "PPDB 2.0", "H", _release_files("ppdb-2.0-*"), read_ppdb),
        Corpus("tapaco", "TaPaCo", "H", _release_files("en.txt"), read_tapaco),
    )
}


@dataclasses.dataclass(frozen=True)
class HubCopy:
    """A copy of a corpus on the Hugging Face Hub: where it is, and how its rows become pairs."""

    dataset: str
    config: str | None
    columns: tuple[str, ...]
    pairs: Callable[[str, list[dict], ReadReport], Iterator[PairRecord]]
    note: str


def _hub_labelled(split: str, rows: list[dict], report: ReadReport) -> Iterator[PairRecord]:
    """PAWS and GLUE's MRPC: one labelled pair a row (GLUE's test labels are hidden as -1)."""
    for number, row in enumerate(rows):
        key = f"{split}-{row.get('id', row.get('idx', number))}"
        label = row["label"] if row["label"] in (0, 1) else None
        report.read += 1
        yield PairRecord(key, row["sentence1"], row["sentence2"], label, key)


def _hub_tapaco(split: str, rows: list[dict], report: ReadReport) -> Iterator[PairRecord]:
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for row in rows:
        report.read += 1
        groups[row["paraphrase_set_id"]].append(row["paraphrase"])
    yield from _within_groups(groups, "tapaco-")


def _hub_caption_sets(column: str | None) -> Callable[[str, list[dict], ReadReport], Iterator[PairRecord]]:
    """Captions of one image per row: a list column (``set``), or the columns ``caption_0…`` when None."""

    def pairs(split: str, rows: list[dict], report: ReadReport) -> Iterator[PairRecord]:
        groups: dict[str, list[str]] = {}
        for number, row in enumerate(rows):
            captions = row[column] if column else [row[key] for key in sorted(row) if key.startswith("caption_")]
            report.read += len(captions)
            groups[f"{split}-{number}"] = [" ".join(str(caption).split()) for caption in captions]
        yield from _within_groups(groups, "")

    return pairs


HUB_COPIES: dict[str, HubCopy] = {
    "paws": HubCopy(
        "google-research-datasets/paws",
        "labeled_final",
        ("id", "sentence1", "sentence2", "label"),
        _hub_labelled,
        "PAWS-Wiki Labeled (Final): train, validation, test",
    ),
    "msrpc": HubCopy(
        "nyu-mll/glue",
        "mrpc",
        ("idx", "sentence1", "sentence2", "label"),
        _hub_labelled,
        "GLUE's MRPC: the release's pairs, tokenized (spaces before punctuation); test labels hidden",
    ),
    "tapaco": HubCopy(
        "community-datasets/tapaco",
        "en",
        ("paraphrase_set_id", "paraphrase"),
        _hub_tapaco,
        "the English part; pairs inside a paraphrase set",
    ),
    "coco": HubCopy(
        "embedding-data/coco_captions_quintets",
        None,
        ("set",),
        _hub_caption_sets("set"),
        "five captions of each train2014 image (no val2014, no sixth captions)",
    ),
    "flickr8k": HubCopy(
        "jxie/flickr8k",
        None,
        tuple(f"caption_{index}" for index in range(5)),
        _hub_caption_sets(None),
        "the five captions of each image, train, validation and test (the download includes the images)",
    ),
}


def hub_records(name: str, splits: Mapping[str, Iterable[dict]]) -> tuple[list[PairRecord], ReadReport]:
    """The pairs of a Hub copy, from its splits (``datasets.DatasetDict`` or any mapping of rows)."""
    copy = HUB_COPIES[name]
    report = ReadReport()
    records: list[PairRecord] = []
    for split in sorted(splits):
        rows = list(splits[split])
        missing = [column for column in copy.columns if rows and column not in rows[0]]
        if missing:
            raise CorpusError(f"{copy.dataset} split {split}: no column {missing[0]!r}; the Hub copy has changed")
        records.extend(copy.pairs(split, rows, report))
    return records, report


def load_hub(name: str) -> tuple[list[PairRecord], ReadReport, list[Path]]:
    """A corpus from its Hub copy: the pairs, the report, and the cached files (for a cache key).

    A copy is downloaded once into ``datasets``' cache; with the Hub out of reach (``HF_HUB_OFFLINE``,
    or no answer from the endpoint) the cached copy is read, and without one :class:`HubUnavailable` says so.
    """
    if name not in HUB_COPIES:
        raise CorpusError(no_hub_copy(name))
    import datasets
    import huggingface_hub.constants

    from metrics.profiles import reachable

    copy = HUB_COPIES[name]
    where = f"{copy.dataset!r}" + (f" config {copy.config!r}" if copy.config else "")
    endpoint = huggingface_hub.constants.ENDPOINT
    reason = None
    if huggingface_hub.constants.HF_HUB_OFFLINE or datasets.config.HF_HUB_OFFLINE:
        reason = "HF_HUB_OFFLINE is set"
    elif not reachable(endpoint):  # one quick probe instead of datasets' retries, which take half a minute
        reason = f"{endpoint} is unreachable"
    try:
        with _datasets_offline(reason is not None):
            loaded = datasets.load_dataset(copy.dataset, copy.config)
    except (OSError, ValueError) as error:  # datasets' ConnectionError and DatasetNotFoundError are OSErrors
        if reason is not None:  # offline, and the cache has no copy (of this config)
            raise HubUnavailable(
                f"cannot load {name} from the Hugging Face Hub dataset {where}: {reason} and no copy is cached; "
                f"pass a local path of the release instead: {name}=PATH",
                reason,
            ) from None
        detail = (str(error).splitlines() or [""])[0]  # one line, as every error of the comparison
        raise CorpusError(
            f"cannot load {name} from the Hugging Face Hub dataset {where} ({type(error).__name__}: {detail}); "
            f"without network access pass a local path of the release instead: {name}=PATH"
        ) from None
    # only the columns we read (no image decoding); a missing one is reported by hub_records
    splits = {
        split: dataset.select_columns([column for column in copy.columns if column in dataset.column_names])
        for split, dataset in loaded.items()
    }
    files = sorted({Path(entry["filename"]) for split in loaded.values() for entry in split.cache_files})
    records, report = hub_records(name, splits)
    return records, report, files


@contextlib.contextmanager
def _datasets_offline(offline: bool) -> Iterator[None]:
    """``datasets`` in offline mode for one load: it reads its cache instead of retrying an unreachable Hub."""
    import datasets

    before = datasets.config.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = before or offline
    try:
        yield
    finally:
        datasets.config.HF_HUB_OFFLINE = before


def no_hub_copy(name: str) -> str:
    """The error for a corpus named without a path that has no Hub copy."""
    return f"corpus {name!r} has no Hub copy (those that have: {', '.join(HUB_COPIES)}); give its path: {name}=PATH"


def load(name: str, path: str | Path) -> tuple[list[PairRecord], ReadReport]:
    """All pairs of a corpus, and the report of what was read and skipped."""
    if name not in CORPORA:
        raise CorpusError(f"unknown corpus {name!r}; choose from {', '.join(CORPORA)}")
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or folder (corpus {name})")
    report = ReadReport()
    return list(CORPORA[name].read(path, report)), report


def sample(records: Iterable[PairRecord], size: int, seed: int = 0) -> list[PairRecord]:
    """A seeded sample spread over groups: one pair from each group in turn, groups in random order."""
    import random

    groups: dict[str, list[PairRecord]] = collections.defaultdict(list)
    for record in records:
        groups[record.group].append(record)
    generator = random.Random(seed)
    order = sorted(groups)
    generator.shuffle(order)
    for name in order:
        generator.shuffle(groups[name])
    chosen: list[PairRecord] = []
    for round_ in itertools.count():
        taken = [groups[name][round_] for name in order if round_ < len(groups[name])]
        if not taken:
            break
        chosen.extend(taken[: size - len(chosen)])
        if len(chosen) >= size:
            break
    return chosen
