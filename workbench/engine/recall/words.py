"""Words as recall reads them, apart from the ranker so a per-file lint can use them
without loading the ranker and what it imports (the hooks' hot path lints files too)."""

from __future__ import annotations

import re

# Words that carry no topic. The query side drops question scaffolding as well.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves let lets get got go going make made use used using want wants need needs
    know tell please thing things something anything way ok okay""".split()
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-case words of `text`, camelCase and snake_case split apart."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())
