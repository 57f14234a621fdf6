"""The authors' released Wikipedia-IPC corpus (JSONL, Zenodo doi:10.5281/zenodo.7621320), read in a build's
columns: its one reader, for the ``datasets`` loader (``wikipedia_ipc.released_pairs``) and the corpus comparison.
"""

from __future__ import annotations

__all__ = ["RELEASED_COLUMNS", "released_row"]

# the columns of a build that the release has too (it has no revisions, sources or files)
RELEASED_COLUMNS = ("id", "image", "caption_type", "sentence1", "sentence2", "page1", "page2", "same_page")


def released_row(record: dict) -> dict[str, object]:
    """One record of the authors' released JSONL in this toolkit's columns (those the release has).

    The release writes a pair as ``{"id", "cluster-id", "image", "first": {"caption-text",
    "caption-type", "page"}, "second": {…}, "similarities"}``; each side has its own caption type,
    so a pair of a caption and an alternative text gets ``caption_type`` ``caption/alt``.
    """
    try:
        first, second = record["first"], record["second"]
        types = [str(side["caption-type"]).lower() for side in (first, second)]
        return {
            "id": str(record["id"]),
            "image": record["image"],
            "caption_type": types[0] if types[0] == types[1] else "/".join(types),
            "sentence1": first["caption-text"],
            "sentence2": second["caption-text"],
            "page1": first["page"],
            "page2": second["page"],
            "same_page": first["page"] == second["page"],
            "cluster_id": record["cluster-id"],
        }
    except (KeyError, TypeError) as error:
        raise ValueError(f"record {record.get('id')!r} is not a pair of the released corpus (no {error})") from None
