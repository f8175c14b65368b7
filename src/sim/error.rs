//! Errors at the boundary of the simulation core.
//!
//! Every parameter is validated where it enters ([`crate::sim::SimParams::validate`],
//! the grid builder, pin/grab calls), so a bad value becomes a typed error with a message
//! a user can act on instead of a panic or a silent NaN deep inside a solver.

use thiserror::Error;

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
