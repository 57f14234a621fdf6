"""A Spark build too small for the cluster runs as one task (:mod:`builder.engines.spark.one_task`): the local engine's
files, its report and its errors, from one Spark job; and which inputs qualify."""

from __future__ import annotations

import dataclasses
import gzip
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from test_spark import local_sample, same_output  # noqa: F401 - local_sample is a fixture

import wikipedia_ipc
from benchmarks.web_crawl import write_repeated_captions_crawl, write_shared_images_crawl
from builder.config import (
    BRONZE,
    CAPTIONS,
    CROSSLINGUAL,
    DEJA,
    DEJA_PARACAPTION,
    DEJA_PARAPHRASES,
    GOLD,
    REFERENCES,
    SILVER,
    WEB,
    BuildOptions,
    PipelineConfig,
)
from builder.engines.local import build
from builder.engines.spark.one_task import _portable_error, one_task_input
from builder.lang.dumps import given_language, language_overrides

EIGHT_MIB = 8 * 2**20
ROOT = Path(wikipedia_ipc.__file__).resolve().parent
MINIDUMPS = ROOT / "tests" / "data" / "minidumps"
HISTORY = wikipedia_ipc.SAMPLE_DUMP.with_name("enwiki-20240101-sample-pages-meta-history.xml.bz2")


def test_a_small_build_is_one_spark_job_with_the_local_engines_files(spark, tmp_path: Path, local_sample: Path) -> None:  # noqa: F811
    """Gold and silver of the sample in one job; the files, the funnels and the report's counts as the local
    engine gives them (its chains rebuilt on the driver from each config and funnel)."""
    from builder.engines.spark import build_spark

    context = spark.sparkContext
    context.setJobGroup("one-task", "one-task")
    try:
        report = build_spark(
            [wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path / "spark", tagger="perceptron", workers=2,
            spark=spark, spark_one_task_bytes=EIGHT_MIB, show_progress=False,
        )  # fmt: skip
        jobs = context.statusTracker().getJobIdsForGroup("one-task")
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert len(jobs) == 1
    for config in ("gold", "silver"):
        same_output(local_sample, tmp_path / "spark", config)
    local = build([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path / "local", tagger="perceptron",
                  show_progress=False)  # fmt: skip
    assert report.rows == local.rows and report.rows["silver"] > 0
    assert report.splits == local.splits
    for name, chain in local.funnels.items():
        assert [vars(row) for row in report.funnels[name].funnel.rows] == [vars(row) for row in chain.funnel.rows]
        assert report.funnels[name].steps[0].row is report.funnels[name].funnel.rows[0]  # the steps count there
    assert report.output == (tmp_path / "spark").resolve()


def test_a_small_builds_error_is_the_local_engines(spark, tmp_path: Path) -> None:
    """A dump that is not a dump stops the one-task build with the error the local engine gives, raised on the
    driver (not Spark's wrapping of a task's failure), and leaves no output behind."""
    from builder.engines.spark import build_spark

    broken = tmp_path / "enwiki-20240101-pages-articles.xml.bz2"
    broken.write_bytes(b"BZh91AY&SY" + b"\0" * 64)  # a bz2 header and nothing a reader can decompress
    with pytest.raises(Exception) as local:  # noqa: PT011 - whatever the local engine raises
        build([broken], [GOLD], tmp_path / "local", tagger="perceptron", show_progress=False)
    with pytest.raises(type(local.value), match=re.escape(str(local.value))):
        build_spark([broken], [GOLD], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark,
                    spark_one_task_bytes=EIGHT_MIB, show_progress=False)  # fmt: skip
    assert not (tmp_path / "spark" / "gold").exists()


def test_which_inputs_run_as_one_task(tmp_path: Path) -> None:
    """Local files within the bound, the tables they name counted too; a URL, a listing, a folder, a tagger object
    or a bound of 0 spread the build."""
    dump = wikipedia_ipc.SAMPLE_DUMP
    size = dump.stat().st_size
    table = tmp_path / "enwiki-image.sql.gz"
    table.write_bytes(gzip.compress(b"-- an image table\n"))
    options = BuildOptions(spark_one_task_bytes=EIGHT_MIB)
    assert one_task_input([dump], options) == size
    assert one_task_input([dump], dataclasses.replace(options, image_tables=(table,))) == size + table.stat().st_size
    assert one_task_input([dump, dump], dataclasses.replace(options, spark_one_task_bytes=2 * size)) == 2 * size
    assert one_task_input([dump, dump], dataclasses.replace(options, spark_one_task_bytes=2 * size - 1)) is None
    assert one_task_input([dump], dataclasses.replace(options, spark_one_task_bytes=0)) is None
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress(b"crawl-data/x.warc.gz\n"))
    for spread in ([f"s3://bucket/{dump.name}"], [listing], [tmp_path], [tmp_path / "missing.xml.bz2"], []):
        assert one_task_input(spread, options) is None
    tagger = build  # any object that is not a tagger's name
    assert one_task_input([dump], dataclasses.replace(options, tagger=tagger)) is None  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="spark_one_task_bytes must be 0 or more, not -1"):
        BuildOptions(spark_one_task_bytes=-1)


