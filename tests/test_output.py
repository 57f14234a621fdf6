"""The output folder: a build only touches its own files, publishes atomically, locks, and reloads as rebuilt."""

from __future__ import annotations

import bz2
import dataclasses
import itertools
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

import builder.engines.local
import builder.publish.publisher
from builder.common import OutputError
from builder.config import GOLD, SILVER
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build
from builder.publish.layout import card_manifest, read_built, read_config
from builder.publish.publisher import STAGING_PREFIX, Publisher, published_files
from builder.sources.sqldump import SqlDumpError

POSTCARD = "Easter Bunny Postcard 1907.jpg"


def captions_dump(path: Path, captions: list[str]) -> Path:
    """One page per caption, all showing the same image."""
    pages = [page_xml(f"Page {n}", f"[[File:{POSTCARD}|thumb|{caption}]]", n + 1) for n, caption in enumerate(captions)]
    path.write_text(dump_xml(pages), encoding="utf-8")
    return path


OLD_CAPTIONS = [
    "The 1907 postcard shows the Easter Bunny with a basket.",
    "A rabbit is depicted on an Easter postcard from 1907.",
    "An old postcard shows a hare that carries a basket of eggs.",
]
NEW_CAPTIONS = [*OLD_CAPTIONS[:2], "A vintage card from 1907 shows a bunny that carries a basket."]


@pytest.fixture
def dumps(tmp_path: Path) -> tuple[Path, Path]:
    old = captions_dump(tmp_path / "enwiki-20240101-pages-articles.xml", OLD_CAPTIONS)
    new = captions_dump(tmp_path / "enwiki-20240201-pages-articles.xml", NEW_CAPTIONS)
    return old, new


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every visible file under the folder with its bytes (hidden staging folders left out)."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }


def sentences(folder: Path, config: str, cache: Path) -> set[str]:
    """The texts of every split of the config (one image's pairs form one component: one split, which may be any)."""
    loaded = datasets.load_dataset(str(folder), config, cache_dir=str(cache))
    rows = [row for split in loaded.values() for row in split]
    return {row["sentence1"] for row in rows} | {row["sentence2"] for row in rows}


def test_a_foreign_folder_is_refused_and_left_untouched(dumps: tuple[Path, Path], tmp_path: Path) -> None:
    user = tmp_path / "user1"
    (user / "gold").mkdir(parents=True)
    (user / "README.md").write_text("my notes\n")
    (user / "gold" / "my-precious-results.parquet").write_bytes(b"precious")
    before = snapshot(user)
    with pytest.raises(OutputError, match=r"user1: not empty \(README.md, gold\) and not a Wikipedia-IPC build"):
        build([dumps[0]], [GOLD], user, tagger="perceptron", show_progress=False)
    assert snapshot(user) == before
    assert sorted(path.name for path in user.iterdir()) == ["README.md", "gold"]


