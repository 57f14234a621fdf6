"""How a captions build grows with the dataset: a Conceptual Captions–shaped dataset built at two sizes 10× apart.

Conceptual Captions' training TSV has 3,318,333 rows (caption, tab, image URL; captions of about 10 words, URLs of
about 90 characters); img2dataset downloads most of them (``--downloaded``, 0.85 by default: links rot) into shards
of ``--per-shard`` samples. :func:`write_cc_dataset` writes that shape: a TSV of ``rows`` rows (one row in a hundred
repeats an earlier URL, as the real TSV's few duplicates do) and an img2dataset folder in the webdataset layout
(``00000.tar`` with ``.jpg`` and ``.json`` per sample, ``00000.parquet`` listing every row tried, failed downloads
included), the samples without a caption of their own (img2dataset run without ``--caption_col``), so that every
caption comes from the TSV through the engine's join. Images are JPEGs of 400 × 400 to 480 × 480 pixels, one in
twenty a copy of an earlier one (so the build has pairs). The dataset is cached under
``benchmarks/results/captions_scale/`` (same seed, same bytes).

Each size is built by each engine in a child process (the ``captions`` preset, pixel equivalence), and this
process samples its memory (PSS) every 0.1 s: the driver (the child itself), the largest of its workers (the local
engine's worker processes, Spark's JVM and Python workers) and the whole tree. For Spark it also counts what the
driver receives (``collect`` and ``toLocalIterator``: pickled bytes). Printed per engine and size: TSV rows,
samples, MB read; the extraction's and the build's seconds; rows/s and MB/s per core; the peaks; then each figure's
growth, and the projection for Conceptual Captions' 3.3 million rows on ``--cores`` cores with its assumptions.
Usage::

    python benchmarks/captions_scale.py [--rows 2000] [--factor 10] [--engines local spark] [--workers 2]
                                        [--downloaded 0.85] [--per-shard 1000] [--cores 64]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scale import DRIVER_INBOX, ratio, sampled_child  # noqa: E402
from benchmarks.web_crawl import WORDS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "captions_scale"
MB = 1e6
CC_ROWS = 3_318_333  # Conceptual Captions' training TSV
GENERATOR = 1  # the version of write_cc_dataset: a change of what it writes changes the cache's names


def _caption(rng) -> str:  # noqa: ANN001 - a numpy Generator
    """About 10 words (6 to 15), as Conceptual Captions' hypernymized captions."""
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=int(rng.integers(6, 16))))


def _url(rng, number: int) -> str:  # noqa: ANN001
    """About 90 characters: a host, a path of a few segments, a file name."""
    path = "/".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=int(rng.integers(2, 6))))
    return f"https://img{number % 97}.media-cdn.example.com/{path}/{number:08d}-{int(rng.integers(1e9)):09d}.jpg"


