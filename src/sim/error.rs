//! Errors at the boundary of the simulation core.
//!
//! Every parameter is validated where it enters ([`crate::sim::SimParams::validate`],
//! the grid builder, pin/grab calls), so a bad value becomes a typed error with a message
//! a user can act on instead of a panic or a silent NaN deep inside a solver.

use thiserror::Error;

use super::kind::SolverKind;

/// Everything that can go wrong when building or stepping a cloth.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    /// A numeric parameter is out of its valid range (NaN, negative, zero where it must not be).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name as it appears in [`crate::sim::SimParams`] or on the command line.
        name: &'static str,
        /// Human-readable reason, including the offending value.
        reason: String,
    },
    /// The requested grid cannot be built.
    #[error("invalid grid {width}x{height}: {reason}")]
    InvalidGrid {
        /// Particles per row.
        width: usize,
        /// Number of rows.
        height: usize,
        /// Why it was rejected.
        reason: String,
    },
    /// A mesh cannot be a cloth (or its file cannot be read).
    #[error("mesh: {0}")]
    Mesh(#[from] super::mesh::MeshError),
    /// A particle index (pin list, grab) does not exist in the cloth.
    #[error("particle index {index} is out of range: the cloth has {count} particles")]
    ParticleOutOfRange {
        /// The index that was asked for.
        index: usize,
        /// Number of particles in the cloth.
        count: usize,
    },
    /// A step produced NaN or infinity; the state from before the step was restored.
    #[error(
        "step {step} produced a non-finite {what} at particle {particle}; the state before the step was kept"
    )]
    NonFinite {
        /// Index of the failed step (0-based count of steps taken before it).
        step: u64,
        /// `"position"` or `"velocity"`.
        what: &'static str,
        /// First particle found with a non-finite value.
        particle: usize,
    },
    /// A step diverged: a value far beyond anything a sane step produces (see
    /// [`crate::sim::MAX_SANE_STRAIN`], [`crate::sim::MAX_SANE_TRAVEL`]); the state from
    /// before the step was restored.
    #[error(
        "step {step} diverged: {what} {value:.3e} is beyond the sane bound {limit:.3e}; the state before the step was kept"
    )]
    Diverged {
        /// Index of the failed step (0-based count of steps taken before it).
        step: u64,
        /// What ran away: `"strain"` or the distance a particle travelled in the step.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The bound it passed.
        limit: f64,
    },
    /// The cloth already holds a non-finite value, so no step is taken.
    #[error(
        "the cloth's {what} at particle {particle} is not finite; no step is taken (rebuild or reset the cloth)"
    )]
    NonFiniteState {
        /// `"position"` or `"velocity"`.
        what: &'static str,
        /// First particle found with a non-finite value.
        particle: usize,
    },
    /// The step calls came out of order: a step is [`crate::sim::World::begin_step`],
    /// every phase of [`crate::sim::Phase::ORDER`] once in order, then
    /// [`crate::sim::World::finish_step`].
    #[error("step calls out of order: expected {expected}, got {got}")]
    PhaseOutOfOrder {
        /// The call the step cycle was waiting for.
        expected: &'static str,
        /// The call that came.
        got: &'static str,
    },
    /// A phase was run with a solver of another kind than the step began with.
    #[error("the step began with the {began} solver but a phase was run with {got}")]
    SolverMismatch {
        /// The kind passed to [`crate::sim::World::begin_step`].
        began: SolverKind,
        /// The kind of the solver passed to the phase.
        got: SolverKind,
    },
    /// The world's cloth was replaced in the middle of a step; the step was abandoned.
    #[error("the cloth was replaced in the middle of a step; the step was abandoned")]
    ClothReplaced,
}

impl SimError {
    /// Shorthand for [`SimError::InvalidParameter`].
    pub fn param(name: &'static str, reason: impl Into<String>) -> Self {
        SimError::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }
}
