"""Every command and snippet in README.md and docs/ is one the code accepts.

Each toolkit command of a ``bash`` block (``python wikipedia_ipc.py …``, ``wikipedia-ipc …``,
``python -m metrics …``, ``python benchmarks/NAME.py …``) is parsed by the real command-line
parser of its program, which stops the run once its arguments are accepted: an option that
does not exist, a wrong choice or a bad number fails here. Each ``python`` block must compile,
and the names it imports must exist. The quick start itself runs end to end in
tests/test_install.py and tests/test_sample_dump.py.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import re
import runpy
import shlex
import sys
import unicodedata
from pathlib import Path

import pytest
from test_cli_options import CONFIG_FLAGS, OPTIONS

import wikipedia_ipc
from builder.cli import command_parser
from builder.cli.options import pipeline_configs
from builder.config import preset

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ENVIRONMENT = re.compile(r"^(?:[A-Z_]+=\S+\s+)+")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
README_LINES = 200  # round six, item 13: a newcomer reads the first screen
QUICK_START = "pip install -e . && python wikipedia_ipc.py build"
TEST_COMMAND = 'pip install -e ".[test]" && python -m ruff check . && python -m pytest'  # .ci/run runs it


class Parsed(Exception):
    """Raised once a program's parser has accepted its arguments: the command is valid, nothing runs."""


def blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for match in _FENCE.finditer(page.read_text(encoding="utf-8")):
            if match.group(1) == language:
                found.append((page.relative_to(ROOT).as_posix(), match.group(2)))
    return found


def commands() -> list[tuple[str, str]]:
    """The toolkit's commands in the bash blocks, continuation lines joined, comments and env settings dropped."""
    found = []
    for page, text in blocks("bash"):
        for line in text.replace("\\\n", " ").splitlines():
            line = _ENVIRONMENT.sub("", line.split("  #")[0].strip())
            if "$" in line or not line:
                continue  # shell variables and loops: not one command
            if line.startswith("spark-submit") and "wikipedia_ipc.py" in line:
                line = "python wikipedia_ipc.py" + line.split("wikipedia_ipc.py", 1)[1]
            if line.startswith(("python wikipedia_ipc.py", "wikipedia-ipc", "python -m metrics", "python benchmarks/")):
                found.append((page, line))
    return found


def arguments(line: str) -> tuple[str, list[str]]:
    """The program a command runs and its arguments; ``[--option VALUE]`` groups read as given."""
    words = shlex.split(line.replace("[--", "--").replace("]", ""))
    if words[0] == "wikipedia-ipc":
        return "wikipedia_ipc.py", words[1:]
    if words[1] == "-m":
        return words[2], words[3:]
    return words[1], words[2:]


def parse_only(monkeypatch: pytest.MonkeyPatch, program: str, argv: list[str]) -> None:
    original = argparse.ArgumentParser.parse_args

    def parse_and_stop(self: argparse.ArgumentParser, args=None, namespace=None):  # noqa: ANN001, ANN202
        original(self, args, namespace)
        raise Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_and_stop)
    monkeypatch.setattr(sys, "argv", [program, *argv])
    monkeypatch.chdir(ROOT)
    expected = SystemExit if "--help" in argv else Parsed  # help prints and exits before anything runs
    with pytest.raises(expected) as stopped:
        if program == "wikipedia_ipc.py":
            wikipedia_ipc.main(argv)
        elif program == "metrics":
            runpy.run_module("metrics", run_name="__main__")
        else:
            runpy.run_path(str(ROOT / program), run_name="__main__")
    assert expected is Parsed or stopped.value.code == 0


def test_the_pages_hold_commands_and_snippets() -> None:
    assert len(commands()) >= 25 and len(blocks("python")) >= 5


@pytest.mark.parametrize(("page", "line"), commands(), ids=lambda value: value[:70])
def test_command_is_accepted_by_its_parser(monkeypatch: pytest.MonkeyPatch, page: str, line: str) -> None:
    program, argv = arguments(line)
    parse_only(monkeypatch, program, argv)


@pytest.mark.parametrize(("page", "code"), blocks("python"), ids=lambda value: value[:40])
def test_python_snippet_compiles_and_its_imports_exist(page: str, code: str) -> None:
    tree = ast.parse(code, filename=page)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{page}: {node.module} has no {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)


def documented_builds() -> list[tuple[str, list[str]]]:
    """Every documented ``build`` that sets a config's parameters, shell variables read as one dump (``$args``)."""
    found = []
    for page, text in blocks("bash"):
        for line in text.replace("\\\n", " ").splitlines():
            line = _ENVIRONMENT.sub("", line.split("  #")[0].strip())
            if line.startswith("spark-submit") and "wikipedia_ipc.py" in line:
                line = "python wikipedia_ipc.py" + line.split("wikipedia_ipc.py", 1)[1]
            if not line.startswith(("python wikipedia_ipc.py build", "wikipedia-ipc build")):
                continue
            argv = arguments(re.sub(r"\$\w+", "dump.xml", line))[1]
            if CONFIG_FLAGS & set(argv):
                found.append((page, argv))
    return found


def test_the_documented_builds_with_options_are_checked() -> None:
    pages = {page for page, _ in documented_builds()}
    assert len(documented_builds()) >= 5 and {"docs/multilingual.md", "docs/web.md", "docs/building.md"} <= pages