def test_overwrite_adds_the_build_beside_the_users_files(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    user = tmp_path / "user1"
    (user / "gold").mkdir(parents=True)
    (user / "README.md").write_text("my notes\n")
    (user / "gold" / "my-precious-results.parquet").write_bytes(b"precious")
    (user / "gold" / "funnel.json").write_text('{"mine": true}\n')
    build([dumps[0]], [GOLD], user, tagger="perceptron", show_progress=False, overwrite=True)
    assert (user / "README.md.orig").read_text() == "my notes\n"
    assert (user / "gold" / "funnel.json.orig").read_text() == '{"mine": true}\n'
    assert (user / "gold" / "my-precious-results.parquet").read_bytes() == b"precious"
    assert card_manifest(user / "README.md") is not None
    assert sentences(user, "gold", tmp_path / "cache") == set(OLD_CAPTIONS)  # not the user's parquet
    # now a build of ours: a rebuild needs no --overwrite and still leaves the user's files alone
    build([dumps[1]], [GOLD], user, tagger="perceptron", show_progress=False)
    assert (user / "gold" / "my-precious-results.parquet").read_bytes() == b"precious"
    assert (user / "README.md.orig").read_text() == "my notes\n"


def test_a_rebuild_replaces_only_its_own_files(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    old_files = set(snapshot(out))
    (out / "notes.txt").write_text("keep me\n")
    (out / "gold" / "extra.parquet").write_bytes(b"mine")
    build([dumps[1]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    files = set(snapshot(out))
    assert {"notes.txt", "gold/extra.parquet"} <= files
    stale = {name for name in old_files - files if name.endswith(".parquet")}
    assert len(stale) == 2  # the old build's gold and silver shards, and nothing else, are gone
    assert {path.as_posix() for path in published_files(out)} == files - {"notes.txt", "gold/extra.parquet"}
    assert not list(out.glob(STAGING_PREFIX + "*"))


def test_a_config_not_rebuilt_stays_in_the_card(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    silver = {name: data for name, data in snapshot(out).items() if name.startswith("silver/")}
    build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert {name: data for name, data in snapshot(out).items() if name.startswith("silver/")} == silver
    assert set(card_manifest(out / "README.md")["configs"]) == {"gold", "silver"}
    assert "enwiki-20240201" in json.loads((out / "gold" / "funnel.json").read_text())["dumps"][0]["name"]


def test_a_failing_writer_leaves_the_old_build_intact(
    dumps: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    before = snapshot(out)
    real_write_rows = builder.publish.writer.PairWriter.write_rows

    def disk_full_in_silver(self: builder.publish.writer.PairWriter, rows) -> None:  # noqa: ANN001
        if self.folder.name == "silver":
            raise OSError(28, "No space left on device")
        real_write_rows(self, rows)

    monkeypatch.setattr(builder.publish.writer.PairWriter, "write_rows", disk_full_in_silver)
    with pytest.raises(OSError, match="No space left"):
        build([dumps[1]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    assert snapshot(out) == before  # gold was staged already, but nothing was swapped in
    assert not list(out.glob(STAGING_PREFIX + "*"))
    monkeypatch.undo()
    build([dumps[1]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)  # the lock was released
    assert "A vintage card from 1907 shows a bunny that carries a basket." in sentences(out, "silver", tmp_path / "c")


KILLED_BUILD = """
import os, signal, sys
import builder.publish.publisher
from builder.config import GOLD, SILVER
from builder.engines.local import build

def kill(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

{patch}
build([sys.argv[1]], [GOLD, SILVER], sys.argv[2], tagger="perceptron", show_progress=False)
"""


def run_killed_build(patch: str, dump: Path, out: Path) -> None:
    code = KILLED_BUILD.format(patch=textwrap.dedent(patch))
    process = subprocess.run([sys.executable, "-c", code, str(dump), str(out)], capture_output=True, timeout=300)
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()


def test_a_build_killed_while_writing_leaves_the_old_build(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    before = snapshot(out)
    patch = """
    real_flush = builder.publish.writer.PairWriter._flush
    def flush_then_die(self):
        real_flush(self)
        if self.folder.name == "silver" and self.rows:
            kill()
    builder.publish.writer.PairWriter._flush = flush_then_die
    """
    run_killed_build(patch, dumps[1], out)
    assert snapshot(out) == before
    assert len(list(out.glob(STAGING_PREFIX + "*"))) == 1  # what the killed build left, hidden
    assert sentences(out, "silver", tmp_path / "cache") == set(OLD_CAPTIONS)
    with pytest.warns(UserWarning, match="removed the unfinished files of an interrupted build"):
        build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert not list(out.glob(STAGING_PREFIX + "*"))


KILL_AT_STEP = """
import pathlib, shutil
steps = {"applying": False, "done": 0, "busy": False}

def counted(real):
    def step(*args, **kwargs):
        if not steps["applying"] or steps["busy"]:
            return real(*args, **kwargs)
        if steps["done"] == int(sys.argv[3]):
            kill()
        steps["done"] += 1
        steps["busy"] = True
        try:
            return real(*args, **kwargs)
        finally:
            steps["busy"] = False
    return step

os.replace = counted(os.replace)
shutil.rmtree = counted(shutil.rmtree)
for name in ("rename", "unlink", "rmdir"):
    setattr(pathlib.Path, name, counted(getattr(pathlib.Path, name)))
real_apply = builder.publish.publisher._apply

def apply(*args):
    steps["applying"] = True
    real_apply(*args)
    steps["applying"] = False  # the build's own clean-up after the swap is not a step of it

builder.publish.publisher._apply = apply
"""


def card_view(folder: Path) -> dict[str, bytes]:
    """What a reader of the card sees (``datasets`` among them): the card and the parquet files it names."""
    configs = card_manifest(folder / "README.md")["configs"]
    paths = ["README.md", *(f"{name}/{file}" for name, entry in configs.items() for file in entry["files"])]
    return {path: (folder / path).read_bytes() for path in paths}


def reader_view(folder: Path) -> dict[str, object] | str:
    """What a reader of the whole folder sees (the scorer, the comparison): every config's funnel.json record
    and the bytes of its files; or the error that says the folder is not a finished build."""
    try:
        built = read_built(folder)
    except OutputError as error:
        return str(error)
    return {
        name: (config.record, {file.name: file.read_bytes() for file in config.files}) for name, config in built.items()
    }


def config_view(folder: Path) -> tuple[dict, dict[str, bytes]]:
    """What a reader of one config folder sees: its funnel.json and the parquet files it names."""
    config = read_config(folder)
    return config.record, {file.name: file.read_bytes() for file in config.files}


def test_a_build_killed_at_any_step_of_its_swap_is_finished_by_the_next(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    """Killed before each file move, rename or deletion of the swap: a reader sees the old or the new build
    whole (card, parquet and funnel.json), or is told that the publish is unfinished; never a mix."""
    old, new = tmp_path / "old", tmp_path / "new"
    build([dumps[0]], [GOLD, SILVER], old, tagger="perceptron", show_progress=False)
    (old / "notes.txt").write_text("keep me\n")
    shutil.copytree(old, new)
    build([dumps[1]], [GOLD, SILVER], new, tagger="perceptron", show_progress=False)
    views = {"old": card_view(old), "new": card_view(new)}
    readers = {"old": reader_view(old), "new": reader_view(new)}
    configs = {name: {"old": config_view(old / name), "new": config_view(new / name)} for name in ("gold", "silver")}
    seen, unfinished = [], 0
    for step in itertools.count():
        out = tmp_path / f"killed-at-{step}"
        shutil.copytree(old, out)
        code = KILLED_BUILD.format(patch=KILL_AT_STEP)
        process = subprocess.run(
            [sys.executable, "-c", code, str(dumps[1]), str(out), str(step)], capture_output=True, timeout=300
        )
        if process.returncode == 0:  # no step left to kill at: the swap has this many
            assert snapshot(out) == snapshot(new)
            break
        assert process.returncode == -signal.SIGKILL, process.stderr.decode()
        seen.append(next(name for name, view in views.items() if card_view(out) == view))
        if seen[-1] == "old":  # before the card: no parquet file of the old build, nor its card, changed
            assert {path: data for path, data in snapshot(out).items() if not path.endswith("funnel.json")}.items() >= {
                path: data for path, data in snapshot(old).items() if not path.endswith("funnel.json")
            }.items()
        reader = reader_view(out)
        if isinstance(reader, str):  # a funnel.json of the new build beside the old card: said, not mixed
            assert seen[-1] == "old" and "a build was stopped while it published its files" in reader, reader
            unfinished += 1
        else:
            assert reader == readers[seen[-1]]  # the card's build whole, funnel.json included
        for name in ("gold", "silver"):  # one config folder on its own: its funnel.json and files, old or new
            assert config_view(out / name) in configs[name].values()
        with pytest.raises(OutputError, match="an interrupted build is not finished"):
            published_files(out)
        finishing = "finished publishing a build that was interrupted|removed the empty staging folder"
        with pytest.warns(UserWarning, match=finishing):
            Publisher(out, ["gold"]).open().close()  # the next build (any Publisher of the folder) rolls it forward
        assert snapshot(out) == snapshot(new)
        assert {path.as_posix() for path in published_files(out)} == set(snapshot(new)) - {"notes.txt"}
        assert not list(out.glob(STAGING_PREFIX + "*"))
    # killed before the card while parquet files and the funnels moved in, after it while the deletions went on
    assert seen == ["old"] * seen.count("old") + ["new"] * seen.count("new") and seen.count("old") >= 4
    assert seen.count("new") >= 3  # two obsolete shards, the staging folder
    assert unfinished >= 1  # killed between the first funnel.json and the card
    assert "A vintage card from 1907 shows a bunny that carries a basket." in sentences(out, "silver", tmp_path / "c")


def test_a_second_build_into_a_locked_folder_fails_at_once(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"

    def no_extraction(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dump was read")

    with Publisher(out, ["gold"]), pytest.MonkeyPatch.context() as patch:
        patch.setattr(builder.engines.local, "extract_references", no_extraction)
        with pytest.raises(OutputError, match=f"{out}: another build is writing into this folder"):
            build([dumps[0]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert not out.exists()  # the first one made the folder and published nothing: both are gone with it


def _holds_folder(descriptor: int, folder: Path) -> bool:
    """Whether the descriptor (still) refers to the folder; the number may have been reused for another file."""
    try:
        opened = os.fstat(descriptor)
    except OSError:
        return False
    return os.path.samestat(opened, os.stat(folder))


def test_forked_workers_do_not_hold_the_lock(tmp_path: Path) -> None:
    with Publisher(tmp_path / "out", ["gold"]) as publisher:
        descriptor = publisher._lock._descriptor
        assert descriptor is not None
        with multiprocessing.get_context("fork").Pool(1) as pool:
            assert pool.apply(_holds_folder, (descriptor, tmp_path / "out")) is False
        assert _holds_folder(descriptor, tmp_path / "out")
        with pytest.raises(OutputError, match="another build is writing"):
            Publisher(tmp_path / "out", ["gold"]).open()


@pytest.mark.parametrize("case", ["config is a file", "parent is a file", "output is a file"])
def test_an_unwritable_output_fails_before_any_dump_is_read(
    case: str, dumps: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    def no_extraction(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dump was read")

    out = tmp_path / "out"
    if case == "config is a file":
        build([dumps[0]], [GOLD], out, tagger="perceptron", show_progress=False)
        (out / "silver").write_text("")
        message = "out/silver: is a file, but the silver config must be written into a folder there"
        out_path = out
    elif case == "parent is a file":
        out.write_text("")
        out_path = out / "wikipedia_ipc"
        message = "out/wikipedia_ipc: cannot create the output folder"
    else:
        out.write_text("")
        out_path = out
        message = "out: exists and is not a folder"
    monkeypatch.setattr(builder.engines.local, "extract_references", no_extraction)
    with pytest.raises(OutputError, match=message):
        build([dumps[0]], [GOLD, SILVER], out_path, tagger="perceptron", show_progress=False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_fails_before_any_dump_is_read(
    dumps: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    monkeypatch.setattr(builder.engines.local, "extract_references", lambda *a, **k: pytest.fail("a dump was read"))
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        with pytest.raises(OutputError, match="out: cannot write into the output folder"):
            build([dumps[0]], [GOLD], out, tagger="perceptron", show_progress=False)
    finally:
        out.chmod(0o755)


def test_a_rebuilt_folder_loads_as_rebuilt(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    cache = tmp_path / "cache"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    assert sentences(out, "gold", cache) == set(OLD_CAPTIONS)
    assert sentences(out, "silver", cache) == set(OLD_CAPTIONS)
    build([dumps[1]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    assert sentences(out, "gold", cache) == set(NEW_CAPTIONS)
    assert sentences(out, "silver", cache) == set(NEW_CAPTIONS)
    # another folder of the same name, built from the old dump, loads as itself in the same cache
    other = tmp_path / "elsewhere" / "wikipedia_ipc"
    build([dumps[0]], [GOLD], other, tagger="perceptron", show_progress=False)
    assert sentences(other, "gold", cache) == set(OLD_CAPTIONS)


def test_an_empty_config_is_described_but_not_offered_for_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    import wikipedia_ipc

    # only the second caption is a sentence by Table 4: gold keeps one text of the image, so no pair
    dump = captions_dump(
        tmp_path / "enwiki-20240101-pages-articles.xml",
        ["A postcard featuring the Easter Bunny in 1907", "A rabbit is depicted on an Easter postcard from 1907."],
    )
    out = tmp_path / "wikipedia_ipc"
    arguments = ["build", str(dump), "--output", str(out), "--tagger", "perceptron", "--workers", "1", "--quiet"]
    assert wikipedia_ipc.main(arguments) == 0
    printed = capsys.readouterr().out
    assert f'load_dataset("{out}", "silver")' in printed and f'load_dataset("{out}", "gold")' not in printed
    assert "No pair survived in gold" in printed
    assert json.loads((out / "gold" / "funnel.json").read_text())["rows"] == 0
    assert [pq.read_metadata(path).num_rows for path in (out / "gold").glob("*.parquet")] == [0]
    card = (out / "README.md").read_text()
    assert "config_name: gold" not in card and "No pair survived the filters" in card
    assert len(datasets.load_dataset(str(out), "silver", split="train", cache_dir=str(tmp_path / "cache"))) == 1
    with pytest.raises(ValueError, match="BuilderConfig 'gold' not found"):
        datasets.load_dataset(str(out), "gold", split="train", cache_dir=str(tmp_path / "cache"))


def test_the_embedded_sample_is_marked_synthetic_in_the_card(tmp_path: Path, perceptron_available: None) -> None:
    from wikipedia_ipc import SAMPLE_DUMP

    out = tmp_path / "sample"
    build([SAMPLE_DUMP], [GOLD], out, tagger="perceptron", show_progress=False)
    card = (out / "README.md").read_text()
    assert "**Sample build.**" in card and "not Wikipedia articles" in card
    assert "synthetic, not real Wikipedia content" in card


def test_the_cli_refuses_a_foreign_folder_and_explains_overwrite(
    dumps: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    import wikipedia_ipc

    user = tmp_path / "user1"
    user.mkdir()
    (user / "README.md").write_text("my notes\n")
    arguments = ["build", str(dumps[0]), "--output", str(user), "--tagger", "perceptron", "--workers", "1", "--quiet"]
    assert wikipedia_ipc.main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {user}: not empty (README.md) and not a Wikipedia-IPC build")
    assert "--overwrite" in error and "none of yours is deleted" in error
    assert wikipedia_ipc.main([*arguments, "--overwrite"]) == 0
    assert (user / "README.md.orig").read_text() == "my notes\n"


def test_a_failed_build_removes_only_the_empty_folder_it_made(dumps: tuple[Path, Path], tmp_path: Path) -> None:
    not_a_table = tmp_path / "enwiki-20240101-image.sql"
    not_a_table.write_text("SELECT 1;\n", encoding="utf-8")
    sha1 = dataclasses.replace(GOLD, identities=("title", "sha1"))
    new = tmp_path / "new" / "out"
    with pytest.raises(SqlDumpError):  # read after the folder is locked, before any dump
        build([dumps[0]], [sha1], new, tagger="perceptron", show_progress=False, image_tables=[not_a_table])
    assert not new.exists() and (tmp_path / "new").is_dir()  # only the folder the build made itself goes
    found = tmp_path / "found"
    found.mkdir()
    with pytest.raises(SqlDumpError):
        build([dumps[0]], [sha1], found, tagger="perceptron", show_progress=False, image_tables=[not_a_table])
    assert found.is_dir() and not any(found.iterdir())


def _tamper_json(path: Path, change: Callable[[dict], None]) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def _tamper_card(path: Path, change: Callable[[dict], None]) -> None:
    _, front, body = path.read_text().split("---\n", 2)
    metadata = yaml.safe_load(front)
    change(metadata)
    path.write_text(f"---\n{yaml.safe_dump(metadata, sort_keys=False)}---\n{body}")


VICTIM = "../../victim/file.parquet"


def _build_beside_a_victim(dump: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A build, and a file of the user's outside it that a tampered record will point at."""
    out = tmp_path / "a" / "wikipedia_ipc"
    build([dump], [GOLD], out, tagger="perceptron", show_progress=False)
    victim = tmp_path / "victim" / "file.parquet"
    victim.parent.mkdir()
    victim.write_bytes(b"precious")
    return out, victim


@pytest.mark.parametrize(
    ("record", "change", "entry"),
    [
        ("gold/funnel.json", lambda r: r["wikipedia_ipc"]["files"].append(VICTIM), VICTIM),
        ("README.md", lambda m: m["wikipedia_ipc"]["configs"]["gold"]["files"].append(VICTIM), VICTIM),
        ("README.md", lambda m: m["wikipedia_ipc"]["configs"].update({"../victim": {"files": []}}), "../victim"),
    ],
    ids=["funnel file", "card file", "card config"],
)
def test_a_path_out_of_the_folder_in_a_manifest_stops_the_build(
    record: str,
    change: Callable[[dict], None],
    entry: str,
    dumps: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    perceptron_available: None,
) -> None:
    out, victim = _build_beside_a_victim(dumps[0], tmp_path)
    (_tamper_card if record == "README.md" else _tamper_json)(out / record, change)
    before = snapshot(out)
    message = f"{out / record}: the (file|config) {re.escape(repr(entry))} is not a plain name inside the output"
    with pytest.raises(OutputError, match=message):
        published_files(out)
    monkeypatch.setattr(builder.engines.local, "extract_references", lambda *a, **k: pytest.fail("a dump was read"))
    with pytest.raises(OutputError, match=message):
        build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert victim.read_bytes() == b"precious" and snapshot(out) == before


@pytest.mark.parametrize("key", ["configs", "aside", "obsolete"])
def test_a_path_out_of_the_folder_in_a_commit_record_stops_the_build(
    key: str, dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out, victim = _build_beside_a_victim(dumps[0], tmp_path)
    staging = out / f"{STAGING_PREFIX}evil"
    staging.mkdir()
    entry = "../../victim" if key == "configs" else VICTIM.removeprefix("../")
    commit = {"configs": [], "aside": [], "obsolete": [], key: [entry]}
    (staging / "publish.json").write_text(json.dumps(commit))
    before = snapshot(out)
    with pytest.raises(
        OutputError, match=f"{staging / 'publish.json'}: the .* {re.escape(repr(entry))} is not a plain"
    ):
        build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert victim.read_bytes() == b"precious" and snapshot(out) == before
    assert (staging / "publish.json").is_file()


@pytest.mark.parametrize("kind", ["folder", "file", "symlink"])
def test_a_users_namesake_of_a_staging_folder_is_left_alone(
    kind: str, dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD], out, tagger="perceptron", show_progress=False)
    mine = out / f"{STAGING_PREFIX}mine"
    if kind == "folder":
        mine.mkdir()
        (mine / "notes.txt").write_text("mine\n")
    elif kind == "file":
        mine.write_text("mine\n")
    else:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "notes.txt").write_text("mine\n")
        mine.symlink_to(tmp_path / "elsewhere")
    build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert sentences(out, "gold", tmp_path / "cache") == set(NEW_CAPTIONS)
    assert (mine.read_text() if kind == "file" else (mine / "notes.txt").read_text()) == "mine\n"
    assert mine.is_symlink() == (kind == "symlink")
    assert [path.name for path in out.glob(STAGING_PREFIX + "*")] == [mine.name]


def test_a_copy_of_a_config_folder_is_not_a_config(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD], out, tagger="perceptron", show_progress=False)
    shutil.copytree(out / "gold", out / "gold-backup")
    backup = {name: data for name, data in snapshot(out).items() if name.startswith("gold-backup/")}
    build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    card = (out / "README.md").read_text()
    assert card.count("config_name: gold") == 1 and set(card_manifest(out / "README.md")["configs"]) == {"gold"}
    assert sentences(out, "gold", tmp_path / "cache") == set(NEW_CAPTIONS)
    assert {name: data for name, data in snapshot(out).items() if name.startswith("gold-backup/")} == backup
    assert all(not path.parts[0].startswith("gold-") for path in published_files(out))


def test_a_config_whose_record_names_another_is_refused(
    dumps: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    _tamper_json(out / "silver" / "funnel.json", lambda record: record.update(config="gold"))
    before = snapshot(out)
    monkeypatch.setattr(builder.engines.local, "extract_references", lambda *a, **k: pytest.fail("a dump was read"))
    with pytest.raises(OutputError, match="silver/funnel.json: describes config 'gold', not 'silver'"):
        build([dumps[1]], [GOLD], out, tagger="perceptron", show_progress=False)
    assert snapshot(out) == before


def test_a_card_naming_a_file_that_is_not_there_is_not_published(
    dumps: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    out = tmp_path / "wikipedia_ipc"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    before = snapshot(out)
    real_render = builder.publish.card.render_card

    def lose_a_file_then_render(records: list[dict], **options: object) -> str:
        next(out.glob(f"{STAGING_PREFIX}*/silver/*.parquet")).unlink()  # as if deleted behind the build's back
        return real_render(records, **options)

    monkeypatch.setattr(builder.publish.publisher, "render_card", lose_a_file_then_render)
    with pytest.raises(OutputError, match=r"README.md: lists silver/\S+\.parquet, which is neither staged nor kept"):
        build([dumps[1]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    assert snapshot(out) == before and not list(out.glob(STAGING_PREFIX + "*"))


def test_the_card_marks_a_dump_that_failed(
    dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    broken = tmp_path / "enwiki-20240301-pages-articles.xml.bz2"
    broken.write_bytes(bz2.compress(dumps[1].read_bytes())[:-40])
    out = tmp_path / "wikipedia_ipc"
    report = build([dumps[0], broken], [GOLD], out, tagger="perceptron", show_progress=False)
    reason = report.extraction.failures[0].removeprefix(f"{broken}: ")
    assert reason.startswith("truncated")
    card = (out / "README.md").read_text()
    assert f"`{broken.name}` (unknown, dump date 20240301, kind: articles): **failed**, none of its pages" in card
    assert reason in card and str(tmp_path) not in card
    good = next(line for line in card.splitlines() if f"`{dumps[0].name}`" in line)
    assert good.endswith("kind: articles)")  # the dump that was read is listed as before


@pytest.mark.parametrize("left", ["commit record only", "commit record and empty folders", "marker only", "nothing"])
def test_what_a_kill_leaves_of_a_staging_folder_is_finished_or_discarded(
    dumps: tuple[Path, Path], tmp_path: Path, left: str, perceptron_available: None
) -> None:
    """Killed while the staging folder of a published build was being removed, a build leaves its commit record
    alone, or beside emptied config folders, or its marker alone, or an empty folder: the next build or reader of the
    folder finishes or discards it, and the published build stays whole."""
    out = tmp_path / "out"
    build([dumps[0]], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    before = snapshot(out)
    staging = out / f"{STAGING_PREFIX}killed"
    staging.mkdir()
    if left.startswith("commit record"):
        commit = {"configs": ["gold", "silver"], "aside": ["README.md"], "obsolete": []}
        (staging / "publish.json").write_text(json.dumps(commit), encoding="utf-8")
    if left == "commit record and empty folders":
        (staging / "gold").mkdir()
    if left == "marker only":
        marker = {builder.publish.publisher.MARKER: {"format": builder.publish.publisher.FORMAT, "pid": 1}}
        (staging / "staging.json").write_text(json.dumps(marker), encoding="utf-8")
    with pytest.warns(UserWarning, match="interrupted"):
        Publisher(out, ["gold"]).open().close()
    assert not staging.exists() and snapshot(out) == before
    assert {path.as_posix() for path in published_files(out)} == set(before)
