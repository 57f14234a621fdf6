"""The steps of Table 3: image clusters and the image filter (:mod:`.clusters`), which titles are one
image (:mod:`.identity`), the caption rules (:mod:`.captions`) and the taggers they read
(:mod:`.tagging`), the pair filters (:mod:`.pairs`), all of them in order with their counters
(:mod:`.chain`, :mod:`.funnel`); Déjà's §2 rules on a caption (:mod:`.deja`)."""