class _TwoArguments(Exception):
    """An error whose pickle does not come back: its ``__init__`` wants two arguments, its ``args`` hold one."""

    def __init__(self, file: str, line: int) -> None:
        super().__init__(f"{file}:{line}: broken")


def test_an_error_that_does_not_survive_pickling_keeps_its_type_and_message() -> None:
    assert isinstance(_portable_error(ValueError("x")), ValueError)
    crossed = _portable_error(_TwoArguments("dump.xml", 7))
    assert type(crossed) is RuntimeError
    assert str(crossed) == "_TwoArguments: dump.xml:7: broken"


# ---- every config family through the one-task path, its paths spelled as a user types them (round six, item 9) ----


def _captions_folder(folder: Path) -> list[Path]:
    from test_captions_build import CAPTIONED
    from test_img2dataset import write_img2dataset

    write_img2dataset(folder / "dataset", "files", CAPTIONED)
    return [folder / "dataset"]


# a family: its inputs (written into a folder, or the repository's own), its configs, the language of each input
# (None: as its <dbname> says); the one-task path reads files, so a folder (captions) is spread whatever its size
FAMILIES: dict[str, tuple[Callable[[Path], list[Path]], tuple[PipelineConfig, ...], tuple[str, ...] | None]] = {
    "dump": (lambda _: [wikipedia_ipc.SAMPLE_DUMP], (GOLD, SILVER, REFERENCES, DEJA, DEJA_PARACAPTION), None),
    "history": (lambda _: [HISTORY], (BRONZE, REFERENCES), None),
    "crosslingual": (
        lambda _: [MINIDUMPS / "de" / "wiki.xml.bz2", MINIDUMPS / "en" / "wiki.xml.bz2"],
        (dataclasses.replace(CROSSLINGUAL, caption_rule="none", splits=()),),
        ("de", "en"),
    ),
    "web": (
        lambda folder: [write_shared_images_crawl(folder / "shared.warc.gz")],
        (dataclasses.replace(WEB, equivalence="phash", splits=(), set_size_z=0.05), REFERENCES),
        None,
    ),
    "deja": (
        lambda folder: [write_repeated_captions_crawl(folder / "repeated.warc.gz")],
        (DEJA, DEJA_PARACAPTION, DEJA_PARAPHRASES),
        None,
    ),
    "captions": (_captions_folder, (dataclasses.replace(CAPTIONS, splits=()),), None),
}
# each family with its paths relative to the working folder and absolute; the cross-lingual build (whose
# ``--language`` names its dumps) also with each dump's language keyed by another spelling than the dump's
SPELLED = [(family, spelling) for family in FAMILIES for spelling in ("relative", "absolute")]
SPELLED.append(("crosslingual", "mixed"))


def spelled(path: Path, spelling: str) -> str:
    """``path`` as given from the repository's root, the working folder of these tests: relative (``tests/data/…``,
    or ``../../tmp/…`` for a file written by the test) or absolute."""
    return os.path.relpath(path, ROOT) if spelling == "relative" else str(path.resolve())


