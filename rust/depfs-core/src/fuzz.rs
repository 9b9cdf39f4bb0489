//! Entry points of the fuzz targets (`fuzz/fuzz_targets/`) and of the test that replays
//! their saved corpora (`fuzz/corpus/<target>/`): each takes arbitrary bytes and must
//! return, without panicking, hanging or allocating without bound, whatever the bytes.
//! Bad input is an `Err` that the entry drops; an `assert!` here states a property that
//! holds for every input the readers accept (a failure is a bug, like a panic).

use std::path::Path;

use crate::io::conllu::{self, Batches, ReadOptions};
use crate::io::model::{self, Loaded, Model};
use crate::templates::arc::{ArcFeatures, ArcSent, Second};
use crate::templates::attrs::VocabHashes;
use crate::templates::config_feats::ConfigFeatures;
use crate::templates::{Family, TemplateSet, DEFAULT_MAX_ATOMS};
use crate::Treebank;

/// A tagged three-word sentence that the loaded models parse and the templates read.
const SENTENCE: &str = "1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_\n\
                        2\tdogs\tdog\tNOUN\tNNS\tNumber=Plur\t3\tnsubj\t_\t_\n\
                        3\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No\n\n";

fn sentence() -> Treebank {
    conllu::read_str(SENTENCE, &ReadOptions::default()).expect("the fixed sentence reads")
}

/// CoNLL-U reader: any bytes are read with both option sets; what is read writes out in
/// canonical form, which reads back to the same text, and reading in batches of two
/// sentences (of plain text) gives as many sentences.
pub fn conllu(data: &[u8]) {
    let strict = ReadOptions { multiple_roots: false, allow_blank_heads: false };
    let loose = ReadOptions { multiple_roots: true, allow_blank_heads: true };
    for opts in [strict, loose] {
        let Ok(tb) = conllu::read_bytes(data, "fuzz", &opts) else { continue };
        let text = conllu::to_string(&tb);
        let again = conllu::read_str(&text, &opts).expect("written CoNLL-U reads back");
        assert_eq!(conllu::to_string(&again), text, "written CoNLL-U changes when read back");
        if data.starts_with(&[0x1f, 0x8b]) {
            continue; // batches of a gzipped file come through `Batches::open`, which needs a path
        }
        let mut batches = Batches::plain(data, "fuzz", &opts);
        let mut n = 0;
        while let Some(batch) = batches.next_batch(2).expect("batches read what the whole read did") {
            n += batch.len();
        }
        assert_eq!(n, tb.len(), "batches and the whole read count different sentences");
    }
}

/// Model loader: the bytes as a whole model file (the header checks), then as the
/// payload behind a valid header (a checksum would stop almost every mutated payload):
/// the first byte picks the container version and the kind. A model that loads parses
/// (or tags) a three-word sentence.
pub fn model(data: &[u8]) {
    let path = Path::new("fuzz.depfs");
    if let Ok(loaded) = model::load_model_bytes(path, data) {
        use_model(path, loaded);
    }
    let Some((&pick, payload)) = data.split_first() else { return };
    let version = [3, 4, 5][pick as usize % 3];
    let kind = ["graph", "arc-eager", "tagger", "ensemble"][pick as usize / 3 % 4];
    let file = [model::header(version, kind, payload), payload.to_vec()].concat();
    if let Ok(loaded) = model::load_model_bytes(path, &file) {
        use_model(path, loaded);
    }
}

/// Builds the parser or tagger of a loaded file (and the tagger stored with a parser)
/// and runs it on [`SENTENCE`]; errors are fine.
fn use_model(path: &Path, loaded: Loaded) {
    use crate::graph::GraphModel;
    use crate::tagger::Tagger;
    use crate::transition::{local::Ensemble, parser::ArcEagerParser};
    let tb = sentence();
    if let Some(file) = loaded.tagger {
        let _ = Tagger::from_file(path, file).and_then(|t| t.tag(&tb, 1));
    }
    let loaded = Loaded { tagger: None, ..loaded };
    let _ = match &loaded.model {
        Model::Graph(_)
        | Model::GraphDynfs(_)
        | Model::GraphDynfsPruned(_)
        | Model::GraphDynfsLabeled(_)
        | Model::GraphDynfsLabelDict(_)
        | Model::GraphDynfsLex(_)
        | Model::GraphDynfsLabelWeights(_)
        | Model::GraphDynfsTreeMargin(_) => {
            GraphModel::from_loaded(path, loaded).and_then(|m| m.parse(&tb, 1))
        }
        Model::ArcEager(_)
        | Model::ArcEagerDynamic(_)
        | Model::ArcEagerCascade(_)
        | Model::ArcEagerClusters(_) => {
            // With a margin too: a dynamic model's rule, a cascade's first stage.
            ArcEagerParser::from_loaded(path, loaded)
                .and_then(|p| p.parse_with(&tb, 1, false, Some(1.0)).and(p.parse(&tb, 1)))
        }
        Model::Ensemble(_) => Ensemble::from_loaded(path, loaded).and_then(|e| e.parse(&tb, 1)),
        Model::Tagger(_)
        | Model::TaggerDynamic(_)
        | Model::TaggerLines(_)
        | Model::TaggerBidi(_)
        | Model::TaggerCased(_)
        | Model::TaggerClusters(_)
        | Model::TaggerRules(_)
        | Model::WithTagger(_) => {
            let file = model::ModelFile { inputs: loaded.inputs, info: loaded.info, model: loaded.model };
            Tagger::from_file(path, file).and_then(|t| t.tag(&tb, 1))
        }
    };
}

/// Template parser: the bytes (as UTF-8) are a template file of each family; a set that
/// parses prints as text that parses to the same set, and compiles; arc sets compute
/// every feature of every arc of a three-word sentence.
pub fn templates(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for family in [Family::Arc, Family::Config, Family::Token] {
        let Ok(set) = TemplateSet::parse(text, family, DEFAULT_MAX_ATOMS) else { continue };
        let again = TemplateSet::parse(&set.to_text(), family, crate::templates::MAX_ATOMS_BOUND)
            .expect("canonical template text parses");
        assert_eq!(again, set, "canonical template text parses to another set");
        match family {
            Family::Arc => {
                let Ok(feats) = ArcFeatures::compile(&set) else { continue };
                arc_features(&feats);
            }
            Family::Config => drop(ConfigFeatures::compile(&set)),
            Family::Token => {
                let mut slots = crate::tagger::features::Slots::default();
                drop(crate::tagger::features::TokenFeatures::compile(&set, &mut slots));
            }
        }
    }
}

/// Every feature of every arc (with and without sibling and grandparent) of [`SENTENCE`].
fn arc_features(feats: &ArcFeatures) {
    let tb = sentence();
    let vh = VocabHashes::new(&tb, &feats.attrs);
    let mut sent = ArcSent::default();
    feats.prepare(&vh, &tb, 0, &mut sent);
    let n1 = sent.n1;
    let seconds = [Second::default(), Second { sib: Some(1), grand: Some(0) }];
    for t in 0..feats.len() {
        for h in 0..n1 {
            for m in 1..n1 {
                for second in seconds {
                    feats.for_each(&sent, t, h, m, second, |_| {});
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
