"""Déjà Image-Captions' captions in repetition (Chen et al., NAACL 2015, §2): the association graph of a ``deja``
config, from the sentences its caption rules judged (:mod:`builder.filters.deja`) to the caption–image edges it keeps.

Every sentence of every image–text record step 0 counts is an occurrence: (the sentence's canonical form, its image,
its user, its record). The rules of §2 drop occurrences one by one (:data:`builder.filters.deja.DEJA_RULES`); then a
canonical form is kept when it is used for at least ``min_images`` distinct images (the build's image identity:
titles, redirects and SHA-1 of a wiki, a crawl's URLs or pixels, a dataset's pixels) by at least ``min_users`` users
(a wiki's pages; a crawl's sites, each page's registered domain; a dataset's values of its user column, a sample
without one counting for no user; a dataset without such a column names no user, so there the images rule applies
alone). Each occurrence gets the last step it survives (its ``level``), so that one table counts every
step of the funnel and holds the rows. The SQL is the subset DuckDB and Spark SQL both read, run on an engine's
:class:`DejaTables`: the local engine's DuckDB, or Spark SQL on the executors, where only counts reach the driver.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import ipaddress
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from builder.common import sql_list
from builder.config import PipelineConfig
from builder.filters.deja import DEJA_RULES, DejaSentence, analyse_texts
from builder.filters.funnel import FunnelRow
from builder.filters.tagging import Tagger
from builder.lang.wordnet import WordNet

__all__ = [
    "DEJA_CANDIDATE_SCHEMA",
    "DEJA_ROW_SCHEMA",
    "SENTENCE_SCHEMA",
    "DejaGraph",
    "DejaTables",
    "DuckDBDejaTables",
    "deja_graph",
    "deja_step_names",
    "judge_texts",
    "output_row",
    "registered_domain",
    "sentence_rows",
]

# A text's sentences as the rules judged them: one row per (language, text, sentence number). Lists are joined with
# NOUN_SEPARATOR, so that both engines' tables hold strings and integers only.
SENTENCE_SCHEMA = pa.schema(
    [
        ("language", pa.string()),
        ("text_md5", pa.string()),  # the MD5 of the text (UTF-8, hex), as SQL's md5(): a text of 2,000 sentences is
        # not carried by each of them (60 KB × 2,000 rows ran DuckDB out of memory)
        ("sentence", pa.int64()),  # its number in the text
        ("original", pa.string()),  # as written (footnote 2: the originals are kept beside the canonical form)
        ("canonical", pa.string()),
        ("nouns", pa.string()),  # its physical-object noun lemmas
        ("syntax", pa.string()),  # Table 5: verb, prep, adj
        ("words", pa.string()),  # the words of its syntax kind (its verbs, prepositions or adjectives), Table 5
        ("verdict", pa.string()),  # "kept", or the first rule it fails
        ("tokens", pa.int64()),
    ]
)
NOUN_SEPARATOR = "|"
# the columns of a config's records the graph reads (the ``candidates`` view; a Wikipedia build's have no WARC record)
DEJA_CANDIDATE_SCHEMA = pa.schema(
    [
        *((name, pa.string()) for name in ("image", "file", "page")),
        *((name, pa.int64()) for name in ("page_id", "revision_id", "position")),
        *((name, pa.string()) for name in ("source", "language", "caption", "alt", "record", "date")),
        ("user", pa.string()),  # a dataset sample's user (its user column); null elsewhere
    ]
)
# an image record of the build's index, for deja-paraphrases' vectors: its facts and its place (file, row)
IMAGE_RECORD_SCHEMA = pa.schema(
    [("image", pa.string()), ("facts", pa.string()), ("position", pa.int64()), ("record", pa.int64())]
)
KEPT = "kept"
PARACAPTION_STEP = "Shares a noun (PARAcaption)"
VECTOR_STEP = "Image has features"  # deja-paraphrases: the edges whose image the build could describe (§4's features)
VISUAL_STEP = "Visual paraphrase (φ)"  # deja-paraphrases: two query images per caption, the best candidate of each
PAIRING_STEPS = (PARACAPTION_STEP, VECTOR_STEP, VISUAL_STEP)  # the pairing configs' steps after the graph's
SYNTAX_KINDS = ("verb", "prep", "adj")  # Table 5's kinds of a sentence, as DejaSentence.kind names them

# A deja config's rows: one per edge (caption, image) of the association graph, with the edge's first occurrence
DEJA_ROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("canonical", pa.string()),  # the caption, in canonical form ("bird fly IN blue sky")
        ("text", pa.string()),  # the first occurrence's sentence as written
        ("image", pa.string()),  # the image as the build identifies it
        ("file", pa.string()),  # the title or URL the first occurrence's page used
        ("page", pa.string()),
        ("user", pa.string()),  # a wiki's page, a crawl's registered domain, a dataset's user column (else null)
        ("source", pa.string()),  # link, template, gallery; figure, table, alt; sample, tsv
        ("kind", pa.string()),  # caption or alt
        ("language", pa.string()),
        ("revision", pa.int64()),
        ("position", pa.int64()),
        ("record", pa.string()),
        ("date", pa.string()),
        ("syntax", pa.string()),  # Table 5: verb, prep or adj
        ("nouns", pa.list_(pa.string())),  # the caption's physical-object nouns (§5's candidates share them)
        ("tokens", pa.int64()),  # words of the sentence as written (Table 2)
        ("images", pa.int64()),  # the caption's distinct images
        ("users", pa.int64()),  # the caption's distinct users (null for a dataset without a user column)
        ("occurrences", pa.int64()),  # the edge's occurrences: records (and sentences) that give it
    ]
)
# an edge's first occurrence, the same in every engine: its page's first reference, then, where a dataset's or a
# crawl's samples tie there (two samples of one URL and caption), the least page id and record; nulls placed as
# DuckDB places them by default (Spark SQL puts them first)
_FIRST = ", ".join(
    f"{column} NULLS LAST"
    for column in ("page", "revision_id", "position", "kind", "sentence", "page_id", "record", "source", "file")
)


def sentence_rows(language: str, text: str, sentences: Sequence[DejaSentence]) -> list[dict[str, object]]:
    """A text's judged sentences as rows of :data:`SENTENCE_SCHEMA`."""
    digest = hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest()
    return [
        {
            "language": language,
            "text_md5": digest,
            "sentence": number,
            "original": sentence.text,
            "canonical": sentence.canonical,
            "nouns": NOUN_SEPARATOR.join(sentence.nouns),
            "syntax": sentence.kind,
            "words": NOUN_SEPARATOR.join(sentence.words),
            "verdict": sentence.verdict,
            "tokens": sentence.tokens,
        }
        for number, sentence in enumerate(sentences)
    ]


