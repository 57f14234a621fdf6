"""Score the pairs of a file or a built Wikipedia-IPC folder and write the scores back as columns.

Usage::

    python -m metrics score pairs.tsv                   # → pairs.scored.tsv
    python -m metrics score pairs.jsonl --columns a b   # → pairs.scored.jsonl
    python -m metrics score wikipedia_ipc/              # → wikipedia_ipc-scored/<config>/*.parquet

Every pair also gets ``paraphrase_probability`` from a shipped classifier (``--classifier``:
``crossencoder``, the default, all-MiniLM-L6-v2 fine-tuned as a cross-encoder on pairs people
labelled (STS-B, MSRPC, PAWS-Wiki; English); ``seed``, Brockett & Dolan's SVM trained on MSRPC;
``measures``, over the Δsem,syn measures and a build's meta-information, so built folders only;
docs/paraphrases.md), and ``--min-precision 0.9`` chooses the cut that keeps pairs at that precision
on human-labelled pairs the model did not train on, stated with the estimated share of paraphrases
kept and its interval. A built folder's configs also get their characteristic maps,
shown in the scored card; all maps share one colour scale, which the card states.

A TSV holds one pair per line, fields separated by tabs and taken verbatim (no quoting).
Its first line is a header when ``--columns`` are given (they name header fields), or
when it names both texts' columns as paraphrase corpora release them (``sentence1``
``sentence2``, MSRPC's ``#1 String`` ``#2 String``, ``text_a`` ``text_b``, ``question1``
``question2``, ``a`` ``b``, ...) and its other fields are names too; stderr says which was
decided, and ``--header``/``--no-header`` decide instead. The texts are the ``--columns``
named in the header, else the known pair it names, else the first two columns.
A JSONL holds one object per line with the ``--columns``
keys. Every pair needs both texts: an empty text field, a JSON null or absent key, or a null
in a folder's parquet is an error naming the file and the line (the row index in a parquet file).
The scored TSV keeps the input's columns (and header names) and is written as it is read: fields
verbatim, no quoting, so scoring a scored file reads the same texts (its earlier score columns are
scored anew). Read it back exactly with the same dialect, and tell pandas and ``datasets`` that a
text such as ``NA``, ``null`` or ``nan`` is a text, not a missing value:

    csv.reader(handle, delimiter="\\t", quoting=csv.QUOTE_NONE)
    pandas.read_csv(path, sep="\\t", quoting=csv.QUOTE_NONE, keep_default_na=False, dtype=str)
    datasets.load_dataset("csv", data_files=path, sep="\\t", quoting=csv.QUOTE_NONE, keep_default_na=False,
                          converters={"sentence1": str, "sentence2": str})   # the text columns' names
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from builder.storage import local_path
from metrics.crossencoder import PRECISION_VARIABLE, CrossEncoderClassifier, asked_precision
from metrics.crossencoder import precision as crossencoder_precision
from metrics.paraphrase import (
    DEFAULT_MODEL,
    META,
    MODELS,
    RULE_LEVELS,
    AnyClassifier,
    Cut,
    caption_rule_of,
    classifier_name,
    cut_for_precision,
    load_classifier,
    pair_key,
    pair_probability,
)
from metrics.profiles import PROFILES, ModelUnavailable, get_profile
from metrics.scoring import release_models, score_pairs
from metrics.semantic import RUNTIME_CHOICES
from metrics.syntactic import TOKENIZERS

SCORE_COLUMNS = ("rouge1", "rougeL", "bleu", "wms", "bert", "st", "syn", "sem", "delta")
PROBABILITY = "paraphrase_probability"
MAPS_LEGEND = "One colour scale for the maps of every config of this folder."
DEFAULT_COLUMNS = ("sentence1", "sentence2")
# The two text columns as paraphrase corpora name them in their header lines (compared case-insensitively).
TEXT_COLUMNS = (
    DEFAULT_COLUMNS,  # Wikipedia-IPC, PAWS, the GLUE tasks on the Hugging Face Hub
    ("#1 String", "#2 String"),  # MSRPC's release: Quality, #1 ID, #2 ID, #1 String, #2 String
    ("sentence_1", "sentence_2"),
    ("text_a", "text_b"),
    ("text1", "text2"),
    ("text_1", "text_2"),
    ("question1", "question2"),  # Quora Question Pairs
    ("a", "b"),  # this tool's documented example (``--columns a b``)
)
_OTHER_COLUMNS = frozenset({"#1 id", "#2 id"})  # MSRPC's further fields that are not identifiers
_NAME = re.compile(r"^[A-Za-z_][\w.-]{0,63}$")


class InputError(ValueError):
    """A malformed input file; the message names the file and the line."""


class NothingToScore(InputError):
    """A built folder none of whose configs has a pair."""


def read_lines(path: Path) -> list[str]:
    """The file's lines as UTF-8 text; a binary or otherwise encoded file is an error naming the line."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = []
    for number, raw in enumerate(data.splitlines(), 1):
        if b"\x00" in raw:
            raise InputError(f"{path}:{number}: a NUL byte: a binary file, not UTF-8 text")
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise InputError(
                f"{path}:{number}: not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1}); "
                "convert the file, e.g. iconv -f latin1 -t utf-8"
            ) from None
    return lines


