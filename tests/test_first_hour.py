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
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## Installing", 1)[0]
    snippet = next(block for block in _fenced(quick_start, "python") if "load_dataset(" in block)
    assert 'load_dataset(str(Path("wikipedia_ipc").resolve()), "gold"' in snippet
    assert "Hub dataset id" in quick_start and "build id" not in snippet and "bronze" in quick_start
    assert "This card was written by build" in quick_start  # how to tell which build a folder holds
    assert "a few seconds" not in (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")


def test_the_readme_scores_before_it_filters_on_the_probability_and_its_outputs_are_ignored(tmp_path: Path) -> None:
    """The paraphrase_probability snippet reads the scored folder (the unscored one has no such column), and the
    folders the README's commands write (simplewiki-ipc/, web-ipc/, …) are ignored by git."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = readme[readme.index("paraphrase_probability") :]
    assert snippet.index("wikipedia_ipc-scored") < snippet.index('row["paraphrase_probability"] > 0.5')
    assert "CC-MAIN-20240522120000-00000.warc.gz" not in readme  # an example the repository does not ship
    outputs = sorted(set(re.findall(r"--output ([\w-]+)(?![\w:-])", readme)))  # local folders, not s3:// URLs
    assert {"simplewiki-ipc", "web-ipc"} <= set(outputs)
    ignored = subprocess.run(
        ["git", "check-ignore", *(f"{name}/README.md" for name in outputs)], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert ignored == [f"{name}/README.md" for name in outputs]


def test_the_readme_build_example_reads_the_folder_download_writes(tmp_path: Path, perceptron_available: None) -> None:
    """``download`` names the folder by the newest run's date: the example finds it, whatever the date."""

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = next(block for block in _fenced(readme, "python") if "BuildOptions(workers=2)" in block)
    assert "20240101" not in snippet
    run = tmp_path / "dumps" / "simplewiki-20251101"  # a date the README does not name
    run.mkdir(parents=True)
    dump = shutil.copy(ROOT / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2", run)
    manifest = {"wiki": "simplewiki", "date": "20251101", "files": [{"name": Path(dump).name, "size": 0}]}
    manifest["files"][0]["size"] = Path(dump).stat().st_size
    (run / "download.json").write_text(json.dumps(manifest), encoding="utf-8")
    finished = run_python(snippet, tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stdout.strip().splitlines()[-1] == "{'gold': 10, 'silver': 20}"


def test_the_readme_web_examples_give_what_it_says(tmp_path: Path, perceptron_available: None) -> None:
    """The shipped archives give no web pair (their alt texts are short) and 611 references, as the README says;
    the crawl it shows for pairs gives 2, both in train, and the loads it shows read them."""
    import datasets

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [
        line.split("#")[0].split()[1:]
        for block in _fenced(readme, "bash")
        for line in block.splitlines()
        if line.startswith("wikipedia-ipc build ") and ("tests/data/web" in line or "shared.warc.gz" in line)
    ]
    assert [command[1] for command in commands] == ["tests/data/web/aut-example.warc.gz", "tests/data/web/",
                                                    "shared.warc.gz"]  # fmt: skip
    writer = next(line for block in _fenced(readme, "bash") for line in block.splitlines() if "write_shared" in line)
    assert run_python(writer.split('"')[1], tmp_path).returncode == 0
    rows = []
    for command in commands:
        out = tmp_path / "web-ipc"
        arguments = [str(tmp_path / part) if part == "shared.warc.gz" else part for part in command]
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
    # the last build writes web into the folder of the one before, whose references stay (their own build's)
    assert rows == [{"web": 0}, {"references": 611, "web": 0}, {"references": 611, "web": 2}]
    assert len(datasets.load_dataset(str(tmp_path / "web-ipc"), "web", split="train")) == 2
    web = readme[readme.index("**From a web crawl.**") : readme.index("**From an image–caption dataset.**")]
    assert "`web: 0 pairs`" in web and "611 alt texts" in web and 'load_dataset(folder, "web")' not in web
    ignored = subprocess.run(["git", "check-ignore", "shared.warc.gz"], cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout.split() == ["shared.warc.gz"]  # the crawl the README writes is not the project's


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
