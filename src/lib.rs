//! impulse-cloth: real-time inextensible cloth with impulses.
//!
//! Layers point one way: the front ends ([`cli`] and, with the `app` feature, `app`) use
//! [`sim`] and [`output`]; `app` may also use [`cli`]'s shared argument types; nothing
//! points back.
//!
//! - [`sim`]: the physics (no Bevy) — iterative impulses (004 §3.4.1), the SLE method
//!   (004 §3.4.2) and the Verlet baseline (003).
//! - [`config`]: the one default configuration (scene, grid, solver, tolerance, frame
//!   rate, substeps, cap) the app, `run` and `bench app` share.
//! - [`output`]: files the front ends write (checked up front, written atomically), PNG
//!   charts and their font.
//! - [`cli`]: the headless `run` and `bench` subcommands and the argument types they share.
//! - `app` (feature `app`): the Bevy desktop app — plugin, input, rendering, egui panel.
#![forbid(unsafe_code)]

#[cfg(feature = "app")]
pub mod app;
pub mod cli;
pub mod config;
pub mod output;
pub mod sim;
