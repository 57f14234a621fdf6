"""Déjà's graph and PARAcaption over real caption files, as a dataset build's records (no users), for the tests and
for a Déjà row in the corpus comparison (Table 7).

The real excerpts of ``tests/data/deja/`` (COCO 2017 validation, Flickr8k, Conceptual Captions validation: every
caption each whole file repeats across images, and some others; their README) have no pixels in the repository, so
they cannot be built as an img2dataset folder; this runs the engines' SQL (:mod:`builder.filters.repetition`,
:mod:`builder.filters.situated`) on them in DuckDB as the local engine does. ``main`` writes the PARAcaption pairs
of the three files as one TSV of ``sentence1``, ``sentence2`` for ``benchmarks/compare.py --corpus deja=FILE``::

    python benchmarks/deja_corpus.py [--output comparison/deja-paracaption.tsv]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from builder.config import DATASET_SOURCES, DEJA  # noqa: E402
from builder.filters.repetition import DEJA_CANDIDATE_SCHEMA, SENTENCE_SCHEMA, DuckDBDejaTables, deja_graph, judge_texts  # noqa: E402
from builder.filters.situated import paracaption, paracaption_row  # noqa: E402
from builder.filters.tagging import get_tagger  # noqa: E402
from builder.lang.wordnet import load_wordnet  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "deja"
FILES = ("coco", "flickr8k", "conceptual_captions")


def caption_rows(name: str) -> list[tuple[str, str]]:
    """(image, caption) of a real excerpt of tests/data/deja/."""
    folder = DATA
    if name == "coco":
        data = json.loads((folder / "coco" / "captions_val2017.json").read_text())
        return [(str(a["image_id"]), a["caption"]) for a in data["annotations"]]
    if name == "flickr8k":
        lines = (folder / "flickr8k" / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines()
        return [(line.split("\t")[0].split("#")[0], line.split("\t")[1]) for line in lines if line]
    with (folder / "conceptual_captions" / "Validation_GCC-1.1.0-Validation.tsv").open(encoding="utf-8") as stream:
        return [(url, caption) for caption, url in csv.reader(stream, delimiter="\t", quoting=csv.QUOTE_NONE)]


def dataset_graph(
    pairs: list[tuple[str, str]],
    folder: Path,
    paraphrases: bool = False,
    numbers: list[int] | None = None,
    spark=None,  # noqa: ANN001 - a SparkSession
) -> tuple[list, list[dict], dict]:
    """The engines' graph over image–caption rows as a dataset build's records, in their order, each numbered (its
    page id and record) by ``numbers`` (else its place): funnel, edges (with ``paraphrases``: PARAcaption's pairs
    and its funnel row last), statistics; on DuckDB as the local engine runs it, or on Spark SQL where a session is
    given."""
    config = dataclasses.replace(DEJA, dump_kind="dataset", sources=DATASET_SOURCES)
    numbered = zip(numbers or range(len(pairs)), pairs, strict=True)
    candidates = [
        {"image": image, "file": image, "page": image, "page_id": n, "revision_id": 0, "position": 0,
         "source": "tsv", "language": "en", "caption": caption, "alt": "", "record": str(n), "date": None}
        for n, (image, caption) in numbered
    ]  # fmt: skip
    texts = sorted({caption for _, caption in pairs})
    judged = judge_texts("en", texts, get_tagger("perceptron", "en"), load_wordnet())
    if spark is not None:
        from builder.engines.spark.sql import SparkTables, spark_schema

        tables = SparkTables(spark)
        rows = [tuple(row.get(c) for c in DEJA_CANDIDATE_SCHEMA.names) for row in candidates]
        tables.source("candidates", spark.sparkContext.parallelize(rows, 2), DEJA_CANDIDATE_SCHEMA)
        sentences = [tuple(row[c] for c in SENTENCE_SCHEMA.names) for row in judged]
        tables.frame("sentences", spark.createDataFrame(sentences, spark_schema(SENTENCE_SCHEMA)))
    else:
        pq.write_table(pa.Table.from_pylist(candidates, schema=DEJA_CANDIDATE_SCHEMA), folder / "candidates.parquet")
        pq.write_table(pa.Table.from_pylist(judged, schema=SENTENCE_SCHEMA), folder / "sentences.parquet")
        connection = duckdb.connect()
        tables = DuckDBDejaTables(connection, folder / "candidates.parquet", folder / "sentences.parquet")
    graph = deja_graph(config, tables)
    query, convert = graph.rows_query, dict
    if paraphrases:
        row, query = paracaption(tables)
        graph.funnel.append(row)
        convert = paracaption_row
    if spark is not None:
        found = [convert(row.asDict()) for row in spark.sql(query).collect()]
    else:
        result = connection.execute(query)
        names = [column[0] for column in result.description]
        found = [convert(dict(zip(names, values, strict=True))) for values in result.fetchall()]
    tables.close()
    return graph.funnel, found, graph.statistics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=Path("comparison") / "deja-paracaption.tsv")
    arguments = parser.parse_args(argv)
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with (
        tempfile.TemporaryDirectory(prefix="wikipedia-ipc-deja-corpus-") as scratch,
        arguments.output.open("w", encoding="utf-8", newline="") as stream,
    ):
        writer = csv.writer(stream, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writerow(["sentence1", "sentence2", "source"])
        for name in FILES:
            folder = Path(scratch) / name
            folder.mkdir()
            funnel, pairs, statistics = dataset_graph(caption_rows(name), folder, paraphrases=True)
            for pair in pairs:
                writer.writerow([pair["sentence1"], pair["sentence2"], name])
            written += len(pairs)
            print(
                f"{name}: {statistics['captions']:,} captions kept on {statistics['images']:,} images, "
                f"{len(pairs):,} PARAcaption pairs"
            )
    print(f"wrote {written:,} pairs to {arguments.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