def _jpeg(seed: int) -> bytes:
    from PIL import Image, ImageDraw

    side = 400 + seed % 81
    image = Image.new("RGB", (side, side), (seed * 37 % 256, seed * 91 % 256, seed * 13 % 256))
    draw = ImageDraw.Draw(image)
    draw.ellipse([(10 + seed % 50, 10), (200, 300)], fill=(200, 90, seed % 256))
    draw.text((20, 20), f"picture {seed}", fill=(0, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=80)
    return buffer.getvalue()


def write_cc_dataset(
    folder: Path, rows: int, seed: int, downloaded: float, per_shard: int, caption: Callable = _caption
) -> dict:
    """The dataset of the module's docstring: ``folder/images`` (webdataset layout) and ``folder/cc.tsv``;
    ``caption(rng)`` draws a row's caption (benchmarks/deja_scale.py draws captions that repeat)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    urls = [_url(rng, number) for number in range(rows)]
    for number in range(100, rows, 100):  # one row in a hundred repeats an earlier URL
        urls[number] = urls[int(rng.integers(0, number))]
    captions = [caption(rng) for _ in range(rows)]
    fetched = rng.random(rows) < downloaded
    images = folder / "images"
    images.mkdir(parents=True)
    with (folder / "cc.tsv").open("w", encoding="utf-8") as tsv:
        tsv.writelines(f"{caption}\t{url}\n" for caption, url in zip(captions, urls, strict=True))
    samples = 0
    for shard, start in enumerate(range(0, rows, per_shard)):
        metadata = []
        with tarfile.open(images / f"{shard:05d}.tar", "w") as archive:
            for index, number in enumerate(range(start, min(rows, start + per_shard))):
                key = f"{shard:05d}{index:04d}"
                ok = bool(fetched[number])
                meta = {"url": urls[number], "key": key, "status": "success" if ok else "failed_to_download"}
                metadata.append({**meta, "caption": None, "error_message": None if ok else "HTTP Error 404"})
                if not ok:
                    continue
                samples += 1
                copy = number % 20 == 19 and number > 100  # one image in twenty a copy of an earlier one
                picture = _jpeg(number - 50 if copy else number)
                for extension, payload in (("jpg", picture), ("json", json.dumps(meta).encode())):
                    info = tarfile.TarInfo(f"{key}.{extension}")
                    info.size = len(payload)
                    archive.addfile(info, io.BytesIO(payload))
        pq.write_table(pa.Table.from_pylist(metadata), images / f"{shard:05d}.parquet")
    return {"rows": rows, "samples": samples, "shards": (rows + per_shard - 1) // per_shard}


_CHILD = """  # run after DRIVER_INBOX
import json, sys
sys.path.insert(0, {root!r})
if {engine!r} == "spark":
    count_what_the_driver_receives()
from builder.config import CAPTIONS
from builder.engines.local import build
if {engine!r} == "spark":
    from builder.engines.spark import build_spark as build
report = build([{images!r}], [CAPTIONS], {output!r}, workers={workers}, show_progress=False, captions_tsv={tsv!r})
record = json.load(open({output!r} + "/captions/funnel.json"))
print(json.dumps({{"seconds": report.clock.seconds(), "spans": report.clock.spans, "rows": report.rows,
                  "received": received, "dataset": record["dataset"]}}))
"""


def run_build(dataset: Path, engine: str, workers: int, child: str = "") -> dict:
    """One build of the dataset in a child process, its memory sampled here: the captions config's, or the
    ``child`` code's (a template of the same fields)."""
    with tempfile.TemporaryDirectory(prefix="wikipedia-ipc-captions-scale-") as scratch:
        code = DRIVER_INBOX + (child or _CHILD).format(
            root=str(ROOT),
            engine=engine,
            images=str(dataset / "images"),
            tsv=str(dataset / "cc.tsv"),
            output=str(Path(scratch) / "out"),
            workers=workers,
        )
        returned, stdout, stderr, wall, sampler = sampled_child(code, scratch, Path(scratch))
    if returned != 0:
        raise RuntimeError(f"the {engine} build of {dataset.name} failed ({returned}): {stderr[-2000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result.update(
        wall=wall,
        driver_peak=sampler.own_peak,
        worker_peak=sampler.worker_peak,
        tree_peak=max((rss for _, rss in sampler.samples), default=0),
    )
    return result


def dataset_of(rows: int, arguments: argparse.Namespace) -> tuple[Path, dict]:
    """The cached dataset of ``rows`` TSV rows: its folder and what it holds (and its bytes)."""
    shape = f"v{GENERATOR}-{rows}r-{arguments.downloaded}d-{arguments.per_shard}s-s{arguments.seed}"
    folder = RESULTS / f"cc-{shape}"
    facts = folder / "dataset.json"
    if not facts.exists():
        partial = folder.with_name(folder.name + ".partial")
        if partial.exists():  # a run stopped while writing: only this benchmark writes there
            shutil.rmtree(partial)
        print(f"writing {folder.name}/ …", flush=True)
        held = write_cc_dataset(partial, rows, arguments.seed, arguments.downloaded, arguments.per_shard)
        (partial / "dataset.json").write_text(json.dumps(held))
        partial.replace(folder)
    held = json.loads(facts.read_text())
    held["tsv_bytes"] = (folder / "cc.tsv").stat().st_size
    held["bytes"] = held["tsv_bytes"] + sum(file.stat().st_size for file in (folder / "images").iterdir())
    return folder, held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000, help="TSV rows of the smaller dataset")
    parser.add_argument("--factor", type=int, default=10, help="the larger dataset has this many times the rows")
    parser.add_argument("--engines", nargs="+", default=["local"], choices=["local", "spark"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--downloaded", type=float, default=0.85, help="share of the TSV rows img2dataset fetched")
    parser.add_argument("--per-shard", type=int, default=1000, help="samples per shard (img2dataset: 10,000)")
    parser.add_argument("--cores", type=int, default=64, help="cores of the machine the projection assumes")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)

    sizes = [arguments.rows, arguments.rows * arguments.factor]
    datasets = [dataset_of(rows, arguments) for rows in sizes]
    results: dict[tuple[str, int], dict] = {}
    print(
        "| engine | TSV rows | samples | MB (TSV) | extraction s | build s | rows/s/core | MB/s/core "
        "| driver peak MB | worker peak MB | tree peak MB | to the driver |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for engine in arguments.engines:
        for (folder, held), rows in zip(datasets, sizes, strict=True):
            run = run_build(folder, engine, arguments.workers)
            results[engine, rows] = run | {"held": held}
            extraction = run["seconds"]["extraction"]
            received = run["received"]
            to_driver = f"{received['items']:,} items, {received['bytes'] / MB:.2f} MB" if engine == "spark" else "–"
            per_core = extraction * arguments.workers
            print(
                f"| {engine} | {rows:,} | {held['samples']:,} | {held['bytes'] / MB:.1f} "
                f"({held['tsv_bytes'] / MB:.1f}) "
                f"| {extraction:.1f} | {sum(run['seconds'].values()):.1f} "
                f"| {rows / per_core:.0f} | {held['bytes'] / MB / per_core:.2f} "
                f"| {run['driver_peak'] / MB:.0f} | {run['worker_peak'] / MB:.0f} | {run['tree_peak'] / MB:.0f} "
                f"| {to_driver} |",
                flush=True,
            )
            dataset = run["dataset"]
            assert (dataset["tsv_rows"], dataset["records"], dataset["images"]) == (rows, rows, held["samples"]), (
                dataset
            )
    print(f"\nGrowth from {sizes[0]:,} to {sizes[1]:,} TSV rows (×{arguments.factor}):")
    for engine in arguments.engines:
        small, large = results[engine, sizes[0]], results[engine, sizes[1]]
        line = (
            f"- {engine}: driver peak {ratio(large['driver_peak'], small['driver_peak'])}, "
            f"worker peak {ratio(large['worker_peak'], small['worker_peak'])}, "
            f"tree peak {ratio(large['tree_peak'], small['tree_peak'])}, "
            f"extraction time {ratio(large['seconds']['extraction'], small['seconds']['extraction'])}"
        )
        if engine == "spark":
            line += f", to the driver {ratio(large['received']['bytes'], small['received']['bytes'])} in bytes"
        print(line)
    for engine in arguments.engines:
        large = results[engine, sizes[1]]
        held = large["held"]
        seconds = sum(large["seconds"].values())
        rate = sizes[1] / seconds / arguments.workers
        hours = CC_ROWS / (rate * arguments.cores) / 3600
        print(
            f"\nProjection, {engine}: Conceptual Captions' {CC_ROWS:,} TSV rows at {rate:.0f} rows/s per core (the "
            f"larger dataset's whole build, every stage) on {arguments.cores:,} cores: {CC_ROWS:,} / ({rate:.0f} × "
            f"{arguments.cores:,}) s = {hours:.2f} h. Assumed: {arguments.downloaded:.0%} of the rows downloaded "
            f"({held['samples'] / sizes[1]:.0%} here), images of about 400 × 400 pixels (checking one, its MD5 and "
            "perceptual hashes, is most of the time: the rate follows the samples, not the TSV); every stage spreads "
            f"over the cores as it does over {arguments.workers} here; the shards and the TSV read from local disk."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
