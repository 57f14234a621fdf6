"""The dataset card (``README.md``) of a built folder: the YAML ``configs:`` that ``load_dataset``
reads, and per config its Table 3 funnel, provenance, splits and the fidelity table.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from pathlib import Path

import yaml

from builder.common import DATA, PACKAGE, plural
from builder.config import DEJA_PAIRINGS, SPLIT_NAMES
from builder.filters.funnel import Funnel
from builder.publish.fidelity import dataset_markdown_table, deja_markdown_table, markdown_table, web_markdown_table
from builder.publish.layout import BUILD, CONFIG_ORDER, FORMAT, MARKER, split_of_file
from builder.sources.img2dataset import USER_COLUMNS

__all__ = ["SAMPLE_DUMP", "SAMPLE_HISTORY", "render_card"]

CARD_TEMPLATE = PACKAGE.parent / "dataset_card.md"
SAMPLE_DUMP = DATA / "enwiki-20240101-sample-pages-articles.xml.bz2"
SAMPLE_HISTORY = DATA / "enwiki-20240101-sample-pages-meta-history.xml.bz2"  # the same pages' edit history (bronze)


def _is_sample(dump: dict[str, str]) -> bool:
    return dump["name"] in (SAMPLE_DUMP.name, SAMPLE_HISTORY.name)


def _dump_line(dump: dict[str, object]) -> str:
    if dump.get("kind") == "web":
        return f"  - `{dump['name']}` (WARC" + (f", {dump['source']}" if dump["source"] != dump["name"] else "") + ")"
    if dump.get("kind") == "dataset":
        tsv = f"; captions joined from `{dump['tsv']}`" if dump.get("tsv") else ""
        return (
            f"  - `{dump['name']}` (img2dataset output folder `{dump['source']}`, {dump['layout']} layout, "
            f"{plural(int(dump['shards']), 'shard')}{tsv})"  # type: ignore[call-overload]
        )
    language = f", language: {dump['language']}" if "language" in dump else ""
    line = (
        f"  - `{dump['name']}` ({dump['dbname']}, dump date {dump['date']}, kind: {dump.get('kind', 'unknown')}"
        f"{language})"
    )
    if "failed" in dump:
        return line + f": **failed**, none of its pages are in this config ({dump['failed']})"
    source = dump.get("download")
    if isinstance(source, dict):
        line += (
            f": downloaded from {source['mirror']} ({source['wiki']} dump run {source['run']}), "
            f"SHA-1 `{source['sha1']}` verified {source['verified']}"
        )
    if _is_sample(dump):
        line += (
            ": the toolkit's embedded sample, pages written for the project to exercise the pipeline "
            "(synthetic, not real Wikipedia content)"
        )
    return line


def _build_section(record: dict[str, object]) -> str:
    parameters = record["parameters"]
    assert isinstance(parameters, dict)
    dumps = record["dumps"]
    assert isinstance(dumps, list)
    versions = record["versions"]
    assert isinstance(versions, dict)
    dump_lines = "\n".join(_dump_line(dump) for dump in dumps)
    parameter_lines = "\n".join(f"  - `{key}`: `{value}`" for key, value in parameters.items())
    version_lines = ", ".join(f"{name} {version}" for name, version in versions.items())
    skipped = record["skipped"]
    assert isinstance(skipped, dict)
    skipped_lines = ", ".join(f"{key.replace('_', ' ')}: {value:,}" for key, value in skipped.items())
    references = bool(parameters.get("references"))
    deja = bool(parameters.get("deja"))
    found = "record was found" if references else "caption was repeated" if deja else "pair survived the filters"
    rows = (
        "image–text records"
        if references
        else "pairs"
        if parameters.get("deja") in DEJA_PAIRINGS
        else ("caption–image edges" if deja else "pairs")
    )
    empty = (
        f"No {found}: this config's parquet file has no "
        "rows, and the config is not in the card's `configs:` (`datasets` cannot load a split with no rows).\n\n"
        if not record["rows"]
        else ""
    )
    inputs = f"Crawl files ({len(dumps):,})" if "crawl" in record else "Dataset" if "dataset" in record else "Dumps"
    return (
        f"### `{record['config']}` – {record['rows']:,} {rows}\n\n"
        f"{_references_note(references)}"
        f"{_deja_note(record) if deja else ''}"
        f"{empty}"
        f"- {inputs}:\n{dump_lines}\n"
        f"{_language_lines(record)}"
        f"- Tagger: `{record['tagger']}`\n"
        f"- Parameters:\n{parameter_lines}\n"
        f"- Library versions: {version_lines}\n"
        f"{_read_line(record.get('read'))}"
        f"- Skipped while reading: {skipped_lines}\n"
        f"{_cleaning_lines(record)}"
        f"{_identity_line(record.get('identity'))}"
        f"- Splits: {_splits_line(record)}\n"
        f"{_config_build_line(record)}\n"
        f"{Funnel.from_list(record['funnel']).markdown()}"  # type: ignore[arg-type]
        f"{_web_section(record)}"
        f"{_dataset_section(record)}"
        f"{_deja_section(record.get('deja'))}"
    )


def _read_line(read: object) -> str:
    """The dumps' reading as the build's summary gives it (``funnel.json``'s ``read``), adding up to the pages."""
    if not isinstance(read, dict):
        return ""
    copies = f", {read['copies']:,} of them later copies of {read['copies_of']} read before (left out)"
    return (
        f"- Read: {read['pages']:,} pages ({read['revisions']:,} revisions)"
        f"{copies if read['copies'] else ''}: {read['mined']:,} mined for images, {read['redirects']:,} redirects "
        f"and {read['other_namespaces']:,} pages of other namespaces skipped; {read['references']:,} image "
        "references found\n"
    )


def _references_note(references: bool) -> str:
    if not references:
        return ""
    return (
        "Every image–text record that step 0 counts, of every source, not pairs: one row per reference and text "
        "(`kind`: `caption` or `alt`, a crawl's captions `figure` or `table`; a reference without a text is one row "
        "whose `kind` and `text` are null), with its `image` as the build identifies it, the `file` the page used, "
        "the `page` and where it came from (`revision`, or a crawl's `record`, `date` and `html_lang`). `language` "
        "is the wiki's; a crawl's or a dataset's is the build's (`--language`, English by default), the language its "
        "texts were counted and tagged in, not detected from the text: the page's own declaration is `html_lang`.\n\n"
    )


# why a dataset's Déjà config has no users rule, as its card says it
NO_USER_COLUMN = (
    f"the dataset has no column of users ({', '.join(f'`{name}`' for name in USER_COLUMNS)} were looked for in its "
    "shards' metadata and caption TSV); name one with `--deja-user-column`"
)


def _deja_note(record: dict) -> str:
    """What a Déjà config's rows are (Chen et al. 2015, §2), and who its users are."""
    parameters = record["parameters"]
    column = parameters.get("deja_user_column")
    users = (
        f"A user is the value of the dataset's `{column}` column (a sample without one counts for no user, so it "
        "cannot make a caption pass the users rule)."
        if parameters.get("dump_kind") == "dataset" and column
        else f"The users rule could not be applied: {NO_USER_COLUMN} (Conceptual Captions and COCO name no "
        "writer). A caption is kept when it is used for distinct images."
        if parameters.get("dump_kind") == "dataset"
        else "A user is a crawl's site (the registered domain of the page's URL)."
        if parameters.get("dump_kind") == "web"
        else "A user is a wiki's page."
    )
    return (
        "Déjà Image-Captions' captions in repetition (Chen et al., NAACL 2015, §2), from every image–text record "
        "step 0 counts: each sentence that names a visible thing (a noun WordNet puts under `physical_entity.n.01`), "
        "has no first-person pronoun and has a verb, preposition or adjective, in canonical form (lemmas, "
        "prepositions as `IN`, function words, numbers and punctuation dropped), kept when that form is used for at "
        f"least {parameters['min_images']} distinct images"
        + (f" by at least {parameters['min_users']} users" if "min_users" in parameters else "")
        + f". {users} One row per caption–image edge (`canonical`, `image`), with the first occurrence's sentence "
        "as written (`text`), page and record, the caption's `images` and `users`, and the edge's `occurrences`. "
        "The funnel counts images, records, captions (canonical forms) and edges; docs/deja.md.\n\n"
        + (
            "This config pairs each kept caption with the kept caption that shares the most physical-object nouns "
            "with it (PARAcaption, the text-only variant of §5's visual paraphrases, §8.2; ties: the first in "
            "canonical order), situated in the caption's first image: its rows are pairs (`sentence1` the caption, "
            "`sentence2` its paraphrase, `shared_nouns`), and its last step counts them.\n\n"
            if parameters.get("deja") == "paracaption"
            else ""
        )
        + (
            "This config gives §5's visual paraphrases: for two images i of each kept caption c (the first two by "
            "the MD5 of caption and image, where the paper samples at random), the K = 100 kept captions sharing the "
            "most physical-object nouns with c, reranked by the neighbourhood affinity φ(i, N_p), the mean of the σ "
            "largest similarities −‖i − j‖² between i and the images j of p, in the "
            f"`{parameters.get('deja_feature')}` feature. Its rows are pairs (`image` i, `sentence1` c, "
            "`sentence2` p, `shared_nouns`, `affinity` φ); "
            "its last two steps count the edges whose image has features and the pairs.\n\n"
            if parameters.get("deja") == "paraphrases"
            else ""
        )
    )


def _deja_section(statistics: object) -> str:
    """The paper's Tables 1, 2 and 5 over a Déjà config's kept captions."""
    if not isinstance(statistics, dict):
        return ""

    def number(value: object) -> str:
        return "–" if value is None else f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"

    columns = ("mean", "std", "25%", "50%", "75%", "max")
    table2 = "\n".join(
        f"| {label} | " + " | ".join(number(statistics[key][column]) for column in columns) + " |"
        for label, key in (("#imgs.", "images_per_caption"), ("#tokens", "tokens_per_caption"))
    )
    kinds = []
    for kind, counts in statistics["syntax"].items():
        share = lambda value: "–" if value is None else f"{value:.0%}"  # noqa: E731
        words = ", ".join(word for word, _ in counts["top_words"]) or "–"
        top = "; ".join(f"{text} ({images:,})" for text, images in counts["top_captions"]) or "–"
        kinds.append(
            f"| {kind} | {share(counts['captions_share'])} | {share(counts['images_share'])} "
            f"| {number(counts['mean_images'])} | {number(counts['std_images'])} | {words} | {top} |"
        )
    return (
        f"\nDéjà's Table 1: {statistics['captions']:,} captions, {statistics['images']:,} images.\n\n"
        + _visual_note(statistics.get("pairs"))
        +
        "Table 2, per caption:\n\n| | mean | std | 25% | 50% | 75% | max |\n|---|---:|---:|---:|---:|---:|---:|\n"
        f"{table2}\n\n"
        "Table 5, the captions' syntax (verb: a verb; prep: a preposition, no verb; adj: an adjective only):\n\n"
        "| type | % caps. | % imgs. | mean #imgs. | std #imgs. | top words | top captions (#imgs.) |\n"
        "|---|---:|---:|---:|---:|---|---|\n" + "\n".join(kinds) + "\n\n"
        f"Where this Déjà build differs from the paper (Chen et al. 2015):\n\n{deja_markdown_table()}"
    )


def _visual_note(pairs: object) -> str:
    """How a visual paraphrases config reranked: its feature, K, and σ with how it was chosen."""
    if not isinstance(pairs, dict) or "sigma" not in pairs:
        return ""
    development = pairs["development"]
    if development.get("given"):
        how = "given"
    elif development["scored"]:
        best = development["bleu1"].get(str(pairs["sigma"]))
        how = (
            f"chosen on a development set of {development['images']:,} images ({development['scored']:,} scored; "
            f"mean BLEU@1 {best:.3f})"
        )
    else:
        how = f"all images: none of the {development['images']:,} development images could be scored"
    return (
        f"Visual paraphrases (§5): feature `{pairs['feature']}`, K = {pairs['K']}, σ = {pairs['sigma']}, {how}; "
        f"{pairs['queries_per_caption']} query images per caption.\n\n"
    )


def _dataset_section(record: dict) -> str:
    """A dataset config's reading in the thesis's terms (§5.1.1), and where it differs from the thesis."""
    dataset = record.get("dataset")
    if not isinstance(dataset, dict):
        return ""
    skipped = ", ".join(f"{reason.replace('_', ' ')} {count:,}" for reason, count in dataset["skipped"].items())
    tsv = (
        f" The caption TSV `{dataset['tsv']}`: {dataset['tsv_rows']:,} rows, {dataset['tsv_rows_matched']:,} "
        f"matched to a sample, {dataset['tsv_rows_without_an_image']:,} without an image, "
        f"{dataset['tsv_rows_unreadable']:,} unreadable."
        if "tsv" in dataset
        else ""
    )
    outside = dataset.get("links_outside_the_folder", 0)
    links = f" Symbolic links leading out of the folder, not followed: {outside:,}." if outside else ""
    return (
        f"\nThe dataset (thesis §5.1): `{dataset['folder']}`, {dataset['layout']} layout, "
        f"{plural(dataset['shards'], 'shard')}; {dataset['records']:,} records, {dataset['images']:,} images kept "
        f"(§5.1.1, each sample left out counted: {skipped}).{links}{tsv}\n\n"
        f"Where this dataset build differs from the thesis:\n\n{dataset_markdown_table()}"
    )


def _web_section(record: dict) -> str:
    """A web config's crawl in the thesis's terms, its images' rules, and where it differs from the thesis."""
    crawl, images = record.get("crawl"), record.get("identity")
    if not isinstance(crawl, dict) or not isinstance(images, dict):
        return ""
    rules = ", ".join(
        f"{name.replace('_', ' ')}: {counts['images']:,} images, {counts['references']:,} references"
        for name, counts in images["left_out"].items()
        if counts["images"] or counts["references"]
    )
    captions = ", ".join(f"{kind} {count:,}" for kind, count in crawl["captions"].items())
    later = crawl.get("references_of_later_captures", 0)
    unsuccessful = crawl.get("unsuccessful_responses", 0)
    return (
        f"\nThe crawl (thesis chapter 4): {crawl['records']:,} WARC records, {crawl['html_pages']:,} HTML pages "
        f"({crawl['pages_with_references']:,} with image references), {crawl['images_indexed']:,} image records "
        "indexed"
        + (f", {unsuccessful:,} responses that are no success (not 2xx) not read" if unsuccessful else "")
        + f"; {crawl['references']:,} references (captions found: {captions}"
        + (f"; {later:,} of them in later captures of pages read before, left out" if later else "")
        + "). Images left out before "
        f"step 0 (§4.3.2, and images without a record where pixels are compared): {rules or 'none'}.\n\n"
        f"Where this web build differs from the thesis:\n\n{web_markdown_table()}"
    )


def _build_line(build: str | None) -> str:
    """The card's sentence naming the build, so that a user can tell which build a folder (or the Hub) holds."""
    if build is None:
        return ""
    return (
        f"This card was written by build `{build}` (a hash of the configs' records and files: two builds with "
        "one id hold the same pairs); each config's `funnel.json` names the build that wrote it.\n\n"
    )


def _config_build_line(record: dict) -> str:
    build = record[MARKER].get(BUILD)
    return f"- Build: `{build}`\n" if build else ""


def _cleaning_lines(record: dict) -> str:
    """Which inline template table and which rule rendered the captions; the templates that dropped captions."""
    cleaning = record.get("caption_cleaning")
    if not cleaning:
        return ""
    rules = "; ".join(f"`{language}`: {rule}" for language, rule in cleaning.items())
    line = f"- Caption cleaning: {rules}\n"
    unrendered = record.get("unrendered_templates")
    if unrendered:
        named = ", ".join(f"`{title}` ({count:,})" for title, count in unrendered.items())
        line += f"- Captions dropped for a template no table renders (add it with `--inline-templates`): {named}\n"
    return line


def _language_lines(record: dict) -> str:
    """What the card says of languages: nothing for an English build, as before; else each language's counting."""
    languages = record.get("languages") or {}
    lines = ""
    if languages:
        counted = "; ".join(f"`{code}`: {words}" for code, words in languages.items())
        lines += f"- Languages: {', '.join(f'`{code}`' for code in languages)}; words of step 4 counted as {counted}\n"
    if record["parameters"].get("crosslingual"):
        lines += (
            "- Cross-lingual: each pair joins captions of one image written in two language editions (`language1` "
            "< `language2`); the bounds of steps 1, 2 and 6 are read across languages (references in at least two "
            f"languages, at most the upper bound in each). {_local_files_note(record.get('local_files'))}\n"
        )
    if record["parameters"].get("caption_rule") == "none":
        lines += (
            "- Caption rule: none. Step 5 keeps every caption (no tagger judged them): the pairs are not filtered "
            "for sentences or verbs as the paper's levels are.\n"
        )
    return lines


def _local_files_note(local: object) -> str:
    """How the cross-lingual config told files uploaded to one wiki from the Commons files of the same name."""
    if not isinstance(local, dict):
        return (
            "Every file is taken for the Commons file of its name (no image table was given): a file uploaded "
            "locally to one wiki under the name of a Commons file is paired with it."
        )
    tables = ", ".join(f"{wiki} ({files:,} files)" for wiki, files in local["image_tables"].items())
    return (
        f"Files uploaded locally to one wiki are kept apart, as the image tables of {tables} list them: "
        f"{plural(local['references_kept_apart'], 'reference')} to them left out before step 0."
    )


def _identity_line(identity: object) -> str:
    """The card's account of the identity map: what it merged and how many pairs each kind added."""
    if isinstance(identity, dict) and "equivalence" in identity:
        bits = (
            f", {identity['hash_bits']}-bit hashes within {identity['hash_threshold']} bits"
            if identity["hash_bits"]
            else ""
        )
        bound = identity["set_bound"]
        limit = bound["max_equal_images"]
        return (
            f"- Image equivalence (§4.6): `{identity['equivalence']}`{bits} (`identity` column: "
            f"`{identity['identity']}`, or `url` for two references to one URL); image URLs "
            f"{identity['images_kept']:,} → {identity['equivalence_sets']:,} sets ({identity['images_merged']:,} "
            + (
                "merged); §5.1.2's bound on a set's size: not applied (a crawl's default; `--set-bound Z` applies it)\n"
                if bound["z"] is None
                else f"merged); §5.1.2's bound: sets of at most {'any number of' if limit is None else f'{limit:,}'} "
                f"images (z < {bound['z']:g} over {bound['sets_that_yield_pairs']:,} sets that can yield pairs)\n"
            )
        )
    if not isinstance(identity, dict) or identity["identities"] == ["title"]:
        return "- Image identity: the normalized `File:` title (as in the paper)\n"
    pairs = identity["pairs"]
    added = (  # a references config pairs nothing: its rows are the records the map merged
        f"; pairs added by redirect: {pairs['redirect']:,}, by SHA-1: {pairs['sha1']:,} (of {sum(pairs.values()):,})"
        if pairs
        else ""
    )
    return (
        f"- Image identity: {', '.join(identity['identities'])} (beyond the paper). "
        f"File redirects read: {identity['file_redirects']:,} ({identity['file_redirects_ignored']:,} ignored, "
        f"{identity['redirect_cycles']:,} cycles); image table rows: {identity['image_table_rows']:,} "
        f"({identity['image_table_rows_without_sha1']:,} without SHA-1, "
        f"{identity['image_table_rows_with_unusable_names']:,} with unusable names); titles merged by redirect: "
        f"{identity['titles_merged_by_redirect']:,}, by SHA-1: {identity['titles_merged_by_sha1']:,}; images "
        f"{identity['images_before']:,} → {identity['images_after']:,} ({identity['images_merged']:,} merged)"
        f"{added}\n"
    )


def _split_rows(record: dict) -> dict[str, int]:
    """Pairs per split; a config built without splits (or by an earlier version) has one ``train`` split."""
    splits = record.get("splits")
    return dict(splits["pairs"]) if splits else {"train": record["rows"]}


def _splits_line(record: dict) -> str:
    """Each split's size, the components, and the overlap check as the build computed it on the written pairs."""
    splits = record.get("splits")
    if not splits:
        return "none; every pair is in `train` (the paper's single set)"
    sizes = "; ".join(
        f"`{name}` {plural(pairs, 'pair')}, {plural(splits['images'][name], 'image')}, "
        f"{plural(splits['texts'][name], 'text')}"
        for name, pairs in splits["pairs"].items()
    )
    percentages = "/".join(f"{fraction * 100:g}" for fraction in splits["fractions"])
    line = (
        f"{sizes} (fractions {percentages} of the components; {plural(splits['components'], 'component')} "
        f"of pairs linked by a shared image or text, the largest with "
        f"{plural(splits['largest_component'], 'pair')}). {splits['shared_images']:,} images and "
        f"{splits['shared_texts']:,} texts are shared by two splits (checked on the written pairs; texts with "
        "equal skeletons are one text)."
    )
    empty = [name for name, pairs in splits["pairs"].items() if not pairs]
    if empty and record["rows"]:
        line += (
            f" No pair fell into {', '.join(f'`{name}`' for name in empty)}: left out of `configs:` "
            "(`datasets` cannot load a split with no rows)."
        )
    return line


def _splits_note(records: list[dict]) -> str:
    """How the configs are split, for the card's introduction."""
    whole = [f"`{record['config']}`" for record in records if not record.get("splits")]
    if len(whole) == len(records):
        return "Every config is one `train` split (built with `--splits none`): the paper's single set of pairs."
    note = (
        "The configs are split into `train`, `validation` and `test` so that no image and no text occurs in two "
        "splits. Texts are compared by their skeleton, as the near-duplicate step (9) compares them: case, "
        "punctuation, spacing, Unicode form and bracketed parts ignored, so 'The bridge over the River Thames' and "
        "'The bridge over the River Thames.' are one text (a text that only contains another, 'X' and 'X, 1941', "
        "may be in another split). Pairs that share an image or a text form one component, and each "
        "component goes whole to one split, chosen by a stable hash of its content. A split that got no pair is "
        "left out of its config. Each config's section below gives the split sizes, the largest component and the "
        "overlap check computed on the written pairs."
    )
    if whole:
        note += f" Built without splits, as one `train` split: {', '.join(whole)}."
    return note


def _data_files(record: dict) -> list[dict[str, object]]:
    """One ``data_files`` entry per split with rows, its files picked by their name."""
    rows = _split_rows(record)
    entries = []
    for split in SPLIT_NAMES:
        files = [f"{record['config']}/{name}" for name in record[MARKER]["files"] if split_of_file(name) == split]
        if rows.get(split) and files:
            entries.append({"split": split, "path": files})
    return entries


def _config_entry(record: dict) -> dict[str, object]:
    """A config in the toolkit's manifest: its rows, its files and the id of the build that wrote it."""
    entry = {"rows": record["rows"], "files": record[MARKER]["files"]}
    if BUILD in record[MARKER]:
        entry[BUILD] = record[MARKER][BUILD]
    return entry


def _front_matter(records: list[dict], build: str | None) -> str:
    """The card's YAML: ``configs:`` with each loadable config's files by name, and the toolkit's manifest."""
    configs = [
        {"config_name": record["config"], "data_files": _data_files(record)} for record in records if record["rows"]
    ]
    manifest: dict[str, object] = {"format": FORMAT}
    if build is not None:
        manifest[BUILD] = build
    manifest["configs"] = {record["config"]: _config_entry(record) for record in records}
    front: dict[str, object] = {"configs": configs} if configs else {}
    front[MARKER] = manifest
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip("\n")


def build_languages(records: Iterable[dict]) -> list[str]:
    """The languages of a build's dumps (a build whose dumps say none is English)."""
    codes = {dump["language"] for record in records for dump in record["dumps"] if "language" in dump}
    return sorted(codes) or ["en"]


def _languages_yaml(records: list[dict]) -> str:
    """The card's ``language:`` codes, and ``multilinguality:`` when the build has more than one language."""
    languages = build_languages(records)
    front: dict[str, object] = {"language": languages}
    if len(languages) > 1:
        front["multilinguality"] = ["multilingual"]
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip("\n")


def render_card(records: Iterable[dict], template: Path = CARD_TEMPLATE, build: str | None = None) -> str:
    """The dataset card for the given funnel records (as :func:`write_funnel` returns them), of the build ``build``."""
    ordered = sorted(records, key=lambda record: (CONFIG_ORDER.get(record["config"], 3), record["config"]))
    if not ordered:
        raise ValueError("no built config to describe")
    samples = sorted({dump["name"] for record in ordered for dump in record["dumps"] if _is_sample(dump)})
    notice = (
        f"> **Sample build.** The pairs come from {' and '.join(f'`{name}`' for name in samples)}, the small "
        f"synthetic {'dump that ships' if len(samples) == 1 else 'dumps that ship'} with the toolkit to show how "
        "the pipeline works; its pages were written for the project and are not Wikipedia articles. Build from a "
        "real dump for real data.\n\n"
        if samples
        else ""
    )
    return string.Template(template.read_text(encoding="utf-8")).substitute(
        languages=_languages_yaml(ordered),
        front_matter=_front_matter(ordered, build),
        build=_build_line(build),
        sample_notice=notice,
        config_list=", ".join(f"`{record['config']}`" for record in ordered),
        builds="\n".join(_build_section(record) for record in ordered),
        splits_note=_splits_note(ordered),
        fidelity=markdown_table(),
    )