@pytest.fixture(scope="module")
def family_builds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[list[Path], object, Path]]:
    """A family's inputs and the local engine's build of them (absolute paths), made once per module."""
    made: dict[str, tuple[list[Path], object, Path]] = {}

    def of(family: str) -> tuple[list[Path], object, Path]:
        if family not in made:
            write, configs, codes = FAMILIES[family]
            folder = tmp_path_factory.mktemp(f"one-task-{family}")
            inputs = write(folder)
            languages = dict(zip(map(str, inputs), codes, strict=True)) if codes else None
            report = build(inputs, list(configs), folder / "local", tagger="perceptron", languages=languages,
                           show_progress=False)  # fmt: skip
            made[family] = (inputs, report, folder / "local")
        return made[family]

    return of


@pytest.mark.parametrize(("family", "spelling"), SPELLED)
def test_the_one_task_path_reads_every_spelling_of_its_paths(
    spark, family: str, spelling: str, family_builds, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    perceptron_available: None,
) -> None:  # fmt: skip
    """From the repository's root, the inputs, the output and the ``--language`` of each dump spelled relative or
    absolute: the local engine's files, in one Spark job (a folder: spread, the same files). A relative
    ``--language`` once named no dump of the one task, which makes its dumps absolute (round six, item 9)."""
    from builder.engines.spark import build_spark

    inputs, local, local_output = family_builds(family)
    monkeypatch.chdir(ROOT)
    given = [spelled(path, "relative" if spelling == "mixed" else spelling) for path in inputs]
    codes = FAMILIES[family][2]
    languages = None
    if codes and spelling == "mixed":  # ./tests/data/… for the first dump, the absolute path for the second
        languages = {"./" + spelled(inputs[0], "relative"): codes[0], spelled(inputs[1], "absolute"): codes[1]}
    elif codes:
        languages = dict(zip(given, codes, strict=True))
    output = spelled(tmp_path / "spark", "absolute" if spelling == "absolute" else "relative")
    options = BuildOptions(tagger="perceptron", workers=2, languages=languages, spark_one_task_bytes=EIGHT_MIB,
                           show_progress=False)  # fmt: skip
    one_task = one_task_input(given, options) is not None
    assert one_task == (family != "captions")
    context, group = spark.sparkContext, f"spelled-{family}-{spelling}"  # a group's jobs are the session's
    context.setJobGroup(group, group)
    try:
        report = build_spark(given, list(FAMILIES[family][1]), output, options, spark=spark)
        jobs = context.statusTracker().getJobIdsForGroup(group)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert (len(jobs) == 1) == one_task
    assert report.rows == local.rows and any(report.rows.values()), report.rows
    for config in report.rows:
        same_output(local_output, tmp_path / "spark", config)
    assert report.output == Path(output)  # as given, as the local engine's report names it


def test_a_language_is_keyed_by_the_file_however_it_is_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--language`` per dump finds its dump spelled relative, ``./``, absolute or through a link; two languages
    for one file, or one for a file the build does not read, stop the build."""
    monkeypatch.chdir(tmp_path)
    dump = tmp_path / "dewiki.xml.bz2"
    dump.write_bytes(b"")
    (tmp_path / "linked.xml.bz2").symlink_to(dump)
    spellings = ["dewiki.xml.bz2", "./dewiki.xml.bz2", str(dump), "linked.xml.bz2"]
    spellings.append(f"../{tmp_path.name}/dewiki.xml.bz2")
    for key in spellings:
        for dump_as_given in spellings:
            given = language_overrides([dump_as_given], {key: "de"})
            assert given_language(given, dump_as_given) == "de", (key, dump_as_given)
    assert given_language(language_overrides(["dewiki.xml.bz2"], "de"), str(dump)) == "de"
    with pytest.raises(ValueError, match="dewiki.xml.bz2 is given two languages, de and fr"):
        language_overrides(["dewiki.xml.bz2"], {"dewiki.xml.bz2": "de", "./dewiki.xml.bz2": "fr"})
    with pytest.raises(ValueError, match="a language is given for other.xml.bz2, which is not among the dumps"):
        language_overrides(["dewiki.xml.bz2"], {"other.xml.bz2": "de"})
