"""Edit-history dumps (bronze): how references are counted across the revisions of a page.

A history dump repeats a page's whole text in every revision, so an unchanged image
caption would count once per revision. We count it once per page: a reference is a
distinct ``(image, caption, alt)`` on a page, carried by the first revision that has
it. A caption an editor rewrote is a new reference of the same page – and its pair
with the old wording is a natural paraphrase candidate (marked ``same_page``).
"""

from __future__ import annotations

from collections.abc import Iterable

from builder.wikitext import ImageReference


class FirstSeenPerPage:
    """Passes each page's references through, dropping those an earlier revision already had."""

    def __init__(self) -> None:
        self._page_id: int | None = None
        self._seen: set[tuple[str, str, str]] = set()
        self.repeated = 0

    def new_references(self, page_id: int, references: Iterable[ImageReference]) -> list[ImageReference]:
        """The references of one revision that no earlier revision of the page carried.

        Within one revision every occurrence counts, as in a pages-articles dump.
        """
        if page_id != self._page_id:
            self._page_id = page_id
            self._seen = set()
        kept = []
        for reference in references:
            key = (reference.file, reference.caption, reference.alt)
            if key in self._seen:
                self.repeated += 1
            else:
                kept.append(reference)
        self._seen.update((r.file, r.caption, r.alt) for r in kept)
        return kept
