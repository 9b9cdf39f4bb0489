"""depfs.templates: Template and TemplateSet values, atoms, the shipped sets, resolve_templates."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from depfs import GraphParser, Treebank, _core
from depfs.errors import TemplateError
from depfs.templates import (
    Template,
    TemplateSet,
    parse_templates,
    resolve_templates,
    template_set_text,
    template_sets,
)

SHIPPED = [
    "first_order",
    "first_order_fast",
    "second_order",
    "labeler",
    "arc_eager",
    "nilsson_nugues",
    "arc_eager_clusters",
    "tagger",
    "tagger_upos",
    "tagger_xpos",
    "tagger_feats",
    "tagger_lemma",
    "tagger_backward",
    "tagger_upos_bi",
    "tagger_xpos_bi",
    "tagger_feats_bi",
    "tagger_upos_caps",
    "tagger_upos_clusters",
    "tagger_xpos_bx",
    "tagger_feats_bx",
    "arc_eager_en_ewt",
    "arc_eager_en_ewt_full15",
    "arc_eager_pt_bosque",
    "first_order_en_ewt",
    "first_order_cle_en_ewt",
    "second_order_en_ewt",
    "tagger_en_ewt",
    "tagger_pt_bosque",
    "dynfs_en_ewt",
    "dynfs2_en_ewt",
    "dynfs_pt_bosque",
    "dynfs_en_ewt_100",
    "dynfs_en_ewt_113",
]


def test_atoms_of_known_templates():
    c = Template.parse("POS(stack_1 LC pw) & form(QUEUE_0)", "config")
    assert c.text == str(c) == "upos(STACK_1 lc pw) & form(QUEUE_0)"
    assert c.atoms == (("STACK_1 lc pw", "upos"), ("QUEUE_0", "form"))
    assert c.family == "config" and c.order == 1
    a = Template.parse("dist & upos(m) & dir & UPOS(h)")
    assert a.atoms == (("h", "upos"), ("m", "upos"), ("", "dir"), ("", "dist"))
    assert a.family == "arc" and a.n_word_atoms == 2
    b = Template.parse("feat:Case(m-1) & prefix:4(h+2) & xpos(b)")
    assert b.atoms == (("h+2", "prefix:4"), ("m-1", "feat:Case"), ("b", "xpos"))
    s = Template.parse("upos(g) & upos(s) & sdist")
    assert s.atoms == (("s", "upos"), ("g", "upos"), ("", "sdist")) and s.order == 2
    d = Template.parse("DEP(STACK_0) & lval(QUEUE_0 lc) & rval(STACK_0 h) & dist", "config")
    assert d.atoms == (
        ("STACK_0", "deprel"),
        ("STACK_0 h", "rval"),
        ("QUEUE_0 lc", "lval"),
        ("", "dist"),
    )


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_template_round_trips_through_its_atoms(name: str):
    family, text = _core.template_set_text(name)
    templates = parse_templates(text, family, max_atoms=8)
    assert templates and all(t.family == family for t in templates)
    for t in templates:
        again = Template.parse(t.text, family)
        built = Template.from_atoms(t.atoms, family)
        shuffled = Template.from_atoms(reversed(t.atoms), family)
        assert again == built == shuffled == t
        assert again.id == built.id == shuffled.id == t.id
        assert (built.text, built.cost, built.order, built.atoms) == (
            t.text,
            t.cost,
            t.order,
            t.atoms,
        )
    assert TemplateSet.load(name).templates == tuple(templates)


def test_new_template_from_atoms_is_a_hashable_value():
    known = {t for name in template_sets() for t in TemplateSet.load(name)}
    t = Template.from_atoms(
        [("QUEUE_1 lc rs", "LEX"), ("STACK_2 h", "rval"), ("", "dist")], "config"
    )
    assert t not in known
    assert t.text == "rval(STACK_2 h) & form(QUEUE_1 lc rs) & dist"
    assert t.atoms == (("STACK_2 h", "rval"), ("QUEUE_1 lc rs", "form"), ("", "dist"))
    assert t == Template.parse(t.text, "config") and t.id == Template.parse(t.text, "config").id
    # extending a template by one atom (what a successor function does)
    wider = Template.from_atoms([*t.atoms, ("STACK_0", "upos")], t.family)
    assert wider.text == "upos(STACK_0) & rval(STACK_2 h) & form(QUEUE_1 lc rs) & dist"
    assert wider.n_word_atoms == 3 and wider.cost > t.cost and wider.id != t.id
    assert len({t, Template.parse("dist & form(QUEUE_1 lc rs) & rval(STACK_2 h)", "config")}) == 1
    assert dataclasses.replace(t, family="arc") != t
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.text = "x"  # type: ignore[misc]
    # no max_atoms: the language's bound (8), not the file default (3)
    four = [("h", "upos"), ("m", "upos"), ("h", "form"), ("m", "form")]
    assert Template.from_atoms(four).n_word_atoms == 4
    with pytest.raises(TemplateError, match="limit is 3"):
        Template.from_atoms(four, max_atoms=3)


@pytest.mark.parametrize(
    "atoms, family, quoted, message",
    [
        ([("h", "colour")], "arc", "colour(h)", "unknown attribute"),
        ([("h", "upos"), ("q", "upos")], "arc", "upos(h) & upos(q)", "bad arc address"),
        ([("", "upos")], "arc", "upos", "expected attr"),
        ([("h", "dir")], "arc", "dir(h)", "unknown attribute"),
        ([("h", "deprel")], "arc", "deprel(h)", "only in configuration"),
        ([("h) & upos(m", "upos")], "arc", "upos(h) & upos(m)", "may not contain"),
        ([("STACK_0 up", "upos")], "config", "upos(STACK_0 up)", "navigation step"),
        ([("STACK_0", "upos"), ("", "dir")], "config", "upos(STACK_0) & dir", "only in arc"),
    ],
)
def test_bad_atoms_raise_template_error_quoting_the_text(atoms, family, quoted, message):
    with pytest.raises(TemplateError, match=message) as e:
        Template.from_atoms(atoms, family)
    assert f'"{quoted}"' in str(e.value)


def test_other_errors():
    with pytest.raises(TemplateError, match=r'"upos\(h\) & bogus"'):
        Template.parse("upos(h) & bogus")
    with pytest.raises(TemplateError, match="no atoms"):
        Template.from_atoms([])
    with pytest.raises(ValueError, match="unknown template family"):
        Template.parse("upos(h)", "graph")
    with pytest.raises(TemplateError, match=r'"upos\(q\)" \(line 2\)'):
        TemplateSet.parse("upos(h)\nupos(q)\n")


def test_template_set_operations(tmp_path: Path):
    first = TemplateSet.load("first_order")
    assert first.family == "arc" and len(first) > 100 and first.order == 1
    assert first.ids == tuple(t.id for t in first) and len(set(first.ids)) == len(first)
    assert first.cost == pytest.approx(sum(t.cost for t in first))
    assert first[0] == Template.parse("dir & dist") and first[-1] == first.templates[-1]
    head = first[:3]
    assert isinstance(head, TemplateSet) and list(head) == list(first.templates[:3])
    sub = first.subset([5, 2, 5])
    assert list(sub) == [first[5], first[2]] and sub.family == "arc"
    with pytest.raises(IndexError):
        first.subset([len(first)])
    # + and add: order kept, duplicates dropped, family checked, text parsed in the set's family
    both = head + first[2:5]
    assert list(both) == list(first.templates[:5])
    added = head.add("upos(m) & upos(h)", first[0])
    assert len(added) == 4 and added[3].text == "upos(h) & upos(m)"
    assert head + [Template.parse("form(m)")] == head.add("form(m)")
    config = TemplateSet.load("nilsson_nugues")
    assert config.family == "config" and Template.parse("POS(QUEUE_0)", "config") in config
    with pytest.raises(ValueError, match="config template"):
        head + config
    with pytest.raises(TemplateError):
        head.add("upos(STACK_0)")
    with pytest.raises(ValueError, match="needs a family"):
        TemplateSet([])
    assert len(TemplateSet([], "config")) == 0
    # text parses back to the same set, with the file default max_atoms (directive for 4 atoms)
    assert max(t.n_word_atoms for t in first) == 4
    assert first.text.startswith("#! max_atoms = 4\n")
    assert TemplateSet.parse(first.text) == first and hash(TemplateSet.parse(first.text)) == hash(
        first
    )
    assert not TemplateSet.load("labeler").text.startswith("#!")
    assert TemplateSet.parse(config.text, "config") == config
    # files and names
    path = tmp_path / "mine.txt"
    path.write_text(sub.text)
    assert TemplateSet.load(path) == sub == TemplateSet.load(str(path), family="arc")
    with pytest.raises(ValueError, match="is config"):
        TemplateSet.load("arc_eager", family="arc")
    with pytest.raises(FileNotFoundError, match="nope"):
        TemplateSet.load("nope")


def test_shipped_sets_come_from_core():
    assert template_sets() == SHIPPED
    assert template_set_text("nilsson_nugues") == _core.template_set_text("nilsson_nugues")[1]
    assert "POS(QUEUE_0)" in template_set_text("nilsson_nugues")
    import depfs.templates as mod

    assert not list(Path(mod.__file__).parent.glob("*.txt"))


def _toy() -> Treebank:
    rows = [
        ("the", "DET", 2, "det"),
        ("dog", "NOUN", 3, "nsubj"),
        ("sees", "VERB", 0, "root"),
        ("a", "DET", 5, "det"),
        ("cat", "NOUN", 3, "obj"),
    ]
    sent = "".join(
        f"{i}\t{f}\t{f}\t{u}\t{u}\t_\t{h}\t{d}\t_\t_\n" for i, (f, u, h, d) in enumerate(rows, 1)
    )
    return Treebank.from_string((sent + "\n") * 10)


def test_resolve_templates_accepts_sets_and_lists():
    first = TemplateSet.load("first_order")
    assert resolve_templates(first) == first.text
    picked = [first[1], first[-1]]
    assert resolve_templates(picked) == TemplateSet(picked).text
    assert resolve_templates(picked).startswith("#! max_atoms = 4\n")
    assert resolve_templates("labeler") == template_set_text("labeler")
    assert resolve_templates("upos(h)") == "upos(h)"
    with pytest.raises(ValueError, match="expected config"):
        resolve_templates(first, family="config")
    # the graph parser takes a set, 4-atom templates included (default max_atoms=3)
    arc = first.subset([0, len(first) - 1]).add("upos(h) & upos(m) & dir")
    lab = TemplateSet.load("labeler")[:2]
    parser = GraphParser(
        epochs=1, arc_templates=arc, sibling_templates=first[:1], labeler_templates=lab
    ).fit(_toy())
    assert parser.model_.arc_templates == [t.text for t in arc]
    assert parser.model_.labeler_templates == [t.text for t in lab]


def test_a_template_file_with_a_bom_reads_as_without(tmp_path) -> None:
    """A template file saved with a BOM (Windows editors) is read past it, as a CoNLL-U
    file is (it was `unknown attribute "\\ufeffupos"`)."""
    plain, bom = tmp_path / "plain.txt", tmp_path / "bom.txt"
    plain.write_text("upos(STACK_0)\nform(QUEUE_0)\n")
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert resolve_templates(str(bom)) == resolve_templates(str(plain))
    loaded = [TemplateSet.load(str(p), family="config").text for p in (bom, plain)]
    assert loaded[0] == loaded[1]
