//! Word clusters learnt from unlabelled text (Brown et al. 1992), read by the tagger's
//! `cluster(i)` and `cluster:K(i)` templates: a rare or unknown word gets the bit path of
//! its distributional class, and a prefix of the path is a coarser class (Koo, Carreras &
//! Collins 2008; Owoputi et al. 2013 for taggers).
//!
//! Input is the "paths" file of Liang's `wcluster` that published cluster sets use: one
//! `BITSTRING<TAB>WORD<TAB>COUNT` line per word. The table keeps every word of the file
//! (counts are checked, not kept), stored compactly inside the tagger's model file: the
//! words sorted and joined by `\n` in one string, each word's index into the distinct
//! paths. Loading rebuilds the word offsets and an open-addressing hash index of the words
//! (O(bytes)); a look-up is one hash and, mostly, one string comparison, done once per
//! vocabulary string of a treebank. (A binary search over the sorted words, 18 string
//! comparisons scattered over 2 MB for spaCy's table, made tagging en_ewt test 1.18× the
//! time of the tagger without clusters.)

use serde::{Deserialize, Serialize};

use crate::templates::hash::hash_str;
use crate::{Error, Result};

/// Longest bit path a cluster file may hold.
pub const MAX_PATH_BITS: usize = 64;

/// A word → bit-path table (see the module comment).
#[derive(Debug, Clone, PartialEq)]
pub struct Clusters {
    /// The words, sorted (byte order), each followed by `\n`.
    words: String,
    /// Start of each word in `words`, and one past the last word's `\n`.
    starts: Vec<u32>,
    /// Index into `paths` of each word.
    path_of: Vec<u32>,
    /// The distinct paths ("0110...").
    paths: Vec<String>,
    /// Open addressing, linear probing: word indices at `hash_str(word) & mask` onwards,
    /// [`EMPTY`] elsewhere; at most half full.
    index: Vec<u32>,
}

/// An empty slot of [`Clusters::index`].
const EMPTY: u32 = u32::MAX;

/// A [`Clusters`] table inside a model file (offsets rebuilt on load).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredClusters {
    words: String,
    path_of: Vec<u32>,
    paths: Vec<String>,
}

/// Value of `cluster`/`cluster:K` for a word the table lacks.
pub fn none_value() -> u64 {
    hash_str("<no cluster>")
}

impl Clusters {
    /// Reads a paths file (`BITSTRING<TAB>WORD<TAB>COUNT` per line); `name` names it in
    /// errors, which give the 1-based line. O(lines · log lines).
    pub fn parse(text: &str, name: &str) -> Result<Clusters> {
        let bad = |line: usize, msg: String| Error::format(name, line, msg);
        let mut entries: Vec<(&str, &str, usize)> = Vec::new();
        let n_lines = text.split('\n').count();
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            if line.is_empty() {
                if i + 1 == n_lines {
                    break; // the final newline
                }
                return Err(bad(i + 1, "empty line (expected BITSTRING<TAB>WORD<TAB>COUNT)".into()));
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let [bits, word, count] = fields[..] else {
                return Err(bad(
                    i + 1,
                    format!(
                        "{} tab-separated fields, expected 3: BITSTRING<TAB>WORD<TAB>COUNT",
                        fields.len()
                    ),
                ));
            };
            if bits.is_empty() || bits.len() > MAX_PATH_BITS || !bits.bytes().all(|b| b == b'0' || b == b'1')
            {
                return Err(bad(
                    i + 1,
                    format!("bad bit path {bits:?}: 1 to {MAX_PATH_BITS} characters 0 or 1"),
                ));
            }
            if word.is_empty() {
                return Err(bad(i + 1, "empty word".into()));
            }
            if count.parse::<u64>().is_err() {
                return Err(bad(i + 1, format!("bad count {count:?}: a whole number")));
            }
            entries.push((word, bits, i + 1));
        }
        if entries.is_empty() {
            return Err(bad(1, "no clusters in the file".into()));
        }
        entries.sort_unstable();
        for pair in entries.windows(2) {
            if pair[0].0 == pair[1].0 {
                let (a, b) = (pair[0].2.min(pair[1].2), pair[0].2.max(pair[1].2));
                return Err(bad(b, format!("word {:?} again (first on line {a})", pair[0].0)));
            }
        }
        let mut paths: Vec<String> = entries.iter().map(|e| e.1.to_string()).collect();
        paths.sort_unstable();
        paths.dedup();
        let stored = StoredClusters {
            words: entries.iter().flat_map(|e| [e.0, "\n"]).collect(),
            path_of: entries
                .iter()
                .map(|e| paths.binary_search_by(|p| p.as_str().cmp(e.1)).unwrap_or(0) as u32)
                .collect(),
            paths,
        };
        Clusters::from_stored(stored).map_err(|e| bad(1, e.to_string()))
    }

