"""What a build's memory is made of: no heavy library held before it is needed, and ``--memory`` bounds the
process (DuckDB gets what the process does not already hold)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.common import process_memory
from builder.config import MIN_DUCKDB_MEMORY, duckdb_memory, memory_bytes
from builder.publish.card import SAMPLE_DUMP

ROOT = Path(__file__).resolve().parent.parent


def test_the_engines_import_no_library_a_build_reads_dumps_without() -> None:
    """``import nltk`` loads scikit-learn and SciPy (about 200 MB) into every process that imports it: the parent
    and every extraction worker held them before a page was read."""
    code = (
        "import json, sys; import builder.engines.local, builder.engines.core, builder.filters.chain; "
        "print(json.dumps(sorted(m for m in ('nltk', 'sklearn', 'scipy', 'pandas', 'torch') if m in sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert loaded == []


def test_step_4_still_counts_treebank_tokens_once_nltk_is_loaded() -> None:
    from builder.lang.segmenters import has_min_words, word_count

    assert word_count("Algeria's capital, Algiers – seen from the sea.") == 8  # "Algeria", "'s"; the dash is none
    assert has_min_words("Algeria's capital, Algiers – seen from", 6)  # 5 by whitespace, 6 Treebank tokens
    assert not has_min_words("Algeria's capital – seen", 6)


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ("512MB", 512 * 10**6),
        ("4GB", 4 * 10**9),
        ("1.5GiB", int(1.5 * 2**30)),
        ("300 kib", 300 * 1024),
        ("10bytes", 10),
    ],
)
def test_sizes_are_read_as_duckdb_reads_them(size: str, expected: int) -> None:
    assert memory_bytes(size) == expected


def test_duckdb_gets_what_the_process_does_not_hold() -> None:
    assert duckdb_memory("512MB", 100 * 10**6) == 412 * 10**6
    assert duckdb_memory("512MB", 500 * 10**6) == MIN_DUCKDB_MEMORY  # never so little that it cannot sort
    assert 10 * 10**6 < process_memory() < 24 * 10**9  # this process, as the system counts it
    with pytest.raises(ValueError, match="'lots' is not a size such as 512MB or 4GB"):
        memory_bytes("lots")


def test_a_build_checks_its_tagger_without_holding_its_model(nltk_perceptron) -> None:
    """The caption rule's tagger is checked before any dump is read, in a short-lived process: NLTK and the
    perceptron's weights (about 430 MB) stay out of the build's own process, which tags in workers."""
    code = (
        "import json, sys; from builder.config import BuildOptions, GOLD, SILVER; "
        "from builder.engines.core import prepare; "
        f"plan = prepare([{str(SAMPLE_DUMP)!r}], [GOLD, SILVER], BuildOptions(tagger='perceptron')); "
        "tagger = plan.taggers['en']; "
        "print(json.dumps([tagger.name, tagger.tagset, tagger.signature(), 'nltk' in sys.modules]))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    name, tagset, signature, loaded = json.loads(run.stdout)
    assert (name, tagset, loaded) == ("perceptron", "ptb", False)
    assert signature.startswith("perceptron|nltk-")


def test_a_tagger_that_cannot_be_built_stops_the_build_before_reading(tmp_path, monkeypatch) -> None:
    from builder.config import GOLD, BuildOptions
    from builder.engines.core import prepare
    from builder.filters.tagging import TaggerUnavailable

    monkeypatch.setenv("CORENLP_HOME", str(tmp_path))  # no CoreNLP there: building it fails in the checking process
    with pytest.raises(TaggerUnavailable, match=r"stanza\.install_corenlp\(\).*CORENLP_HOME"):
        prepare([SAMPLE_DUMP], [GOLD], BuildOptions(tagger="corenlp"))


def test_a_build_does_not_load_what_import_nltk_pulls_in(tmp_path: Path, perceptron_available: None) -> None:
    """NLTK's package import loads SciPy and scikit-learn when they are installed (the test extras): 250 MB a build
    never uses. The sample build, in its own process, loads neither."""
    code = (
        "import sys, wikipedia_ipc\n"
        "code = wikipedia_ipc.main(['build', '--output', sys.argv[1], '--quiet', '--workers', '1'])\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'sklearn', 'scipy'}), code)\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "out")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout.strip().splitlines()[-1] == "[] 0", done.stderr[-2000:]
    import sklearn  # noqa: F401 - still importable in a process that imported NLTK through the toolkit first

    from builder.common import importing_nltk

    with importing_nltk():
        import nltk  # noqa: F401
    import scipy.stats  # noqa: F401
