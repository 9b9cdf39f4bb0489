//! Template text → typed atoms, and atoms → canonical text.
//!
//! Grammar (whitespace between tokens is free; names are case-insensitive):
//!
//! ```text
//! template  := atom ( '&' atom )*
//! atom      := 'dir' | 'dist' | 'sdist' | attr '(' address ')'      (sdist: arc only)
//! attr      := 'form' | 'lower' | 'lemma' | 'upos' | 'xpos' | 'feats' | 'shape'
//!            | 'hasdigit' | 'hashyphen' | 'hasupper' | 'ambig'      (ambig: token only)
//!            | 'feat:' KEY | 'prefix:' K | 'suffix:' K          (K in 1..=9)
//!            | 'cluster' | 'cluster:' B            (token and configuration; B bits, in 1..=32)
//!            | 'deprel' | 'lval' | 'rval'                       (configuration only)
//!            | 'POS' (= upos) | 'LEX' (= form) | 'DEP' (= deprel) (Nilsson & Nugues names)
//! address   := arc:    ('h' | 'm') [('+' | '-') D] | 'b' | 's' | 'g'     (D in 1..=2)
//!              config: ('STACK_' i | 'QUEUE_' i) step*                   (i in 0..=9)
//!              token:  'i' [('+' | '-') D]                                 (D in 1..=4)
//! step      := 'h' | 'lc' | 'rc' | 'ls' | 'rs' | 'pw' | 'fw'
//! ```

use crate::{Error, Result};

/// Longest cluster-path prefix a template may read (`cluster:32`).
pub const MAX_CLUSTER_BITS: u8 = 32;

/// A static word attribute, available for every word of a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Attr {
    Form,
    Lower,
    Lemma,
    Upos,
    Xpos,
    /// Value of one FEATS key (`feat:Number`); `<none>` when absent.
    Feat(String),
    /// First k characters of the form.
    Prefix(u8),
    /// Last k characters of the form.
    Suffix(u8),
    /// Word shape: upper → X, lower → x, digit → d, others kept; runs collapsed.
    Shape,
    /// The whole FEATS string (`Number=Sing|Person=3`, `_`).
    Feats,
    /// Whether the form holds a digit / a hyphen / an upper-case letter.
    HasDigit,
    HasHyphen,
    HasUpper,
    /// Tagger only: the UPOS tags its tag dictionary allows for the word (the word's
    /// ambiguity class; "unknown" for a word it does not know). A look-ahead that a
    /// left-to-right tagger can read to the right.
    Ambig,
    /// Tagger only: the UPOS its backward (right-to-left) first pass gave the word, at
    /// any offset: the right context of the left-to-right pass. The backward pass reads
    /// its own to the right.
    Bupos,
    /// Tagger and arc-eager parser: the first k bits of the word's path in the model's
    /// Brown cluster table (0: the whole path), looked up as written, then lower-cased;
    /// one "none" value for a word the table lacks.
    Cluster(u8),
}

impl Attr {
    pub fn text(&self) -> String {
        match self {
            Attr::Form => "form".into(),
            Attr::Lower => "lower".into(),
            Attr::Lemma => "lemma".into(),
            Attr::Upos => "upos".into(),
            Attr::Xpos => "xpos".into(),
            Attr::Feat(k) => format!("feat:{k}"),
            Attr::Prefix(k) => format!("prefix:{k}"),
            Attr::Suffix(k) => format!("suffix:{k}"),
            Attr::Shape => "shape".into(),
            Attr::Feats => "feats".into(),
            Attr::HasDigit => "hasdigit".into(),
            Attr::HasHyphen => "hashyphen".into(),
            Attr::HasUpper => "hasupper".into(),
            Attr::Ambig => "ambig".into(),
            Attr::Bupos => "bupos".into(),
            Attr::Cluster(0) => "cluster".into(),
            Attr::Cluster(k) => format!("cluster:{k}"),
        }
    }
    /// Whether the attribute is computed from the form alone (so a tagger knows it
    /// before predicting anything).
    pub fn from_form(&self) -> bool {
        matches!(
            self,
            Attr::Form
                | Attr::Lower
                | Attr::Prefix(_)
                | Attr::Suffix(_)
                | Attr::Shape
                | Attr::HasDigit
                | Attr::HasHyphen
                | Attr::HasUpper
                | Attr::Cluster(_)
        )
    }
}