    /// Reads the paths file at `path` ([`Clusters::parse`]).
    pub fn from_file(path: &str) -> Result<Clusters> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, &e))?;
        if bytes.starts_with(crate::io::model::MAGIC) {
            return Err(Error::InvalidArgument(format!(
                "{path}: a depfs model file, not a word-cluster paths file"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            let line =
                1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count();
            Error::format(path, line, "not UTF-8")
        })?;
        // A BOM is read past, as the CoNLL-U reader does.
        Clusters::parse(text.strip_prefix('\u{feff}').unwrap_or(&text), path)
    }

    /// The table as stored in a model file.
    pub fn to_stored(&self) -> StoredClusters {
        StoredClusters { words: self.words.clone(), path_of: self.path_of.clone(), paths: self.paths.clone() }
    }

    /// The table a model file stores; checks that the words are sorted and distinct, and
    /// every path index and path. O(bytes).
    pub fn from_stored(s: StoredClusters) -> Result<Clusters> {
        let bad = |msg: &str| Error::InvalidArgument(format!("bad cluster table: {msg}"));
        if s.words.len() >= u32::MAX as usize || !s.words.is_empty() && !s.words.ends_with('\n') {
            return Err(bad("words not terminated"));
        }
        let mut starts = Vec::with_capacity(s.path_of.len() + 1);
        starts.push(0u32);
        let mut last: Option<&[u8]> = None;
        // Bytes, not `str::split_terminator` (whose char searcher was a third of the load).
        let body = s.words.as_bytes().strip_suffix(b"\n");
        for w in body.into_iter().flat_map(|body| body.split(|&b| b == b'\n')) {
            if w.is_empty() || last.is_some_and(|l| l >= w) {
                return Err(bad("words empty, not sorted or repeated"));
            }
            last = Some(w);
            starts.push(starts[starts.len() - 1] + w.len() as u32 + 1);
        }
        if starts.len() != s.path_of.len() + 1 {
            return Err(bad("as many words as paths expected"));
        }
        let ok_path = |p: &String| {
            !p.is_empty() && p.len() <= MAX_PATH_BITS && p.bytes().all(|b| b == b'0' || b == b'1')
        };
        if !s.paths.iter().all(ok_path) || s.path_of.iter().any(|&i| i as usize >= s.paths.len()) {
            return Err(bad("bad path"));
        }
        let mut c =
            Clusters { words: s.words, starts, path_of: s.path_of, paths: s.paths, index: Vec::new() };
        c.index = vec![EMPTY; (2 * c.len()).next_power_of_two().max(2)];
        let mask = c.index.len() - 1;
        for k in 0..c.len() {
            let mut at = hash_str(c.word(k)) as usize & mask;
            while c.index[at] != EMPTY {
                at = (at + 1) & mask;
            }
            c.index[at] = k as u32;
        }
        Ok(c)
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.path_of.len()
    }
    pub fn is_empty(&self) -> bool {
        self.path_of.is_empty()
    }
    /// Number of distinct paths (clusters).
    pub fn n_paths(&self) -> usize {
        self.paths.len()
    }

    fn word(&self, k: usize) -> &str {
        &self.words[self.starts[k] as usize..self.starts[k + 1] as usize - 1]
    }

    /// The path of `word` exactly as written. O(1) expected (the index is at most half
    /// full).
    pub fn get(&self, word: &str) -> Option<&str> {
        let mask = self.index.len() - 1;
        let mut at = hash_str(word) as usize & mask;
        loop {
            let k = self.index[at];
            if k == EMPTY {
                return None;
            }
            if self.word(k as usize) == word {
                return Some(&self.paths[self.path_of[k as usize] as usize]);
            }
            at = (at + 1) & mask;
        }
    }

    /// The path of a form: as written, else lower-cased.
    pub fn path(&self, form: &str) -> Option<&str> {
        self.get(form).or_else(|| {
            let lower = form.to_lowercase();
            if lower != form {
                self.get(&lower)
            } else {
                None
            }
        })
    }

    /// The value of `cluster:k` (k = 0: `cluster`, the whole path) for `form`: the hash of
    /// the path's first k bits (all of a shorter path), or [`none_value`].
    pub fn value(&self, form: &str, k: u8) -> u64 {
        path_value(self.path(form), k)
    }
}

