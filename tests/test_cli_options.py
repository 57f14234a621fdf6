"""Every option of ``build`` applies whatever else is given (issue 45, items 1, 8 and 12).

The command line is mapped onto configs and build options in one place (builder/cli/options.py). Each option alone
and every pair of options, in both orders, is mapped through it for the configs of a dump build and of a web build;
each option's effect is asserted in the parameters funnel.json records (or in the BuildOptions), an option a family
does not take is refused. A few real builds of the sample check the same in the written funnel.json, and
``--workers`` is bounded by the tasks and the cores, with the same rows whatever its number.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.cli import command_parser
from builder.cli.options import build_options, dumps_and_languages, pipeline_configs, web_inputs
from builder.common import available_cores, duckdb_connection, pool_size, worker_pool
from builder.config import MAX_WORKERS, SILVER, BuildOptions, PipelineConfig, preset
from builder.engines.local import build, run_tasks
from wikipedia_ipc import SAMPLE_DUMP, main

ROOT = Path(__file__).resolve().parent.parent
# the configs of a build of MediaWiki dumps, and of one of crawls or an image–caption dataset
FAMILIES = {
    "dump": ["gold", "silver", "bronze", "crosslingual", "references"],
    "web": ["web", "captions", "references", "deja-paraphrases"],
}
PAIRING = {"gold", "silver", "bronze", "crosslingual", "web", "captions"}  # every config but references
WEB_FAMILY = {"web", "captions", "references", "deja-paraphrases"}


@dataclasses.dataclass(frozen=True)
class Option:
    """An option as typed, and what it must do: ``parameters`` (field → value as funnel.json records it) in each
    config of ``concerns``; or ``options`` (BuildOptions field → value). ``families``: the builds that take it."""

    argv: tuple[str, ...]
    concerns: frozenset[str] = frozenset()
    parameters: dict[str, object] = dataclasses.field(default_factory=dict)
    options: dict[str, object] = dataclasses.field(default_factory=dict)
    families: frozenset[str] = frozenset(FAMILIES)

    @property
    def flag(self) -> str:
        return self.argv[0]


DUMP_ONLY = frozenset({"dump"})
WEB_ONLY = frozenset({"web"})
OPTIONS = [
    # the configs' parameters, each different from every preset it concerns (or from most of them)
    Option(("--sources", "gallery", "link"), frozenset(PAIRING - WEB_FAMILY), {"sources": ["link", "gallery"]},
           families=DUMP_ONLY),
    Option(("--caption-rule", "none"), frozenset(PAIRING), {"caption_rule": "none"}),
    Option(("--splits", "none"), frozenset(PAIRING), {"splits": []}),
    Option(("--history-references", "first_seen"), frozenset({"bronze"}), {"history_references": "first_seen"},
           families=DUMP_ONLY),
    Option(("--identity", "redirect"), frozenset(FAMILIES["dump"]), {"identities": ["title", "redirect"]},
           families=DUMP_ONLY),
    Option(("--equivalence", "phash"), frozenset(WEB_FAMILY), {"equivalence": "phash"}, families=WEB_ONLY),
    Option(("--hash-threshold", "7"), frozenset(WEB_FAMILY), {"hash_threshold": 7}, families=WEB_ONLY),
    Option(("--hash-size", "8"), frozenset(WEB_FAMILY), {"hash_size": 8}, families=WEB_ONLY),
    Option(("--set-bound", "1.5"), frozenset(WEB_FAMILY), {"set_size_z": 1.5}, families=WEB_ONLY),
    Option(("--deja-feature", "gist"), frozenset({"deja-paraphrases"}), {"deja_feature": "gist"}, families=WEB_ONLY),
    Option(("--deja-sigma", "3"), frozenset({"deja-paraphrases"}), {"deja_sigma": 3}, families=WEB_ONLY),
    Option(("--deja-query-image",), frozenset({"deja-paraphrases"}), {"deja_query_image": True}, families=WEB_ONLY),
    Option(("--deja-user-column", "author"), frozenset({"deja-paraphrases"}), {"deja_user_column": "author"},
           families=WEB_ONLY),
    # what a build shares across its configs
    Option(("--tagger", "perceptron"), options={"tagger": "perceptron"}),
    Option(("--workers", "3"), options={"workers": 3}),
    Option(("--memory", "1GB"), options={"memory_limit": "1GB"}),
    Option(("--image-table", "a-image.sql.gz"), options={"image_tables": ("a-image.sql.gz",)}),
    Option(("--language", "de"), options={"languages": "de"}),
    Option(("--template-parameters", "t.json"), options={"template_parameters": "t.json"}),
    Option(("--inline-templates", "i.json"), options={"inline_templates": "i.json"}),
    Option(("--unrendered-templates", "cut"), options={"unrendered_templates": "cut"}),
    Option(("--captions-tsv", "c.tsv"), options={"captions_tsv": "c.tsv"}),
    Option(("--listing-scheme", "S3"), options={"listing_schemes": ("http", "https", "s3")}),
    Option(("--work-dir", "w", "--resume"), options={"work_dir": "w", "resume": True}),
    Option(("--overwrite",), options={"overwrite": True}),
    Option(("--quiet",), options={"show_progress": False}),
    Option(("--spark-one-task-bytes", "0"), options={"spark_one_task_bytes": 0}),
]  # fmt: skip
CONFIG_FLAGS = {option.flag for option in OPTIONS if option.parameters}
INPUT = {"dump": "x.xml", "web": "x.warc.gz"}


def recorded(config: PipelineConfig) -> dict[str, object]:
    """A config's parameters as its funnel.json records them."""
    return json.loads(json.dumps(config.parameters()))


