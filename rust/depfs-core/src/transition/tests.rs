//! Tests of the transition system and oracles: hand-checked fixtures, and
//! Goldberg & Nivre costs against a brute-force search over all move sequences.

use std::collections::HashMap;

use proptest::prelude::*;

use super::oracle::*;
use super::system::*;
use crate::heads::is_projective;
use crate::templates::view::ConfigView;

/// "The dog barks ." : The <- dog <- barks -> .   (labels 0 det, 1 nsubj, 2 root, 3 punct)
fn dog_barks() -> GoldTree {
    GoldTree::new(&[2, 3, 0, 3], &[0, 1, 2, 3])
}

#[test]
fn static_oracle_on_a_hand_checked_sentence() {
    let gold = dog_barks();
    let (moves, c) = static_sequence(&gold).expect("projective");
    assert_eq!(
        moves,
        vec![
            Move::Shift,
            Move::LeftArc(0),
            Move::Shift,
            Move::LeftArc(1),
            Move::RightArc(2),
            Move::RightArc(3)
        ]
    );
    assert_eq!(&c.heads()[1..], &[2, 3, 0, 3]);
    assert_eq!(&c.labels()[1..], &[0, 1, 2, 3]);
    // barks: one left child (dog), one right child (.)
    assert_eq!(c.n_left_children(3), 1);
    assert_eq!(c.n_right_children(3), 1);
    assert_eq!(c.leftmost_child(3), Some(2));
    assert_eq!(c.rightmost_child(3), Some(4));
    assert_eq!(c.right_sibling(2), Some(4));
    assert_eq!(c.left_sibling(4), Some(2));
    assert_eq!(c.rightmost_child(0), Some(3));
}

#[test]
fn hand_computed_costs() {
    let gold = dog_barks();
    let mut c = Configuration::new(4);
    // Stack [ROOT], buffer The dog barks .
    // RIGHT-ARC(ROOT, The) loses The's head (dog) and ROOT's gold dependent (barks).
    assert_eq!(RightArc(0).cost(&c, &gold), 2);
    assert_eq!(Shift.cost(&c, &gold), 0);
    assert!(!LeftArc(0).is_valid(&c));
    assert!(!Reduce.is_valid(&c));
    Shift.apply(&mut c);
    // Stack [ROOT, The], buffer dog barks .
    assert_eq!(LeftArc(0).cost(&c, &gold), 0);
    assert_eq!(LeftArc(1).cost(&c, &gold), 1); // wrong label
    assert_eq!(Shift.cost(&c, &gold), 1); // The can no longer get dog as head
    assert_eq!(RightArc(1).cost(&c, &gold), 2); // dog's head barks and dependent The
    let mut marks = vec![false; Move::count(4)];
    assert_eq!(zero_cost_moves(&c, &gold, 4, &mut marks), 1);
    assert!(marks[Move::LeftArc(0).index(4)]);
}

#[test]
fn single_root_and_last_word_rules() {
    let mut c = Configuration::new(2);
    assert!(!Shift.is_valid(&c) || c.buffer_len() >= 2);
    RightArc(0).apply(&mut c); // ROOT -> 1
    assert!(c.root_has_dependent());
    // s0 = 1 is ROOT's dependent: never reduced, buffer [2]: SHIFT would empty it.
    assert!(!Reduce.is_valid(&c));
    assert!(!Shift.is_valid(&c));
    assert!(RightArc(0).is_valid(&c));
    assert!(!LeftArc(0).is_valid(&c));
    RightArc(0).apply(&mut c);
    assert!(c.is_terminal());
    assert_eq!(c.finish(0, 1), 0);
}

#[test]
fn finish_attaches_leftovers_below_the_single_root() {
    // Wrong moves: SHIFT 1, SHIFT 2, RIGHT-ARC(2,3): words 1 and 2 stay headless.
    let mut c = Configuration::new(3);
    Shift.apply(&mut c);
    Shift.apply(&mut c);
    RightArc(5).apply(&mut c);
    assert!(c.is_terminal());
    assert_eq!(c.finish(7, 9), 2);
    assert_eq!(&c.heads()[1..], &[0, 1, 2]);
    assert_eq!(&c.labels()[1..], &[7, 9, 5]);
}

#[test]
fn move_index_round_trips() {
    for i in 0..Move::count(5) {
        let m = Move::from_index(i, 5).unwrap();
        assert_eq!(m.index(5), i);
    }
    assert_eq!(Move::from_index(Move::count(5), 5), None);
}

// ---------- brute force ----------

type Key = (Vec<u32>, u32, Vec<u32>, Vec<u32>);

fn key(c: &Configuration) -> Key {
    (c.stack_slice().to_vec(), c.buffer_front(), c.heads().to_vec(), c.labels().to_vec())
}

fn all_moves(n_labels: u32) -> Vec<Move> {
    (0..Move::count(n_labels)).map(|i| Move::from_index(i, n_labels).unwrap()).collect()
}

