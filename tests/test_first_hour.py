"""A newcomer's first hour: the command answers --help at once under its own name, the sample builds every
config, a build's outputs are ignored by git, a fallback is said once, and the README says what to run."""

from __future__ import annotations

import bz2
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "datasets", "duckdb", "pyspark", "pyarrow", "pandas", "transformers")
# the pages the README's first uses moved to (round six, item 13): their commands are a newcomer's next steps
FIRST_PAGES = ("getting-started.md", "building.md", "web.md")


def run_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=environment, timeout=600
    )


@pytest.mark.parametrize("arguments", [["--help"], ["build", "--help"], ["download", "--help"]])
def test_help_loads_no_heavy_library(arguments: list[str], tmp_path: Path) -> None:
    """--help is read before the model stack, DuckDB or Spark are imported (they took seconds to load)."""
    code = (
        "import sys\n"
        f"sys.argv = ['/somewhere/bin/wikipedia-ipc', *{arguments!r}]\n"
        "import wikipedia_ipc\n"
        "try:\n    wikipedia_ipc.main()\nexcept SystemExit as done:\n    assert done.code == 0, done.code\n"
        f"print('loaded:', sorted(name for name in {HEAVY!r} if name in sys.modules))\n"
    )
    finished = run_python(code, tmp_path)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.startswith("usage: wikipedia-ipc ")
    assert finished.stdout.rstrip().endswith("loaded: []")


def test_usage_names_the_command_as_it_was_run(tmp_path: Path) -> None:
    """The console script says ``wikipedia-ipc``; the file run by Python says how it was run."""
    script = run_python(
        "import sys; sys.argv = ['wikipedia_ipc.py', 'nonsense']\nimport runpy\n"
        f"runpy.run_path({str(ROOT / 'wikipedia_ipc.py')!r}, run_name='__main__')",
        tmp_path,
    )
    assert script.returncode == 2 and script.stderr.startswith("usage: python wikipedia_ipc.py "), script.stderr
    module = run_python(
        "import sys; sys.argv = ['wikipedia_ipc.py', 'nonsense']\nimport runpy\n"
        "runpy.run_module('wikipedia_ipc', run_name='__main__', alter_sys=True)",
        tmp_path,
    )
    assert module.returncode == 2 and module.stderr.startswith("usage: python -m wikipedia_ipc "), module.stderr


def test_the_lazy_api_names_resolve() -> None:
    """``from wikipedia_ipc import build, WikipediaIPC`` still works: the names load their modules on first use."""
    import wikipedia_ipc
    from builder.engines.local import build

    assert wikipedia_ipc.build is build
    assert wikipedia_ipc.WikipediaIPC.__name__ == "WikipediaIPC"
    assert wikipedia_ipc.SAMPLE_DUMP.is_file()
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        wikipedia_ipc.nothing  # noqa: B018


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_what_the_quick_start_writes_is_ignored_by_git(tmp_path: Path) -> None:
    """The build's folder and its scored copy (``python -m metrics score wikipedia_ipc/``) are not the project's."""
    repository = tmp_path / "clone"
    repository.mkdir()
    shutil.copy(ROOT / ".gitignore", repository / ".gitignore")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    paths = ["wikipedia_ipc/README.md", "wikipedia_ipc-scored/README.md", "wikipedia_ipc-scored/gold/funnel.json"]
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths], cwd=repository, capture_output=True, text=True
    )
    assert checked.stdout.split() == paths