def judge_texts(language: str, texts: Sequence[str], tagger: Tagger, wordnet: WordNet) -> list[dict[str, object]]:
    """A batch of texts of one language, sentence by sentence, as rows of :data:`SENTENCE_SCHEMA`: the unit of
    work both engines hand their workers."""
    judged = analyse_texts(texts, tagger, wordnet)
    return [
        row for text, sentences in zip(texts, judged, strict=True) for row in sentence_rows(language, text, sentences)
    ]


def registered_domain(page: str | None, _: str | None = None) -> str | None:
    """A crawl page's user: the registered domain of its URL's host (the public suffix plus one label, by the
    Public Suffix List), or the host itself where there is none (an IP address, ``localhost``). The URL is
    normalised as image URLs are (:func:`builder.filters.images.normalize_url`), so that ``bücher.com`` and
    ``xn--bcher-kva.com`` are one user."""
    if not page:
        return None
    from urllib.parse import urlsplit

    from builder.filters.images import normalize_url

    with contextlib.suppress(ValueError):  # a URL the standard refuses: its host as written
        page = normalize_url(page)
    host = (urlsplit(page).hostname or "").rstrip(".")
    if not host:
        return None
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return _suffix_list().privatesuffix(host) or host
    return host


@functools.lru_cache(maxsize=1)
def _suffix_list():  # noqa: ANN202 - a publicsuffixlist.PublicSuffixList, built once per process
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def deja_step_names(config: PipelineConfig) -> list[str]:
    """The deja funnel's steps, in order: every sentence, §2's rules, the images bound, the users bound."""
    names = ["No filter", *DEJA_RULES, f"Images ≥ {config.min_images}"]
    if config.deja_users:
        names.append(f"Users ≥ {config.min_users}")
    if config.deja == "paracaption":
        names.append(PARACAPTION_STEP)
    if config.deja == "paraphrases":
        names.extend((VECTOR_STEP, VISUAL_STEP))
    return names


