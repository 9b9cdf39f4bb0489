"""CoNLL-U / CoNLL-X treebanks held in Rust, with cheap sentence views.

`read_conllu(path)` reads a file (gzip detected by its magic bytes) into a `Treebank`;
`Treebank.from_string(text)` parses text; `Treebank.write(path)` writes atomically and
`Treebank.to_string()` returns text identical to what was read (canonical input: LF line
ends, one blank line after each sentence). Bad input raises `depfs.errors.FormatError`
whose message is `FILE:LINE: problem`.

`tb[i]` is a `Sentence`; `tb[a:b]`, `tb.select(indices)`, `Treebank.concat([tb1, tb2])` and
`tb1 + tb2` are new treebanks of those sentences, kept whole (comments, multiword tokens, empty
nodes), with vocabularies of only their strings.

A `Sentence` is a view (treebank + index): `forms`, `lemmas`, `upos`, `xpos`, `feats`,
`deprels`, `deps`, `misc` (list[str]), `heads` (numpy int32; index 0 = word 1, 0 = root,
-1 = `_`), `form_ids` / `upos_ids` / `deprel_ids` (numpy uint32, ids of
`Treebank.vocab(column)`), `sent_id`, `text`, `comments`, `extra_lines`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _core
from ._core import Sentence, Treebank, read_conllu

if TYPE_CHECKING:  # numpy is imported where it is used: not by a parse
    import os

    import numpy as np
    import numpy.typing as npt

__all__ = ["Sentence", "Treebank", "margins", "read_conllu"]


def margins(treebank: _core.Treebank | str | os.PathLike[str]) -> npt.NDArray[np.float32]:
    """Each word's ``Margin=`` from MISC (written by ``parse(..., scores=True)`` or
    ``depfs parse --scores``; a Treebank or a CoNLL-U file's path), flat over the words;
    NaN where a word has none.

    Graph parser, first order with Eisner: the best tree's score minus the best tree in
    which the word has another head (from arc max-marginals); with CLE or second order,
    the head's arc score minus the best score of another head, after decoding; 999 when
    the length dictionary left no other head. Arc-eager: the closest call among the
    decisions that could have settled the word's head (those taken while it was the
    buffer front, or headless on the stack top, the move that attached it included): how
    far the chosen move led the best other valid move (0 for a word no scored decision
    concerned). Low margins flag likely errors. A word with a malformed or a second
    ``Margin=`` raises ValueError naming its sentence and word."""
    import numpy as np

    from .base import as_treebank

    treebank = as_treebank(treebank, "treebank", to_parse=True)  # (a path: a parse's file)
    out = np.full(treebank.n_words, np.nan, dtype=np.float32)
    i = 0
    for n, s in enumerate(treebank, 1):
        for w, item in enumerate(s.misc, 1):
            found = [part[7:] for part in item.split("|") if part.startswith("Margin=")]
            try:
                if len(found) > 1:
                    raise ValueError("two Margin= items")
                if found:
                    out[i] = float(found[0])
            except ValueError as e:
                where = f"sentence {n}" + (f" (sent_id = {s.sent_id})" if s.sent_id else "")
                raise ValueError(f"{where}: word {w}: MISC {item!r}: {e}") from None
            i += 1
    return out
