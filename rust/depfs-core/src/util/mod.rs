//! One of each small thing the whole core shares: the seeded generator ([`rng`]) and
//! the parallelism helper ([`parallel`]).

pub mod parallel;
pub mod prefetch;
pub mod rng;

pub use parallel::map_chunks;
pub use rng::Rng;
