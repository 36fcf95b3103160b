//! The core crate's integration tests, one binary (each test binary links the whole crate): exact
//! results against brute-force enumeration and the reference jets, A*, cancellation, the flat
//! trellis, the generator, graph energies, the trellis's bits on every instruction set against a
//! golden file, pam50, the physics clusterings (with and without the t_cut veto) against a direct reference, the committed Pythia jets and FastJet's e+e− kt trees of them. `cargo test -p trellis-core` runs them alone.

mod accuracy;
mod api_misuse;
mod astar;
mod astar_bounds;
mod common;
mod ee_kt;
mod flat_trellis;
mod generator;
mod ginkgo_reference;
mod graph_energies;
mod lanes_bits;
mod lanes_bits_energies;
mod map_trellis;
mod pam50;
mod physics_baselines;
mod pythia_jets;