/// An attribute of a configuration node: static ones plus what the parser built so far.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeAttr {
    Word(Attr),
    /// Label assigned so far to the node's arc.
    Deprel,
    /// Number of left / right dependents so far (valency).
    LeftValency,
    RightValency,
}

impl NodeAttr {
    pub fn text(&self) -> String {
        match self {
            NodeAttr::Word(a) => a.text(),
            NodeAttr::Deprel => "deprel".into(),
            NodeAttr::LeftValency => "lval".into(),
            NodeAttr::RightValency => "rval".into(),
        }
    }
}

/// A word position relative to an arc h → m (graph parser).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArcAddr {
    /// h + offset (offset in -2..=2).
    Head(i8),
    /// m + offset.
    Mod(i8),
    /// Each word strictly between h and m (one feature instance per word).
    Between,
    /// The sibling s: the previous modifier of h on the same side (second order).
    Sibling,
    /// The grandparent g: the head of h.
    Grand,
}

impl ArcAddr {
    pub fn text(&self) -> String {
        let off = |c: &str, o: i8| match o {
            0 => c.to_string(),
            o if o > 0 => format!("{c}+{o}"),
            o => format!("{c}{o}"),
        };
        match *self {
            ArcAddr::Head(o) => off("h", o),
            ArcAddr::Mod(o) => off("m", o),
            ArcAddr::Between => "b".into(),
            ArcAddr::Sibling => "s".into(),
            ArcAddr::Grand => "g".into(),
        }
    }
}

/// A navigation step of Nilsson & Nugues (2010).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// head
    H,
    /// leftmost / rightmost child
    Lc,
    Rc,
    /// nearest left / right sibling
    Ls,
    Rs,
    /// previous / following word in the sentence
    Pw,
    Fw,
}

impl Step {
    pub const ALL: [Step; 7] = [Step::H, Step::Lc, Step::Rc, Step::Ls, Step::Rs, Step::Pw, Step::Fw];
    pub fn text(self) -> &'static str {
        match self {
            Step::H => "h",
            Step::Lc => "lc",
            Step::Rc => "rc",
            Step::Ls => "ls",
            Step::Rs => "rs",
            Step::Pw => "pw",
            Step::Fw => "fw",
        }
    }
    fn parse(s: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|st| st.text() == s)
    }
}

/// Where a configuration address starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    Stack(u8),
    Queue(u8),
}

/// STACK_i / QUEUE_i followed by navigation steps.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigAddr {
    pub base: Base,
    pub steps: Vec<Step>,
}

impl ConfigAddr {
    pub fn text(&self) -> String {
        let mut s = match self.base {
            Base::Stack(i) => format!("STACK_{i}"),
            Base::Queue(i) => format!("QUEUE_{i}"),
        };
        for st in &self.steps {
            s.push(' ');
            s.push_str(st.text());
        }
        s
    }
}

/// Which parser family a template belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Arc templates of the graph-based parser (and its labeler).
    Arc,
    /// Configuration templates of the transition-based parser.
    Config,
    /// Token templates of the tagger: attributes of the word at offset i±k, and the
    /// columns already predicted (words to the left; the current word's earlier columns).
    Token,
}

/// One atom of a conjunction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// Arc direction (head left or right of the modifier).
    Dir,
    /// Binned distance: |h - m| for arcs, s0–q0 for configurations.
    Dist,
    /// Binned sibling–modifier distance |s - m| (second order; its own value when the
    /// modifier has no sibling). MSTParser's sibling features use it.
    SibDist,
    ArcWord {
        attr: Attr,
        addr: ArcAddr,
    },
    ConfigWord {
        attr: NodeAttr,
        addr: ConfigAddr,
    },
    /// The word at offset `offset` from the tagged word i.
    TokenWord {
        attr: Attr,
        offset: i8,
    },
}

/// Text of a token address: `i`, `i+1`, `i-2`.
pub fn token_addr_text(offset: i8) -> String {
    match offset {
        0 => "i".into(),
        o if o > 0 => format!("i+{o}"),
        o => format!("i{o}"),
    }
}

