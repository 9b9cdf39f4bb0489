"""CoNLL-U / CoNLL-X treebanks held in Rust, with cheap sentence views.

`read_conllu(path)` reads a file (gzip detected by its magic bytes) into a `Treebank`;
`Treebank.from_string(text)` parses text; `Treebank.write(path)` writes atomically and
`Treebank.to_string()` returns text identical to what was read (canonical input: LF line
ends, one blank line after each sentence). Bad input raises `depfs.errors.FormatError`
whose message is `FILE:LINE: problem`.

A `Sentence` is a view (treebank + index): `forms`, `lemmas`, `upos`, `xpos`, `feats`,
`deprels`, `deps`, `misc` (list[str]), `heads` (numpy int32; index 0 = word 1, 0 = root,
-1 = `_`), `form_ids` / `upos_ids` / `deprel_ids` (numpy uint32, ids of
`Treebank.vocab(column)`), `sent_id`, `text`, `comments`, `extra_lines`.
"""

from __future__ import annotations

from ._core import Sentence, Treebank, read_conllu

__all__ = ["Sentence", "Treebank", "read_conllu"]