def test_the_tagger_fallback_is_said_once(tmp_path: Path) -> None:
    """Offline without NLTK's model: the build's process warns; its tagging workers, which fall back too, do not,
    and the Quick start's command, two builds (the articles, then the history), says it once, not once a build."""
    empty = tmp_path / "no_nltk_data"
    empty.mkdir()
    code = (
        "import sys, wikipedia_ipc\n"
        f"sys.exit(wikipedia_ipc.main(['build', '--output', {str(tmp_path / 'out')!r},"
        " '--workers', '2', '--tagger', 'perceptron']))"
    )
    # a proxy on the discard port: the probe for NLTK's index is refused at once, as on a machine without network
    finished = run_python(
        code, tmp_path, NLTK_DATA=str(empty), https_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9"
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert len(re.findall(r"TaggerWarning: NLTK's \S+ model is not installed", finished.stderr)) == 1, finished.stderr
    assert finished.stdout.count("Build id ") == 2  # gold and silver, then bronze


def test_the_sample_history_is_written_by_make_sample_and_ends_in_the_articles() -> None:
    """The shipped history dump is make_sample's output; every page's last revision is its text in the articles
    dump, and its edits are an editor's: typo fixes, rewordings, vandalism reverted to the very bytes before."""
    from builder.data.make_sample import HISTORY, HISTORY_EDITS, OUTPUT, sample_history_xml
    from builder.sources.xml import iter_pages

    assert bz2.decompress(HISTORY.read_bytes()).decode("utf-8") == sample_history_xml()
    articles = {page.title: page.text for page in iter_pages(OUTPUT)}
    history: dict[str, list[str]] = {}
    for revision in iter_pages(HISTORY):
        history.setdefault(revision.title, []).append(revision.text)
    assert history.keys() == articles.keys()
    assert all(texts[-1] == articles[title] for title, texts in history.items())
    reverted = [title for title, texts in history.items() if len(texts) >= 3 and texts[-1] == texts[-3]]
    assert {"Ēostre", "Northern Ireland in the Second World War", "Tower Bridge"} <= set(reverted)
    assert len(HISTORY_EDITS) >= 10 and sum(len(texts) for texts in history.values()) > len(history) + 15


def test_the_default_build_builds_all_three_levels(tmp_path: Path, perceptron_available: None) -> None:
    """No dump given: gold and silver from the articles sample, as before, and bronze from its edit history."""
    import pyarrow.parquet as pq

    import wikipedia_ipc
    from builder.config import GOLD, SILVER
    from builder.engines.local import build
    from builder.publish.layout import read_built

    out, articles = tmp_path / "wikipedia_ipc", tmp_path / "articles"
    assert wikipedia_ipc.main(["build", "--output", str(out), "--tagger", "perceptron", "--quiet"]) == 0
    build([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], articles, tagger="perceptron", show_progress=False)
    built, alone = read_built(out), read_built(articles)
    assert sorted(built) == ["bronze", "gold", "silver"]
    for name in ("gold", "silver"):  # the articles' rows are those of a build of the articles sample alone
        assert [file.read_bytes() for file in built[name].files] == [file.read_bytes() for file in alone[name].files]
    assert built["bronze"].record["dumps"][0]["name"] == "enwiki-20240101-sample-pages-meta-history.xml.bz2"
    rows = [row for file in built["bronze"].files for row in pq.read_table(file).to_pylist()]
    revised = {frozenset((row["sentence1"], row["sentence2"])) for row in rows if row["same_page"]}
    typo = "Water bead on a fabric that has been made non-we{}ting by chemical treatment."
    assert frozenset((typo.format(""), typo.format("t"))) in revised  # a typo fixed between revisions
    reworded = ("The bascules of Tower Bridge open so that a ship can pass.", "The bascules of Tower Bridge are "
                "raised for a passing ship.")  # fmt: skip
    assert frozenset(reworded) in revised
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "`enwiki-20240101-sample-pages-meta-history.xml.bz2`" in card and "**Sample build.**" in card


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_the_readme_tests_section_installs_pytorch_for_the_cpu_first() -> None:
    """As the install section says: on a CPU machine the test extras would otherwise pull the CUDA build."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(block for block in _fenced(readme, "bash") if 'pip install -e ".[test]"' in block)
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in block.split('".[test]"')[0]


def test_the_readme_loads_the_build_by_its_path_and_says_what_the_bare_name_is() -> None:
    """The README's first screen loads by path and names the bare name's trap; docs/getting-started.md says why."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = readme.split("## Quick start", 1)[1].split("\n## Running the tests", 1)[0]
    details = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    loading = details.split("## Loading the output", 1)[1].split("\n## ", 1)[0]
    for text in (first_screen, loading):
        snippet = next(block for block in _fenced(text, "python") if "load_dataset(" in block)
        assert 'load_dataset(str(Path("wikipedia_ipc").resolve()), "gold"' in snippet and "build id" not in snippet
        assert "Hub dataset id" in text and "This card was written by build" in text  # how to tell builds apart
    assert "bronze" in first_screen and "docs/getting-started.md#loading-the-output" in first_screen
    assert "a few seconds" not in (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")


def test_the_docs_score_before_they_filter_on_the_probability_and_their_outputs_are_ignored() -> None:
    """The paraphrase_probability snippet (docs/delta_sem_syn.md, where the README points) reads the scored folder
    (the unscored one has no such column), and the folders that the README's pages write (simplewiki-ipc/,
    web-ipc/, …) are ignored by git."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/delta_sem_syn.md#which-pairs-are-paraphrases" in readme
    metric = (ROOT / "docs" / "delta_sem_syn.md").read_text(encoding="utf-8")
    snippet = metric[metric.index("## Which pairs are paraphrases") :]
    assert snippet.index("wikipedia_ipc-scored") < snippet.index('row["paraphrase_probability"] > 0.5')
    pages = [readme, *((ROOT / "docs" / name).read_text(encoding="utf-8") for name in FIRST_PAGES)]
    assert not any("CC-MAIN-20240522120000-00000.warc.gz" in page for page in pages)  # an example not shipped
    outputs = sorted(  # local folders, not s3:// URLs or placeholders such as DIR
        {name for page in pages for name in re.findall(r"--output ([\w-]+)(?![\w:-])", page) if not name.isupper()}
    )
    assert {"simplewiki-ipc", "web-ipc", "archives-ipc"} <= set(outputs)
    ignored = subprocess.run(
        ["git", "check-ignore", *(f"{name}/README.md" for name in outputs)], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert ignored == [f"{name}/README.md" for name in outputs]


def _build_example() -> str:
    """docs/building.md's Python build of a download (the README's until round six)."""
    building = (ROOT / "docs" / "building.md").read_text(encoding="utf-8")
    return next(block for block in _fenced(building, "python") if "BuildOptions(workers=2)" in block)


def test_the_build_example_reads_the_folder_download_writes(tmp_path: Path, perceptron_available: None) -> None:
    """``download`` names the folder by the newest run's date: the example finds it, whatever the date, and
    passes over a newer run whose download did not finish."""
    snippet = _build_example()
    assert "20240101" not in snippet
    run = tmp_path / "dumps" / "simplewiki-20251101"  # a date the docs do not name
    run.mkdir(parents=True)
    (tmp_path / "dumps" / "simplewiki-20251201").mkdir()  # stopped before its download.json was written
    dump = shutil.copy(ROOT / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2", run)
    manifest = {"wiki": "simplewiki", "date": "20251101", "files": [{"name": Path(dump).name, "size": 0}]}
    manifest["files"][0]["size"] = Path(dump).stat().st_size
    (run / "download.json").write_text(json.dumps(manifest), encoding="utf-8")
    finished = run_python(snippet, tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stdout.strip().splitlines()[-1] == "{'gold': 10, 'silver': 20}"


def test_the_build_example_run_as_written_without_a_download_says_what_is_missing(tmp_path: Path) -> None:
    """Round six, item 12: run in a folder without dumps, the example ended in ``max() arg is an empty sequence``;
    it names the folder it looked in and the command that fills it."""
    finished = run_python(_build_example(), tmp_path)
    assert finished.returncode == 1
    last = finished.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ValueError: no finished download of simplewiki in {tmp_path.resolve() / 'dumps'}: ")
    assert "python wikipedia_ipc.py download simplewiki" in last and "SAMPLE_DUMP" in last
    assert "empty sequence" not in finished.stderr


def _web_section() -> str:
    web = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    return web.split("## A first web build", 1)[1].split("\n## ", 1)[0]


def test_the_sample_crawl_is_written_by_make_sample_crawl() -> None:
    """The shipped crawl is make_sample_crawl's records: seven pages, two images, every caption a figure's."""
    import gzip

    from builder.data.make_sample_crawl import OUTPUT, PAGES, sample_crawl_records

    assert gzip.decompress(OUTPUT.read_bytes()) == sample_crawl_records()
    assert len(PAGES) == 7 and len({image for _, _, image, _ in PAGES}) == 2
    assert sample_crawl_records() == sample_crawl_records()  # no record id or date drawn anew


def test_the_first_web_build_gives_what_the_docs_say(tmp_path: Path, perceptron_available: None) -> None:
    """docs/web.md's first web build: the sample crawl gives the four pairs its table shows, every one two captions
    of one photograph that paraphrase each other (the README's demo crawl gave two unrelated sentences); the tests'
    real archives give no web pair (their alt texts are short) and 611 references, and the loads shown read them."""
    import datasets

    section = _web_section()
    commands = [
        line.split("#")[0].split()[1:]
        for block in _fenced(section, "bash")
        for line in block.splitlines()
        if line.startswith("wikipedia-ipc build ")
    ]
    inputs = ["builder/data/sample-crawl.warc.gz", "tests/data/web/aut-example.warc.gz", "tests/data/web/"]
    assert [command[1] for command in commands] == inputs
    rows = []
    for command in commands:
        arguments = list(command)
        out = tmp_path / arguments[arguments.index("--output") + 1]
        arguments[arguments.index("--output") + 1] = str(out)
        finished = subprocess.run(
            [sys.executable, str(ROOT / "wikipedia_ipc.py"), *arguments, "--quiet", "--workers", "1"],
            capture_output=True, text=True, cwd=ROOT, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert finished.returncode == 0, finished.stderr[-3000:]
        funnels = {path.parent.name: json.loads(path.read_text()) for path in out.glob("*/funnel.json")}
        rows.append({name: funnel["rows"] for name, funnel in sorted(funnels.items())})
        if "references" in funnels:
            loaded = datasets.load_dataset(str(out), "references", split="train")
            assert len(loaded) == 611 and set(loaded["kind"]) == {"alt"}
            # ClueWeb09's EUC-JP pages: their alt texts are in the build's language, as the card says; none of
            # these pages declares <html lang>
            japanese = [row for row in loaded if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", row["text"])]
            assert len(japanese) == 237 and {(row["language"], row["html_lang"]) for row in japanese} == {("en", None)}
            assert "the build's (`--language`, English by default)" in (out / "README.md").read_text(encoding="utf-8")
    # the second archive build writes web into the folder of the first, and adds references
    assert rows == [{"web": 4}, {"web": 0}, {"references": 611, "web": 0}]
    pairs = datasets.load_dataset(str(tmp_path / "web-ipc"), "web", split="train")
    table = [
        tuple(cell.strip() for cell in line.strip(" |").split(" | ")[1:])
        for line in section.splitlines()
        if line.startswith(("| Tower", "| Easter"))
    ]
    assert sorted((row["sentence1"], row["sentence2"]) for row in pairs) == sorted(table)
    assert len({row["image"] for row in pairs}) == 2 and not any(row["same_page"] for row in pairs)
    assert "`web: 0 pairs`" in section and "611 alt texts" in section and 'split="train")  # 4 pairs' in section
    assert "shared.warc.gz" not in section  # the crawl of unrelated sentences the README wrote before


def test_the_captions_example_puts_the_shipped_pair_where_it_is_loaded(tmp_path: Path) -> None:
    """The shipped six rows give one pair: in `test` with the default splits, in `train` as docs/web.md builds it."""
    import datasets

    import wikipedia_ipc

    docs = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    line = next(line for block in _fenced(docs, "bash") for line in block.splitlines() if "tests/data/captions" in line)
    assert "--splits none" in line and 'split="train")  # 1 pair' in docs
    for arguments, out in ((line.split()[2:], "cc-ipc"), (line.replace(" --splits none", "").split()[2:], "split")):
        arguments[arguments.index("--output") + 1] = str(tmp_path / out)
        assert wikipedia_ipc.main(["build", *arguments, "--quiet", "--workers", "1"]) == 0
    loaded = datasets.load_dataset(str(tmp_path / "cc-ipc"), "captions", split="train")
    assert len(loaded) == 1 and loaded[0]["file1"] == loaded[0]["file2"]  # two captions of one URL
    assert list(datasets.load_dataset(str(tmp_path / "split"), "captions")) == ["test"]  # no train split


def test_ci_stops_at_once_without_nltks_model(tmp_path: Path) -> None:
    """.ci/run beside no ../shared/nltk_data: a clear message and exit 1 before anything is installed."""
    clone = tmp_path / "clone"
    (clone / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", clone / ".ci" / "run")
    tools = tmp_path / "bin"  # dirname only: were the check gone, no pip or python would run here
    tools.mkdir()
    (tools / "dirname").symlink_to(shutil.which("dirname") or "/usr/bin/dirname")
    bash = shutil.which("bash") or "/bin/bash"
    finished = subprocess.run(
        [bash, str(clone / ".ci" / "run")], capture_output=True, text=True, timeout=60, env={"PATH": str(tools)}
    )
    assert finished.returncode == 1 and finished.stdout == ""
    assert "shared/nltk_data/taggers/averaged_perceptron_tagger_eng is missing" in finished.stderr
    assert "python -m nltk.downloader -d ../shared/nltk_data averaged_perceptron_tagger_eng" in finished.stderr