class DejaTables(Protocol):
    """Where an engine runs the graph's SQL: views ``candidates`` (the config's reference rows, as its ``select``
    kept them) and ``sentences`` (:data:`SENTENCE_SCHEMA`) to start with."""

    def table(self, name: str, query: str) -> None:
        """Make table ``name`` from ``query``."""

    def rows(self, query: str) -> list[tuple]:
        """A small result, brought to Python."""

    def function(
        self, name: str, function: Callable[[str | None, str | None], str | bytes | None], returns: str = "string"
    ) -> None:
        """A Python function of two strings that gives a string (``returns="binary"``: bytes) or null, callable
        from SQL."""

    def block_function(self, name: str, function: Callable[[pa.Array, pa.Array], pa.Array]) -> None:
        """A function of two binary columns that gives a float64 column, called on blocks of rows as Arrow arrays
        (numpy over a block, not a Python call per row), callable from SQL."""

    def split(self, name: str, query: str, key: str, column: str) -> None:
        """Make table ``name`` of ``(key, part)`` rows: one per part of each of ``query``'s ``column`` values
        cut at :data:`NOUN_SEPARATOR` (an empty value: no row)."""


class DuckDBDejaTables:
    """:class:`DejaTables` on the local engine's DuckDB connection, over its candidates and sentences files, and
    for ``deja-paraphrases`` the image index files (view ``deja_image_records``, :data:`IMAGE_RECORD_SCHEMA`)."""

    def __init__(  # noqa: ANN001 - a DuckDB connection
        self, connection, candidates: Path, sentences: Path, index_files: Sequence[Path] = ()
    ) -> None:
        self.connection = connection
        self.made: list[str] = []
        self.functions: list[str] = []
        self.views = ["candidates", "sentences"]
        if index_files:  # each record's place: its file's among the build's, and its row in the file
            order = pa.table({"filename": [str(file) for file in index_files], "position": range(len(index_files))})
            connection.register("deja_index_files", order)
            connection.execute(
                "CREATE OR REPLACE TEMP VIEW deja_image_records AS SELECT r.image, r.facts, f.position, "
                f"r.file_row_number AS record FROM read_parquet({sql_list(index_files)}, filename = true, "
                "file_row_number = true) r JOIN deja_index_files f ON r.filename = f.filename"
            )
            self.views.append("deja_image_records")
        connection.execute(
            f"CREATE OR REPLACE TEMP VIEW candidates AS SELECT * FROM read_parquet({sql_list([candidates])})"
        )
        connection.execute(
            f"CREATE OR REPLACE TEMP VIEW sentences AS SELECT * FROM read_parquet({sql_list([sentences])})"
        )

    def table(self, name: str, query: str) -> None:
        self.connection.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {query}")
        self.made.append(name)

    def rows(self, query: str) -> list[tuple]:
        return self.connection.execute(query).fetchall()

    def function(
        self, name: str, function: Callable[[str | None, str | None], str | bytes | None], returns: str = "string"
    ) -> None:
        result = {"string": "VARCHAR", "binary": "BLOB"}[returns]
        self.connection.create_function(
            name, function, ["VARCHAR", "VARCHAR"], result, null_handling="special", side_effects=False
        )
        self.functions.append(name)

    def block_function(self, name: str, function: Callable[[pa.Array, pa.Array], pa.Array]) -> None:
        self.connection.create_function(
            name, function, ["BLOB", "BLOB"], "DOUBLE", type="arrow", null_handling="special", side_effects=False
        )
        self.functions.append(name)

    def split(self, name: str, query: str, key: str, column: str) -> None:
        self.table(
            name,
            f"SELECT {key}, unnest(string_split({column}, '{NOUN_SEPARATOR}')) AS part FROM ({query}) q "
            f"WHERE {column} <> ''",
        )

    def close(self) -> None:
        for name in reversed(self.made):
            self.connection.execute(f"DROP TABLE IF EXISTS {name}")
        for view in self.views:
            self.connection.execute(f"DROP VIEW IF EXISTS {view}")
        if "deja_image_records" in self.views:
            self.connection.unregister("deja_index_files")
        for name in self.functions:
            self.connection.remove_function(name)


