"""Wikipedia-IPC: mine paraphrase pairs from Wikipedia image captions.

Two ways in:

* the command line, which writes a Hub-ready dataset folder::

      python wikipedia_ipc.py build [DUMP ...] --configs gold silver --output wikipedia_ipc

  and then ``datasets.load_dataset("wikipedia_ipc", "gold")``;
* the ``datasets`` builder :class:`WikipediaIPC`, for code that wants a
  ``Dataset`` straight from a dump::

      WikipediaIPC(config_name="gold", dump_paths=[...]).download_and_prepare()

With no dump given, both use the small sample dump that ships with the package.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import datasets
import pyarrow.parquet as pq

from builder.config import PRESETS, SOURCES, PipelineConfig, preset
from builder.dump import DumpError
from builder.local import build, default_workers
from builder.tagging import TaggerUnavailable

SAMPLE_DUMP = Path(__file__).resolve().parent / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2"

_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "image": datasets.Value("string"),
        "caption_type": datasets.Value("string"),
        "sentence1": datasets.Value("string"),
        "sentence2": datasets.Value("string"),
        "page1": datasets.Value("string"),
        "page2": datasets.Value("string"),
        "source1": datasets.Value("string"),
        "source2": datasets.Value("string"),
        "revision1": datasets.Value("int64"),
        "revision2": datasets.Value("int64"),
        "same_page": datasets.Value("bool"),
    }
)
_DESCRIPTION = (
    "Paraphrase candidates mined from Wikipedia image captions: captions (and alternative texts) "
    "that editors wrote for the same image on different pages (Gohsen et al., EACL 2023)."
)
_CITATION = """@inproceedings{gohsen-etal-2023-paraphrase,
  title = {Paraphrase Acquisition from Image Captions},
  author = {Gohsen, Marcel and Hagen, Matthias and Potthast, Martin and Stein, Benno},
  booktitle = {Proceedings of the 17th Conference of the European Chapter
               of the Association for Computational Linguistics},
  year = {2023},
}"""


@dataclasses.dataclass
class WikipediaIPCConfig(datasets.BuilderConfig):
    """A quality level plus where its dumps are and how to tag them."""

    pipeline: PipelineConfig | None = None
    dump_paths: Sequence[str] | None = None
    tagger: str = "auto"
    workers: int = 1


class WikipediaIPC(datasets.GeneratorBasedBuilder):
    """Builds a Wikipedia-IPC config by running the mining pipeline over dump files."""

    BUILDER_CONFIG_CLASS = WikipediaIPCConfig
    BUILDER_CONFIGS = [
        WikipediaIPCConfig(name=name, pipeline=config, description=f"Wikipedia-IPC {name} quality level")
        for name, config in PRESETS.items()
    ]
    DEFAULT_CONFIG_NAME = "gold"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=_FEATURES,
            citation=_CITATION,
            license="cc-by-sa-4.0",
        )

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        config: WikipediaIPCConfig = self.config  # type: ignore[assignment]
        dumps = [str(path) for path in (config.dump_paths or [SAMPLE_DUMP])]
        pipeline = config.pipeline or preset(config.name)
        output = Path(tempfile.mkdtemp(prefix="wikipedia-ipc-build-"))
        build(dumps, [pipeline], output, tagger=config.tagger, workers=config.workers, show_progress=False)
        files = sorted(str(path) for path in (output / pipeline.name).glob("*.parquet"))
        return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"files": files})]

    def _generate_examples(self, files: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        for file in files:
            for row in pq.read_table(file).to_pylist():
                yield row["id"], row


def _parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="wikipedia_ipc.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("build", help="mine dumps into a dataset folder")
    run.add_argument("dumps", nargs="*", help="MediaWiki XML dumps (.xml, .xml.bz2, .xml.gz); default: the sample dump")
    run.add_argument("--configs", nargs="+", default=["gold", "silver"], choices=sorted(PRESETS), help="quality levels")
    run.add_argument("--output", default="wikipedia_ipc", help="dataset folder to write (default: wikipedia_ipc)")
    run.add_argument(
        "--sources",
        nargs="+",
        choices=SOURCES,
        help="where references may come from (default: link template, as in the paper; add gallery to mine galleries)",
    )
    run.add_argument(
        "--tagger",
        default="auto",
        choices=["auto", "stanza", "perceptron"],
        help="POS tagger (auto: stanza if installed)",
    )
    run.add_argument("--workers", type=int, default=default_workers(), help="worker processes (default: CPU count)")
    run.add_argument("--work-dir", help="keep intermediate files here instead of a temporary folder")
    run.add_argument("--resume", action="store_true", help="reuse the finished dump parts in --work-dir")
    run.add_argument(
        "--engine", choices=["local", "spark"], default="local", help="local processes, or PySpark (local[N] master)"
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parse_arguments(argv)
    dumps = arguments.dumps or [str(SAMPLE_DUMP)]
    configs = [preset(name) for name in arguments.configs]
    if arguments.sources:
        configs = [dataclasses.replace(config, sources=tuple(arguments.sources)) for config in configs]
    try:
        if arguments.engine == "spark":
            from builder.spark import build_spark

            report = build_spark(dumps, configs, arguments.output, arguments.tagger, max(1, arguments.workers))
        else:
            report = build(
                dumps,
                configs,
                arguments.output,
                tagger=arguments.tagger,
                workers=max(1, arguments.workers),
                work_dir=arguments.work_dir,
                show_progress=not arguments.quiet,
                resume=arguments.resume,
            )
    except (FileNotFoundError, IsADirectoryError, ValueError, DumpError, TaggerUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    extraction = report.extraction
    print(
        f"\nRead {extraction.read.pages:,} pages ({extraction.read.skipped_redirect:,} redirects and "
        f"{extraction.read.skipped_namespace:,} pages of other namespaces skipped), found "
        f"{extraction.extract.references:,} image references in {extraction.seconds:.1f} s."
    )
    for name, chain in report.funnels.items():
        print(f"\n## {name}: {report.rows[name]:,} pairs\n")
        print(chain.funnel.markdown())
    print(f'Wrote {report.output}/ — load it with datasets.load_dataset("{report.output}", "{configs[0].name}")')
    stale = Path(datasets.config.HF_DATASETS_CACHE) / Path(report.output).name
    if stale.exists():
        print(
            f"Note: datasets keeps a cache of an earlier folder named {Path(report.output).name!r} in {stale} and "
            "would load that instead of this build; remove it first, or pass cache_dir= to load_dataset.",
            file=sys.stderr,
        )
    if extraction.failures:
        print(f"\n{len(extraction.failures)} dump part(s) failed and are missing from the output:", file=sys.stderr)
        for failure in extraction.failures:
            print(f"  {failure}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
