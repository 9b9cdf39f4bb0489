//! The arc-eager transition parser: transition system (`system`), static and
//! dynamic oracles (`oracle`), pseudo-projective transformation (`projective`),
//! the greedy parser (`parser`) and the arrays of the selection methods (`methods`).
//!
//! Nivre (2003), *An Efficient Algorithm for Projective Dependency Parsing*;
//! Goldberg & Nivre (2012), *A Dynamic Oracle for Arc-Eager Dependency Parsing*;
//! Nivre & Nilsson (2005), *Pseudo-Projective Dependency Parsing*.

pub mod explore;
pub mod guide;
pub mod local;
pub mod methods;
pub mod oracle;
pub mod parser;
pub mod projective;
pub mod system;
pub mod trajectories;

pub use oracle::{is_projective, kind_costs, static_move, static_sequence, zero_cost_moves};
pub use system::{Configuration, GoldTree, LeftArc, Move, Reduce, RightArc, Shift, Transition, NONE};

#[cfg(test)]
mod parser_tests;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