def fields(config: PipelineConfig) -> dict[str, object]:
    """Every field of a config, as funnel.json would record it: a superset of :meth:`PipelineConfig.parameters`,
    which leaves out the web fields of ``references`` until the build gives it its inputs' kind."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def mapped(argv: list[str], family: str) -> tuple[list, BuildOptions]:
    """``build`` run on ``argv`` as far as what it would build: the configs of ``family``, and its options."""
    names = FAMILIES[family]
    arguments = command_parser().parse_args(["build", INPUT[family], "--configs", *names, *argv])
    configs = pipeline_configs(arguments, names)
    read = web_inputs if family == "web" else dumps_and_languages
    _, languages = read(arguments.dumps, arguments.language)
    return configs, build_options(arguments, languages)


def check(options: list[Option], family: str) -> None:
    """Map ``options`` (in the order given) for ``family``: refused when one is not the family's, naming it;
    otherwise every option has its effect and every field no option sets keeps the preset's value."""
    argv = [word for option in options for word in option.argv]
    foreign = [option.flag for option in options if family not in option.families]
    if foreign:
        with pytest.raises(ValueError) as refused:
            mapped(argv, family)
        assert any(flag in str(refused.value) for flag in foreign), (argv, str(refused.value))
        return
    configs, built = mapped(argv, family)
    assert [config.name for config in configs] == FAMILIES[family]
    for config in configs:
        expected = fields(preset(config.name))
        for option in options:
            if config.name in option.concerns:
                expected.update(option.parameters)
        assert fields(config) == expected, (argv, config.name)
    defaults = mapped([], family)[1]
    wanted = dataclasses.asdict(defaults)
    for option in options:
        if option.flag == "--language" and family == "dump":
            wanted["languages"] = {INPUT["dump"]: "de"}  # a code for every dump, per dump
        else:
            wanted.update(option.options)
    assert dataclasses.asdict(built) == wanted, argv


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.flag)
def test_every_option_alone(option: Option) -> None:
    for family in FAMILIES:
        check([option], family)


@pytest.mark.parametrize(
    ("first", "second"), list(itertools.combinations(OPTIONS, 2)), ids=lambda option: option.flag.lstrip("-")
)
def test_every_pair_of_options_in_both_orders(first: Option, second: Option) -> None:
    """The bug: an option after one that changed a config was skipped (``--sources link --splits none`` built with
    ``link template``; ``--caption-rule none`` dropped ``--splits`` and ``--sources``)."""
    for family in FAMILIES:
        check([first, second], family)
        check([second, first], family)


