"""Score the pairs of a file or a built Wikipedia-IPC folder and write the scores back as columns.

Usage::

    python -m metrics score pairs.tsv                   # → pairs.scored.tsv
    python -m metrics score pairs.jsonl --columns a b   # → pairs.scored.jsonl
    python -m metrics score wikipedia_ipc/              # → wikipedia_ipc-scored/<config>/*.parquet

A TSV holds two text columns, with or without a header row naming the ``--columns``;
a JSONL holds one object per line with the ``--columns`` keys.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from metrics.profiles import ModelUnavailable
from metrics.scoring import score_pairs

SCORE_COLUMNS = ("rouge1", "rougeL", "bleu", "wms", "bert", "st", "syn", "sem", "delta")


class InputError(ValueError):
    """A malformed input file; the message names the file and the line."""


def read_tsv(path: Path, columns: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """Header and rows; a file without the named header gets ``columns`` as its first two names."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise InputError(f"{path}: empty file")
    header = rows[0] if all(column in rows[0] for column in columns) else None
    body = rows[1:] if header else rows
    width = len(header) if header else max(2, len(rows[0]))
    for number, row in enumerate(body, 2 if header else 1):
        if len(row) < 2 or len(row) != width:
            raise InputError(f"{path}:{number}: expected {width} tab-separated fields, found {len(row)}")
    if header is None:
        header = list(columns) + [f"column{n}" for n in range(3, width + 1)]
    return header, body


def read_jsonl(path: Path, columns: Sequence[str]) -> list[dict[str, object]]:
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{path}:{number}: not JSON ({error.msg})") from None
            missing = [column for column in columns if not isinstance(record.get(column), str)]
            if missing:
                raise InputError(f"{path}:{number}: no string field {missing[0]!r}")
            records.append(record)
    return records


def _score(first: list[str], second: list[str], arguments: argparse.Namespace) -> dict[str, object]:
    return score_pairs(
        first, second, profile=arguments.profile, batch_size=arguments.batch_size, device=arguments.device
    )


def score_file(path: Path, output: Path, arguments: argparse.Namespace) -> dict[str, object]:
    a, b = arguments.columns
    if path.suffix == ".jsonl":
        records = read_jsonl(path, arguments.columns)
        results = _score([str(r[a]) for r in records], [str(r[b]) for r in records], arguments)
        with open(output, "w", encoding="utf-8") as handle:
            for index, record in enumerate(records):
                scores = {column: results[column][index] for column in SCORE_COLUMNS}  # type: ignore[index]
                handle.write(json.dumps({**record, **scores}, ensure_ascii=False) + "\n")
        return results
    header, rows = read_tsv(path, arguments.columns)
    first, second = header.index(a), header.index(b)
    results = _score([row[first] for row in rows], [row[second] for row in rows], arguments)
    with open(output, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(header + list(SCORE_COLUMNS))
        for index, row in enumerate(rows):
            writer.writerow(row + [f"{results[column][index]:.6f}" for column in SCORE_COLUMNS])  # type: ignore[index]
    return results


def score_folder(folder: Path, output: Path, arguments: argparse.Namespace) -> dict[str, dict[str, object]]:
    """Every config of a built dataset folder, scored into the same layout under ``output``."""
    configs = sorted(path.parent for path in folder.glob("*/funnel.json"))
    if not configs:
        raise InputError(f"{folder}: not a Wikipedia-IPC folder (no */funnel.json)")
    all_results = {}
    for config in configs:
        files = sorted(config.glob("*.parquet"))
        table = pq.read_table(files)
        results = _score(table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist(), arguments)
        for column in SCORE_COLUMNS:
            table = table.append_column(column, pa.array(results[column], type=pa.float64()))  # type: ignore[arg-type]
        target = output / config.name
        target.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, target / "train-00000-of-00001.parquet", compression="zstd")
        all_results[config.name] = results
    return all_results


def _print_summary(name: str, results: dict[str, object]) -> None:
    aggregates = results["aggregates"]
    assert isinstance(aggregates, dict)
    cells = " | ".join(
        f"{measure} {aggregates[measure]['mean']:.3f}±{aggregates[measure]['std']:.3f}" for measure in SCORE_COLUMNS
    )
    print(f"{name}: {cells}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metrics", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="score a TSV, a JSONL or a built dataset folder")
    score.add_argument("input", type=Path)
    score.add_argument("--output", type=Path, help="where to write (default: beside the input, '.scored')")
    score.add_argument("--columns", nargs=2, default=["sentence1", "sentence2"], metavar=("FIRST", "SECOND"))
    score.add_argument("--profile", default="minilm", choices=["minilm", "paper"])
    score.add_argument("--batch-size", type=int, default=64)
    score.add_argument("--device")
    arguments = parser.parse_args(argv)
    source: Path = arguments.input
    try:
        if source.is_dir():
            output = arguments.output or source.with_name(source.name + "-scored")
            for name, results in score_folder(source, output, arguments).items():
                _print_summary(name, results)
        elif source.is_file():
            output = arguments.output or source.with_suffix(".scored" + source.suffix)
            results = score_file(source, output, arguments)
            _print_summary(source.name, results)
        else:
            raise InputError(f"{source}: no such file or folder")
    except (InputError, ModelUnavailable, ValueError, TypeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {output}")
    return 0