@dataclasses.dataclass
class DejaGraph:
    """What the graph stage computed for one config: its funnel rows, the query of its output rows (ordered by
    caption and image), and the statistics of the paper's Tables 1, 2 and 5 for the card and funnel.json."""

    funnel: list[FunnelRow]
    rows_query: str
    statistics: dict[str, object]


def _occurrences(config: PipelineConfig) -> str:
    """Every sentence of every text of the config's records, with its reference's provenance and user (a dataset's
    sample with an empty user has none)."""
    if config.dataset:  # a sample's user, null for none (builder.sources.captions.user_value reads a blank so)
        writer = "c.user" if config.deja_users else "CAST(NULL AS STRING)"
    else:
        writer = "u.writer" if config.web else "c.page"
    users = "LEFT JOIN deja_users u ON c.page = u.page" if config.web and not config.dataset else ""
    reference = "concat_ws(chr(31), c.language, c.page, CAST(c.page_id AS STRING), CAST(c.revision_id AS STRING), "
    record, date = ("c.record", "c.date") if config.web else ("CAST(NULL AS STRING)", "CAST(NULL AS STRING)")
    reference += f"CAST(c.position AS STRING), c.file, coalesce({record}, ''))"
    columns = (
        f"c.image, c.file, c.page, c.page_id, c.revision_id, c.position, c.source, c.language, {record} AS record, "
        f"{date} AS warc_date, {writer} AS writer, {reference} AS reference"
    )
    texts = (
        f"SELECT {columns}, 'caption' AS kind, md5(c.caption) AS text_md5 FROM candidates c {users} "
        f"WHERE c.caption <> '' UNION ALL SELECT {columns}, 'alt' AS kind, md5(c.alt) AS text_md5 FROM candidates c "
        f"{users} WHERE c.alt <> ''"
    )
    rules = " ".join(f"WHEN '{rule}' THEN {number}" for number, rule in enumerate(DEJA_RULES))
    return (
        "SELECT t.*, s.sentence, s.original, s.canonical, s.nouns, s.syntax, s.words, s.tokens, "
        f"CASE s.verdict {rules} ELSE {len(DEJA_RULES)} END AS ruled "
        f"FROM ({texts}) t JOIN sentences s ON s.language = t.language AND s.text_md5 = t.text_md5"
    )


def deja_graph(config: PipelineConfig, tables: DejaTables) -> DejaGraph:
    """The graph of one deja config on the engine's tables: occurrences, their levels, the funnel, the rows."""
    if config.web and not config.dataset:
        tables.function("deja_user", registered_domain)
        tables.table(
            "deja_users",
            "SELECT page, deja_user(page, CAST(NULL AS STRING)) AS writer "
            "FROM (SELECT DISTINCT page FROM candidates) p",
        )
    tables.table("deja_occurrences", _occurrences(config))
    kept = len(DEJA_RULES)  # the level of an occurrence every rule kept
    tables.table(
        "deja_repeated",
        "SELECT canonical, count(DISTINCT image) AS images, count(DISTINCT writer) AS users "
        f"FROM deja_occurrences WHERE ruled = {kept} GROUP BY canonical",
    )
    users_rule = f"WHEN r.users < {config.min_users} THEN {kept + 1} " if config.deja_users else ""
    top = kept + 2 if config.deja_users else kept + 1
    tables.table(
        "deja_levels",
        f"SELECT o.*, CASE WHEN o.ruled < {kept} THEN o.ruled WHEN r.images < {config.min_images} THEN {kept} "
        f"{users_rule}ELSE {top} END AS level, r.images AS caption_images, r.users AS caption_users "
        "FROM deja_occurrences o LEFT JOIN deja_repeated r ON o.canonical = r.canonical AND o.ruled = "
        f"{kept}",
    )
    names = [name for name in deja_step_names(config) if name not in PAIRING_STEPS]  # the graph's own steps
    funnel = _funnel(tables, names)
    users = "caption_users" if config.deja_users else "CAST(NULL AS BIGINT)"
    tables.table(
        "deja_edges",
        "SELECT canonical, image, original AS text, file, page, writer, source, kind, language, revision_id, "
        "position, record, warc_date, syntax, nouns, words, tokens, caption_images AS images, "
        f"{users} AS users, occurrences FROM ("
        f"SELECT *, row_number() OVER (PARTITION BY canonical, image ORDER BY {_FIRST}) AS nth, "
        "count(*) OVER (PARTITION BY canonical, image) AS occurrences "
        f"FROM deja_levels WHERE level = {top}) e WHERE nth = 1",
    )
    statistics = _statistics(tables)
    rows_query = "SELECT * FROM deja_edges ORDER BY canonical, image"
    return DejaGraph(funnel, rows_query, statistics)


