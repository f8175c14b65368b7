//! Command-line front ends: the headless `run` and `bench` subcommands and the argument
//! types they share with the app ([`args`]).

pub mod args;
pub mod bench;
pub mod bench_app;
pub mod bench_common;
pub mod run;

pub use args::{
    BallArg, GridArg, Vec3Arg, check_flag, constraint_choice, non_negative, parse_floats, pins,
    positive,
};