def _known_pair(names: Sequence[str]) -> tuple[int, int] | None:
    """Where the first known pair of text columns (:data:`TEXT_COLUMNS`) is among ``names``."""
    folded = [name.casefold() for name in names]
    for first, second in TEXT_COLUMNS:
        if first.casefold() in folded and second.casefold() in folded:
            return folded.index(first.casefold()), folded.index(second.casefold())
    return None


def _looks_like_header(first: list[str]) -> bool:
    """Clearly a header: it names a known pair of text columns, and every other field is a name too.

    A shape alone ("short words here, longer text below") took a real pair such as
    ``Hello<TAB>Hi`` for a header and silently dropped it.
    """
    pair = _known_pair(first)
    if pair is None:
        return False
    others = [cell for index, cell in enumerate(first) if index not in pair]
    return all(_NAME.match(cell) or cell.casefold() in _OTHER_COLUMNS for cell in others)


def read_tsv(path: Path, columns: Sequence[str], header: bool | None) -> tuple[list[str] | None, list[list[str]], int]:
    """Header (None without one), rows, and the positions of the two text columns."""
    lines = read_lines(path)
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise InputError(f"{path}: empty file, no pairs to score")
    if header is None:
        header = _guess_header(path, rows[0], columns)
    names = rows[0] if header else None
    body = rows[1:] if header else rows
    if not body:
        raise InputError(f"{path}: only a header line, no pairs to score")
    width = len(names) if names else max(2, len(rows[0]))
    for number, row in enumerate(body, 2 if header else 1):
        if len(row) < 2 or len(row) != width:
            raise InputError(f"{path}:{number}: expected {width} tab-separated fields, found {len(row)}")
        if row == names:
            raise InputError(f"{path}:{number}: the header line again, inside the file (files joined?): not a pair")
    return names, body, width


def _earlier_scores(path: Path, names: list[str] | None, rows: list[list[str]]) -> tuple[list[str] | None, list]:
    """A scored file scored again: the columns an earlier scoring added are dropped (said on stderr), so the new
    scores replace them instead of standing beside them twice."""
    if not names:
        return names, rows
    earlier = [index for index, name in enumerate(names) if name in (*SCORE_COLUMNS, PROBABILITY)]
    if not earlier:
        return names, rows
    print(f"{path}: the columns of an earlier scoring ({', '.join(names[i] for i in earlier)}) are scored anew",
          file=sys.stderr)  # fmt: skip
    kept = [index for index in range(len(names)) if index not in earlier]
    return [names[i] for i in kept], [[row[i] for i in kept] for row in rows]


def _guess_header(path: Path, first: list[str], columns: Sequence[str]) -> bool:
    """Whether the first line is a header (see the module's notes), said on stderr either way."""
    shown = ", ".join(repr(cell) for cell in first)
    if tuple(columns) != DEFAULT_COLUMNS:
        print(f"{path}: first line taken as header: {shown} (--columns names its fields)", file=sys.stderr)
        return True
    if _looks_like_header(first):
        print(f"{path}: first line taken as header: {shown}; pass --no-header if it is a pair", file=sys.stderr)
        return True
    print(
        f"{path}: no header line, the first line is a pair: {shown}; pass --header if it names the columns",
        file=sys.stderr,
    )
    return False


def text_columns(path: Path, names: list[str] | None, columns: Sequence[str] | None) -> tuple[int, int]:
    """Where the two texts are: the named ``--columns``, else a known pair in the header, else the first two."""
    if columns is None:
        return (_known_pair(names) if names else None) or (0, 1)
    if names is None:
        raise InputError(f"{path}: --columns {' '.join(columns)} needs a header line naming them (or --header)")
    missing = [column for column in columns if column not in names]
    if missing:
        raise InputError(f"{path}:1: the header has no column {missing[0]!r} (it has {', '.join(names)})")
    return names.index(columns[0]), names.index(columns[1])


def tsv_texts(
    path: Path, names: list[str] | None, rows: list[list[str]], positions: tuple[int, int]
) -> tuple[list[str], list[str]]:
    """The first and the second texts of the rows; an empty text field is a missing text, an error naming
    its line (:func:`metrics.corpora.pair_text`)."""
    from metrics.corpora import pair_text

    start = 2 if names else 1  # the line number of the first row
    first, second = (
        [
            pair_text(row[position].strip() and row[position] or None,
                      names[position] if names else f"column {position + 1}", f"{path}:{number}")  # fmt: skip
            for number, row in enumerate(rows, start)
        ]
        for position in positions
    )
    return first, second


def read_jsonl(path: Path, columns: Sequence[str]) -> list[dict[str, object]]:
    """The file's objects; one without both texts (absent, null, not a string) is an error naming its line."""
    from metrics.corpora import pair_text

    records = []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:{number}: a JSON {type(record).__name__}, not an object with {list(columns)}")
        for column in columns:
            if not pair_text(record.get(column), column, f"{path}:{number}").strip():
                raise InputError(f"{path}:{number}: {column} is empty: every pair needs both texts")
        records.append(record)
    if not records:
        raise InputError(f"{path}: no JSON objects, no pairs to score")
    return records


def _score(first: list[str], second: list[str], arguments: argparse.Namespace) -> dict[str, object]:
    return score_pairs(
        first,
        second,
        profile=arguments.profile,
        batch_size=arguments.batch_size,
        device=arguments.device,
        tokenize=arguments.tokenize,
        fp16=arguments.fp16,
        runtime=arguments.runtime,
        progress=arguments.progress,
        language=arguments.language,
        check_language=arguments.language_check,
    )