impl Atom {
    pub fn text(&self) -> String {
        match self {
            Atom::Dir => "dir".into(),
            Atom::Dist => "dist".into(),
            Atom::SibDist => "sdist".into(),
            Atom::ArcWord { attr, addr } => format!("{}({})", attr.text(), addr.text()),
            Atom::ConfigWord { attr, addr } => format!("{}({})", attr.text(), addr.text()),
            Atom::TokenWord { attr, offset } => format!("{}({})", attr.text(), token_addr_text(*offset)),
        }
    }
    /// Edge atoms (dir, dist, sdist) qualify a conjunction and do not count toward the atom limit.
    pub fn is_edge(&self) -> bool {
        matches!(self, Atom::Dir | Atom::Dist | Atom::SibDist)
    }

    /// The atom as an (address, attribute) text pair, both in canonical spelling:
    /// `upos(STACK_1 lc pw)` → `("STACK_1 lc pw", "upos")`, `feat:Case(m-1)` → `("m-1", "feat:Case")`.
    /// Edge atoms have no address: `dir` → `("", "dir")`, likewise `dist` and `sdist`.
    /// [`render_atom`] turns a pair back into the atom's text.
    pub fn parts(&self) -> (String, String) {
        match self {
            Atom::Dir | Atom::Dist | Atom::SibDist => (String::new(), self.text()),
            Atom::ArcWord { attr, addr } => (addr.text(), attr.text()),
            Atom::ConfigWord { attr, addr } => (addr.text(), attr.text()),
            Atom::TokenWord { attr, offset } => (token_addr_text(*offset), attr.text()),
        }
    }
}

/// Text of the atom given as an (address, attribute) pair (the inverse of [`Atom::parts`]):
/// `attribute(address)`, or the bare `attribute` when the address is empty (edge atoms).
/// Names are not checked here (parsing the text does that), only that the pair cannot
/// stand for more or less than one atom: no `&`, parentheses, `#` or line breaks, and a
/// non-empty attribute.
pub fn render_atom(address: &str, attribute: &str) -> std::result::Result<String, String> {
    let bad = |s: &str| s.contains(['&', '(', ')', '#', '\n', '\r']);
    if bad(address) || bad(attribute) {
        return Err(format!(
            "atom ({address:?}, {attribute:?}): address and attribute may not contain &, (, ), # or line breaks"
        ));
    }
    let (address, attribute) = (address.trim(), attribute.trim());
    if attribute.is_empty() {
        return Err(format!("atom ({address:?}, {attribute:?}): empty attribute"));
    }
    Ok(if address.is_empty() { attribute.to_string() } else { format!("{attribute}({address})") })
}

fn err(text: &str, line: usize, msg: impl Into<String>) -> Error {
    Error::Template { text: text.to_string(), line, msg: msg.into() }
}

fn parse_attr(name: &str, family: Family) -> std::result::Result<NodeAttr, String> {
    let lower = name.to_ascii_lowercase();
    let (head, arg) = match lower.split_once(':') {
        Some((h, a)) => (h.to_string(), Some(a)),
        None => (lower.clone(), None),
    };
    let k_arg = |a: Option<&str>| -> std::result::Result<u8, String> {
        let a = a.ok_or_else(|| format!("{head} needs a length, e.g. {head}:3"))?;
        match a.parse::<u8>() {
            Ok(k) if (1..=9).contains(&k) => Ok(k),
            _ => Err(format!("length of {head} must be 1..9, got {a:?}")),
        }
    };
    let attr = match (head.as_str(), arg) {
        ("form" | "lex", None) => NodeAttr::Word(Attr::Form),
        ("lower", None) => NodeAttr::Word(Attr::Lower),
        ("lemma", None) => NodeAttr::Word(Attr::Lemma),
        ("upos" | "pos", None) => NodeAttr::Word(Attr::Upos),
        ("xpos", None) => NodeAttr::Word(Attr::Xpos),
        ("shape", None) => NodeAttr::Word(Attr::Shape),
        ("feats", None) => NodeAttr::Word(Attr::Feats),
        ("hasdigit", None) => NodeAttr::Word(Attr::HasDigit),
        ("hashyphen", None) => NodeAttr::Word(Attr::HasHyphen),
        ("hasupper", None) => NodeAttr::Word(Attr::HasUpper),
        ("ambig", None) if family == Family::Token => NodeAttr::Word(Attr::Ambig),
        ("bupos", None) if family == Family::Token => NodeAttr::Word(Attr::Bupos),
        ("bupos", None) => {
            return Err("bupos (the tagger's backward pass) exists only in token templates".into())
        }
        ("ambig", None) => {
            return Err("ambig (the tag dictionary's classes) exists only in token templates".into())
        }
        ("cluster", a) if family != Family::Arc => NodeAttr::Word(Attr::Cluster(match a {
            None => 0,
            Some(a) => match a.parse::<u8>() {
                Ok(k) if (1..=MAX_CLUSTER_BITS).contains(&k) => k,
                _ => return Err(format!("bits of cluster must be 1..{MAX_CLUSTER_BITS}, got {a:?}")),
            },
        })),
        ("cluster", _) => {
            return Err("cluster (word clusters) exists only in token and configuration templates".into())
        }
        ("prefix", a) => NodeAttr::Word(Attr::Prefix(k_arg(a)?)),
        ("suffix", a) => NodeAttr::Word(Attr::Suffix(k_arg(a)?)),
        ("feat", Some(_)) => {
            // Keep the key's case: UD keys are case-sensitive (`Number`, `PronType`).
            let key = &name[name.find(':').unwrap_or(0) + 1..];
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || "[]_-".contains(c)) {
                return Err(format!("bad FEATS key {key:?}"));
            }
            NodeAttr::Word(Attr::Feat(key.to_string()))
        }
        ("feat", None) => return Err("feat needs a key, e.g. feat:Number".into()),
        ("deprel" | "dep", None) => NodeAttr::Deprel,
        ("lval", None) => NodeAttr::LeftValency,
        ("rval", None) => NodeAttr::RightValency,
        _ => return Err(format!("unknown attribute {name:?}")),
    };
    if family != Family::Config && !matches!(attr, NodeAttr::Word(_)) {
        return Err(format!("attribute {name:?} exists only in configuration templates"));
    }
    Ok(attr)
}

