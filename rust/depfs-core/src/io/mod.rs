//! Everything that touches files: CoNLL-U reading and writing (byte-identical round
//! trips), atomic writes, and the model container (one tagged model kind; older
//! format versions still load).

pub mod atomic;
pub mod conllu;
pub mod model;
