//! Every tunable of a simulation step, with its default, unit and valid range.
//!
//! The egui panel and the command line read the ranges from [`PARAM_SPECS`], so a range is
//! written once, next to the parameter it bounds (the PositionBasedDynamics way).

use glam::DVec3;

use super::error::SimError;

/// Which direction the position impulse of eq. 2 (004 §3.2) acts along.
///
/// The paper prints eq. 2 with the constraint direction at time *t* ([`Current`]). With
/// h = 1/30 s and 2 cm spacing the preview can move two particles sideways by a large
/// fraction of their distance, and then an impulse along the current direction changes the
/// *previewed* distance only by cos(angle) of what it should: Gauss–Seidel overshoots and,
/// measured here, blows up within a few steps (see `tests/direction.rs` and the README).
/// Taking the direction from the preview positions (the gradient of the constraint at the
/// predicted state, as position-based dynamics and Goldenthal et al.'s fast projection do)
/// makes a single constraint's correction exact — the previewed distance becomes d(0) in
/// one impulse — and never diverged in our measurements. It is therefore the default.
///
/// [`Current`]: ImpulseDirection::Current
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImpulseDirection {
    /// Direction between the previewed positions at t + h (default, stable).
    #[default]
    Preview,
    /// Direction between the positions at t, eq. 2 as printed in 004 §3.2.
    Current,
}

/// A shear or bend spring-damper family (004 §3.3).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpringParams {
    /// Spring constant per spring, N/m.
    pub stiffness: f64,
    /// Damping coefficient per spring along the spring, N·s/m.
    pub damping: f64,
}

/// How the ball moves.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BallMotion {
    /// Stays where it is (its velocity is ignored).
    Still,
    /// Swings sinusoidally about `anchor` along `axis` (amplitude in m, frequency in Hz).
    Swing {
        /// Centre of the swing.
        anchor: DVec3,
        /// Direction and amplitude of the swing, m.
        axis: DVec3,
        /// Frequency, Hz.
        frequency: f64,
    },
    /// Flies ballistically under gravity from its current velocity (a thrown ball); it
    /// bounces off the ground plane if there is one.
    Thrown,
}

/// A sphere collider. Kinematic: the cloth does not push it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ball {
    /// Centre, m.
    pub center: DVec3,
    /// Radius, m.
    pub radius: f64,
    /// Velocity, m/s (used for relative velocity in friction and by `Thrown`).
    pub velocity: DVec3,
    /// How it moves over time.
    pub motion: BallMotion,
}

impl Ball {
    /// A still ball.
    pub fn still(center: DVec3, radius: f64) -> Self {
        Ball {
            center,
            radius,
            velocity: DVec3::ZERO,
            motion: BallMotion::Still,
        }
    }
}

/// Wind: a force on every triangle along its normal (003), proportional to the normal
/// component of the wind velocity relative to the triangle and to the triangle's area.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Wind {
    /// Wind on or off.
    pub enabled: bool,
    /// Mean wind velocity, m/s.
    pub velocity: DVec3,
    /// Force per area per normal relative speed, N·s/m³ (≈ ½ρ_air·c_d·|v| linearised).
    pub drag: f64,
    /// Gust amplitude as a fraction of the mean wind (0 = steady).
    pub gust: f64,
    /// Gust frequency, Hz.
    pub gust_frequency: f64,
}

impl Default for Wind {
    fn default() -> Self {
        Wind {
            enabled: false,
            velocity: DVec3::new(0.0, 0.0, 3.0),
            drag: 0.6,
            gust: 0.5,
            gust_frequency: 0.7,
        }
    }
}

/// Strain limits of the 001 solver (Ye, §3–4): a structural spring may neither stretch
/// beyond `stretch` nor shrink by more than `compress` (relative to its rest length);
/// inside the limits it is an ordinary spring of the given stiffness.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StrainLimits {
    /// Largest stretch, relative (001: 0.10 = 10 %), the upper limit b = (1 + stretch)·L.
    pub stretch: f64,
    /// Largest compression, relative (001: 0.02 = 2 %), the lower limit a = (1 − compress)·L.
    pub compress: f64,
    /// Spring constant of a structural spring inside the limits, N/m ("moderate", 001 §3;
    /// clamped to the explicit-Euler stability limit like the shear and bend springs).
    pub stiffness: f64,
    /// Damping of a structural spring along its direction, N·s/m.
    pub damping: f64,
    /// Linear solves per step: 1 is 001 §4 exactly (directions at t₀); each further pass is
    /// a Newton step on 001 §3's nonlinear system with directions from the preview, run
    /// only while a previewed spring is outside its limits by more than the tolerance.
    pub passes: u32,
}

