"""Data sources: a synthetic treebank that needs no download, and the UD files.

`synthetic` samples sentences from a small generative dependency grammar written
for this project: clauses headed by a verb with a subject to the left and an
object to the right, noun phrases with determiners, adjectives, numerals and
prepositional modifiers, coordination and subordinate clauses, final
punctuation. Attachment depends on the parts of speech, with direction and
distance preferences; every label is fixed by the head and dependent POS (and
direction), and verbs agree in number with their subject, so a parser can learn
it almost perfectly. A small share of sentences extrapose a prepositional
modifier of the subject behind an intransitive verb ("a review appears of the
book"), which gives non-projective arcs.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from . import _core
from .errors import DepfsIOError

# --------------------------------------------------------------------------- lexicon

# (singular form, plural form) per noun; lemma = singular.
_NOUNS = [
    ("dog", "dogs"), ("cat", "cats"), ("student", "students"), ("teacher", "teachers"),
    ("book", "books"), ("house", "houses"), ("river", "rivers"), ("city", "cities"),
    ("letter", "letters"), ("garden", "gardens"), ("car", "cars"), ("song", "songs"),
    ("child", "children"), ("idea", "ideas"), ("window", "windows"), ("table", "tables"),
    ("friend", "friends"), ("review", "reviews"), ("story", "stories"), ("market", "markets"),
]  # fmt: skip
_PROPNS = ["Anna", "Berlin", "Lisbon", "Marco", "Kim", "Oslo", "Paris", "Sara"]
# (form, lemma, feats, number or None)
_PRONS = [
    ("she", "she", "Case=Nom|Number=Sing|Person=3|PronType=Prs", "Sing"),
    ("he", "he", "Case=Nom|Number=Sing|Person=3|PronType=Prs", "Sing"),
    ("they", "they", "Case=Nom|Number=Plur|Person=3|PronType=Prs", "Plur"),
    ("it", "it", "Case=Nom|Number=Sing|Person=3|PronType=Prs", "Sing"),
]
_OBJ_PRONS = [
    ("her", "she", "Case=Acc|Number=Sing|Person=3|PronType=Prs"),
    ("him", "he", "Case=Acc|Number=Sing|Person=3|PronType=Prs"),
    ("them", "they", "Case=Acc|Number=Plur|Person=3|PronType=Prs"),
]
# (lemma, 3sg present, transitive?)
_VERBS = [
    ("see", "sees", True), ("like", "likes", True), ("find", "finds", True),
    ("read", "reads", True), ("write", "writes", True), ("build", "builds", True),
    ("visit", "visits", True), ("open", "opens", True), ("sleep", "sleeps", False),
    ("arrive", "arrives", False), ("wait", "waits", False), ("run", "runs", False),
    ("appear", "appears", False), ("laugh", "laughs", False),
]  # fmt: skip
_ADJS = ["big", "small", "old", "new", "red", "quiet", "happy", "green", "long"]
_ADVS = ["often", "never", "quickly", "today", "slowly", "again"]
# Prepositions heading noun modifiers (nmod) and verb modifiers (obl) are disjoint, so a
# PP's attachment is decided by its preposition (no PP-attachment ambiguity to learn).
_NMOD_ADPS = ["of", "about", "from"]
_OBL_ADPS = ["in", "on", "with", "near", "at"]
_NUMS = ["two", "three", "four", "seven", "ten"]
# (form, lemma, feats, number the verb needs)
_AUXS = [("can", "can", "VerbForm=Fin", None), ("will", "will", "VerbForm=Fin", None)]
_SCONJS = ["because", "while", "when", "although"]
_CCONJS = ["and", "but", "or"]


@dataclass
class _Node:
    """A word of the sentence being generated. `left`/`right` hold the nodes placed
    (linearised) on each side; `head` is the syntactic head, which differs from the
    placement host only for extraposed dependents."""

    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str = "_"
    deprel: str = "_"
    head: _Node | None = None
    left: list[_Node] = field(default_factory=list)
    right: list[_Node] = field(default_factory=list)
    number: str | None = None


def _attach(head: _Node, dep: _Node, deprel: str, side: str) -> _Node:
    dep.head, dep.deprel = head, deprel
    (head.left if side == "left" else head.right).append(dep)
    return dep


class _Grammar:
    """The generative grammar; all randomness comes from one seeded `random.Random`."""

    def __init__(self, rng: random.Random, nonprojective_rate: float) -> None:
        self.rng = rng
        self.nonprojective_rate = nonprojective_rate

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # noun phrases ------------------------------------------------------------
    def noun_phrase(self, depth: int, role: str) -> _Node:
        """A noun phrase; `role` is "subj", "obj" or "pobj" (inside a PP)."""
        r = self.rng.random()
        if role == "subj" and r < 0.2:
            form, lemma, feats, number = self.rng.choice(_PRONS)
            return _Node(form, lemma, "PRON", "PRP", feats, number=number)
        if role == "obj" and r < 0.15:
            form, lemma, feats = self.rng.choice(_OBJ_PRONS)
            return _Node(form, lemma, "PRON", "PRP", feats)
        if r < 0.32:
            name = self.rng.choice(_PROPNS)
            return _Node(name, name, "PROPN", "NNP", "Number=Sing", number="Sing")
        sing, plur = self.rng.choice(_NOUNS)
        plural = self.chance(0.35)
        noun = _Node(
            plur if plural else sing,
            sing,
            "NOUN",
            "NNS" if plural else "NN",
            "Number=Plur" if plural else "Number=Sing",
            number="Plur" if plural else "Sing",
        )
        # Premodifiers, nearest first (they are prepended, so generate inner to outer).
        for _ in range(self.rng.choice([0, 0, 0, 1, 1, 2])):
            adj = self.rng.choice(_ADJS)
            noun.left.insert(0, _Node(adj, adj, "ADJ", "JJ", "Degree=Pos"))
            noun.left[0].head, noun.left[0].deprel = noun, "amod"
        if plural and self.chance(0.3):
            num = self.rng.choice(_NUMS)
            node = _Node(num, num, "NUM", "CD", "NumType=Card", head=noun, deprel="nummod")
            noun.left.insert(0, node)
        if plural:
            det = self.rng.choice(["the", "these", "some", "_none"])
        else:
            det = self.rng.choice(["the", "a", "this", "the"])
        if det != "_none":
            feats = "Definite=Def|PronType=Art" if det == "the" else "PronType=Dem"
            if det == "a":
                feats = "Definite=Ind|PronType=Art"
            if det == "some":
                feats = "PronType=Ind"
            noun.left.insert(0, _Node(det, det, "DET", "DT", feats, head=noun, deprel="det"))
        if depth < 2 and self.chance(0.3 if role == "subj" else 0.2):
            self.prep_phrase(noun, depth + 1, "nmod")
        return noun

    def prep_phrase(self, host: _Node, depth: int, deprel: str) -> _Node:
        """ADP + NP attached to `host` on the right; the ADP is a `case` dependent of the noun."""
        adp = self.rng.choice(_NMOD_ADPS if deprel == "nmod" else _OBL_ADPS)
        noun = self.noun_phrase(depth, "pobj")
        case = _Node(adp, adp, "ADP", "IN", "_", head=noun, deprel="case")
        noun.left.insert(0, case)
        return _attach(host, noun, deprel, "right")

    # clauses -----------------------------------------------------------------
    def clause(self, depth: int) -> _Node:
        lemma, third, transitive = self.rng.choice(_VERBS)
        subj = self.noun_phrase(depth, "subj")
        has_aux = self.chance(0.2)
        if has_aux:
            verb = _Node(lemma, lemma, "VERB", "VB", "VerbForm=Inf")
        elif subj.number == "Sing":
            feats = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
            verb = _Node(third, lemma, "VERB", "VBZ", feats)
        else:
            verb = _Node(lemma, lemma, "VERB", "VBP", "Mood=Ind|Tense=Pres|VerbForm=Fin")
        _attach(verb, subj, "nsubj", "left")
        if has_aux:
            form, aux_lemma, feats, _ = self.rng.choice(_AUXS)
            _attach(verb, _Node(form, aux_lemma, "AUX", "MD", feats), "aux", "left")
        if self.chance(0.15):
            adv = self.rng.choice(_ADVS)
            _attach(verb, _Node(adv, adv, "ADV", "RB"), "advmod", "left")
        if transitive and self.chance(0.85):
            _attach(verb, self.noun_phrase(depth, "obj"), "obj", "right")
        if self.chance(0.35):
            self.prep_phrase(verb, depth + 1, "obl")
        if self.chance(0.1):
            adv = self.rng.choice(_ADVS)
            _attach(verb, _Node(adv, adv, "ADV", "RB"), "advmod", "right")
        # Extraposition from the subject: when nothing follows the verb, the subject's
        # PP modifier may move behind it, keeping the subject as head -> the arc
        # crosses the verb (non-projective). A noun-modifying preposition right after
        # the verb marks it, so the arc stays learnable.
        pp = [d for d in subj.right if d.deprel == "nmod"]
        if pp and not verb.right and self.chance(self.nonprojective_rate):
            subj.right.remove(pp[0])
            verb.right.append(pp[0])
        if depth < 1 and self.chance(0.12):
            sub = self.clause(depth + 1)
            sconj = self.rng.choice(_SCONJS)
            sub.left.insert(0, _Node(sconj, sconj, "SCONJ", "IN", head=sub, deprel="mark"))
            _attach(verb, sub, "advcl", "right")
        if depth < 1 and self.chance(0.15):
            conj = self.clause(depth + 1)
            cc = self.rng.choice(_CCONJS)
            conj.left.insert(0, _Node(cc, cc, "CCONJ", "CC", head=conj, deprel="cc"))
            if self.chance(0.5):
                comma = _Node(",", ",", "PUNCT", ",", head=conj, deprel="punct")
                conj.left.insert(0, comma)
            _attach(verb, conj, "conj", "right")
        return verb


def _linearise(node: _Node, out: list[_Node]) -> None:
    for d in node.left:
        _linearise(d, out)
    out.append(node)
    for d in node.right:
        _linearise(d, out)


def synthetic_conllu(n_sentences: int, seed: int = 0, nonprojective_rate: float = 0.5) -> str:
    """CoNLL-U text of `n_sentences` sentences of the synthetic grammar (see module doc).

    `nonprojective_rate` is the chance that a subject with a PP modifier has it
    extraposed (a few percent of sentences at the default). Same seed, same text.
    """
    if n_sentences < 0:
        raise ValueError(f"n_sentences must be >= 0, got {n_sentences}")
    if not 0.0 <= nonprojective_rate <= 1.0:
        raise ValueError(f"nonprojective_rate must be in [0, 1], got {nonprojective_rate}")
    grammar = _Grammar(random.Random(seed), nonprojective_rate)
    lines: list[str] = []
    for i in range(n_sentences):
        root = grammar.clause(0)
        root.deprel = "root"
        end = "?" if grammar.chance(0.1) else "."
        _attach(root, _Node(end, end, "PUNCT", "."), "punct", "right")
        words: list[_Node] = []
        _linearise(root, words)
        position = {id(w): k for k, w in enumerate(words, start=1)}
        text = " ".join(w.form for w in words[:-1]) + words[-1].form
        lines.append(f"# sent_id = synthetic-{seed}-{i + 1}")
        lines.append(f"# text = {text}")
        for k, w in enumerate(words, start=1):
            head = position[id(w.head)] if w.head is not None else 0
            misc = "SpaceAfter=No" if k == len(words) - 1 else "_"
            cols = [str(k), w.form, w.lemma, w.upos, w.xpos, w.feats, str(head), w.deprel, "_"]
            lines.append("\t".join([*cols, misc]))
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def synthetic(n_sentences: int, seed: int = 0, nonprojective_rate: float = 0.5) -> _core.Treebank:
    """A Treebank of `n_sentences` sentences from the synthetic grammar (deterministic per seed)."""
    from .treebank import Treebank

    return Treebank.from_string(synthetic_conllu(n_sentences, seed, nonprojective_rate))


def perturb(
    treebank: _core.Treebank, head_rate: float = 0.1, label_rate: float = 0.1, seed: int = 0
) -> _core.Treebank:
    """A copy of `treebank` with seeded errors, as a stand-in system output.

    Each non-root word gets a different head outside its own subtree with probability
    `head_rate` (trees stay trees with one root) and, independently, a different label
    from the treebank's inventory with probability `label_rate`. `treebank` may be a
    path, as everywhere in the API.
    """
    from .base import as_treebank

    treebank = as_treebank(treebank, "treebank")
    return _core.perturb_treebank(treebank, head_rate, label_rate, seed)


# --------------------------------------------------------------------------- UD files


def data_dir() -> Path | None:
    """The UD data directory: `DEPFS_DATA` if set, else `../shared/data/ud` (relative to
    the working directory) if it exists, else None."""
    env = os.environ.get("DEPFS_DATA")
    if env:
        return Path(env)
    default = Path("..") / "shared" / "data" / "ud"
    return default if default.is_dir() else None


def ud_path(name: str, split: str) -> Path:
    """Path of `<data dir>/<name>/<split>.conllu`, e.g. ``ud_path("en_ewt", "dev")``.

    Raises `depfs.errors.DepfsIOError` (an OSError) when the file is not there.
    """
    if split not in ("train", "dev", "test"):
        raise ValueError(f"split must be train, dev or test, got {split!r}")
    root = data_dir()
    if root is None:
        raise DepfsIOError("no UD data: set DEPFS_DATA or create ../shared/data/ud")
    path = root / name / f"{split}.conllu"
    if not path.is_file():
        raise DepfsIOError(f"{path}: no such UD file (DEPFS_DATA={root})")
    return path


def ud_available(name: str, split: str = "dev") -> bool:
    """Whether `ud_path(name, split)` exists."""
    try:
        ud_path(name, split)
    except DepfsIOError:
        return False
    return True


__all__ = ["data_dir", "perturb", "synthetic", "synthetic_conllu", "ud_available", "ud_path"]
