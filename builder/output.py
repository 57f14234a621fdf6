"""Stage 8: the Hub-ready dataset folder.

``OUT/README.md`` is the dataset card (rendered from ``dataset_card.md``) whose
YAML ``configs:`` names every built config; ``OUT/<config>/train-*.parquet``
hold the pairs and ``OUT/<config>/funnel.json`` the Table 3 counts and how the
config was built. ``datasets.load_dataset(OUT, config)`` reads it offline.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.clusters import Pair
from builder.pipeline import Funnel

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
    ]
)
CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "dataset_card.md"
ROWS_PER_SHARD = 500_000


def pair_id(pair: Pair) -> str:
    """A stable id: the same image and texts give the same id in every build."""
    key = "\x1f".join((pair.image, pair.caption_type, pair.sentence1, pair.sentence2))
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def pair_row(pair: Pair) -> dict[str, object]:
    return {
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
        "same_page": pair.first.page_id == pair.second.page_id,
    }


class PairWriter:
    """Write pairs into ``train-XXXXX-of-YYYYY.parquet`` shards of a config folder."""

    def __init__(self, folder: Path, rows_per_shard: int = ROWS_PER_SHARD, batch_size: int = 10_000) -> None:
        self.folder = folder
        self.rows_per_shard = rows_per_shard
        self.batch_size = batch_size
        self.rows = 0
        self._batch: list[dict[str, object]] = []
        self._parts: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_part = 0
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.parquet"):
            stale.unlink()

    def write(self, pairs: Iterable[Pair]) -> None:
        self.write_rows(pair_row(pair) for pair in pairs)

    def write_rows(self, rows: Iterable[dict[str, object]]) -> None:
        """Rows already made by :func:`pair_row` (engines that build them on workers)."""
        for row in rows:
            self._batch.append(row)
            if len(self._batch) >= self.batch_size:
                self._flush()

    def _flush(self) -> None:
        while self._batch:
            if self._writer is None or self._in_part >= self.rows_per_shard:
                self._open_part()
            room = self.rows_per_shard - self._in_part
            chunk, self._batch = self._batch[:room], self._batch[room:]
            self._writer.write_table(pa.Table.from_pylist(chunk, schema=PAIR_SCHEMA))  # type: ignore[union-attr]
            self._in_part += len(chunk)
            self.rows += len(chunk)

    def _open_part(self) -> None:
        if self._writer is not None:
            self._writer.close()
        part = self.folder / f"part-{len(self._parts):05d}.tmp"
        self._parts.append(part)
        self._writer = pq.ParquetWriter(part, PAIR_SCHEMA, compression="zstd")
        self._in_part = 0

    def close(self) -> list[Path]:
        """Finish the last shard and give the shards their final names."""
        self._flush()
        if self._writer is None:
            self._open_part()
        self._writer.close()  # type: ignore[union-attr]
        total = len(self._parts)
        names = []
        for index, part in enumerate(self._parts):
            name = self.folder / f"train-{index:05d}-of-{total:05d}.parquet"
            part.rename(name)
            names.append(name)
        return names


def write_funnel(folder: Path, record: dict[str, object]) -> Path:
    """``funnel.json``: the Table 3 rows and everything needed to say how the config was built."""
    path = folder / "funnel.json"
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _config_yaml(names: list[str]) -> str:
    lines = ["configs:"]
    for name in names:
        lines += [f"- config_name: {name}", "  data_files:", "  - split: train", f"    path: {name}/*.parquet"]
    return "\n".join(lines)


def _build_section(record: dict[str, object]) -> str:
    parameters = record["parameters"]
    assert isinstance(parameters, dict)
    dumps = record["dumps"]
    assert isinstance(dumps, list)
    versions = record["versions"]
    assert isinstance(versions, dict)
    dump_lines = "\n".join(
        f"  - `{dump['name']}` ({dump['dbname']}, dump date {dump['date']}, kind: {dump.get('kind', 'unknown')})"
        for dump in dumps
    )
    parameter_lines = "\n".join(f"  - `{key}`: `{value}`" for key, value in parameters.items())
    version_lines = ", ".join(f"{name} {version}" for name, version in versions.items())
    skipped = record["skipped"]
    assert isinstance(skipped, dict)
    skipped_lines = ", ".join(f"{key.replace('_', ' ')}: {value:,}" for key, value in skipped.items())
    return (
        f"### `{record['config']}` – {record['rows']:,} pairs\n\n"
        f"- Dumps:\n{dump_lines}\n"
        f"- Tagger: `{record['tagger']}`\n"
        f"- Parameters:\n{parameter_lines}\n"
        f"- Library versions: {version_lines}\n"
        f"- Skipped while reading: {skipped_lines}\n\n"
        f"{Funnel.from_list(record['funnel']).markdown()}"  # type: ignore[arg-type]
    )


def write_card(out: Path, template: Path = CARD_TEMPLATE) -> Path:
    """Render the dataset card for every config folder under ``out`` that has a funnel.json."""
    records = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(out.glob("*/funnel.json"))]
    if not records:
        raise FileNotFoundError(f"{out}: no built config (no */funnel.json) to describe")
    order = {"gold": 0, "silver": 1, "bronze": 2}
    records.sort(key=lambda record: (order.get(record["config"], 3), record["config"]))
    text = string.Template(template.read_text(encoding="utf-8")).substitute(
        configs_yaml=_config_yaml([record["config"] for record in records]),
        config_list=", ".join(f"`{record['config']}`" for record in records),
        builds="\n".join(_build_section(record) for record in records),
    )
    path = out / "README.md"
    path.write_text(text, encoding="utf-8")
    return path