fn correct_arcs(c: &Configuration, gold: &GoldTree) -> u32 {
    (1..=c.len())
        .filter(|&d| c.head_of(d) == gold.head[d as usize] && c.label_of(d) == gold.label[d as usize])
        .count() as u32
}

/// Most correct labelled arcs (made by transitions) over all terminal
/// configurations reachable from `c`. Panics on a dead end (a non-terminal
/// configuration without a valid move).
fn best(c: &Configuration, gold: &GoldTree, moves: &[Move], memo: &mut HashMap<Key, u32>) -> u32 {
    if c.is_terminal() {
        return correct_arcs(c, gold);
    }
    let k = key(c);
    if let Some(&v) = memo.get(&k) {
        return v;
    }
    let mut top = None;
    for &m in moves {
        if m.is_valid(c) {
            let mut next = c.clone();
            m.apply(&mut next);
            let v = best(&next, gold, moves, memo);
            top = Some(top.map_or(v, |t: u32| t.max(v)));
        }
    }
    let v = top.expect("dead end: non-terminal configuration without a valid move");
    memo.insert(k, v);
    v
}

/// Checks every reachable configuration; returns how many were checked.
fn check_costs(gold: &GoldTree, n_labels: u32) -> Result<usize, String> {
    let moves = all_moves(n_labels);
    let mut memo = HashMap::new();
    let mut seen = HashMap::new();
    let mut todo = vec![Configuration::new(gold.len())];
    let mut marks = vec![false; Move::count(n_labels)];
    while let Some(c) = todo.pop() {
        if c.is_terminal() || seen.insert(key(&c), ()).is_some() {
            continue;
        }
        let here = best(&c, gold, &moves, &mut memo);
        let n_zero = zero_cost_moves(&c, gold, n_labels, &mut marks);
        if n_zero == 0 {
            return Err(format!("no zero-cost move at {:?}", key(&c)));
        }
        for &m in &moves {
            if !m.is_valid(&c) {
                if marks[m.index(n_labels)] {
                    return Err(format!("invalid move {m:?} marked zero-cost"));
                }
                continue;
            }
            let mut next = c.clone();
            m.apply(&mut next);
            let brute = here - best(&next, gold, &moves, &mut memo);
            let cost = m.cost(&c, gold);
            if cost != brute {
                return Err(format!(
                    "{m:?} at {:?}: cost {cost}, brute force {brute}, gold {gold:?}",
                    key(&c)
                ));
            }
            if marks[m.index(n_labels)] != (cost == 0) {
                return Err(format!("zero-cost mark of {m:?} disagrees with cost {cost}"));
            }
            todo.push(next);
        }
    }
    Ok(seen.len())
}

/// Random single-rooted projective tree of n words with labels < n_labels.
fn projective_tree() -> impl Strategy<Value = GoldTree> {
    (1usize..=6, any::<u64>()).prop_filter_map("non-projective", |(n, seed)| {
        let (heads, mut next) = super::testing::random_heads(n, seed);
        let labels: Vec<u32> = (0..n).map(|_| next(2) as u32).collect();
        is_projective(&heads).then(|| GoldTree::new(&heads, &labels))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn dynamic_oracle_costs_equal_brute_force(gold in projective_tree()) {
        let r = check_costs(&gold, 2);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn static_oracle_rebuilds_projective_trees(gold in projective_tree()) {
        let (moves, c) = static_sequence(&gold).expect("valid moves");
        prop_assert!(moves.len() <= 2 * gold.len() as usize);
        prop_assert_eq!(&c.heads()[1..], &gold.head[1..]);
        prop_assert_eq!(&c.labels()[1..], &gold.label[1..]);
    }

    #[test]
    fn navigation_arrays_match_the_tree(gold in projective_tree()) {
        let (_, c) = static_sequence(&gold).expect("valid moves");
        let n = gold.len();
        for w in 0..=n {
            let kids: Vec<u32> = (1..=n).filter(|&d| gold.head[d as usize] == w).collect();
            prop_assert_eq!(c.leftmost_child(w), kids.first().copied());
            prop_assert_eq!(c.rightmost_child(w), kids.last().copied());
            prop_assert_eq!(c.n_left_children(w), kids.iter().filter(|&&d| d < w).count() as u32);
            prop_assert_eq!(c.n_right_children(w), kids.iter().filter(|&&d| d > w).count() as u32);
            for (i, &d) in kids.iter().enumerate() {
                prop_assert_eq!(c.left_sibling(d), i.checked_sub(1).map(|j| kids[j]));
                prop_assert_eq!(c.right_sibling(d), kids.get(i + 1).copied());
            }
        }
    }
}

#[test]
fn brute_force_check_covers_error_states() {
    // 1 <- 2 -> 3, 2 <- ROOT... a 6-word tree: 2 is the root, 1 det, 3 obj with 4, 5 below, 6 punct.
    let gold = GoldTree::new(&[2, 0, 2, 5, 3, 2], &[0, 1, 0, 1, 0, 1]);
    let n = check_costs(&gold, 2).expect("costs agree");
    assert!(n > 500, "only {n} configurations explored");
}
