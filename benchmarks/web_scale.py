"""How a web build grows with the crawl: a crawl shaped like Common Crawl, built at two sizes 10× apart.

The thesis measured what a crawl holds (Table 4.1): Common Crawl 2020-16 has 67.6 billion image references on
2.8 billion pages (about 24 per page) to 8.4 billion distinct image URLs (each referenced about 8 times), and
4.3 million image payloads (one per 2,000 URLs: the crawl fetches few images); more than half of the image tags
have an alt text. :func:`write_cc_crawl` writes a crawl with that shape: each page holds a Poisson number of
``<img>`` references (mean ``--images-per-page``), each pointing to an image drawn from a Zipf law over a pool
sized so that an image is referenced ``--reuse`` times on average (the popular images of real sites, a long tail
of images used once); half the references have an alt text, one in ten is a ``<figure>`` with a caption; captions
are sentences drawn from a small grammar, so that the caption rule and the pair filters have real work; pages
carry prose to about ``--page-kb`` kB of HTML (an assumption: Table 4.1 gives no page size). The crawl is
written with warcio, gzip per record, ``--pages-per-file`` pages per WARC file (a crawl is many files, each a
task), and cached under ``benchmarks/results/web_scale/`` (same seed, same bytes).

Each size is built by each engine in a child process (the web preset, url equivalence, the perceptron tagger),
and this process samples the child's memory (PSS) every 0.1 s: the driver (the child itself) and the whole
process tree (Spark's JVM and its Python workers, the local engine's workers). For Spark it also counts what the
driver receives from the executors (``collect`` and ``toLocalIterator``: items and pickled MB). Printed per
engine and size: pages, references, distinct images, WARC MB; the stages' seconds; pages/s and MB/s per core of
the extraction; the driver's and the tree's peak memory; what reached the driver. Then each figure's growth
from one size to the other (a per-image state held in one process grows with the crawl, ×10; a bounded one
does not), per size a table of where the time goes (each stage's seconds on both engines, their ratio and Spark's
jobs per stage: :mod:`benchmarks.stage_profile`), and the projection for one Common Crawl monthly crawl on
``--cores`` cores, its arithmetic printed. With ``--repeat n`` each size is built n times per engine, the engines'
order alternating from round to round, and the figures are each engine's median run, with the spread of the rates
and of Spark's ratio to the local engine's over the rounds (this machine's speed drifts by several points between
runs: one run apiece does not tell a ratio of 0.86 from 0.9).
Usage::

    python benchmarks/web_scale.py [--pages 2000] [--factor 10] [--engines local spark] [--workers 2]
                                   [--page-kb 40] [--images-per-page 24.1] [--reuse 8.0] [--cores 1000]
                                   [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scale import DRIVER_INBOX, ratio, sampled_child  # noqa: E402
from benchmarks.stage_profile import stage_table  # noqa: E402
from benchmarks.web_crawl import WORDS, Response, image_payload, write_records  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "web_scale"
MB = 1e6
# Table 4.1, Common Crawl 2020-16
CC_PAGES = 2.8e9
CC_REFERENCES = 67_615_864_465
CC_UNIQUE = 8_419_862_945
CC_IMAGES = 4_302_467
SITE = "https://cc.example.org"
GENERATOR = 3  # the version of write_cc_crawl: a change of what it writes changes the cache's names
SUBJECTS = ("The old harbour", "A small fishing boat", "The stone bridge", "The village church", "A steam train")
VERBS = ("stands near", "was built beside", "lies below", "was painted after", "can be seen from")
PLACES = ("the river in the north of the town", "the market square in early spring", "the hill above the valley")


def caption(rng) -> str:  # noqa: ANN001 - a numpy Generator
    """A sentence of 10 to 20 words: a subject, a verb, a place and a tail of prose words."""
    tail = " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=int(rng.integers(0, 8))))
    text = f"{SUBJECTS[rng.integers(len(SUBJECTS))]} {VERBS[rng.integers(len(VERBS))]} "
    return f"{text}{PLACES[rng.integers(len(PLACES))]} {tail}".strip() + "."


def pool_size(references: int, reuse: float) -> int:
    """The Zipf pool from which ``references`` draws use ``references / reuse`` distinct images on average: the
    expected distinct count of a pool of n, the sum over images of 1 − (1 − p)^references, grows with n, so n is
    found by bisection."""
    import numpy as np

    wanted = references / reuse

    def distinct(size: int) -> float:
        weights = 1.0 / np.arange(1, size + 1, dtype=np.float64)
        return float((1.0 - np.power(1.0 - weights / weights.sum(), references)).sum())

    low, high = max(1, math.ceil(wanted)), max(2, math.ceil(wanted)) * 2
    while distinct(high) < wanted:
        low, high = high, high * 2
    while high - low > max(1, low // 1000):
        middle = (low + high) // 2
        low, high = (middle, high) if distinct(middle) < wanted else (low, middle)
    return high


def write_cc_crawl(
    folder: Path, pages: int, seed: int, per_page: float, reuse: float, page_kb: float, per_file: int
) -> dict:
    """The crawl of the module's docstring as WARC files of ``per_file`` pages each (the image payloads in the
    last), and what it holds (pages, references, distinct images)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    counts = rng.poisson(per_page, size=pages)
    pool = pool_size(int(counts.sum()), reuse)
    weights = 1.0 / np.arange(1, pool + 1, dtype=np.float64)  # Zipf, exponent 1
    cumulative = np.cumsum(weights / weights.sum())
    drawn = np.searchsorted(cumulative, rng.random(int(counts.sum())), side="right").clip(0, pool - 1)
    ranks = rng.permutation(pool)  # an image's number does not tell its popularity
    filler = " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=4000))

    def page(number: int, images: list[int]) -> bytes:
        parts = [f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {number}</title></head>']
        parts.append(f"<body><h1>Page {number}</h1>")
        for image in images:
            url = f"/media/{image % 97}/photo-{image}.jpg"
            kind = rng.random()
            captioned[0] += kind < 0.6
            if kind < 0.1:
                parts.append(f'<figure><img src="{url}"><figcaption>{caption(rng)}</figcaption></figure>')
            elif kind < 0.6:
                parts.append(f'<p><img src="{url}" alt="{caption(rng)}"></p>')
            else:
                parts.append(f'<img src="{url}" alt="">')
            start = int(rng.integers(0, len(filler) - 400))
            parts.append(f"<p>{filler[start : start + 200]}</p>")
        body = "".join(parts).encode()
        padding = max(0, int(page_kb * 1000) - len(body))
        while padding > 0:  # prose to the page size, in paragraphs
            start = int(rng.integers(0, len(filler) - 1000))
            paragraph = f"<p>{filler[start : start + min(padding, 900)]}</p>".encode()
            body += paragraph
            padding -= len(paragraph)
        return body + b"</body></html>"

    used: set[int] = set()
    captioned = [0]  # references with a figure caption or an alt text

    starts = np.concatenate([[0], np.cumsum(counts)])

    def responses(first: int, last: int):  # noqa: ANN202 - an iterator of Response
        for number in range(first, last):
            images = [int(ranks[i]) for i in drawn[starts[number] : starts[number + 1]]]
            used.update(images)
            yield Response(f"{SITE}/page/{number}.html", page(number, images))
        if last == pages:  # one payload per 2,000 image URLs, as Common Crawl 2020-16 holds (Table 4.1)
            for image in sorted(ranks[: max(1, round(pool * CC_IMAGES / CC_UNIQUE))].tolist()):
                yield Response(f"{SITE}/media/{image % 97}/photo-{image}.jpg", image_payload(image), "image/jpeg")

    folder.mkdir(parents=True)
    for number, first in enumerate(range(0, pages, per_file)):
        write_records(folder / f"cc-{number:05d}.warc.gz", responses(first, min(pages, first + per_file)))
    references = int(counts.sum())
    reuse_measured = references / max(1, len(used))
    return {
        "pages": pages,
        "references": references,
        "captioned": captioned[0],
        "images": len(used),
        "reuse": reuse_measured,
    }


# The child: one build, its stage times and counts as JSON on the last line of stdout; on Spark, what the driver
# received from the executors, counted by wrapping the two RDD methods that bring rows to it.
_CHILD = """  # run after DRIVER_INBOX
import json, sys
sys.path.insert(0, {root!r})
if {engine!r} == "spark":
    count_what_the_driver_receives()
from benchmarks.stage_profile import profile_stages, profiled
profile_stages()
from builder.config import WEB
from builder.engines.local import build
if {engine!r} == "spark":
    from builder.engines.spark import build_spark as build
report = build({crawl!r}, [WEB], {output!r}, tagger="perceptron", workers={workers}, show_progress=False)
print(json.dumps({{"seconds": report.clock.seconds(), "spans": report.clock.spans, "rows": report.rows,
                  "received": received, "profile": profiled}}))
"""


def run_build(crawl: list[Path], engine: str, workers: int) -> dict:
    """One web build in a child process, its memory sampled here."""
    with tempfile.TemporaryDirectory(prefix="wikipedia-ipc-web-scale-") as scratch:
        code = DRIVER_INBOX + _CHILD.format(
            root=str(ROOT),
            engine=engine,
            crawl=[str(file) for file in crawl],
            output=str(Path(scratch) / "out"),
            workers=workers,
        )
        returned, stdout, stderr, wall, sampler = sampled_child(code, scratch, Path(scratch))
    if returned != 0:
        raise RuntimeError(f"the {engine} build of {crawl[0].parent.name} failed ({returned}): {stderr[-2000:]}")
    result = json.loads([line for line in stdout.strip().splitlines() if line.startswith("{")][-1])
    peak = max((rss for _, rss in sampler.samples), default=0)
    stages: dict[str, int] = {}
    for name, start, end in result["spans"]:
        stages[name] = max(stages.get(name, 0), sampler.peak_between(start, end, own=True))
    result.update(wall=wall, driver_peak=sampler.own_peak, tree_peak=peak, engine=engine, workers=workers)
    result["driver_stages"] = stages
    return result


def crawl_of(pages: int, arguments: argparse.Namespace) -> tuple[list[Path], dict]:
    """The cached crawl of ``pages`` pages (written once per seed and shape): its files and what it holds."""
    shape = (
        f"v{GENERATOR}-{pages}p-{arguments.images_per_page}i-{arguments.reuse}r-{arguments.page_kb}kb"
        f"-{arguments.pages_per_file}f-s{arguments.seed}"
    )
    folder = RESULTS / f"cc-{shape}"
    facts = folder / "crawl.json"
    if not facts.exists():
        partial = folder.with_name(folder.name + ".partial")
        if partial.exists():  # a run stopped while writing: only this benchmark writes there
            shutil.rmtree(partial)
        print(f"writing {folder.name}/ …", flush=True)
        held = write_cc_crawl(
            partial,
            pages,
            arguments.seed,
            arguments.images_per_page,
            arguments.reuse,
            arguments.page_kb,
            arguments.pages_per_file,
        )
        (partial / "crawl.json").write_text(json.dumps(held))
        partial.replace(folder)
    held = json.loads(facts.read_text())
    files = sorted(folder.glob("*.warc.gz"))
    held["bytes"] = sum(file.stat().st_size for file in files)
    return files, held


def total(run: dict) -> float:
    """A run's whole build: the sum of its stages' seconds."""
    return sum(run["seconds"].values())


def alternated(engines: list[str], repeat: int) -> list[list[str]]:
    """The engines' order in each of ``repeat`` rounds, reversed every other round: a machine whose speed drifts
    during a run slows each engine as often first as second."""
    return [list(engines) if number % 2 == 0 else list(reversed(engines)) for number in range(repeat)]


def median_run(found: list[dict]) -> dict:
    """The run whose whole build is the median (the lower of the two middle ones for an even count)."""
    return sorted(found, key=total)[(len(found) - 1) // 2]


def rate_line(runs: dict[tuple[str, int], list[dict]], pages: int, workers: int) -> str:
    """Each engine's rate (pages/s per core of the whole build), with its range over the repeats; Spark's ratio to
    the local engine's of the median runs, and the range of the ratios of the runs paired by round."""
    found = {engine: runs[engine, size] for engine, size in runs if size == pages}
    rates = {engine: [pages / total(run) / workers for run in done] for engine, done in found.items()}
    middle = {engine: pages / total(median_run(done)) / workers for engine, done in found.items()}
    parts = []
    for engine, each in rates.items():
        spread = f" ({min(each):.0f}–{max(each):.0f} over {len(each)} runs)" if len(each) > 1 else ""
        parts.append(f"{engine} {middle[engine]:.0f}{spread}")
    line = ", ".join(parts)
    if len(rates) == 2:
        line += f"; Spark at {middle['spark'] / middle['local']:.2f}× the local engine's rate"
        paired = [spark / local for local, spark in zip(rates["local"], rates["spark"], strict=False)]
        if len(paired) > 1:
            line += f" (the runs paired by round: {min(paired):.2f}–{max(paired):.2f}×)"
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the smaller crawl")
    parser.add_argument("--factor", type=int, default=10, help="the larger crawl has this many times the pages")
    parser.add_argument("--engines", nargs="+", default=["local", "spark"], choices=["local", "spark"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--images-per-page", type=float, default=round(CC_REFERENCES / CC_PAGES, 1))
    parser.add_argument("--reuse", type=float, default=round(CC_REFERENCES / CC_UNIQUE, 1))
    parser.add_argument("--page-kb", type=float, default=40.0, help="HTML per page (an assumption, see the docstring)")
    parser.add_argument("--pages-per-file", type=int, default=1000, help="pages per WARC file")
    parser.add_argument("--cores", type=int, default=1000, help="cores of the cluster the projection assumes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeat", type=int, default=1, help="builds per engine and size, the engines' order alternating"
    )
    arguments = parser.parse_args(argv)

    sizes = [arguments.pages, arguments.pages * arguments.factor]
    crawls = [crawl_of(pages, arguments) for pages in sizes]
    runs: dict[tuple[str, int], list[dict]] = {}
    print(
        "| engine | run | pages | references | images (reuse) | WARC MB | extraction s | total s | pages/s/core "
        "| MB/s/core | driver peak MB | tree peak MB | to the driver |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (files, held), pages in zip(crawls, sizes, strict=True):
        for repeat, engines in enumerate(alternated(arguments.engines, arguments.repeat)):
            for engine in engines:
                run = run_build(files, engine, arguments.workers) | {"held": held}
                runs.setdefault((engine, pages), []).append(run)
                extraction = run["seconds"]["extraction"]
                per_core = pages / extraction / arguments.workers
                mb_core = held["bytes"] / MB / extraction / arguments.workers
                received = run["received"]
                to_driver = (
                    f"{received['items']:,} items, {received['bytes'] / MB:.1f} MB" if engine == "spark" else "–"
                )
                print(
                    f"| {engine} | {repeat + 1} | {pages:,} | {held['references']:,} | {held['images']:,} "
                    f"({held['reuse']:.1f}) | {held['bytes'] / MB:.1f} | {extraction:.1f} | {total(run):.1f} "
                    f"| {per_core:.0f} | {mb_core:.2f} | {run['driver_peak'] / MB:.0f} | {run['tree_peak'] / MB:.0f} "
                    f"| {to_driver} |",
                    flush=True,
                )
    results = {key: median_run(found) for key, found in runs.items()}
    for pages in sizes:
        local, spark = results.get(("local", pages)), results.get(("spark", pages))
        title = f"Where the time goes, {pages:,} pages (seconds per stage"
        title += f", each engine's median run of {arguments.repeat}):" if arguments.repeat > 1 else "):"
        print("\n" + stage_table(local, spark, title))
        print(f"\nThe whole build, pages/s per core: {rate_line(runs, pages, arguments.workers)}")
    print(f"\nGrowth from {sizes[0]:,} to {sizes[1]:,} pages (×{arguments.factor}):")
    for engine in arguments.engines:
        small, large = results[engine, sizes[0]], results[engine, sizes[1]]
        line = (
            f"- {engine}: driver peak {ratio(large['driver_peak'], small['driver_peak'])}, "
            f"tree peak {ratio(large['tree_peak'], small['tree_peak'])}, "
            f"extraction time {ratio(large['seconds']['extraction'], small['seconds']['extraction'])}"
        )
        if engine == "spark":
            line += f", to the driver {ratio(large['received']['bytes'], small['received']['bytes'])} in bytes"
        print(line)
        stages = ", ".join(
            f"{name} {small['driver_stages'][name] / MB:.0f} → {large['driver_stages'].get(name, 0) / MB:.0f} MB"
            for name in small["driver_stages"]
        )
        print(f"  the driver's peak per stage: {stages}")
    for engine in arguments.engines:
        large = results[engine, sizes[1]]
        rate = sizes[1] / total(large) / arguments.workers
        hours = CC_PAGES / (rate * arguments.cores) / 3600
        print(
            f"\nProjection, {engine}: one Common Crawl monthly crawl ({CC_PAGES:.1e} pages, Table 4.1) at "
            f"{rate:.0f} pages/s per core (the larger crawl's whole build, every stage) on {arguments.cores:,} cores: "
            f"{CC_PAGES:.1e} / ({rate:.0f} × {arguments.cores:,}) s = {hours:.1f} h. Assumed: pages of "
            f"{arguments.page_kb:g} kB of HTML shaped as above; every stage spreads over the cores as it does over "
            f"{arguments.workers} here (the driver's share is what its peak memory and what reached it show); "
            "executors read their WARC files at the rate measured here from local disk."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
