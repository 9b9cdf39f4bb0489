//! Golden feature hashes: the exact u64 features of fixed templates on a fixed sentence,
//! for both template families (arc templates of the graph parser, configuration
//! templates of the arc-eager parser). A model file stores weights at rows derived from
//! these values, so any change to the string hash (FNV constants, seed, finaliser), to
//! `combine` (rotation, multiplier) or to how a template folds its atoms makes every saved
//! model parse garbage. The values were computed once with the code of 2026-11 (container
//! format 3) and must never change.

use depfs_core::templates::arc::{ArcFeatures, ArcSent, Second};
use depfs_core::templates::attrs::{SentAttrs, VocabHashes};
use depfs_core::templates::config_feats::{ConfigFeatures, ExtractScratch};
use depfs_core::templates::hash::{combine, fmix, fold, hash_str};
use depfs_core::templates::{Family, TemplateSet};
use depfs_core::transition::{static_sequence, Configuration, GoldTree};
use depfs_core::treebank::{Treebank, WordStrs};

/// "The old dog sees a cat ." with heads and labels (one sentence).
fn sentence() -> Treebank {
    let words = [
        ("The", "the", "DET", "DT", "Definite=Def", 3, "det"),
        ("old", "old", "ADJ", "JJ", "Degree=Pos", 3, "amod"),
        ("dog", "dog", "NOUN", "NN", "Number=Sing", 4, "nsubj"),
        ("sees", "see", "VERB", "VBZ", "Number=Sing|Person=3", 0, "root"),
        ("a", "a", "DET", "DT", "Definite=Ind", 6, "det"),
        ("cat", "cat", "NOUN", "NN", "Number=Sing", 4, "obj"),
        (".", ".", "PUNCT", ".", "_", 4, "punct"),
    ];
    let ws: Vec<WordStrs> = words
        .iter()
        .map(|&(form, lemma, upos, xpos, feats, head, deprel)| WordStrs {
            form,
            lemma,
            upos,
            xpos,
            feats,
            head,
            deprel,
            deps: "_",
            misc: "_",
        })
        .collect();
    let mut tb = Treebank::new();
    tb.push_sentence(&ws, vec![]);
    tb
}

#[test]
fn string_hash_and_combine_are_pinned() {
    let got: Vec<u64> =
        ["", "a", "NOUN", "upos(h) & upos(m)", "ção↑obj"].iter().map(|s| hash_str(s)).collect();
    assert_eq!(got, GOLDEN_HASH_STR, "{got:#018x?}");
    let got = vec![
        combine(0, 0),
        combine(1, 2),
        combine(0xdead_beef, 0x1234_5678_9abc_def0),
        combine(u64::MAX, 1),
        fold(7, [1, 2, 3]),
        fmix(0x0123_4567_89ab_cdef),
    ];
    assert_eq!(got, GOLDEN_COMBINE, "{got:#018x?}");
}

const ARC_TEMPLATES: &str = "\
upos(h) & upos(m) & dir & dist
form(h) & lemma(m)
upos(h) & upos(b) & upos(m)
xpos(h-1) & upos(m+1) & dir
feat:Number(m) & suffix:2(h) & prefix:1(m)
lower(h) & shape(m)
upos(h) & upos(s) & upos(m)
form(s) & upos(m) & sdist
";

/// Every feature of every arc template on arcs (h, m, sibling) of the sentence.
fn arc_features() -> Vec<u64> {
    let tb = sentence();
    let set = TemplateSet::parse(ARC_TEMPLATES, Family::Arc, 3).unwrap();
    let af = ArcFeatures::compile(&set).unwrap();
    let vh = VocabHashes::new(&tb, &af.attrs);
    let mut sent = ArcSent::default();
    af.prepare(&vh, &tb, 0, &mut sent);
    let arcs: [(usize, usize, Option<usize>); 6] =
        [(4, 3, None), (0, 4, None), (3, 1, Some(2)), (4, 6, Some(3)), (4, 7, Some(6)), (6, 5, None)];
    let mut out = Vec::new();
    for t in 0..af.len() {
        for &(h, m, sib) in &arcs {
            af.for_each(&sent, t, h, m, Second { sib, grand: None }, |f| out.push(f));
        }
    }
    out
}

#[test]
fn arc_template_features_are_pinned() {
    let got = arc_features();
    assert_eq!(got, GOLDEN_ARC, "{got:#018x?}");
}

const CONFIG_TEMPLATES: &str = "\
upos(QUEUE_0)
form(QUEUE_0) & upos(STACK_0)
upos(STACK_0) & upos(QUEUE_0) & upos(QUEUE_1)
deprel(STACK_0 lc) & upos(STACK_0)
lemma(STACK_1) & xpos(QUEUE_0 pw)
lval(STACK_0) & rval(STACK_0)
upos(STACK_0 h) & dist
suffix:2(QUEUE_0) & feat:Number(STACK_0)
deprel(STACK_0 rc) & upos(STACK_0 rc ls)
";