impl Default for StrainLimits {
    fn default() -> Self {
        StrainLimits {
            stretch: 0.10,
            compress: 0.02,
            stiffness: 50.0,
            damping: 0.01,
            passes: 4,
        }
    }
}

/// All parameters of a simulation step. Defaults are for the 004 §4 scene (1 m × 1 m,
/// 0.2 kg, h = 1/30 s).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SimParams {
    /// Time step h, s.
    pub dt: f64,
    /// Gravity, m/s².
    pub gravity: DVec3,
    /// Allowed relative strain |d − L|/L of a distance constraint (1e-2 = 1 %).
    pub tolerance: f64,
    /// Iteration cap of the impulse passes (0 = none; [`SimParams::hard_cap`] still applies).
    pub max_iterations: u32,
    /// Safety cap on sweeps per pass even when `max_iterations` is 0. Steps that hit it
    /// are reported as capped.
    pub hard_cap: u32,
    /// Run the velocity pass (eq. 3). 004 §3.2 calls it optional, at a cost in accuracy.
    pub velocity_pass: bool,
    /// Direction of the position impulse (see [`ImpulseDirection`]).
    pub direction: ImpulseDirection,
    /// Shear springs (both diagonals of each quad).
    pub shear: SpringParams,
    /// Bending springs (to (i±2, j) and (i, j±2)).
    pub bend: SpringParams,
    /// Wind.
    pub wind: Wind,
    /// The ball, if any.
    pub ball: Option<Ball>,
    /// Height of a ground plane (normal +y), if any, m.
    pub ground: Option<f64>,
    /// Coulomb friction coefficient for ball and ground contact.
    pub friction: f64,
    /// SLE: maximum number of solves with one factorisation per position pass.
    pub sle_max_solves: u32,
    /// Newton: maximum Newton steps (one factorisation each) per position pass before
    /// strips finish it. On a row pulled straight between two pins Newton converges only
    /// linearly (see `solver::newton`): a hard 100×100 step to 1e-6 can need dozens.
    pub newton_max_steps: u32,
    /// Verlet: relaxation passes per step (003).
    pub verlet_passes: u32,
    /// Verlet: velocity damping per step (003 uses 0.01).
    pub verlet_damping: f64,
    /// Strain-limit solver (001): limits and in-limit spring.
    #[serde(default)]
    pub strain_limits: StrainLimits,
    /// Treat the particles of taut chains — straight runs of constraints held at exactly
    /// their rest length between two pins, such as the 004 §4 scene's far edge — as static,
    /// which is where the exact solution keeps them ([`crate::sim::taut`]). Inextensible
    /// solvers only: the strain-limit solver lets such a chain stretch, so it never locks.
    /// Off, such a chain sags within the tolerance and makes every solver crawl.
    #[serde(default = "yes")]
    pub lock_taut_chains: bool,
}

fn yes() -> bool {
    true
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            dt: 1.0 / 30.0,
            gravity: DVec3::new(0.0, -9.81, 0.0),
            tolerance: 1e-3,
            max_iterations: 0,
            hard_cap: 20_000,
            velocity_pass: true,
            direction: ImpulseDirection::Preview,
            shear: SpringParams {
                stiffness: 2.0,
                damping: 0.002,
            },
            bend: SpringParams {
                stiffness: 0.5,
                damping: 0.001,
            },
            wind: Wind::default(),
            ball: None,
            ground: None,
            friction: 0.3,
            sle_max_solves: 20,
            newton_max_steps: 50,
            verlet_passes: 10,
            verlet_damping: 0.01,
            strain_limits: StrainLimits::default(),
            lock_taut_chains: true,
        }
    }
}

/// Range and documentation of one scalar parameter, for the UI and the CLI.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Field name.
    pub name: &'static str,
    /// Unit (empty for dimensionless).
    pub unit: &'static str,
    /// Smallest valid value.
    pub min: f64,
    /// Largest valid value.
    pub max: f64,
    /// Whether a slider should be logarithmic.
    pub log: bool,
    /// One-line description (tooltip).
    pub help: &'static str,
}

