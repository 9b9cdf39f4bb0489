//! Transition-based parsing, arc-eager: the transition system (`system`), static and
//! dynamic oracles (`oracle`), pseudo-projective transformation (`projective`), the
//! one decision loop and its guides — model, learner, DAgger mixture, oracle walk,
//! prefix-margin rule (`guide`) — the greedy parser and its trainer (`parser`),
//! prefix-margin dynamic feature selection (`prefix_margin`, Strubell et al. 2015),
//! trajectories as replayable move histories (`trajectories`), and local classifiers
//! that keep their weights with their weighted ensembles (`local`).
//!
//! Nivre (2003), *An Efficient Algorithm for Projective Dependency Parsing*;
//! Goldberg & Nivre (2012), *A Dynamic Oracle for Arc-Eager Dependency Parsing*;
//! Nivre & Nilsson (2005), *Pseudo-Projective Dependency Parsing*.

pub mod cascade;
pub mod guide;
pub mod local;
pub mod oracle;
pub mod parser;
pub mod prefix_margin;
pub mod projective;
pub mod system;
pub mod training_set;
pub mod trajectories;

pub use oracle::{kind_costs, static_move, static_sequence, zero_cost_moves};
pub use system::{Configuration, GoldTree, LeftArc, Move, Reduce, RightArc, Shift, Transition, NONE};
pub use training_set::TrainingSet;

#[cfg(test)]
mod cluster_tests;
#[cfg(test)]
mod parser_tests;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