/// The value of `cluster:k` for a word of path `path` ([`Clusters::value`]).
pub fn path_value(path: Option<&str>, k: u8) -> u64 {
    match path {
        Some(p) if k > 0 => hash_str(&p[..p.len().min(k as usize)]),
        Some(p) => hash_str(p),
        None => none_value(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "0110\tdog\t12\n0111\tcat\t9\n10\tThe\t40\n1\tthe\t100\n0110101\tpuppy\t3\n";

    /// Values: a prefix of k bits (the whole of a shorter path), the whole path, the word
    /// as written first, then lower-cased, else the "none" value.
    #[test]
    fn prefixes_case_and_none() {
        let c = Clusters::parse(FILE, "c.paths").unwrap();
        assert_eq!((c.len(), c.n_paths()), (5, 5));
        assert_eq!(c.value("dog", 3), hash_str("011"));
        assert_eq!(c.value("cat", 3), c.value("dog", 3), "dog and cat share 3 bits");
        assert_ne!(c.value("cat", 4), c.value("dog", 4));
        assert_eq!(c.value("puppy", 4), c.value("dog", 4));
        assert_eq!(c.value("puppy", 0), hash_str("0110101"));
        assert_eq!(c.value("dog", 9), hash_str("0110"), "a shorter path is its own prefix");
        assert_eq!(c.value("dog", 0), hash_str("0110"));
        // "The" is in the table as written; "DOG" and "Cat" only lower-cased.
        assert_eq!(c.path("The"), Some("10"));
        assert_eq!(c.path("the"), Some("1"));
        assert_eq!(c.path("DOG"), Some("0110"));
        assert_eq!(c.value("Cat", 0), c.value("cat", 0));
        assert_eq!(c.path("wolf"), None);
        assert_eq!(c.value("wolf", 4), none_value());
        assert_eq!(c.value("WOLF", 0), none_value());
        assert_ne!(none_value(), hash_str(""));
    }

    /// A BOM at the start is read past (it was "bad bit path \u{feff}0110").
    #[test]
    fn a_bom_is_read_past() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.paths");
        std::fs::write(&p, format!("\u{feff}{FILE}")).unwrap();
        let c = Clusters::from_file(p.to_str().unwrap()).unwrap();
        assert_eq!(c.path("dog"), Some("0110"));
    }

    /// A model file given as the paths file is named as one (it was "line 1: not UTF-8").
    #[test]
    fn a_model_file_is_no_paths_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tagger.depfs");
        std::fs::write(&p, [crate::io::model::MAGIC.as_slice(), &[0xff, 0xfe, 1, 2]].concat()).unwrap();
        let e = Clusters::from_file(p.to_str().unwrap()).err().unwrap().to_string();
        assert!(e.ends_with("tagger.depfs: a depfs model file, not a word-cluster paths file"), "{e}");
    }

    /// Every bad line is refused with the file's name and the line's number.
    #[test]
    fn bad_lines_name_the_file_and_line() {
        let cases = [
            ("0110\tdog\t12\n0112\tcat\t9\n", 2, "bad bit path"),
            ("0110\tdog\t12\n\tcat\t9\n", 2, "bad bit path"),
            ("0110\tdog\t12\n01\tcat\n", 2, "2 tab-separated fields"),
            ("0110 dog 12\n", 1, "1 tab-separated fields"),
            ("0110\tdog\tx\n", 1, "bad count"),
            ("0110\t\t3\n", 1, "empty word"),
            ("0110\tdog\t12\n\n1\tcat\t3\n", 2, "empty line"),
            ("0110\tdog\t12\n1\tcat\t3\n0\tdog\t1\n", 3, "word \"dog\" again (first on line 1)"),
            ("", 1, "no clusters"),
        ];
        for (text, line, msg) in cases {
            let e = Clusters::parse(text, "c.paths").unwrap_err().to_string();
            assert!(e.starts_with(&format!("c.paths:{line}: ")), "{text:?}: {e}");
            assert!(e.contains(msg), "{text:?}: {e}");
        }
        // CRLF line ends and no final newline read as well.
        let c = Clusters::parse("0110\tdog\t12\r\n1\tcat\t3", "c.paths").unwrap();
        assert_eq!((c.path("dog"), c.path("cat")), (Some("0110"), Some("1")));
    }

    /// The stored form gives the same table back, and a damaged one is refused.
    #[test]
    fn stored_round_trip_and_checks() {
        let c = Clusters::parse(FILE, "c.paths").unwrap();
        assert_eq!(Clusters::from_stored(c.to_stored()).unwrap(), c);
        let mut s = c.to_stored();
        s.words = s.words.replace("cat", "zzz"); // no longer sorted
        assert!(Clusters::from_stored(s).is_err());
        let mut s = c.to_stored();
        s.path_of[0] = 99;
        assert!(Clusters::from_stored(s).is_err());
        let mut s = c.to_stored();
        s.path_of.pop();
        assert!(Clusters::from_stored(s).is_err());
        let mut s = c.to_stored();
        s.paths[0] = "012".into();
        assert!(Clusters::from_stored(s).is_err());
    }
}
