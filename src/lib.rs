//! impulse-cloth: real-time inextensible cloth with impulses.
//!
//! - [`sim`]: the physics (no Bevy) — iterative impulses (004 §3.4.1), the SLE method
//!   (004 §3.4.2) and the Verlet baseline (003).
#![forbid(unsafe_code)]

#[cfg(feature = "app")]
pub mod app;
pub mod cli;
#[cfg(feature = "app")]
pub mod render;
pub mod sim;
#[cfg(feature = "app")]
pub mod ui;
