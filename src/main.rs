//! `impulse-cloth`: with no subcommand it opens the desktop app; `run` and `bench` work
//! headless. This file only dispatches.
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
    #[cfg(feature = "app")]
    #[command(flatten)]
    app: impulse_cloth::app::AppArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one simulation headless and export what happened (JSON report, OBJ frames).
    Run(Box<cli::run::RunArgs>),
    /// Benchmarks; `bench paper` reproduces 004 §4 (Figs. 4–6) beside the paper's numbers.
    Bench(Box<cli::bench_common::BenchArgs>),
}

fn main() -> ExitCode {
    let args = Cli::parse();
    match args.command {
        Some(Command::Run(a)) => cli::run::main(*a),
        Some(Command::Bench(a)) if a.which == "app" => cli::bench_app::main(*a),
        Some(Command::Bench(a)) => cli::bench::main(*a),
        #[cfg(feature = "app")]
        None => impulse_cloth::app::run(args.app),
        #[cfg(not(feature = "app"))]
        None => {
            eprintln!(
                "impulse-cloth was built without the `app` feature; use `run` or `bench`, or rebuild with default features"
            );
            ExitCode::from(2)
        }
    }
}
