//! `impulse-cloth bench`: the 004 §4 benchmark.

use std::process::ExitCode;

/// Flags of `bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {}

/// Entry point of `bench`.
pub fn main(_args: BenchArgs) -> ExitCode {
    eprintln!("bench: not implemented yet");
    ExitCode::from(2)
}
