//! The harness's integration tests, one binary (each test binary links the whole crate): the
//! command line end to end, configs, determinism, faults, the report, shards, shipped text,
//! Table 1, user data. The algorithms' own tests live in `crates/trellis-core/tests/`.

mod bayes_board;
mod cli;
mod common;
mod configs;
mod determinism;
mod exact_queries;
mod exports;
mod faults;
mod fuzz;
mod merge_scores;
mod own_data;
mod pythia_jets;
mod report;
mod shards;
mod shipped_text;
mod table1;
mod toy_kind;
mod wide;
