"""What a build printed when it ended: what it read, each config's funnel, its images and splits, and how to load
the folder. The numbers are the report's (:class:`builder.engines.core.BuildReport`), the same the card shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from builder.common import plural

if TYPE_CHECKING:
    from builder.engines.core import BuildReport
    from builder.filters.chain import FilterChain

__all__ = ["print_summary"]


def print_summary(report: BuildReport, scored_into: str | None = None) -> None:
    """The end of a build's output: what it read, the funnels, and where the folder is."""
    read = report.extraction.read
    if report.extraction.web is not None and "layout" in report.extraction.web.counts():
        dataset = report.extraction.web.counts()
        print(
            f"\nRead {dataset['folder']} ({dataset['layout']}, {plural(dataset['shards'], 'shard')}): "
            f"{plural(dataset['records'], 'record')}, {plural(dataset['images'], 'image')} kept (left out, "
            + (", ".join(f"{reason} {count:,}" for reason, count in dataset["skipped"].items() if count) or "none")
            + f") in {report.extraction.seconds:.1f} s."
        )
    elif report.extraction.web is not None:
        crawl = report.extraction.web.counts()
        unsuccessful = crawl["unsuccessful_responses"]
        later = report.extraction.later_copies
        print(
            f"\nRead {plural(crawl['warc_files'], 'WARC file')} ({plural(crawl['records'], 'record')}): "
            f"{plural(crawl['html_pages'], 'HTML page')}, {plural(crawl['images_indexed'], 'image record')}"
            + (f", skipped {plural(unsuccessful, 'response')} that are no success (not 2xx)" if unsuccessful else "")
            + f"; found {plural(crawl['references'], 'image reference')}"
            + (
                f", {crawl['references_of_later_captures']:,} of them in {plural(later, 'later capture')} of pages "
                "read before (left out)"
                if later
                else ""
            )
            + f" in {report.extraction.seconds:.1f} s."
        )
    else:
        reading = report.extraction.reading()  # adds up: copies + mined + redirects + other namespaces = pages
        revisions = f" ({plural(read.revisions, 'revision')})" if read.revisions > read.pages else ""
        copies = reading["copies"]
        if copies:  # a page given twice (two files of one dump) is read once: say how many of the pages were copies
            copied = f"{'a copy' if copies == 1 else 'copies'} of {reading['copies_of']} read before (left out)"
            revisions += f", {copies:,} of them {copied}"
        print(
            f"\nRead {plural(read.pages, 'page')}{revisions}: mined {reading['mined']:,} for images, skipped "
            f"{plural(read.skipped_redirect, 'redirect')} and {plural(read.skipped_namespace, 'page')} of other "
            f"namespaces; found {plural(reading['references'], 'image reference')} "
            f"in {report.extraction.seconds:.1f} s."
        )
    spent = report.clock.seconds()
    if spent:
        print("Time: " + " · ".join(f"{stage} {seconds:.1f} s" for stage, seconds in spent.items()))
    for name, chain in report.funnels.items():
        unit = "pair" if chain.config.deja_pairs else chain.funnel.unit[:-1]  # its last step: pairs
        print(f"\n## {name}: {plural(report.rows[name], unit)}\n")
        print(chain.funnel.markdown())
        identity = report.identities.get(name)
        if identity and "equivalence" in identity:
            left = sum(counts["references"] for counts in identity["left_out"].values())
            kinds = ", ".join(f"{kind} {count:,}" for kind, count in identity["pairs"].items())
            print(
                f"Images ({identity['identity']}): {identity['images_kept']:,} image URLs → "
                f"{identity['equivalence_sets']:,} sets; {plural(left, 'reference')} left out by the image rules"
                + (f"; pairs by kind: {kinds}\n" if kinds else "\n")
            )
        elif identity and identity["identities"] != ["title"]:
            pairs = identity["pairs"]  # none for a references config: it pairs nothing
            added = f"; pairs by redirect {pairs['redirect']:,}, by SHA-1 {pairs['sha1']:,}" if pairs else ""
            print(f"Identity map: {identity['images_before']:,} titles → {identity['images_after']:,} images{added}\n")
        if name in report.splits:
            print(_splits_summary(report.splits[name]))
    loadable = [name for name, rows in report.rows.items() if rows]
    empty = [name for name, rows in report.rows.items() if not rows]
    if scored_into is not None:
        print(f"\nBuilt; scoring the pairs into {scored_into}/ ...")
        return
    if loadable:
        # the absolute path: a bare name is also a Hub dataset id, which datasets tries when no such folder is here
        if isinstance(report.output, str):  # a URL: datasets reads the files the card names, not the folder
            files = f'card_data_files("{report.output}", "{loadable[0]}")'
            print(f'Wrote {report.output}/ — load it with datasets.load_dataset("parquet", data_files={files}) ')
            print("  (card_data_files from builder.publish.bucket: the files the card names, the build's manifest)")
        else:
            folder = report.output.resolve().as_posix()
            print(f'Wrote {report.output}/ — load it with datasets.load_dataset("{folder}", "{loadable[0]}")')
        build = report.build
        if build:
            print(f"Build id {build} (in the card's YAML and in each config's funnel.json)")
    else:
        print(f"Wrote {report.output}/ — no config has pairs, so there is nothing to load")
    deja = [name for name in empty if report.funnels[name].config.deja]
    empty = [name for name in empty if name not in deja]
    for name in deja:
        print(_empty_deja(name, report.funnels[name]))
    if empty:
        print(
            f"No pair survived in {', '.join(empty)}: "
            f"{'it is' if len(empty) == 1 else 'they are'} described in the card and funnel.json, "
            "but not in the card's configs (datasets cannot load a split with no rows)."
        )


def _empty_deja(name: str, chain: FilterChain) -> str:
    """Why a Déjà config has no rows: no caption repeated, or repeated captions that made no pair."""
    bounds = [row.captions for row in chain.funnel.rows if row.name.startswith(("Images", "Users"))]
    repeated = bounds[-1] if bounds else 0
    note = (
        "it is described in the card and funnel.json, but not in the card's configs (datasets cannot load a split "
        "with no rows)."
    )
    if chain.config.deja == "captions" or not repeated:
        return f"No caption was repeated in {name}: {note}"
    return (
        f"No pair in {name}: {plural(repeated, 'caption')} repeated, but none shares a physical-object noun with "
        f"another; {note}"
    )


def _splits_summary(splits: dict) -> str:
    """The split sizes in pairs, the components, and the overlap check on the written pairs."""
    sizes = " · ".join(f"{name} {plural(pairs, 'pair')}" for name, pairs in splits["pairs"].items())
    return (
        f"Splits: {sizes}; {plural(splits['components'], 'component')}, the largest "
        f"{plural(splits['largest_component'], 'pair')}; shared by two splits: "
        f"{plural(splits['shared_images'], 'image')}, {plural(splits['shared_texts'], 'text')}\n"
    )