@pytest.mark.parametrize(
    ("page", "argv"), documented_builds(), ids=[" ".join(argv)[:70] for _, argv in documented_builds()]
)
def test_a_documented_build_applies_every_option_it_names(page: str, argv: list[str]) -> None:
    """Each documented command builds its configs with every option it names, each on the configs it concerns
    (docs/multilingual.md's ``--caption-rule none … --splits none`` once built with 80/10/10 splits)."""
    parsed = command_parser().parse_args(argv)
    names = parsed.configs or ["gold", "silver"]  # the dumps' default: every documented one without --configs
    configs = pipeline_configs(parsed, names)
    given = [word for word in argv if word in CONFIG_FLAGS]
    assert given
    for config in configs:
        expected = preset(config.name)
        for option in OPTIONS:
            if option.flag in given and config.name in option.concerns:
                field = next(iter(option.parameters))
                value = getattr(parsed, option.flag.lstrip("-").replace("-", "_"))
                if isinstance(value, list):
                    value = tuple(value)
                elif option.flag == "--set-bound" and value == "none":
                    value = None
                expected = dataclasses.replace(expected, **{field: value})
        assert config == expected, (page, argv, config.name)


def prose(text: str) -> str:
    """A page without its fenced blocks and code spans: where a ``[text](target)`` is a link."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (links read as their text) lower-cased, punctuation but hyphens and
    spaces dropped (letters of every script kept), spaces turned into hyphens."""
    text = _LINK.sub(lambda link: link.group(1), heading).lower()
    kept = "".join(c for c in text if c in "- _" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a heading's second use gets ``-1``, as GitHub numbers them."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return found


def relative_links() -> list[tuple[str, str]]:
    """Every link of README.md and docs/ to a file of the repository or an anchor, as (page, target)."""
    found = []
    for page in PAGES:
        for _, target in _LINK.findall(prose(page.read_text(encoding="utf-8"))):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: lead elsewhere
                found.append((page.relative_to(ROOT).as_posix(), target))
    return found


def test_the_slugs_are_githubs() -> None:
    assert slug("The ST threshold, chosen on MSRPC as the paper chose 0.8") == (
        "the-st-threshold-chosen-on-msrpc-as-the-paper-chose-08"
    )
    assert slug("Image–caption datasets (§5.1)") == "imagecaption-datasets-51"
    assert slug("§5 Visual paraphrases without the images: `deja-paracaption`") == (
        "5-visual-paraphrases-without-the-images-deja-paracaption"
    )
    assert slug("Wikipedia languages: File namespace names") == "wikipedia-languages-file-namespace-names"
    assert slug("Ēostre and the [hare](x.md)") == "ēostre-and-the-hare"


def test_the_pages_link_to_files_and_anchors() -> None:
    assert len(relative_links()) >= 50 and any("#" in target for _, target in relative_links())


@pytest.mark.parametrize(("page", "target"), relative_links(), ids=lambda value: value[:70])
def test_a_relative_link_leads_to_a_file_and_its_heading(page: str, target: str) -> None:
    """Round six, item 13: docs/delta_sem_syn.md linked an anchor of docs/compare.md as if it were its own."""
    path, _, anchor = target.partition("#")
    linked = (ROOT / page).parent / path if path else ROOT / page
    assert linked.exists(), f"{page}: {target}: no such file"
    if anchor:
        assert linked.suffix == ".md", f"{page}: {target}: an anchor of a file that is no Markdown page"
        assert anchor in anchors(linked), f"{page}: {target}: {linked.name} has no heading of that anchor"


def test_the_readme_is_a_first_screen_with_the_two_commands() -> None:
    """Under 200 lines; its one-liner installs and builds, nothing that can stop the build (NLTK's downloader asks
    ``Retry? [n/y/e]`` offline and dies on EOF, where the build falls back and says so), and its test command is
    .ci/run's."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < README_LINES
    bash = [block.strip().splitlines() for page, block in blocks("bash") if page == "README.md"]
    assert bash[0] == [QUICK_START]
    assert any(TEST_COMMAND in lines for lines in bash)
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "python -m nltk.downloader averaged_perceptron_tagger_eng" in readme  # by hand, in the text beside it


def test_the_readme_tables_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| \[(docs/[\w-]+\.md)\]\(\1\) \|", readme, re.MULTILINE))
    assert rows == {page.relative_to(ROOT).as_posix() for page in PAGES[1:]}


def test_the_suite_time_is_the_newest_in_docs_testing() -> None:
    """The README's figure is the one docs/testing.md gives as the newest, not older than it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    duration = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8").split("## Duration", 1)[1]
    stated = re.search(r"took (\d+) minutes (\d+) seconds", readme)
    newest = re.search(r"took \*\*(\d+) minutes (\d+) seconds\*\*, the newest run", duration)
    assert stated and newest and stated.groups() == newest.groups()
    assert duration.index(newest.group(0)) < duration.index("passed")  # the first figure of the section


def test_the_retired_caption_classifier_is_not_offered() -> None:
    """The ``caption`` model was retired: the README and the metric's page name the cross-encoder, the default."""
    for name in ("README.md", "docs/delta_sem_syn.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "--classifier caption" not in text and "cross-encoder" in text, name
