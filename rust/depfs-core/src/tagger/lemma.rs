//! Lemmas as edit-script classes (Chrupała 2008; UDPipe 1, Straka et al. 2016): the rule
//! that turns a form into its lemma, so that a classifier can predict it for words it
//! never saw ("walked" → strip "ed"; "studies" → strip "ies", append "y").
//!
//! A script is: a casing mode (`K` keep the form as it is, `L` lower-case it first), the
//! text removed from and added at the start, and the text removed from and added at the
//! end. It is read off the longest common substring of form and lemma (what both keep);
//! a pair with nothing in common ("went" → "go") removes the whole form. Removed texts are
//! stored, not just their lengths, so a script applies only to forms it fits. A script's
//! class string joins its five fields with tabs (no CoNLL-U field holds a tab).

/// One edit script; see the module comment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Script {
    pub lower: bool,
    pub pre_del: String,
    pub pre_add: String,
    pub suf_del: String,
    pub suf_add: String,
}

/// Longest common substring of `a` and `b` as (start in a, start in b, length), in chars.
/// O(|a| · |b|), for words.
fn longest_common(a: &[char], b: &[char]) -> (usize, usize, usize) {
    let mut best = (0, 0, 0);
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            cur[j] = if a[i - 1] == b[j - 1] { prev[j - 1] + 1 } else { 0 };
            if cur[j] > best.2 {
                best = (i - cur[j], j - cur[j], cur[j]);
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    best
}

/// `form` without the prefix `pre` and then the suffix `suf`, None when it lacks either.
/// An empty one (most scripts have no prefix to remove) is not compared: its text is
/// never read, nor a comparison called. O(|pre| + |suf|).
#[inline]
fn strip<'a>(form: &'a str, pre: &str, suf: &str) -> Option<&'a str> {
    let core = if pre.is_empty() { form } else { form.strip_prefix(pre)? };
    if suf.is_empty() {
        Some(core)
    } else {
        core.strip_suffix(suf)
    }
}

impl Script {
    /// The script that turns `form` into `lemma`. Lower-cases first when the form has
    /// capitals the lemma lacks ("The" → "the").
    pub fn between(form: &str, lemma: &str) -> Script {
        let lowered = form.to_lowercase();
        let lower = lowered != form && lemma.to_lowercase() == lemma;
        let f: Vec<char> = if lower { lowered.chars().collect() } else { form.chars().collect() };
        let l: Vec<char> = lemma.chars().collect();
        let (fa, la, len) = longest_common(&f, &l);
        let s = |c: &[char]| c.iter().collect::<String>();
        if len == 0 {
            return Script {
                lower,
                pre_del: String::new(),
                pre_add: String::new(),
                suf_del: s(&f),
                suf_add: s(&l),
            };
        }
        Script {
            lower,
            pre_del: s(&f[..fa]),
            pre_add: s(&l[..la]),
            suf_del: s(&f[fa + len..]),
            suf_add: s(&l[la + len..]),
        }
    }

    /// The lemma of `form`, or None when the script does not fit it.
    pub fn apply(&self, form: &str) -> Option<String> {
        let lowered = if self.lower { form.to_lowercase() } else { String::new() };
        let mut out = String::new();
        self.apply_into(form, &lowered, &mut out).then_some(out)
    }

    /// [`Script::apply`] into `out` (cleared first) given `lowered`, `form` lower-cased
    /// (read only by a script that lower-cases): no allocation per script when one form
    /// meets many. False when the script does not fit.
    pub fn apply_into(&self, form: &str, lowered: &str, out: &mut String) -> bool {
        out.clear();
        let f = if self.lower { lowered } else { form };
        let Some(core) = strip(f, &self.pre_del, &self.suf_del) else {
            return false;
        };
        out.push_str(&self.pre_add);
        out.push_str(core);
        out.push_str(&self.suf_add);
        true
    }

    /// Whether the script applies to `form` (what [`Script::apply`] checks, without
    /// building the lemma).
    pub fn fits(&self, form: &str) -> bool {
        if self.lower && form.chars().any(char::is_uppercase) {
            return self.apply(form).is_some();
        }
        strip(form, &self.pre_del, &self.suf_del).is_some()
    }

    /// The class string (fields joined by tabs).
    pub fn text(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}",
            if self.lower { "L" } else { "K" },
            self.pre_del,
            self.pre_add,
            self.suf_del,
            self.suf_add
        )
    }

    /// Parses [`Script::text`]; None when the text is not a script.
    pub fn from_text(text: &str) -> Option<Script> {
        let mut parts = text.split('\t');
        let lower = match parts.next()? {
            "L" => true,
            "K" => false,
            _ => return None,
        };
        let mut next = || parts.next().map(str::to_string);
        let script = Script { lower, pre_del: next()?, pre_add: next()?, suf_del: next()?, suf_add: next()? };
        parts.next().is_none().then_some(script)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn scripts_of_common_cases() {
        let s = Script::between("studies", "study");
        assert_eq!((s.suf_del.as_str(), s.suf_add.as_str()), ("ies", "y"));
        assert_eq!(s.apply("flies").as_deref(), Some("fly"));
        assert_eq!(s.apply("walked"), None, "does not fit");
        let s = Script::between("The", "the");
        assert!(s.lower && s.suf_del.is_empty() && s.pre_del.is_empty());
        assert_eq!(s.apply("A").as_deref(), Some("a"));
        assert_eq!(Script::between("went", "go").apply("went").as_deref(), Some("go"));
        assert_eq!(Script::between("unhappier", "happy").apply("unluckier").as_deref(), Some("lucky"));
        let s = Script::between("Apple", "Apple");
        assert_eq!(s.apply("Paris").as_deref(), Some("Paris"));
    }

    proptest! {
        #[test]
        fn a_script_rebuilds_its_own_lemma(form in "[a-zA-Zé'-]{0,9}", lemma in "[a-zA-Zé'-]{0,9}") {
            let s = Script::between(&form, &lemma);
            prop_assert_eq!(s.apply(&form), Some(lemma));
            prop_assert_eq!(Script::from_text(&s.text()), Some(s));
        }

        #[test]
        fn a_script_fits_the_forms_it_applies_to(
            a in "[a-zA-Zé'-]{0,6}",
            b in "[a-zA-Zé'-]{0,6}",
            form in "[a-zA-Zé'-]{0,8}",
        ) {
            let s = Script::between(&a, &b);
            prop_assert_eq!(s.fits(&form), s.apply(&form).is_some());
            if let Some(lemma) = s.apply(&form) {
                let lowered = if s.lower { form.to_lowercase() } else { form.clone() };
                prop_assert!(lowered.starts_with(&s.pre_del) && lowered.ends_with(&s.suf_del));
                let (kept, added) = (lowered.len() - s.pre_del.len() - s.suf_del.len(), s.pre_add.len() + s.suf_add.len());
                prop_assert_eq!(lemma.len(), kept + added);
            }
        }
    }
}