/// Ranges of the scalar parameters. [`SimParams::validate`] enforces them.
pub const PARAM_SPECS: &[ParamSpec] = &[
    ParamSpec {
        name: "dt",
        unit: "s",
        min: 1e-4,
        max: 0.1,
        log: true,
        help: "time step h",
    },
    ParamSpec {
        name: "tolerance",
        unit: "",
        min: 1e-12,
        max: 0.5,
        log: true,
        help: "allowed relative strain |d-L|/L",
    },
    ParamSpec {
        name: "max_iterations",
        unit: "",
        min: 0.0,
        max: 1e6,
        log: false,
        help: "iteration cap per pass (0 = none)",
    },
    ParamSpec {
        name: "hard_cap",
        unit: "",
        min: 1.0,
        max: 1e7,
        log: true,
        help: "safety cap on sweeps per pass",
    },
    ParamSpec {
        name: "gravity",
        unit: "m/s²",
        min: -100.0,
        max: 100.0,
        log: false,
        help: "gravity component",
    },
    ParamSpec {
        name: "stiffness",
        unit: "N/m",
        min: 0.0,
        max: 1e4,
        log: false,
        help: "spring constant (clamped to the explicit-Euler stability limit)",
    },
    ParamSpec {
        name: "damping",
        unit: "N·s/m",
        min: 0.0,
        max: 100.0,
        log: false,
        help: "spring damping along the spring",
    },
    ParamSpec {
        name: "wind_speed",
        unit: "m/s",
        min: -50.0,
        max: 50.0,
        log: false,
        help: "wind velocity component",
    },
    ParamSpec {
        name: "wind_drag",
        unit: "N·s/m³",
        min: 0.0,
        max: 100.0,
        log: false,
        help: "force per area per normal relative speed",
    },
    ParamSpec {
        name: "gust",
        unit: "",
        min: 0.0,
        max: 2.0,
        log: false,
        help: "gust amplitude relative to the mean wind",
    },
    ParamSpec {
        name: "gust_frequency",
        unit: "Hz",
        min: 0.0,
        max: 20.0,
        log: false,
        help: "gust frequency",
    },
    ParamSpec {
        name: "friction",
        unit: "",
        min: 0.0,
        max: 5.0,
        log: false,
        help: "Coulomb friction coefficient",
    },
    ParamSpec {
        name: "ball_radius",
        unit: "m",
        min: 1e-3,
        max: 100.0,
        log: false,
        help: "ball radius",
    },
    ParamSpec {
        name: "sle_max_solves",
        unit: "",
        min: 1.0,
        max: 1000.0,
        log: false,
        help: "SLE solves per factorisation",
    },
    ParamSpec {
        name: "newton_max_steps",
        unit: "",
        min: 1.0,
        max: 1000.0,
        log: false,
        help: "Newton steps per position pass",
    },
    ParamSpec {
        name: "verlet_passes",
        unit: "",
        min: 0.0,
        max: 100000.0,
        log: false,
        help: "Verlet relaxation passes",
    },
    ParamSpec {
        name: "verlet_damping",
        unit: "",
        min: 0.0,
        max: 1.0,
        log: false,
        help: "Verlet velocity damping per step",
    },
    ParamSpec {
        name: "limit_stretch",
        unit: "",
        min: 1e-4,
        max: 1.0,
        log: true,
        help: "strain limit b: largest relative stretch (001)",
    },
    ParamSpec {
        name: "limit_compress",
        unit: "",
        min: 1e-4,
        max: 0.9,
        log: true,
        help: "strain limit a: largest relative compression (001)",
    },
    ParamSpec {
        name: "limit_passes",
        unit: "",
        min: 1.0,
        max: 100.0,
        log: false,
        help: "linear solves per step of the strain-limit solver (1 = 001 exactly)",
    },
];

/// Look up the spec of a parameter by name.
pub fn spec(name: &str) -> Option<&'static ParamSpec> {
    PARAM_SPECS.iter().find(|s| s.name == name)
}

/// A value as an error message should show it: plain decimals for everyday magnitudes,
/// scientific notation for the rest (`1e308`, not 309 digits; `1e-12`, not 0.000…).
fn shown(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e6).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn check(name: &'static str, v: f64) -> Result<(), SimError> {
    let s = spec(name).expect("every checked parameter has a spec");
    if !v.is_finite() {
        return Err(SimError::param(name, format!("{v} is not a finite number")));
    }
    if v < s.min || v > s.max {
        return Err(SimError::param(
            name,
            format!(
                "{} is outside the valid range [{}, {}] {}",
                shown(v),
                shown(s.min),
                shown(s.max),
                s.unit
            ),
        ));
    }
    Ok(())
}