def test_every_config_option_is_in_the_table() -> None:
    """A new option of the configs' group must be added above, or it goes untested in pairs."""
    parser = command_parser()
    build_parser = next(action for action in parser._actions if action.dest == "command").choices["build"]
    groups = {group.title: group for group in build_parser._action_groups}
    config_group = next(group for title, group in groups.items() if title and title.startswith("the configs'"))
    web_group = groups["web crawls and image–caption datasets"]
    flags = {action.option_strings[0] for group in (config_group, web_group) for action in group._group_actions}
    assert flags - {"--image-table", "--captions-tsv", "--listing-scheme"} == CONFIG_FLAGS
    every = {action.option_strings[-1] for action in build_parser._actions if action.option_strings}
    untested = every - {option.flag for option in OPTIONS} - {"--help", "--configs", "--output", "--engine", "--score"}
    assert untested == {"--resume"}  # given with --work-dir, as it must be


@pytest.mark.parametrize(
    "options",
    [["--splits", "none"], ["--caption-rule", "none"], ["--set-bound", "none"], ["--equivalence", "pixels"], []],
)
def test_a_web_build_refuses_a_wikipedia_source_whatever_else_is_given(options: list[str]) -> None:
    """Once, ``--splits none`` made a web build take the ``--sources link`` it refuses otherwise."""
    arguments = command_parser().parse_args(["build", "x.warc.gz", "--configs", "web", *options, "--sources", "link"])
    with pytest.raises(ValueError, match=r"^--sources \(web\): unknown reference sources \['link'\]"):
        pipeline_configs(arguments, ["web"])


def test_an_option_no_config_takes_is_refused_not_dropped() -> None:
    for argv, names, message in [
        (["--history-references", "first_seen"], ["gold", "silver"], "--history-references applies to history"),
        (["--caption-rule", "none"], ["references"], "--caption-rule applies to configs that pair captions"),
        (["--sources", "gallery"], ["references"], "--sources applies to configs that pair captions"),
        (["--equivalence", "pixels"], ["gold", "references"], "--equivalence apply to web and dataset configs"),
    ]:
        arguments = command_parser().parse_args(["build", "x", "--configs", *names, *argv])
        with pytest.raises(ValueError, match=re.escape(message)):
            pipeline_configs(arguments, names)
    # the samples build articles and history in two runs: an option of the history run is taken by the command
    arguments = command_parser().parse_args(["build", "--history-references", "first_seen"])
    assert pipeline_configs(arguments, ["gold", "silver"], ["gold", "silver", "bronze"]) == [preset("gold"), SILVER]
    # --hash-size and --hash-threshold are checked together: 50 bits fit an 8×8 grid, not the default 6×6
    arguments = command_parser().parse_args(["build", "x", "--configs", "web", "--hash-threshold", "50"])
    with pytest.raises(ValueError, match=r"^--hash-threshold \(web\): hash_threshold must be 0 to 36 bits"):
        pipeline_configs(arguments, ["web"])
    arguments = command_parser().parse_args(["build", "x", "--hash-threshold", "50", "--hash-size", "8"])
    assert pipeline_configs(arguments, ["web"])[0].hash_threshold == 50


def funnel_parameters(folder: Path, config: str) -> dict[str, object]:
    return json.loads((folder / config / "funnel.json").read_text(encoding="utf-8"))["parameters"]


def rows(folder: Path) -> pa.Table:
    """A config's pairs, every split, in the order of its files."""
    return pa.concat_tables(pq.read_table(shard) for shard in sorted(folder.glob("*.parquet")))


