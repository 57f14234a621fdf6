"""The ``datasets`` side of the toolkit: the builder :class:`WikipediaIPC`, which runs the pipeline over
dumps and hands ``datasets`` the pairs, and :func:`released_pairs` for the authors' released corpus.

Both are published as ``wikipedia_ipc.WikipediaIPC`` and ``wikipedia_ipc.released_pairs``; they live here
so that the command line starts without importing ``datasets`` (``wikipedia-ipc --help`` reads no model stack).
An interface, not an engine: beside :mod:`builder.cli` at the top of ``builder/``, the two ways in above the
engines (it runs :func:`builder.engines.local.build`, so inside :mod:`builder.publish`, below the engines, its
imports would flow upwards).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

import datasets
import pyarrow.parquet as pq
from datasets.utils.logging import is_progress_bar_enabled

from builder.config import PRESETS, PipelineConfig, preset
from builder.engines.local import build
from builder.publish.card import SAMPLE_DUMP, SAMPLE_HISTORY
from builder.publish.layout import read_built
from builder.publish.released import RELEASED_COLUMNS, released_row
from builder.publish.workdir import temporary_work_folder
from builder.sources.download import expand_dumps

__all__ = ["WikipediaIPC", "WikipediaIPCConfig", "released_pairs"]

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
        "file1": datasets.Value("string"),
        "file2": datasets.Value("string"),
        "identity": datasets.Value("string"),
    }
)
_CROSSLINGUAL_FEATURES = datasets.Features(
    {**_FEATURES, "language1": datasets.Value("string"), "language2": datasets.Value("string")}
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
    dump_paths: Sequence[str] | None = None  # dump files, or folders written by ``download``
    tagger: str = "auto"
    workers: int = 1
    image_tables: Sequence[str] = ()  # for a pipeline config with the sha1 identity
    # train/validation/test fractions, () for one train split; None keeps the preset's
    splits: tuple[float, ...] | None = None
    # the dumps' language: one code, or a code per dump path; None: each dump's <dbname> tells
    languages: str | dict[str, str] | None = None


class WikipediaIPC(datasets.GeneratorBasedBuilder):
    """Builds a Wikipedia-IPC config by running the mining pipeline over dump files."""

    # datasets names a builder, and its cache folder, after the module of its class: the public one, as before
    __module__ = "wikipedia_ipc"
    BUILDER_CONFIG_CLASS = WikipediaIPCConfig
    BUILDER_CONFIGS = [
        WikipediaIPCConfig(name=name, pipeline=config, description=f"Wikipedia-IPC {name} quality level")
        for name, config in PRESETS.items()
    ]
    DEFAULT_CONFIG_NAME = "gold"

    def _info(self) -> datasets.DatasetInfo:
        config: WikipediaIPCConfig = self.config  # type: ignore[assignment]
        pipeline = config.pipeline or preset(config.name)
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=_CROSSLINGUAL_FEATURES if pipeline.crosslingual else _FEATURES,
            citation=_CITATION,
            license="cc-by-sa-4.0",
        )

    def _download_and_prepare(
        self,
        dl_manager: datasets.DownloadManager,
        verification_mode: datasets.VerificationMode,
        **prepare_splits_kwargs: object,
    ) -> None:
        """Run the pipeline in a scratch folder that lives exactly as long as the examples are generated."""
        with temporary_work_folder("wikipedia-ipc-build-") as scratch:
            self._scratch = Path(scratch)
            super()._download_and_prepare(dl_manager, verification_mode, **prepare_splits_kwargs)

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        config: WikipediaIPCConfig = self.config  # type: ignore[assignment]
        pipeline = config.pipeline or preset(config.name)
        sample = SAMPLE_HISTORY if pipeline.dump_kind == "history" else SAMPLE_DUMP  # bronze reads the history
        dumps = expand_dumps([str(path) for path in (config.dump_paths or [sample])])
        if config.splits is not None:
            pipeline = dataclasses.replace(pipeline, splits=tuple(config.splits))
        output = self._scratch / "output"
        report = build(
            dumps,
            [pipeline],
            output,
            tagger=config.tagger,
            workers=config.workers,
            work_dir=self._scratch / "work",
            show_progress=is_progress_bar_enabled(),
            image_tables=config.image_tables,
            languages=config.languages,
        )
        if pipeline.name not in report.rows:
            raise ValueError(
                f"{pipeline.name}: the dumps are of several languages, so the build names this config per language "
                f"({', '.join(sorted(report.rows))}); build them with python wikipedia_ipc.py build and load the "
                "folder, or give dumps of one language"
            )
        if not report.rows[pipeline.name]:  # datasets cannot make a split with no rows; say why, not "no data"
            raise ValueError(f"{pipeline.name}: no pair survived the filters in {', '.join(dumps)}; nothing to load")
        generators = []
        for split, files in read_built(output)[pipeline.name].splits().items():
            chosen = [str(path) for path in files]
            if sum(pq.read_metadata(path).num_rows for path in chosen):  # a split without rows is left out
                generators.append(datasets.SplitGenerator(name=split, gen_kwargs={"files": chosen}))
        return generators

    def _generate_examples(self, files: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        for file in files:
            for row in pq.read_table(file).to_pylist():
                yield row["id"], row


_RELEASED_FEATURES = datasets.Features(
    {**{name: _FEATURES[name] for name in RELEASED_COLUMNS}, "cluster_id": datasets.Value("int64")}
)


def released_pairs(path: str | Path, cache_dir: str | None = None) -> datasets.Dataset:
    """The authors' released Wikipedia-IPC JSONL (Zenodo, doi:10.5281/zenodo.7621320) as a ``Dataset``
    with the columns a build writes, so that both load and score the same way."""
    raw = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=cache_dir)
    return raw.map(released_row, remove_columns=raw.column_names, features=_RELEASED_FEATURES)