def _file_probability(
    first: list[str], second: list[str], results: dict[str, object], classifier: AnyClassifier | None
) -> list[float] | None:
    """The probability of a file's pairs, from their texts (and measures, for a model that takes them)."""
    if classifier is None:
        return None
    release_models()  # a file is scored once: the metric's models go before the classifier's load
    table = pa.table({"sentence1": first, "sentence2": second})
    return _without_words(pair_probability(classifier, table, results), results).tolist()  # type: ignore[arg-type]


def _file_classifier(arguments: argparse.Namespace) -> None:
    """A file has no build's meta-information: a classifier that needs it is refused before any scoring, naming
    the ones that can score a file."""
    model = load_classifier(arguments.classifier)
    if any(name in META for name in model.features):
        able = [name for name in MODELS if not any(f in META for f in load_classifier(name).features)]
        raise InputError(
            f"--classifier {arguments.classifier} takes a build's meta-information, which a file has not: score a "
            f"built folder, or choose --classifier {' or '.join(able)}"
        )


def score_file(path: Path, output: Path, arguments: argparse.Namespace) -> dict[str, object]:
    """A TSV or JSONL file's pairs scored into ``output``: the input's fields, the measures and the probability."""
    if arguments.columns and arguments.columns[0] == arguments.columns[1]:
        raise InputError(f"--columns names {arguments.columns[0]!r} twice: each text would be scored against itself")
    _file_classifier(arguments)
    classifier, cut = _classifier_and_cut(arguments)
    if path.suffix == ".jsonl":
        a, b = arguments.columns or DEFAULT_COLUMNS
        records = read_jsonl(path, (a, b))
        first, second = [str(r[a]) for r in records], [str(r[b]) for r in records]
        results = _score(first, second, arguments)
        probability = _file_probability(first, second, results, classifier)
        columns = [*SCORE_COLUMNS, *([PROBABILITY] if probability is not None else [])]
        values = {**results, PROBABILITY: probability}
        with _written_aside(output) as aside, open(aside, "w", encoding="utf-8") as handle:
            for index, record in enumerate(records):
                scores = {column: values[column][index] for column in columns}  # type: ignore[index]
                handle.write(json.dumps({**record, **scores}, ensure_ascii=False) + "\n")
    else:
        names, rows, width = read_tsv(path, arguments.columns or DEFAULT_COLUMNS, arguments.header)
        names, rows = _earlier_scores(path, names, rows)
        width = len(names) if names else width
        positions = text_columns(path, names, arguments.columns)
        first, second = tsv_texts(path, names, rows, positions)
        results = _score(first, second, arguments)
        probability = _file_probability(first, second, results, classifier)
        columns = [*SCORE_COLUMNS, *([PROBABILITY] if probability is not None else [])]
        values = {**results, PROBABILITY: probability}
        header = names or [*DEFAULT_COLUMNS, *(f"column{n}" for n in range(3, width + 1))]
        # written as it is read: tab-separated, each field verbatim (a field read from a line holds no tab and no
        # line end), so scoring a scored file reads its texts back unchanged
        with _written_aside(output) as aside, open(aside, "w", encoding="utf-8", newline="") as handle:
            handle.write("\t".join(header + columns) + "\n")
            for index, row in enumerate(rows):
                handle.write("\t".join(row + [f"{values[column][index]:.6f}" for column in columns]) + "\n")  # type: ignore[index]
    if probability is not None:
        results.update(_kept(np.asarray(probability), cut))
    return results


