//! `impulse-cloth run`: one headless simulation, exported.

use std::process::ExitCode;

/// Flags of `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {}

/// Entry point of `run`.
pub fn main(_args: RunArgs) -> ExitCode {
    eprintln!("run: not implemented yet");
    ExitCode::from(2)
}