def split_rows(folder: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for shard in sorted(folder.glob("*.parquet")):
        split = shard.name.split("-")[0]
        counts[split] = counts.get(split, 0) + pq.read_metadata(shard).num_rows
    return counts


def test_the_issue_s_commands_build_what_they_say(tmp_path: Path, perceptron_available: None) -> None:
    """``--sources link --splits none`` builds with link alone, in one train split, the rows of the config written
    out in Python; ``--caption-rule none`` keeps ``--splits`` and ``--sources``; the samples' two runs (gold from
    the articles, bronze from the history) each take the options that concern them."""
    base = ["build", "--tagger", "perceptron", "--workers", "1", "--quiet"]
    cli = tmp_path / "cli"
    assert main([*base, "--configs", "silver", "--sources", "link", "--splits", "none", "--output", str(cli)]) == 0
    assert funnel_parameters(cli, "silver") == {
        **recorded(SILVER), "sources": ["link"], "splits": [],
    }  # fmt: skip
    assert split_rows(cli / "silver") == {"train": 12}
    api = tmp_path / "api"
    config = dataclasses.replace(SILVER, sources=("link",), splits=())
    build([SAMPLE_DUMP], [config], api, tagger="perceptron", show_progress=False)
    assert rows(cli / "silver").equals(rows(api / "silver"))

    rule = tmp_path / "rule"
    argv = ["--configs", "gold", "--caption-rule", "none", "--splits", "none"]
    argv += ["--sources", "link", "template", "gallery"]
    assert main([*base, *argv, "--output", str(rule)]) == 0
    parameters = funnel_parameters(rule, "gold")
    assert (parameters["caption_rule"], parameters["splits"]) == ("none", [])
    assert parameters["sources"] == ["link", "template", "gallery"]
    assert list(split_rows(rule / "gold")) == ["train"]

    runs = tmp_path / "runs"
    argv = ["--configs", "gold", "bronze", "--history-references", "first_seen", "--splits", "none"]
    assert main([*base, *argv, "--output", str(runs)]) == 0
    gold, bronze = funnel_parameters(runs, "gold"), funnel_parameters(runs, "bronze")
    assert (gold["splits"], gold["history_references"]) == ([], "revision")
    assert (bronze["splits"], bronze["history_references"]) == ([], "first_seen")


def test_a_web_build_takes_every_option_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    from benchmarks.web_crawl import write_shared_images_crawl

    crawl = write_shared_images_crawl(tmp_path / "shared.warc.gz")
    base = ["build", str(crawl), "--configs", "web", "--tagger", "perceptron", "--workers", "1", "--quiet"]
    out = tmp_path / "out"
    argv = ["--splits", "none", "--caption-rule", "none", "--equivalence", "pixels", "--set-bound", "0.5"]
    assert main([*base, *argv, "--output", str(out)]) == 0
    parameters = funnel_parameters(out, "web")
    assert {key: parameters[key] for key in ("splits", "caption_rule", "equivalence", "set_size_z")} == {
        "splits": [], "caption_rule": "none", "equivalence": "pixels", "set_size_z": 0.5,
    }  # fmt: skip
    assert list(split_rows(out / "web")) == ["train"]
    capsys.readouterr()
    refused = tmp_path / "refused"
    assert main([*base, "--splits", "none", "--sources", "link", "--output", str(refused)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--sources (web): unknown reference sources ['link']" in error
    assert not refused.exists()


# --- --workers: bounded by the tasks and the machine, refused past a sane maximum


@dataclasses.dataclass(frozen=True)
class Ran:
    """What a task's runner returns: the process it ran in (and no references, which the progress bar counts)."""

    pid: int
    references: int = 0


def _pid(_: object) -> int:
    return os.getpid()


def task_pid(_: object) -> Ran:
    return Ran(os.getpid())


def test_a_pool_starts_no_more_processes_than_tasks_and_cores() -> None:
    cores = available_cores()
    assert pool_size(48, 2) == min(2, cores)
    assert pool_size(48) == min(48, cores) and pool_size(1, 5) == 1 and pool_size(3, 0) == 1
    pids = [ran.pid for ran in run_tasks(list(range(2)), 48, False, runner=task_pid)]
    assert len(pids) == 2 and os.getpid() not in pids  # in worker processes, as asked, but not 48 of them
    assert len(set(pids)) <= min(2, cores)
    pids = [ran.pid for ran in run_tasks(list(range(6)), 48, False, runner=task_pid)]
    assert len(pids) == 6 and len(set(pids)) <= cores


def test_a_pool_asked_for_48_workers_starts_as_many_as_cores() -> None:
    """The tagging pool is not a fork (its process holds DuckDB's threads): it starts its workers at once, so 48
    asked were 48 started."""
    cores = available_cores()
    with worker_pool(48, fork_safe=False) as executor:
        assert executor._max_workers == min(48, cores)
        pids = set(executor.map(_pid, range(4 * cores)))
    assert 1 <= len(pids) <= cores and os.getpid() not in pids


def test_duckdb_gets_no_more_threads_than_cores(tmp_path: Path) -> None:
    with duckdb_connection(tmp_path / "spill", "512MB", 10**20) as connection:
        threads = connection.execute("SELECT current_setting('threads')").fetchone()[0]
    assert threads == available_cores()


@pytest.mark.parametrize("given", ["99999999999999999999", str(MAX_WORKERS + 1), "0", "-3", "two"])
def test_workers_past_the_bounds_are_an_argparse_error(
    given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["build", "--workers", given, "--output", str(tmp_path / "out")])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("usage: ") and "argument --workers: " in error
    expected = {"0": "at least 1 worker", "-3": "at least 1 worker", "two": "not a whole number"}
    assert expected.get(given, f"at most {MAX_WORKERS} workers") in error
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match=f"workers must be at most {MAX_WORKERS}, not {MAX_WORKERS + 1}"):
        BuildOptions(workers=MAX_WORKERS + 1)


def test_the_workers_help_says_the_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"worker processes (default: CPU count), 1 to {MAX_WORKERS}: a build starts no more than it has" in text


@pytest.mark.parametrize("configs", [["silver"], ["bronze"]])
def test_the_same_rows_whatever_the_worker_count(
    configs: list[str], tmp_path: Path, perceptron_available: None
) -> None:
    """``--workers 48`` on the sample: the parts it plans run on the cores there are, and give the rows of one."""
    tables: dict[str, pa.Table] = {}
    for workers in ("1", "48", str(MAX_WORKERS)):
        out = tmp_path / workers
        argv = ["build", "--configs", *configs, "--tagger", "perceptron", "--quiet", "--workers", workers]
        assert main([*argv, "--output", str(out)]) == 0
        tables[workers] = rows(out / configs[0])
    assert tables["1"].num_rows == {"silver": 20, "bronze": 47}[configs[0]]  # as the README says
    assert tables["48"].equals(tables["1"]) and tables[str(MAX_WORKERS)].equals(tables["1"])


def test_a_dumps_language_names_it_in_any_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--language CODE=DUMP`` finds its dump spelled otherwise than among the arguments (``./``, absolute), as
    the engines do (round six, item 9); a file that is not among them is still refused."""
    monkeypatch.chdir(ROOT)
    de, en = "tests/data/minidumps/de/wiki.xml.bz2", "tests/data/minidumps/en/wiki.xml.bz2"
    dumps, languages = dumps_and_languages([de, en], [f"de=./{de}", f"en={ROOT / en}"])
    assert dumps == [de, en] and languages == {f"./{de}": "de", str(ROOT / en): "en"}
    argv = ["build", de, en, "--configs", "crosslingual", "--caption-rule", "none", "--splits", "none", "--quiet"]
    assert main([*argv, "--language", f"de=./{de}", f"en={ROOT / en}", "--output", str(tmp_path / "out")]) == 0
    assert json.loads((tmp_path / "out" / "crosslingual" / "funnel.json").read_text())["funnel"][-1]["pairs"] == 9
    with pytest.raises(ValueError, match="is not one of the dumps given"):
        dumps_and_languages([de, en], [f"fr=./{de.replace('/de/', '/fr/')}"])