fn parse_arc_addr(s: &str) -> std::result::Result<ArcAddr, String> {
    let s = s.trim();
    match s {
        "b" => return Ok(ArcAddr::Between),
        "s" => return Ok(ArcAddr::Sibling),
        "g" => return Ok(ArcAddr::Grand),
        _ => {}
    }
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    // Split after the first character (not byte: the text may hold any UTF-8).
    let first = compact.chars().next().map_or(0, char::len_utf8);
    let (who, rest) = compact.split_at(first);
    let off: i8 = if rest.is_empty() {
        0
    } else {
        match rest.parse::<i8>() {
            Ok(o) if rest.starts_with(['+', '-']) && (1..=2).contains(&o.unsigned_abs()) => o,
            _ => return Err(format!("bad arc address {s:?}: offsets are +1, +2, -1, -2")),
        }
    };
    match who {
        "h" => Ok(ArcAddr::Head(off)),
        "m" => Ok(ArcAddr::Mod(off)),
        _ => Err(format!("bad arc address {s:?}: use h, m, h±1, h±2, m±1, m±2, b, s or g")),
    }
}

fn parse_token_addr(s: &str) -> std::result::Result<i8, String> {
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let bad = || format!("bad token address {s:?}: use i, i+1 .. i+4, i-1 .. i-4");
    let rest = compact.strip_prefix(['i', 'I']).ok_or_else(bad)?;
    if rest.is_empty() {
        return Ok(0);
    }
    match rest.parse::<i8>() {
        Ok(o) if rest.starts_with(['+', '-']) && (1..=4).contains(&o.unsigned_abs()) => Ok(o),
        _ => Err(bad()),
    }
}

