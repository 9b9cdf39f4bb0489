//! What configuration feature atoms may ask of a transition-parser state.
//!
//! The addresses of Nilsson & Nugues (2010), *Automatic Discovery of Feature Sets
//! for Dependency Parsing*: STACK_i / QUEUE_i followed by navigation steps
//! h (head), lc / rc (leftmost / rightmost child), ls / rs (nearest left / right
//! sibling), pw / fw (previous / following word in the sentence). The template
//! extractor (templates module) is written against this trait; the arc-eager
//! parser implements it for its configuration.

/// A read-only view of a parser configuration. Word indices are 1-based sentence
/// positions as in CoNLL-U; 0 is ROOT. `None` means "no such word".
pub trait ConfigView {
    /// STACK_i, 0 = top of the stack.
    fn stack(&self, i: usize) -> Option<u32>;
    /// QUEUE_i (input buffer), 0 = front.
    fn queue(&self, i: usize) -> Option<u32>;
    /// Head assigned so far (`h`).
    fn head(&self, w: u32) -> Option<u32>;
    /// Label id assigned so far (ids of the parser's own label set).
    fn label(&self, w: u32) -> Option<u32>;
    /// Leftmost dependent assigned so far (`lc`).
    fn leftmost_child(&self, w: u32) -> Option<u32>;
    /// Rightmost dependent assigned so far (`rc`).
    fn rightmost_child(&self, w: u32) -> Option<u32>;
    /// Nearest dependent of w's head to the left of w (`ls`).
    fn left_sibling(&self, w: u32) -> Option<u32>;
    /// Nearest dependent of w's head to the right of w (`rs`).
    fn right_sibling(&self, w: u32) -> Option<u32>;
    /// Number of dependents assigned so far left / right of w (valency).
    fn n_left_children(&self, w: u32) -> u32;
    fn n_right_children(&self, w: u32) -> u32;
    /// Number of words in the sentence (ROOT excluded).
    fn n_words(&self) -> u32;
}
