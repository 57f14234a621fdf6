"""Edit-history dumps (bronze): how references are counted across the revisions of a page.

A history dump repeats a page's whole text in every revision. By default
(``history_references="revision"``) every revision's use of an image is a
reference, as in the authors' pipeline: the paper's bronze bound of 180 references
per image is 18 revisions per page on average × 10 references. An unchanged caption
of consecutive revisions then pairs with itself; "unique candidates" and "divergent
captions" (Table 3, steps 7–8) remove those pairs, and the funnel shows them.

The option ``history_references="first_seen"`` counts a reference once per page and
wording instead: a distinct ``(image, caption, alt)`` on a page, carried by the first
revision that has it. That keeps the references-per-image numbers close to those of
a pages-articles dump, but the 180 bound then admits far more pages per image.
Either way a caption an editor rewrote is a new reference of the same page, and its
pair with the old wording is a natural paraphrase candidate (marked ``same_page``).
"""

from __future__ import annotations

from collections.abc import Iterable

from builder.extract.wikitext import ImageReference

__all__ = ["FirstSeenPerPage"]


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