def _file_output(source: Path, output: Path) -> None:
    """A file's output checked before any scoring: never the input (however spelled: another path, a symbolic
    link, a hard link), never a folder, and in a folder that exists and can be written."""
    if output.resolve() == source.resolve() or (output.exists() and os.path.samefile(output, source)):
        raise InputError(f"--output {output} is the input file {source}: the scorer never writes over its input")
    if output.is_dir():
        raise InputError(f"--output {output} is a folder; a file's scores go to a file (e.g. {output / source.name})")
    folder = output.resolve().parent
    if not folder.is_dir():
        raise InputError(f"--output {output}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"--output {output}: the folder {folder} cannot be written")


@contextlib.contextmanager
def _written_aside(output: Path) -> Iterator[Path]:
    """Where a file's scores are written before they replace ``output`` in one rename: a failed or interrupted
    scoring leaves ``output`` as it was, and no partial file beside it."""
    aside = output.with_name(f".{output.name}.{os.getpid()}.partial")
    try:
        yield aside
        aside.replace(output)
    finally:
        aside.unlink(missing_ok=True)


def _kept(probability: np.ndarray, cut: Cut | None) -> dict[str, object]:
    """How many pairs the classifier calls paraphrases (> 0.5) and, with a cut, how many it keeps."""
    scored = int(np.sum(~np.isnan(probability)))
    counts: dict[str, object] = {"likely_paraphrases": (int(np.sum(probability > 0.5)), scored)}
    if cut is not None:
        counts["kept"] = (int(np.sum(probability >= cut.threshold)), scored, cut)
    return counts


def _apart(folder: Path, output: Path) -> None:
    """The scored copy goes to a folder of its own: not the input, not inside it, not around it."""
    source, target = folder.resolve(), output.resolve()
    if target == source:
        raise InputError(f"{output}: --output is the input folder; the scored copy must go to another folder")
    if target.is_relative_to(source):
        raise InputError(f"{output}: --output is inside the input folder {folder}; choose a folder beside it")
    if source.is_relative_to(target):
        raise InputError(f"{output}: --output holds the input folder {folder}; choose a folder beside it")


def score_folder(folder: Path, output: Path, arguments: argparse.Namespace) -> dict[str, dict[str, object]]:
    """Every config of a built dataset folder, scored into the same layout under ``output``, with its card.

    The configs and their parquet files are those the input's card names (a user's files
    beside them are not pairs). The input is locked while it is read, so no build swaps
    files under the scorer; the output is written as a build is (:class:`builder.publish.publisher.Publisher`:
    a folder of the user's is refused, the scored copy is staged and swapped in atomically).
    It holds exactly the configs scored now: those of an earlier scoring that the input
    no longer has go, as their scores would carry another signature. Each config's record
    is carried over, so ``load_dataset(output, "gold")`` works as on the input, and the
    scored file's content-hashed name keeps ``datasets``' cache honest. Each pair also gets
    ``paraphrase_probability`` (:mod:`metrics.paraphrase`) where the shipped classifier was
    trained on the profile's scores, and each config its characteristic map, shown in the card; the maps
    share one colour scale (:func:`metrics.compare.colour_limits`), which the card states.
    """
    from builder.common import FolderLock, OutputError
    from builder.publish.layout import MARKER, read_built
    from builder.publish.publisher import Publisher, recover
    from builder.publish.writer import file_digest
    from metrics.compare import save_maps, titled_map
    from metrics.corpora import read_pairs_parquet

    _apart(folder, output)
    classifier, cut = _classifier_and_cut(arguments)
    all_results = {}
    shares: dict[str, dict[str, object]] = {}
    with FolderLock(folder):
        for note in recover(folder):  # a build killed while it moved its files in: finish it, then read
            print(f"warning: {note}", file=sys.stderr)
        try:
            built = read_built(folder)
        except OutputError as error:
            raise InputError(str(error)) from None
        sources = {}  # every config's record and files, checked before the output is touched
        for name in sorted(built):
            record = dict(built[name].record)
            record.pop(MARKER)
            sources[name] = record, list(built[name].files)
        tables = {name: _unscored(read_pairs_parquet(files)) for name, (_, files) in sources.items()}
        paired = {name for name in sources if built[name].pairs}  # records and Déjà's edges: carried over as built
        rules = _strictest_rules(
            {name: (tables[name], record) for name, (record, _) in sources.items() if name in paired}
        )
        if not any(tables[name].num_rows for name in paired):
            raise NothingToScore(f"{folder}: no config has pairs to score")
        with Publisher(output, list(sources), overwrite=arguments.overwrite, keep_earlier=False) as publisher:
            written: dict[str, list[Path]] = {}  # each config's scored files, staged once its map is drawn too
            pictures: dict[str, tuple[np.ndarray, str]] = {}  # each config's map and its title, drawn at the end
            for name, (_, files) in sources.items():
                table = tables[name]
                if name not in paired:  # not pairs: copied into the scored folder as they are, unscored
                    written[name] = _write_splits(publisher.config_folder(name), table, files)
                    continue
                if not table.num_rows:  # carried over as built (its funnel says why), with the score columns
                    for column in [*SCORE_COLUMNS, *([PROBABILITY] if classifier is not None else [])]:
                        table = table.append_column(column, pa.array([], type=pa.float64()))
                    written[name] = _write_splits(publisher.config_folder(name), table, files)
                    continue
                first, second = table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist()
                results = _score(first, second, arguments)
                for column in SCORE_COLUMNS:
                    table = table.append_column(column, pa.array(results[column], type=pa.float64()))  # type: ignore[arg-type]
                if classifier is not None:
                    probability = _without_words(
                        pair_probability(classifier, table, results, rules[name]),  # type: ignore[arg-type]
                        results,
                    )
                    table = table.append_column(PROBABILITY, pa.array(probability, type=pa.float64()))
                    shares[name] = _kept(probability, cut)
                    results.update(shares[name])
                target = publisher.config_folder(name)
                written[name] = _write_splits(target, table, files)
                pictures[name] = titled_map(table, name)
                all_results[name] = results
            partials = {name: publisher.config_folder(name) / "map.png.partial" for name in pictures}
            # once every config is scored: all maps on one colour scale
            limits = save_maps({partials[name]: picture for name, picture in pictures.items()}, legend=MAPS_LEGEND)
            maps: dict[str, str] = {}
            for name, partial in partials.items():
                written[name].append(partial.replace(partial.with_name(f"map-{file_digest(partial)}.png")))
                maps[name] = written[name][-1].name
            for name, (record, _) in sources.items():
                publisher.add_config(name, record, written[name])
            signature = next(iter(all_results.values()))["signature"]
            rule = get_profile(arguments.profile).st_threshold.value
            publisher.publish(card_suffix=scores_card(signature, classifier, shares, maps, limits, cut, rule))
    return all_results


def _unscored(table: pa.Table) -> pa.Table:
    """The pairs without the columns a scoring adds: a scored folder scored again gets its scores anew."""
    return table.drop_columns([name for name in (*SCORE_COLUMNS, PROBABILITY) if name in table.column_names])


def _write_splits(target: Path, table: pa.Table, files: list[Path]) -> list[Path]:
    """The scored table cut into one file per split, as the build wrote it, each named by its content's hash."""
    from builder.publish.layout import split_of_file
    from builder.publish.writer import file_digest

    written = []
    start = 0
    for split, members in itertools.groupby(files, key=split_of_file):
        count = sum(pq.read_metadata(file).num_rows for file in members)
        part = target / f"{split}.parquet.partial"
        pq.write_table(table.slice(start, count), part, compression="zstd")
        written.append(part.replace(target / f"{split}-00000-of-00001-{file_digest(part)}.parquet"))
        start += count
    return written


KEY_COLUMNS = ("image", "page1", "sentence1", "page2", "sentence2")
METRIC_MODULES = ("torch", "sentence_transformers", "bert_score", "rouge_score", "ot", "evaluate")


def check_scoring(profile: str) -> None:
    """Fail before a build whose scoring could not run: the metric stack missing, or the profile's models.

    ``build --score`` checks this first, so a missing model is said before the dumps are read, not
    after an hour of building.
    """
    from metrics.profiles import ensure_gensim_vectors, ensure_hub_model, get_profile

    asked_precision()
    missing = [name for name in METRIC_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelUnavailable(
            get_profile(profile),
            "the metric's libraries",
            f'{", ".join(missing)} not installed; pip install -e ".[metric]" (CPU-only machines: install '
            "PyTorch's CPU build first, see README)",
        )
    chosen = get_profile(profile)
    ensure_hub_model(chosen, "the sentence model", chosen.sentence_model)
    ensure_hub_model(chosen, "the BERTScore model", chosen.bert_model)
    if chosen.word_vectors != "word-pieces":
        ensure_gensim_vectors(chosen)


def _strictest_rules(configs: dict[str, tuple[pa.Table, dict]]) -> dict[str, list[str]]:
    """Per config and row, the strictest caption rule of the configs that hold the pair (a silver pair that gold
    holds too passed gold's rule)."""
    keys = {
        name: [pair_key(row) for row in table.select(KEY_COLUMNS).to_pylist()] for name, (table, _) in configs.items()
    }
    strictest: dict[tuple[object, ...], str] = {}
    for name, (_, record) in configs.items():
        rule = caption_rule_of(record.get("parameters", {}))
        for key in keys[name]:
            if RULE_LEVELS[rule] >= RULE_LEVELS[strictest.get(key, "none")]:
                strictest[key] = rule
    return {name: [strictest[key] for key in config_keys] for name, config_keys in keys.items()}


def _classifier_for(profile: str, name: str = DEFAULT_MODEL, language: str = "en") -> AnyClassifier | None:
    """The shipped classifier ``name`` where it can score these pairs, else None (said on stderr): one that takes
    the Δsem,syn measures needs the profile it was trained on; Brockett & Dolan's features are English."""
    classifier = load_classifier(name)
    if classifier.takes_measures and classifier.profile != profile:
        print(
            f"note: no {PROBABILITY} column: the classifier was trained on profile {classifier.profile!r} scores, "
            f"and profile {profile!r} scores lie elsewhere",
            file=sys.stderr,
        )
        return None
    if language != "en" and isinstance(classifier, CrossEncoderClassifier):
        print(
            f"note: no {PROBABILITY} column: classifier {classifier.version} was trained and measured on English "
            f"pairs only, and the texts are {language!r}",
            file=sys.stderr,
        )
        return None
    if language != "en" and not classifier.takes_measures:
        print(
            f"note: no {PROBABILITY} column: classifier {classifier.version} reads English words (WordNet, an "
            f"English stemmer), and the texts are {language!r}",
            file=sys.stderr,
        )
        return None
    return classifier


def _classifier_and_cut(arguments: argparse.Namespace) -> tuple[AnyClassifier | None, Cut | None]:
    """The chosen classifier and, with ``--min-precision``, its cut on the labelled sample (checked before any
    scoring, so an unreachable precision fails at once)."""
    classifier = _classifier_for(arguments.profile, arguments.classifier, arguments.language)
    if arguments.min_precision is None:
        return classifier, None
    model = classifier or load_classifier(arguments.classifier)
    cut = cut_for_precision(model, arguments.min_precision)
    return classifier, (cut if classifier is not None else None)


def scores_card(
    signature: object,
    classifier: AnyClassifier | None,
    shares: dict[str, dict[str, object]],
    maps: dict[str, str],
    limits: tuple[float, float],
    cut: Cut | None = None,
    rule: float | None = None,
) -> str:
    """The scored folder's card section: the columns, the classifier and its figures, each config's share and map
    (``limits``: the maps' one colour scale)."""
    columns = [*SCORE_COLUMNS, *([PROBABILITY] if classifier is not None else [])]
    text = (
        "\n## Δsem,syn scores\n\n"
        f"Every pair carries the columns {', '.join(f'`{c}`' for c in columns)}, "
        f"scored with `python -m metrics score` (signature `{signature}`).\n"
    )
    if classifier is not None:
        text += "\n" + classifier_section(classifier, shares, cut, rule)
    text += (
        "\n### Characteristic maps\n\nEach config's pairs on the 5×5 grid of syn and sem (`benchmarks/compare.py`); "
        "a cell is the share of the config's scored pairs in it. "
        f"All maps share one colour scale, from {limits[0]:.0%} (white) to {limits[1]:.0%} (darkest: the largest "
        "cell of any config), so equal shares look equal across configs.\n\n"
    )
    for name, picture in maps.items():
        text += f"![{name}: characteristic map]({name}/{picture})\n\n"
    return text


def _trained_on(trained: dict[str, object]) -> str:
    """What a model was trained on, in words: corpora (pairs, SHA-256 prefix) and the labelled caption sample."""
    parts = []
    for corpus in trained.get("svm", []):  # type: ignore[union-attr]
        digests = ", ".join(f"{Path(file).name} {digest[:12]}" for file, digest in corpus["files"].items())
        parts.append(f"{corpus['name']} ({corpus['pairs']:,} pairs; SHA-256 {digests})")
    labelled = trained.get("calibration") or trained.get("labelled_sample") or trained
    text = f"the SVM on {' and '.join(parts)}; " if parts else ""
    role = "calibrated on" if "calibration" in trained else ("trained on" if not parts else "its cut chosen on")
    return (
        text + f"{role} {labelled.get('pairs')} hand-labelled English caption pairs ({labelled.get('file')}, "  # type: ignore[union-attr]
        f"SHA-256 {str(labelled.get('sha256'))[:12]})"  # type: ignore[union-attr]
    )


def _crossencoder_intro(classifier: CrossEncoderClassifier) -> str:
    """What the cross-encoder is, what it learnt from, and its figures on test splits it never saw."""
    trained: dict = classifier.trained_on  # type: ignore[assignment]
    text = (
        f"`{PROBABILITY}` is the probability that a pair is a paraphrase (the same message), from classifier "
        f"`{classifier.version}` (`--classifier`): {classifier.base.get('name')} fine-tuned as a cross-encoder on "
        f"{trained['train']['pairs']:,} pairs that people labelled ({trained['train']['corpora']}) and "
        f"{classifier.calibration_said()} on {trained['calibration']['pairs']:,} more "
        f"({trained['calibration']['corpora']}); the "
        "SHA-256 of every file is in its card (`metrics/data/paraphrase_crossencoder.json`)."
    )
    kind = crossencoder_precision()
    text += (
        f" The network ran in {kind} on this machine (bfloat16 where the CPU multiplies it natively, float32 "
        f"elsewhere; `{PRECISION_VARIABLE}=float32` or `bfloat16` fixes one); the figures below are of that precision."
    )
    model, msrpc = classifier.figures("stsb_test_captions", kind), classifier.figures("msrpc_test", kind)
    if model:
        cosine, (low, high) = classifier.evaluation["stsb_test_captions"]["cosine"], model["intervals"]["auc"]
        text += (
            f" On the STS Benchmark's `main-captions` test split ({model['pairs']} caption pairs, "
            f"paraphrase = people's score ≥ 4, never seen in training): ROC AUC {model['auc']:.3f} [{low:.3f}, "
            f"{high:.3f}], precision {model['precision_at_recall_0.80']:.2f} at recall ≥ 0.80, expected calibration "
            f"error {model['ece']:.3f}; the sentence model's cosine (`st`) on the same pairs: AUC {cosine['auc']:.3f}, "
            f"precision {cosine['precision_at_recall_0.80']:.2f} at recall ≥ 0.80."
        )
    if msrpc:
        text += f" On MSRPC's test split at p ≥ 0.5: accuracy {msrpc['accuracy']:.3f}, F1 {msrpc['f1']:.3f}."
    return text + " `python benchmarks/paraphrase_crossencoder.py` recomputes them.\n"


def classifier_section(
    classifier: AnyClassifier, shares: dict[str, dict[str, object]], cut: Cut | None = None, rule: float | None = None
) -> str:
    """What ``paraphrase_probability`` is, how well it did, and how many pairs of each config it calls paraphrases
    (and, with a cut chosen by precision, keeps). Where the model does not beat the ST rule on the labelled sample
    (``evaluation.against_rule``), the rule ``st > rule`` is the default cut the card shows, with the evidence."""
    if isinstance(classifier, CrossEncoderClassifier):
        sample = f"{classifier.labelled.get('corpus')}, pairs people labelled that the network never trained on"
        return _section_lines(classifier, _crossencoder_intro(classifier), shares, cut, None, sample)
    evaluation = classifier.evaluation
    figures: dict[str, object] = evaluation.get("at_recall_cut", {})  # type: ignore[assignment]
    baselines: dict[str, dict[str, float]] = evaluation.get("baselines", {})  # type: ignore[assignment]
    test: dict[str, float] = evaluation.get("msrpc_test", {})  # type: ignore[assignment]
    interval = figures.get("precision_interval", [math.nan, math.nan])
    recall_interval = figures.get("recall_interval", [math.nan, math.nan])
    intro = (
        f"`{PROBABILITY}` is the probability that a pair is a paraphrase (the same message), from classifier "
        f"`{classifier.version}` (`--classifier`): {evaluation.get('model')}; {_trained_on(classifier.trained_on)}. "  # type: ignore[arg-type]
        f"Cross-validated on the labelled caption pairs ({evaluation.get('folds')}) at the cut for recall ≥ "
        f"{figures.get('target_recall', 0.8):.2f} chosen in the training folds: precision "
        f"{figures.get('precision', math.nan):.2f} [{interval[0]:.2f}, {interval[1]:.2f}], recall "  # type: ignore[index]
        f"{figures.get('recall', math.nan):.2f} [{recall_interval[0]:.2f}, {recall_interval[1]:.2f}] (95% bootstrap "  # type: ignore[index]
        "over images); on the same folds "
        + "; ".join(f"{name} {values['precision']:.2f}/{values['recall']:.2f}" for name, values in baselines.items())
        + " (precision/recall)."
        + (f" On MSRPC's test split: accuracy {test['accuracy']:.3f}, F1 {test['f1']:.3f}." if test else "")
        + " `python benchmarks/paraphrase_study.py` recomputes them.\n"
    )
    sample = "English caption pairs, out-of-fold probabilities where the model learnt from them"
    return _section_lines(classifier, intro, shares, cut, rule, sample)


def _section_lines(
    classifier: AnyClassifier,
    intro: str,
    shares: dict[str, dict[str, object]],
    cut: Cut | None,
    rule: float | None,
    sample: str,
) -> str:
    """The section's table of shares, its cut and its filters, after the classifier's ``intro``."""
    evaluation = classifier.evaluation
    lines = [
        "### Which pairs are paraphrases\n",
        intro,
        "| config | pairs scored | probability > 0.5 | share |",
        "|---|---:|---:|---:|",
    ]
    for name, counts in shares.items():
        likely, scored = counts["likely_paraphrases"]  # type: ignore[misc]
        lines.append(
            f"| {name} | {scored:,} | {likely:,} | {likely / scored:.0%} |" if scored else f"| {name} | 0 | 0 | – |"
        )
    keep = "> 0.5"
    against: dict[str, object] = evaluation.get("against_rule", {})  # type: ignore[assignment]
    rule_is_default = cut is None and rule is not None and bool(against) and not against.get("beats_rule")
    if rule_is_default:
        low, high = against["precision_difference_interval"]  # type: ignore[misc]
        lines += [
            "",
            f"**The default cut is the rule `st` > {rule:g}**: on the labelled pairs this classifier does not beat "
            f"{against['rule']} (precision {against['precision_difference']:+.2f} [{low:+.2f}, {high:+.2f}], recall "
            f"{against['recall_difference']:+.2f}, paired on the same folds), so the rule stays the cut, and "
            f"`{PROBABILITY}` ranks the pairs and chooses a cut by precision (`--min-precision`).",
        ]
    if cut is not None:
        keep = f">= {cut.threshold:.6f}"
        lines += [
            "",
            f"Kept at the cut chosen by precision: `{PROBABILITY}` ≥ {cut.threshold:.4f}, the lowest cut whose kept "
            f"pairs of the labelled sample ({cut.labelled} {sample}) are paraphrases at precision ≥ the one asked. "
            f"There it keeps {cut.kept} pairs, "
            f"{cut.paraphrases} of them paraphrases: **estimated share of paraphrases in what is kept "
            f"{cut.precision:.0%} [{cut.low:.0%}, {cut.high:.0%}]** (Wilson 95%), recall {cut.recall:.0%}. The cut "
            "is chosen on the sample its precision is estimated on, so the estimate leans high; the interval says "
            "how far the sample's size lets it move.\n",
            "| config | pairs scored | kept | share kept |",
            "|---|---:|---:|---:|",
        ]
        for name, counts in shares.items():
            kept, scored, _ = counts["kept"]  # type: ignore[misc]
            lines.append(
                f"| {name} | {scored:,} | {kept:,} | {kept / scored:.0%} |" if scored else f"| {name} | 0 | 0 | – |"
            )
    lines += [
        "",
        "Keep the likely paraphrases, or the likely non-paraphrases as hard negatives (thesis §4.8):",
        "",
        "```python",
        *(
            [f'paraphrases = dataset.filter(lambda row: row["st"] > {rule:g})  # the default cut: the rule']
            if rule_is_default
            else []
        ),
        f'{"likely" if rule_is_default else "paraphrases"} = dataset.filter(lambda row: row["{PROBABILITY}"] {keep})',
        f'hard_negatives = dataset.filter(lambda row: not row["{PROBABILITY}"] {keep})',
        "```",
        "",
    ]
    return "\n".join(lines)


def _without_words(probability: np.ndarray, results: dict[str, object]) -> np.ndarray:
    """No probability where a text has no word the tokenizer finds (``!!!``, emoji, another script): the measures
    are NaN there, and the classifier's number would be a guess the summary counts apart."""
    words = ~np.isnan(np.asarray(results["rouge1"], dtype=np.float64))
    return np.where(words, probability, np.nan)


def print_summary(name: str, results: dict[str, object]) -> None:
    """One config's or file's means and σ, truncated texts, likely paraphrases and those kept, in one line."""
    aggregates = results["aggregates"]
    assert isinstance(aggregates, dict)
    cells = " | ".join(
        f"{measure} {aggregates[measure]['mean']:.3f}±{aggregates[measure]['std']:.3f}" for measure in SCORE_COLUMNS
    )
    likely = results.get("likely_paraphrases")
    share = f" | {PROBABILITY} > 0.5: {likely[0]:,} of {likely[1]:,}" if isinstance(likely, tuple) else ""
    kept = results.get("kept")
    if isinstance(kept, tuple):
        count, scored, cut = kept
        share += (
            f" | kept at {PROBABILITY} ≥ {cut.threshold:.4f}: {count:,} of {scored:,}, estimated share of "
            f"paraphrases {cut.precision:.0%} [{cut.low:.0%}, {cut.high:.0%}]"
        )
    pairs, with_words = len(results["rouge1"]), aggregates["rouge1"]["n"]  # type: ignore[arg-type]
    apart = (
        f" | {pairs - with_words:,} of {pairs:,} pairs have a text without words (no measures, no probability; "
        "left out of the means)"
        if with_words < pairs
        else ""
    )
    print(f"{name}: {cells} | truncated texts {results['truncated']}{share}{apart}")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m metrics", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser(
        "score",
        help="score a TSV, a JSONL or a built dataset folder",
        description=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("input", type=local_path, help="a .tsv or .jsonl file, or a folder built by wikipedia_ipc.py")
    score.add_argument(
        "--output",
        type=local_path,
        help="where to write (default: beside the input, '.scored' file or '-scored' folder)",
    )
    score.add_argument(
        "--overwrite",
        action="store_true",
        help="score a folder into an output folder that holds files of yours: the scored copy is added beside "
        "them, none is deleted, and one where it must write (README.md, <config>/funnel.json) is renamed <name>.orig",
    )
    score.add_argument(
        "--columns",
        nargs=2,
        metavar=("FIRST", "SECOND"),
        help="the two text columns: header names in a TSV, keys in a JSONL "
        "(default: sentence1 sentence2, or a TSV's first two columns)",
    )
    score.add_argument(
        "--header",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether a TSV's first line is a header (default: detected)",
    )
    score.add_argument(
        "--profile",
        default="minilm",
        choices=PROFILES,
        help="the semantic models: 'minilm' (offline, all-MiniLM-L6-v2) or 'paper' (the paper's models, downloaded), "
        "both English only, or 'multilingual' (paraphrase-multilingual-MiniLM-L12-v2, downloaded)",
    )
    score.add_argument(
        "--classifier",
        default=DEFAULT_MODEL,
        type=classifier_name,
        metavar="{" + ",".join(MODELS) + "}",
        help="the shipped model giving paraphrase_probability: 'crossencoder' (default: all-MiniLM-L6-v2 fine-tuned "
        f"on STS-B, MSRPC and PAWS-Wiki, English; in bfloat16 where the CPU has it natively, {PRECISION_VARIABLE}"
        "=float32 fixes float32), 'seed' (Brockett & Dolan's SVM on MSRPC, as the seed trained it) "
        "or 'measures' (over the Δsem,syn measures and a build's meta-information: built folders, profile minilm)",
    )
    score.add_argument(
        "--min-precision",
        type=float,
        metavar="P",
        help="keep the pairs at precision ≥ P on the labelled sample (e.g. 0.9): states the cut, the pairs kept and "
        "the estimated share of paraphrases in them with its interval",
    )
    score.add_argument(
        "--language",
        default="en",
        metavar="CODE",
        help="the texts' ISO 639 code: en (default), fr, zh, ...; another language than English needs "
        "--profile multilingual",
    )
    score.add_argument(
        "--language-check",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="refuse texts given as English that are mostly not (mostly non-Latin script, too few English "
        "function words); --no-language-check scores them anyway (default on)",
    )
    score.add_argument(
        "--tokenize",
        default="auto",
        choices=TOKENIZERS,
        help="ROUGE/BLEU tokens: 'rouge' (the authors'), 'unicode', or 'auto' (unicode only for pairs with "
        "words outside ASCII; default)",
    )
    score.add_argument("--batch-size", type=int, default=64, help="sentences per transformer batch (default 64)")
    score.add_argument("--device", help="torch device: 'cpu', 'cuda', 'cuda:1', ... (default: cuda when available)")
    score.add_argument("--fp16", action="store_true", help="half precision on CUDA: faster, scores move slightly")
    score.add_argument(
        "--runtime",
        default="auto",
        choices=RUNTIME_CHOICES,
        help="the shared transformer's forward pass (minilm, multilingual): 'torch', 'onnx' (ONNX Runtime on the "
        "CPU, the same scores within 1e-5, faster; needs the 'onnx' extra) or 'auto' (default: onnx where it is "
        "installed and the device is the CPU in full precision, else torch; the signature names the one that ran)",
    )
    score.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bars on stderr (default on)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from builder.common import OutputError

    arguments = parser().parse_args(argv)
    source: Path = arguments.input
    try:
        asked_precision()  # the network's precision, if one is asked, is a known one: said before the work
        if source.is_dir():
            output = arguments.output or source.with_name(source.name + "-scored")
            for name, results in score_folder(source, output, arguments).items():
                print_summary(name, results)
        elif source.is_file():
            output = arguments.output or source.with_suffix(".scored" + source.suffix)
            _file_output(source, output)
            results = score_file(source, output, arguments)
            print_summary(source.name, results)
        else:
            raise InputError(f"{source}: no such file or folder")
    except (InputError, OutputError, ModelUnavailable, ValueError, TypeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {output}")
    return 0