fn parse_config_addr(s: &str) -> std::result::Result<ConfigAddr, String> {
    let mut parts = s.split_whitespace();
    let first = parts.next().ok_or("empty address")?;
    let upper = first.to_ascii_uppercase();
    let (base, idx) = if let Some(i) = upper.strip_prefix("STACK_") {
        (true, i)
    } else if let Some(i) = upper.strip_prefix("QUEUE_") {
        (false, i)
    } else {
        return Err(format!("bad configuration address {s:?}: starts with STACK_i or QUEUE_i"));
    };
    let i: u8 = match idx.parse() {
        Ok(i) if i <= 9 => i,
        _ => return Err(format!("bad index in {first:?}: 0..9")),
    };
    let base = if base { Base::Stack(i) } else { Base::Queue(i) };
    let mut steps = Vec::new();
    for p in parts {
        let st = Step::parse(&p.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown navigation step {p:?}: use h, lc, rc, ls, rs, pw, fw"))?;
        steps.push(st);
    }
    if steps.len() > 4 {
        return Err("at most 4 navigation steps".into());
    }
    Ok(ConfigAddr { base, steps })
}

fn parse_atom(s: &str, family: Family) -> std::result::Result<Atom, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty atom".into());
    }
    match s.to_ascii_lowercase().as_str() {
        "dir" if family == Family::Arc => return Ok(Atom::Dir),
        "dir" => return Err("dir exists only in arc templates".into()),
        "dist" if family != Family::Token => return Ok(Atom::Dist),
        "dist" => return Err("dist exists only in arc and configuration templates".into()),
        "sdist" if family == Family::Arc => return Ok(Atom::SibDist),
        "sdist" => return Err("sdist exists only in arc templates".into()),
        _ => {}
    }
    let open = s.find('(').ok_or_else(|| format!("atom {s:?}: expected attr(address), dir or dist"))?;
    let inner =
        s[open + 1..].strip_suffix(')').ok_or_else(|| format!("atom {s:?}: missing closing parenthesis"))?;
    if inner.contains(['(', ')']) {
        return Err(format!("atom {s:?}: nested parentheses"));
    }
    let attr = parse_attr(s[..open].trim(), family)?;
    match family {
        Family::Arc => {
            let NodeAttr::Word(attr) = attr else { unreachable!("checked in parse_attr") };
            Ok(Atom::ArcWord { attr, addr: parse_arc_addr(inner)? })
        }
        Family::Config => Ok(Atom::ConfigWord { attr, addr: parse_config_addr(inner)? }),
        Family::Token => {
            let NodeAttr::Word(attr) = attr else { unreachable!("checked in parse_attr") };
            let offset = parse_token_addr(inner)?;
            if offset > 0 && !attr.from_form() && !matches!(attr, Attr::Ambig | Attr::Bupos) {
                return Err(format!(
                    "{}: the tagger predicts {} left to right, so words to the right have none yet",
                    s,
                    attr.text()
                ));
            }
            Ok(Atom::TokenWord { attr, offset })
        }
    }
}

/// Parses one template into atoms in canonical (sorted) order.
/// `max_atoms` bounds the word atoms; edge atoms (dir, dist) do not count.
pub fn parse_atoms(text: &str, line: usize, family: Family, max_atoms: usize) -> Result<Vec<Atom>> {
    let mut atoms = Vec::new();
    for part in text.split('&') {
        let atom = parse_atom(part, family).map_err(|m| err(text, line, m))?;
        if atoms.contains(&atom) {
            return Err(err(text, line, format!("atom {} repeated", atom.text())));
        }
        atoms.push(atom);
    }
    let n_word = atoms.iter().filter(|a| !a.is_edge()).count();
    if n_word > max_atoms {
        return Err(err(text, line, format!("{n_word} word atoms, the limit is {max_atoms}")));
    }
    if n_word == 0 && family != Family::Arc {
        return Err(err(text, line, "a configuration or token template needs a word atom"));
    }
    let n_between =
        atoms.iter().filter(|a| matches!(a, Atom::ArcWord { addr: ArcAddr::Between, .. })).count();
    if n_between > 1 {
        return Err(err(text, line, "at most one in-between atom (b) per template"));
    }
    atoms.sort_by(canonical_order);
    Ok(atoms)
}

/// Canonical atom order: word atoms grouped by address (then attribute), edge atoms last.
fn canonical_order(a: &Atom, b: &Atom) -> std::cmp::Ordering {
    fn key(a: &Atom) -> (u8, Option<&ArcAddr>, Option<&ConfigAddr>, i8, String) {
        match a {
            Atom::ArcWord { attr, addr } => (0, Some(addr), None, 0, attr.text()),
            Atom::ConfigWord { attr, addr } => (0, None, Some(addr), 0, attr.text()),
            Atom::TokenWord { attr, offset } => (0, None, None, *offset, attr.text()),
            Atom::Dir => (1, None, None, 0, String::new()),
            Atom::Dist => (2, None, None, 0, String::new()),
            Atom::SibDist => (3, None, None, 0, String::new()),
        }
    }
    key(a).cmp(&key(b))
}

/// Canonical text of sorted atoms: lower-case names, `" & "` between atoms.
pub fn canonical_text(atoms: &[Atom]) -> String {
    atoms.iter().map(Atom::text).collect::<Vec<_>>().join(" & ")
}