def _funnel(tables: DejaTables, names: Sequence[str]) -> list[FunnelRow]:
    """Each step's row: the images, records and captions (canonical forms) its occurrences hold, and its edges."""
    steps = range(len(names))
    counts = ", ".join(
        f"count(DISTINCT CASE WHEN level >= {step} THEN image END), "
        f"count(DISTINCT CASE WHEN level >= {step} THEN reference END), "
        f"count(DISTINCT CASE WHEN level >= {step} THEN canonical END), "
        f"count(DISTINCT CASE WHEN level >= {step} THEN concat(canonical, chr(31), image) END)"
        for step in steps
    )
    totals = tables.rows(f"SELECT {counts} FROM deja_levels")[0]
    per_image = ", ".join(f"count(DISTINCT CASE WHEN level >= {step} THEN reference END) AS r{step}" for step in steps)
    bounds = ", ".join(
        f"sum(CASE WHEN r{step} >= 2 THEN 1 ELSE 0 END), sum(CASE WHEN r{step} >= 5 THEN 1 ELSE 0 END)"
        for step in steps
    )
    spread = tables.rows(f"SELECT {bounds} FROM (SELECT image, {per_image} FROM deja_levels GROUP BY image) g")[0]
    rows = []
    for step, name in zip(steps, names, strict=True):
        images, references, captions, edges = (int(value or 0) for value in totals[4 * step : 4 * step + 4])
        ge2, ge5 = (int(value or 0) for value in spread[2 * step : 2 * step + 2])
        rows.append(FunnelRow(step, name, images, references, captions, edges, ge2, ge5))
    return rows


def _statistics(tables: DejaTables) -> dict[str, object]:
    """Tables 1, 2 and 5 of the paper over the kept edges: small histograms and tops, brought to the driver."""
    tables.table(
        "deja_captions",
        "SELECT canonical, max(images) AS images, min_by(tokens, image) AS tokens, min_by(syntax, image) AS syntax, "
        "min_by(text, image) AS text, min_by(words, image) AS words, min_by(nouns, image) AS nouns "
        "FROM deja_edges GROUP BY canonical",
    )
    (captions, images) = tables.rows(
        "SELECT count(*), (SELECT count(DISTINCT image) FROM deja_edges) FROM deja_captions"
    )[0]
    per_caption = dict(tables.rows("SELECT images, count(*) FROM deja_captions GROUP BY images"))
    tokens = dict(tables.rows("SELECT tokens, count(*) FROM deja_captions GROUP BY tokens"))
    # one query per column of Table 5 for the three kinds at once (on Spark each query is a job or more); the mean
    # and deviation computed here from exact counts, the same in every engine whatever its partitions' order
    histograms: dict[str, dict[int, int]] = {}
    for kind, value, count in tables.rows("SELECT syntax, images, count(*) FROM deja_captions GROUP BY syntax, images"):
        histograms.setdefault(kind, {})[int(value)] = int(count)
    kind_images = dict(tables.rows("SELECT syntax, count(DISTINCT image) FROM deja_edges GROUP BY syntax"))
    top_captions: dict[str, list[list]] = {}
    for kind, text, n in tables.rows(
        "SELECT syntax, text, images FROM (SELECT syntax, text, images, row_number() OVER (PARTITION BY syntax "
        "ORDER BY images DESC, canonical) AS nth FROM deja_captions) t WHERE nth <= 5 ORDER BY syntax, nth"
    ):
        top_captions.setdefault(kind, []).append([text, int(n)])
    words = _top_words(tables)
    kinds = {}
    for kind in SYNTAX_KINDS:
        count, mean, deviation = _spread(histograms.get(kind, {}))
        seen = int(kind_images.get(kind, 0))
        kinds[kind] = {
            "captions": count,
            "images": seen,
            "captions_share": count / captions if captions else None,
            "images_share": seen / images if images else None,
            "mean_images": mean,
            "std_images": deviation,
            "top_words": [[word, int(n)] for word, n in words.get(kind, [])],
            "top_captions": top_captions.get(kind, []),
        }
    return {
        "captions": int(captions),
        "images": int(images),
        "images_per_caption": describe(per_caption),
        "tokens_per_caption": describe(tokens),
        "syntax": kinds,
    }


