//! Command-line front ends: the headless `run` and `bench` subcommands and the argument
//! types they share with the app ([`args`]).

pub mod args;
pub mod bench;
pub mod run;

pub use args::{BallArg, GridArg, Vec3Arg, non_negative, parse_floats, positive};