fn check_vec(name: &'static str, spec_name: &'static str, v: DVec3) -> Result<(), SimError> {
    for c in v.to_array() {
        check(spec_name, c).map_err(|e| match e {
            SimError::InvalidParameter { reason, .. } => SimError::param(name, reason),
            other => other,
        })?;
    }
    Ok(())
}

impl SimParams {
    /// Check every parameter against [`PARAM_SPECS`]; the first violation is returned.
    pub fn validate(&self) -> Result<(), SimError> {
        check("dt", self.dt)?;
        check("tolerance", self.tolerance)?;
        check("max_iterations", self.max_iterations as f64)?;
        check("hard_cap", self.hard_cap as f64)?;
        check_vec("gravity", "gravity", self.gravity)?;
        for (sp, n1, n2) in [
            (&self.shear, "shear.stiffness", "shear.damping"),
            (&self.bend, "bend.stiffness", "bend.damping"),
        ] {
            check("stiffness", sp.stiffness).map_err(|e| rename(e, n1))?;
            check("damping", sp.damping).map_err(|e| rename(e, n2))?;
        }
        check_vec("wind.velocity", "wind_speed", self.wind.velocity)?;
        check("wind_drag", self.wind.drag)?;
        check("gust", self.wind.gust)?;
        check("gust_frequency", self.wind.gust_frequency)?;
        check("friction", self.friction)?;
        if let Some(b) = &self.ball {
            check("ball_radius", b.radius)?;
            for c in b.center.to_array().into_iter().chain(b.velocity.to_array()) {
                if !c.is_finite() {
                    return Err(SimError::param(
                        "ball",
                        "position and velocity must be finite",
                    ));
                }
            }
            if let BallMotion::Swing {
                anchor,
                axis,
                frequency,
            } = b.motion
                && !(anchor.is_finite()
                    && axis.is_finite()
                    && frequency.is_finite()
                    && frequency >= 0.0)
            {
                return Err(SimError::param(
                    "ball.motion",
                    "swing anchor, axis and frequency must be finite",
                ));
            }
        }
        if let Some(g) = self.ground
            && !g.is_finite()
        {
            return Err(SimError::param(
                "ground",
                format!("{g} is not a finite height"),
            ));
        }
        check("sle_max_solves", self.sle_max_solves as f64)?;
        check("newton_max_steps", self.newton_max_steps as f64)?;
        check("verlet_passes", self.verlet_passes as f64)?;
        check("verlet_damping", self.verlet_damping)?;
        let sl = &self.strain_limits;
        check("limit_stretch", sl.stretch).map_err(|e| rename(e, "strain_limits.stretch"))?;
        check("limit_compress", sl.compress).map_err(|e| rename(e, "strain_limits.compress"))?;
        check("stiffness", sl.stiffness).map_err(|e| rename(e, "strain_limits.stiffness"))?;
        check("damping", sl.damping).map_err(|e| rename(e, "strain_limits.damping"))?;
        check("limit_passes", sl.passes as f64)?;
        Ok(())
    }

    /// The sweep limit actually applied to a pass: the user cap, or the hard cap if the
    /// user cap is 0 (none) or larger.
    pub fn effective_cap(&self) -> u32 {
        if self.max_iterations == 0 {
            self.hard_cap
        } else {
            self.max_iterations.min(self.hard_cap)
        }
    }

    /// A solver's own per-pass limit (SLE solves, Newton steps, predictor sweeps) under the
    /// iteration cap, and at least 1.
    pub fn capped(&self, limit: u32) -> u32 {
        limit.min(self.effective_cap()).max(1)
    }
}

fn rename(e: SimError, name: &'static str) -> SimError {
    match e {
        SimError::InvalidParameter { reason, .. } => SimError::param(name, reason),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An out-of-range value is named in the message in a form a user can read: no
    /// 300-digit decimal for 1e300, plain decimals for everyday values.
    #[test]
    fn out_of_range_messages_show_readable_numbers() {
        let huge = SimParams {
            gravity: DVec3::new(0.0, -1e300, 0.0),
            ..SimParams::default()
        };
        let msg = huge.validate().unwrap_err().to_string();
        assert!(msg.contains("-1e300"), "{msg}");
        assert!(msg.len() < 120, "{msg}");
        let tiny = SimParams {
            dt: 1e-12,
            ..SimParams::default()
        };
        let msg = tiny.validate().unwrap_err().to_string();
        assert!(msg.contains("1e-12"), "{msg}");
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(-9.81), "-9.81");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(2e6), "2e6");
    }
}