def _spread(histogram: Mapping[int, int], ddof: int = 0) -> tuple[int, float | None, float | None]:
    """How many values a histogram (value → how many) holds, their mean and standard deviation (``ddof`` 0: the
    population's, as Table 5's; 1: the sample's, as Table 2's, pandas' ``describe``), from exact counts so that
    every engine gives the same floats."""
    total = sum(histogram.values())
    if not total:
        return 0, None, None
    mean = math.fsum(value * count for value, count in histogram.items()) / total
    squares = math.fsum(count * (value - mean) ** 2 for value, count in histogram.items())
    return total, mean, math.sqrt(squares / (total - ddof)) if total > ddof else 0.0


def _top_words(tables: DejaTables) -> dict[str, list[tuple[str, int]]]:
    """Each syntax kind's words in the most captions (Table 5's left column), counted in Python from the
    distinct word lists, which are few (one per caption at most)."""
    counted: dict[str, dict[str, int]] = {}
    for kind, words, captions in tables.rows(
        "SELECT syntax, words, count(*) FROM deja_captions WHERE words <> '' GROUP BY syntax, words"
    ):
        own = counted.setdefault(kind, {})
        for word in set(words.split(NOUN_SEPARATOR)):
            own[word] = own.get(word, 0) + int(captions)
    return {kind: sorted(own.items(), key=lambda item: (-item[1], item[0]))[:10] for kind, own in counted.items()}


def describe(histogram: Mapping[int, int]) -> dict[str, float | int | None]:
    """Table 2's columns of a histogram (value → how many captions): mean, std, 25%, 50%, 75%, max; percentiles
    interpolated linearly between the sorted values, as numpy's and pandas' defaults do."""
    total, mean, deviation = _spread(histogram, ddof=1)
    if not total:
        return {"mean": None, "std": None, "25%": None, "50%": None, "75%": None, "max": None}
    values = sorted(histogram.items())

    def at(position: int) -> int:
        seen = 0
        for value, count in values:
            seen += count
            if position < seen:
                return value
        return values[-1][0]

    def percentile(share: float) -> float:
        rank = share * (total - 1)
        low = math.floor(rank)
        return at(low) + (at(min(low + 1, total - 1)) - at(low)) * (rank - low)

    return {
        "mean": mean,
        "std": deviation,
        "25%": percentile(0.25),
        "50%": percentile(0.5),
        "75%": percentile(0.75),
        "max": values[-1][0],
    }


def output_row(row: Mapping[str, object]) -> dict[str, object]:
    """An edge of the ``deja_edges`` table as a published row (:data:`DEJA_ROW_SCHEMA`)."""
    key = f"{row['canonical']}\x1f{row['image']}"
    nouns = str(row["nouns"] or "")
    return {
        "id": hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest(),
        "canonical": row["canonical"],
        "text": row["text"],
        "image": row["image"],
        "file": row["file"],
        "page": row["page"],
        "user": row["writer"],
        "source": row["source"],
        "kind": row["kind"],
        "language": row["language"],
        "revision": row["revision_id"],
        "position": row["position"],
        "record": row["record"],
        "date": row["warc_date"],
        "syntax": row["syntax"],
        "nouns": nouns.split(NOUN_SEPARATOR) if nouns else [],
        "tokens": row["tokens"],
        "images": row["images"],
        "users": row["users"],
        "occurrences": row["occurrences"],
    }
