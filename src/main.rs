//! `impulse-cloth`: with no subcommand it opens the desktop app; `run` and `bench` work
//! headless.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use impulse_cloth::cli;

/// Real-time inextensible cloth with impulses (Bender, Bayer, Diziol), SLE and Verlet solvers.
#[derive(Debug, Parser)]
#[command(name = "impulse-cloth", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    app: cli::AppArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one simulation headless and export what happened (JSON report, OBJ frames).
    Run(Box<cli::run::RunArgs>),
    /// Benchmarks; `bench paper` reproduces 004 §4 (Figs. 4–6) beside the paper's numbers.
    Bench(cli::bench::BenchArgs),
}

fn main() -> ExitCode {
    let args = Cli::parse();
    match args.command {
        Some(Command::Run(a)) => cli::run::main(*a),
        Some(Command::Bench(a)) => cli::bench::main(a),
        None => cli::launch_app(args.app),
    }
}