/// Every configuration template's feature along the static oracle's path.
fn config_features() -> Vec<u64> {
    let tb = sentence();
    let set = TemplateSet::parse(CONFIG_TEMPLATES, Family::Config, 3).unwrap();
    let cf = ConfigFeatures::compile(&set).unwrap();
    let vh = VocabHashes::new(&tb, &cf.attrs);
    let mut attrs = SentAttrs::default();
    attrs.fill(&vh, &tb, 0);
    let heads: Vec<u32> = tb.heads(0).iter().map(|&h| h as u32).collect();
    let gold = GoldTree::new(&heads, tb.deprels(0));
    let (moves, _) = static_sequence(&gold).unwrap();
    let mut c = Configuration::new(heads.len() as u32);
    let mut scratch = ExtractScratch::default();
    let mut out = Vec::new();
    for m in moves {
        cf.extract(&c, &attrs, None, &mut scratch, &mut out);
        m.apply(&mut c);
    }
    out
}

#[test]
fn config_template_features_are_pinned() {
    let got = config_features();
    assert_eq!(got, GOLDEN_CONFIG, "{got:#018x?}");
}

const GOLDEN_HASH_STR: [u64; 5] = [
    0x85e9_1f3f_3e0e_aed7,
    0x3b90_c6f4_3493_178d,
    0xcd76_f3d3_a253_2ba6,
    0x2203_be53_3726_20a9,
    0xccbe_e944_acca_4fdc,
];
const GOLDEN_COMBINE: [u64; 6] = [
    0x0000_0000_0000_0000,
    0xd5c9_06f8_9e12_00b6,
    0xae39_5ace_aabd_f1e7,
    0xde0a_564c_bcd0_60c4,
    0xc9c1_6a06_c8a7_71b3,
    0xb2c0_58e4_ebb5_112c,
];
const GOLDEN_ARC: [u64; 49] = [
    0x9991_ed5d_4cab_0708,
    0xdce6_a72d_8b2f_f783,
    0xe96f_81a0_7a74_ed4f,
    0xa155_4c2d_e0de_5a72,
    0xccf8_ed0f_ed0c_8132,
    0x2edb_7042_caa0_104f,
    0x2ed6_57b2_4f19_d704,
    0x07d5_383d_6e3a_2645,
    0xa491_de1a_dc45_2b5e,
    0x74bb_cc73_534d_a594,
    0xa73c_18b7_f2ac_7e56,
    0x46a3_c1c1_a959_b70d,
    0xd404_2685_4b69_a6e8,
    0x7351_2b80_26bb_cf0b,
    0x16c4_7931_d712_3b45,
    0x17d0_c9a2_8e0c_ef5f,
    0xdf1b_ed67_4e85_4209,
    0x7f7e_ba5a_3c18_462f,
    0x21c2_2e4f_3fa7_9d61,
    0x46ba_6531_c632_560e,
    0xb21b_34fc_d87f_3192,
    0x4421_e65c_47f9_2c34,
    0x6e13_76af_0bce_9b8a,
    0x59a1_b67b_dbe6_33fe,
    0xbf88_f74d_48f5_732c,
    0xa552_1b09_cb77_7cf3,
    0x5961_37f2_37a4_5e9d,
    0xa327_4826_befa_0dd7,
    0xa4e8_01b1_809c_a9d9,
    0x5116_acf7_f09f_02b7,
    0x150b_1574_8c4f_a381,
    0x24ea_c6f9_4dbb_d6ce,
    0x7fc8_18ce_86da_fccb,
    0xa9ee_a1a7_635a_678b,
    0x24ea_c6f9_4dbb_d6ce,
    0xa73c_18b7_f2ac_7e56,
    0x8f8f_807f_3e0d_a383,
    0xf272_035f_8079_d8c1,
    0xb429_6417_f51f_9c50,
    0x3686_d631_1177_a2e5,
    0x2b9a_8392_70ba_98c9,
    0xf6dc_7e58_9d9a_3c59,
    0xd214_fcc4_c599_a81a,
    0xb62f_57f1_3671_b4f8,
    0xf098_d822_1b62_585b,
    0x185e_4c4b_d71f_40b9,
    0xf798_b6ae_ce0c_9648,
    0x086b_6b48_ceb6_f402,
    0xac11_a1af_bfb1_480f,
];
const GOLDEN_CONFIG: [u64; 108] = [
    0x9e8e_cd1d_53a2_7eba,
    0xef44_de39_49c4_8e8f,
    0xbfac_358f_0e5a_90fc,
    0xa570_4135_bfeb_422e,
    0x6e6b_7668_1991_69e6,
    0x14a2_5505_e527_c74e,
    0x8ee4_75a2_9492_d196,
    0x139b_5e9d_4c03_149f,
    0x2076_4f16_a8cc_3d5f,
    0xe159_ab00_c172_c417,
    0xca36_7b1b_4939_e8a4,
    0xff1c_afa0_ae6e_02d1,
    0xd790_d35e_a984_e92a,
    0xa9ea_9bd7_bc7e_8c57,
    0x14a2_5505_e527_c74e,
    0x8ee4_75a2_9492_d196,
    0x3651_c682_6948_9aaf,
    0x2076_4f16_a8cc_3d5f,
    0xb843_0c4a_e4cc_100a,
    0x3c7a_3e99_90ff_cde7,
    0x5754_8b49_3475_1a47,
    0x9f3a_48cb_6cc5_9f60,
    0xee9a_849b_0a06_624d,
    0x14a2_5505_e527_c74e,
    0x8ee4_75a2_9492_d196,
    0xc63b_c118_b3e7_66a0,
    0x2076_4f16_a8cc_3d5f,
    0xb843_0c4a_e4cc_100a,
    0xdbcb_45cb_e493_680a,
    0x74e0_363d_cc1e_eff2,
    0xd790_d35e_a984_e92a,
    0xe5e4_58ee_2cfe_1b0c,
    0x14a2_5505_e527_c74e,
    0x0db4_a2c6_ece9_5c00,
    0xc63b_c118_b3e7_66a0,
    0x2076_4f16_a8cc_3d5f,
    0xb843_0c4a_e4cc_100a,
    0x900a_7b22_cc4c_b8e2,
    0x2fa5_9923_b803_ae95,
    0xa570_4135_bfeb_422e,
    0xc759_115b_456f_26f3,
    0x14a2_5505_e527_c74e,
    0x0a7c_9545_6ac4_84bf,
    0x3d06_9cd5_1f36_5fe7,
    0x2076_4f16_a8cc_3d5f,
    0xf57b_4e4e_dcc3_651c,
    0x0055_2f5b_692d_b77a,
    0x3a2b_28f4_fca3_dbaa,
    0xc64e_4ed9_e714_504f,
    0x52fd_8435_546a_ce27,
    0x4911_38d2_e7a7_d5e9,
    0x8ee4_75a2_9492_d196,
    0x833f_ac92_81e7_bbd4,
    0x7cb7_2188_2b82_2936,
    0xf57b_4e4e_dcc3_651c,
    0x749e_b519_99ff_29c9,
    0xe86f_46a9_ae64_8f5b,
    0xa570_4135_bfeb_422e,
    0x6381_e410_d0d1_eef1,
    0x14a2_5505_e527_c74e,
    0x2354_0e79_4562_c994,
    0x4a5b_1ea7_135b_986c,
    0x2076_4f16_a8cc_3d5f,
    0x9e8e_cd1d_53a2_7eba,
    0x81a8_94d3_8d23_66a1,
    0x64df_d8e7_5811_bacb,
    0x7b0d_c16f_7cec_24a5,
    0x24a0_35b1_ec4c_7a80,
    0xd85d_afde_30ea_e81a,
    0xdb43_71af_139a_5320,
    0x776c_4db8_66a5_e473,
    0x30e6_2241_1cb7_f365,
    0xb843_0c4a_e4cc_100a,
    0x2914_0529_6505_17e8,
    0x831c_c4fc_6ab9_15bf,
    0xd790_d35e_a984_e92a,
    0xbd17_577f_b243_44f6,
    0x14a2_5505_e527_c74e,
    0x8ee4_75a2_9492_d196,
    0xcf8b_12e3_56e4_4c57,
    0x2076_4f16_a8cc_3d5f,
    0xb843_0c4a_e4cc_100a,
    0xd360_1491_f022_4c27,
    0xf31b_a069_9eff_ae1e,
    0x7b0d_c16f_7cec_24a5,
    0xa9ea_9bd7_bc7e_8c57,
    0xd85d_afde_30ea_e81a,
    0xed04_be45_9d28_350a,
    0xd60e_7fc1_1623_0c27,
    0x30e6_2241_1cb7_f365,
    0x8153_8d03_4810_bee2,
    0x40cb_a533_736c_d4cc,
    0xed5e_45a0_e172_758d,
    0xc64e_4ed9_e714_504f,
    0x23be_f520_1cce_507f,
    0xd85d_afde_30ea_e81a,
    0x5b9c_ae67_b74a_c165,
    0x7d5d_3351_4fab_28a1,
    0x1007_7d62_0331_4413,
    0x8153_8d03_4810_bee2,
    0x2ffd_79db_e6b0_3c95,
    0x8e32_49fb_7756_4ced,
    0x7b0d_c16f_7cec_24a5,
    0x52fd_8435_546a_ce27,
    0x7e9c_4015_2545_a9f9,
    0xf3fb_6f8d_4258_024a,
    0x7d5d_3351_4fab_28a1,
    0xdfa0_3611_c93f_2fd3,
];
