//! Every tunable of a simulation step, with its default, unit and valid range.
//!
//! Each scalar is described once by a [`Param`] constant ([`DT`], [`TOLERANCE`], …, listed
//! in [`PARAMS`]): [`SimParams::validate`] enforces its range, the command line checks its
//! flag against it (naming the flag), and the app's panel builds the parameter's slider from
//! it (span, scale, label, tooltip), so a range is written once, next to the parameter it
//! bounds.

use glam::DVec3;

use super::error::SimError;

/// Which direction the position impulse of eq. 2 (004 §3.2) acts along.
///
/// The paper prints eq. 2 with the constraint direction at time *t* ([`Current`]). With
/// h = 1/30 s and 2 cm spacing the preview can move two particles sideways by a large
/// fraction of their distance, and then an impulse along the current direction changes the
/// *previewed* distance only by cos(angle) of what it should: Gauss–Seidel overshoots and,
/// measured here, blows up within a few steps (see the test
/// `preview_direction_is_stable_where_current_direction_diverges` in `tests/robustness.rs`,
/// and `docs/numerics.md`).
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
    /// Coulomb friction coefficient of every contact (ball, ground, self).
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
    /// Self-collision: vertex–triangle and edge–edge contact of the cloth with itself,
    /// detected every step and solved with the distance constraints ([`crate::sim::contact`]).
    /// Off by default in the library (the paper's scenes touch nothing); the app's scenes
    /// turn it on (`crate::config`).
    #[serde(default)]
    pub self_collision: bool,
    /// Cloth thickness: the gap self-contact keeps between two layers, m (capped at half the
    /// shortest rest length, [`crate::sim::contact`]).
    #[serde(default = "default_thickness")]
    pub thickness: f64,
    /// How many times a step may be halved where self-contact's fail-safe would hold the
    /// whole cloth: the step is undone and taken again as two steps of half its time, each
    /// halved again where it too would, down to h/2^`max_splits` (0: never;
    /// [`crate::sim::World`]'s split, docs/numerics.md, "The fail-safe stays local").
    #[serde(default = "default_max_splits")]
    pub max_splits: u32,
    /// Tear strength, N/m, if the cloth tears ([`crate::sim::mesh::tear`]): a distance
    /// constraint of rest length L whose tension — the impulse it carried,
    /// [`crate::sim::Cloth::impulses`], over a window of
    /// [`crate::sim::mesh::tear::TEAR_WINDOW`] — exceeds strength·L breaks. Per unit
    /// width, so the same cloth tears under the same load whatever its resolution (a quad
    /// side stands for a strip of cloth as wide as it is long). `None`: it never tears.
    #[serde(default)]
    pub tear_strength: Option<f64>,
}

fn yes() -> bool {
    true
}

/// The default cloth thickness, m: 4 mm, below the spacing of a 1 m cloth up to about
/// 140 × 140 (half the spacing caps it beyond, [`crate::sim::contact`]), and several times
/// the contact tolerance, so two layers at rest stay visibly apart without a gap the eye
/// reads as air.
pub const DEFAULT_THICKNESS: f64 = 0.004;

fn default_thickness() -> f64 {
    DEFAULT_THICKNESS
}

/// Default of [`SimParams::max_splits`]: a step taken at worst as eight of an eighth of its
/// time (docs/results.md, "Steps split where the fail-safe would hold the whole cloth").
/// Two halvings left one step of the dragged drape with Newton at one step a frame at a
/// strain of 0.431, its quarter steps' zones cut short by their work bound; at an eighth
/// every step holds the tolerance, and the app's default rows, which never halve that deep,
/// run the same (docs/results.md, "A third halving").
pub const DEFAULT_MAX_SPLITS: u32 = 3;

fn default_max_splits() -> u32 {
    DEFAULT_MAX_SPLITS
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
            self_collision: false,
            thickness: DEFAULT_THICKNESS,
            max_splits: DEFAULT_MAX_SPLITS,
            tear_strength: None,
        }
    }
}

/// How a panel slider maps a parameter's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced decades (tolerances, strain limits).
    Log,
}

/// One tunable scalar, described once: its valid range (enforced by
/// [`SimParams::validate`] and checked by the command line under the flag's name), its unit,
/// the span and scale of its panel slider, and a line of help (the slider's tooltip).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// Name in error messages: the field's path in [`SimParams`] (`shear.stiffness`), or the
    /// [`crate::sim::SceneSpec`] field for the scene's size and mass.
    pub name: &'static str,
    /// Text beside the panel's slider.
    pub label: &'static str,
    /// Unit (empty for dimensionless).
    pub unit: &'static str,
    /// Smallest valid value.
    pub min: f64,
    /// Largest valid value.
    pub max: f64,
    /// The part of the valid range the panel's slider spans (values outside it that came
    /// from the command line or a preset are kept, not clamped).
    pub slider: (f64, f64),
    /// Slider scale.
    pub scale: Scale,
    /// Whole numbers only (shown without a decimal point or exponent).
    pub integer: bool,
    /// One-line description.
    pub help: &'static str,
}

impl Param {
    const fn new(name: &'static str, label: &'static str, unit: &'static str) -> Param {
        Param {
            name,
            label,
            unit,
            min: 0.0,
            max: 1.0,
            slider: (0.0, 1.0),
            scale: Scale::Linear,
            integer: false,
            help: "",
        }
    }
    /// Valid range; the slider spans all of it unless [`Param::slider`] narrows it.
    const fn range(mut self, min: f64, max: f64) -> Param {
        self.min = min;
        self.max = max;
        self.slider = (min, max);
        self
    }
    const fn slider(mut self, lo: f64, hi: f64) -> Param {
        self.slider = (lo, hi);
        self
    }
    const fn log(mut self) -> Param {
        self.scale = Scale::Log;
        self
    }
    const fn integer(mut self) -> Param {
        self.integer = true;
        self
    }
    const fn help(mut self, help: &'static str) -> Param {
        self.help = help;
        self
    }

    /// `v` as a message should show it: whole numbers of an integer parameter as integers;
    /// see also [`shown`].
    pub fn show(&self, v: f64) -> String {
        if self.integer && v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
            format!("{}", v as i64)
        } else {
            shown(v)
        }
    }

    /// Why `v` is not a valid value, if it is not, as a predicate to follow the value:
    /// "is outside the valid range [1, 1000]".
    pub fn reason(&self, v: f64) -> Option<String> {
        if !v.is_finite() {
            return Some("is not a finite number".into());
        }
        if v < self.min || v > self.max {
            let unit = if self.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", self.unit)
            };
            return Some(format!(
                "is outside the valid range [{}, {}]{unit}",
                self.show(self.min),
                self.show(self.max),
            ));
        }
        None
    }

    /// Check `v` and name the parameter in the error.
    pub fn check(&self, v: f64) -> Result<(), SimError> {
        self.check_as(self.name, v)
    }

    /// Check `v`, naming it `name` in the error.
    pub fn check_as(&self, name: &'static str, v: f64) -> Result<(), SimError> {
        match self.reason(v) {
            Some(r) => Err(SimError::param(name, format!("{} {r}", self.show(v)))),
            None => Ok(()),
        }
    }
}

/// Valid range of every spring constant, N/m.
const STIFFNESS_MAX: f64 = 1e4;
/// Valid range of every spring damping, N·s/m.
const DAMPING_MAX: f64 = 100.0;
const STIFFNESS_HELP: &str = "spring constant (clamped to the explicit-Euler stability limit)";
const DAMPING_HELP: &str = "spring damping along the spring";

/// Time step h.
pub const DT: Param = Param::new("dt", "time step h", "s")
    .range(1e-4, 0.1)
    .log()
    .help("time step h");
/// Allowed relative strain of a distance constraint.
pub const TOLERANCE: Param = Param::new("tolerance", "tolerance", "")
    .range(1e-12, 0.5)
    .slider(1e-8, 1e-1)
    .log()
    .help("allowed relative strain |d-L|/L");
/// Iteration cap per pass.
pub const MAX_ITERATIONS: Param = Param::new("max_iterations", "iteration cap (0 = none)", "")
    .range(0.0, 1e6)
    .slider(0.0, 2000.0)
    .integer()
    .help("sweeps per pass; 0 = until the tolerance (safety cap applies)");
/// Safety cap on sweeps per pass.
pub const HARD_CAP: Param = Param::new("hard_cap", "safety cap", "")
    .range(1.0, 1e7)
    .log()
    .integer()
    .help("safety cap on sweeps per pass");
/// A component of gravity (the panel's slider sets y).
pub const GRAVITY: Param = Param::new("gravity", "gravity", "m/s²")
    .range(-100.0, 100.0)
    .slider(-30.0, 0.0)
    .help("gravity component");
/// Shear spring constant.
pub const SHEAR_STIFFNESS: Param = Param::new("shear.stiffness", "shear k (N/m)", "N/m")
    .range(0.0, STIFFNESS_MAX)
    .slider(0.0, 100.0)
    .help(STIFFNESS_HELP);
/// Shear spring damping.
pub const SHEAR_DAMPING: Param = Param::new("shear.damping", "shear damping", "N·s/m")
    .range(0.0, DAMPING_MAX)
    .slider(0.0, 0.1)
    .help(DAMPING_HELP);
/// Bending spring constant.
pub const BEND_STIFFNESS: Param = Param::new("bend.stiffness", "bend k (N/m)", "N/m")
    .range(0.0, STIFFNESS_MAX)
    .slider(0.0, 100.0)
    .help(STIFFNESS_HELP);
/// Bending spring damping.
pub const BEND_DAMPING: Param = Param::new("bend.damping", "bend damping", "N·s/m")
    .range(0.0, DAMPING_MAX)
    .slider(0.0, 0.1)
    .help(DAMPING_HELP);
/// A component of the mean wind velocity (the panel's sliders set x and z).
pub const WIND_VELOCITY: Param = Param::new("wind.velocity", "wind", "m/s")
    .range(-50.0, 50.0)
    .slider(-15.0, 15.0)
    .help("wind velocity component");
/// Wind drag.
pub const WIND_DRAG: Param = Param::new("wind.drag", "wind drag", "N·s/m³")
    .range(0.0, 100.0)
    .help("force per area per normal relative speed");
/// Gust amplitude.
pub const GUST: Param = Param::new("wind.gust", "gusts", "")
    .range(0.0, 2.0)
    .help("gust amplitude relative to the mean wind");
/// Gust frequency.
pub const GUST_FREQUENCY: Param = Param::new("wind.gust_frequency", "gust frequency", "Hz")
    .range(0.0, 20.0)
    .help("gust frequency");
/// Coulomb friction of every contact: ball, ground and the cloth with itself.
pub const FRICTION: Param = Param::new("friction", "friction", "")
    .range(0.0, 5.0)
    .slider(0.0, 2.0)
    .help("Coulomb friction coefficient of every contact (ball, ground, self)");
/// Cloth thickness for self-contact.
pub const THICKNESS: Param = Param::new("thickness", "thickness (m)", "m")
    .range(1e-5, 0.1)
    .slider(5e-4, 0.02)
    .log()
    .help("gap self-contact keeps between two layers (capped at half the shortest edge)");
/// Deepest halving of a step where self-contact's fail-safe would hold the whole cloth.
pub const MAX_SPLITS: Param = Param::new("max_splits", "step halvings", "")
    .range(0.0, 6.0)
    .integer()
    .help(
        "a step whose fail-safe would hold the whole cloth is taken again as two of half \
         its time, this many times deep at most (0: never)",
    );
/// Tear strength: the tension per unit width at which a constraint breaks.
pub const TEAR_STRENGTH: Param = Param::new("tear_strength", "tear strength (N/m)", "N/m")
    .range(1e-3, 1e6)
    .slider(0.3, 3000.0)
    .log()
    .help("tension per unit width at which the cloth tears (its own weight: about 2 N/m)");
/// Ball radius.
pub const BALL_RADIUS: Param = Param::new("ball.radius", "radius (m)", "m")
    .range(1e-3, 100.0)
    .slider(0.02, 1.0)
    .help("ball radius");
/// SLE solves per factorisation.
pub const SLE_MAX_SOLVES: Param = Param::new("sle_max_solves", "SLE solves", "")
    .range(1.0, 1000.0)
    .slider(1.0, 50.0)
    .integer()
    .help("SLE solves per factorisation");
/// Newton steps per position pass.
pub const NEWTON_MAX_STEPS: Param = Param::new("newton_max_steps", "Newton steps", "")
    .range(1.0, 1000.0)
    .slider(1.0, 200.0)
    .integer()
    .help("Newton steps per position pass before strips finish it");
/// Verlet relaxation passes.
pub const VERLET_PASSES: Param = Param::new("verlet_passes", "Verlet passes", "")
    .range(0.0, 100000.0)
    .slider(1.0, 200.0)
    .integer()
    .help("Verlet relaxation passes");
/// Verlet velocity damping.
pub const VERLET_DAMPING: Param = Param::new("verlet_damping", "Verlet damping", "")
    .range(0.0, 1.0)
    .help("Verlet velocity damping per step");
/// Strain limit b.
pub const LIMIT_STRETCH: Param = Param::new("strain_limits.stretch", "stretch b", "")
    .range(1e-4, 1.0)
    .log()
    .help("strain limit b: largest relative stretch (001)");
/// Strain limit a.
pub const LIMIT_COMPRESS: Param = Param::new("strain_limits.compress", "compression a", "")
    .range(1e-4, 0.9)
    .log()
    .help("strain limit a: largest relative compression (001)");
/// In-limit spring constant of the strain-limit solver.
pub const LIMIT_STIFFNESS: Param = Param::new("strain_limits.stiffness", "in-limit k (N/m)", "N/m")
    .range(0.0, STIFFNESS_MAX)
    .slider(0.0, 500.0)
    .help("structural spring inside the limits (clamped to the explicit-Euler limit)");
/// In-limit spring damping of the strain-limit solver.
pub const LIMIT_DAMPING: Param = Param::new("strain_limits.damping", "in-limit damping", "N·s/m")
    .range(0.0, DAMPING_MAX)
    .help(DAMPING_HELP);
/// Linear solves per step of the strain-limit solver.
pub const LIMIT_PASSES: Param = Param::new("strain_limits.passes", "solves per step", "")
    .range(1.0, 100.0)
    .integer()
    .help("linear solves per step of the strain-limit solver (1 = 001 exactly)");
/// The scene's longer side (checked by `SceneSpec::build`, and by the front ends to name
/// their flag: far outside this range the squared lengths of the step overflow or vanish).
pub const SCENE_SIZE: Param = Param::new("size", "size (m)", "m")
    .range(1e-3, 1e3)
    .slider(0.1, 10.0)
    .help("longer side of the cloth");
/// The scene's total mass (checked like [`SCENE_SIZE`]).
pub const SCENE_MASS: Param = Param::new("mass", "mass (kg)", "kg")
    .range(1e-6, 1e6)
    .slider(0.01, 5.0)
    .help("total mass of the cloth");
/// How far the pins move inward, as a fraction of the edge (the cloth starts bent but
/// unstretched; at 0.9 the pinned corners of a curtain are a tenth of its width apart).
pub const SCENE_SLACK: Param = Param::new("slack", "slack", "")
    .range(0.0, 0.9)
    .slider(0.0, 0.5)
    .help("move the pins inward by this fraction of the edge");

/// Every described parameter.
pub const PARAMS: &[&Param] = &[
    &DT,
    &TOLERANCE,
    &MAX_ITERATIONS,
    &HARD_CAP,
    &GRAVITY,
    &SHEAR_STIFFNESS,
    &SHEAR_DAMPING,
    &BEND_STIFFNESS,
    &BEND_DAMPING,
    &WIND_VELOCITY,
    &WIND_DRAG,
    &GUST,
    &GUST_FREQUENCY,
    &FRICTION,
    &THICKNESS,
    &MAX_SPLITS,
    &TEAR_STRENGTH,
    &BALL_RADIUS,
    &SLE_MAX_SOLVES,
    &NEWTON_MAX_STEPS,
    &VERLET_PASSES,
    &VERLET_DAMPING,
    &LIMIT_STRETCH,
    &LIMIT_COMPRESS,
    &LIMIT_STIFFNESS,
    &LIMIT_DAMPING,
    &LIMIT_PASSES,
    &SCENE_SIZE,
    &SCENE_MASS,
    &SCENE_SLACK,
];

/// A value as an error message should show it: plain decimals for everyday magnitudes,
/// scientific notation for the rest (`1e308`, not 309 digits; `1e-12`, not 0.000…).
pub fn shown(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e6).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn check_vec(p: &Param, v: DVec3) -> Result<(), SimError> {
    v.to_array().into_iter().try_for_each(|c| p.check(c))
}

impl SimParams {
    /// Check every parameter against its [`Param`] description (and the ball, swing and
    /// ground for finiteness); the first violation is returned.
    pub fn validate(&self) -> Result<(), SimError> {
        DT.check(self.dt)?;
        TOLERANCE.check(self.tolerance)?;
        MAX_ITERATIONS.check(self.max_iterations as f64)?;
        HARD_CAP.check(self.hard_cap as f64)?;
        check_vec(&GRAVITY, self.gravity)?;
        SHEAR_STIFFNESS.check(self.shear.stiffness)?;
        SHEAR_DAMPING.check(self.shear.damping)?;
        BEND_STIFFNESS.check(self.bend.stiffness)?;
        BEND_DAMPING.check(self.bend.damping)?;
        check_vec(&WIND_VELOCITY, self.wind.velocity)?;
        WIND_DRAG.check(self.wind.drag)?;
        GUST.check(self.wind.gust)?;
        GUST_FREQUENCY.check(self.wind.gust_frequency)?;
        FRICTION.check(self.friction)?;
        THICKNESS.check(self.thickness)?;
        MAX_SPLITS.check(self.max_splits as f64)?;
        if let Some(t) = self.tear_strength {
            TEAR_STRENGTH.check(t)?;
        }
        if let Some(b) = &self.ball {
            BALL_RADIUS.check(b.radius)?;
            if !(b.center.is_finite() && b.velocity.is_finite()) {
                return Err(SimError::param(
                    "ball",
                    "position and velocity must be finite",
                ));
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
        SLE_MAX_SOLVES.check(self.sle_max_solves as f64)?;
        NEWTON_MAX_STEPS.check(self.newton_max_steps as f64)?;
        VERLET_PASSES.check(self.verlet_passes as f64)?;
        VERLET_DAMPING.check(self.verlet_damping)?;
        let sl = &self.strain_limits;
        LIMIT_STRETCH.check(sl.stretch)?;
        LIMIT_COMPRESS.check(sl.compress)?;
        LIMIT_STIFFNESS.check(sl.stiffness)?;
        LIMIT_DAMPING.check(sl.damping)?;
        LIMIT_PASSES.check(sl.passes as f64)?;
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

    /// These parameters with the iteration cap lowered to `limit` ([`SimParams::capped`]):
    /// a pass a solver runs only so far before it finishes otherwise.
    pub fn with_cap(&self, limit: u32) -> SimParams {
        SimParams {
            max_iterations: self.capped(limit),
            ..self.clone()
        }
    }

    /// A solver's own per-pass limit (SLE solves, Newton steps, predictor sweeps) under the
    /// iteration cap, and at least 1.
    pub fn capped(&self, limit: u32) -> u32 {
        limit.min(self.effective_cap()).max(1)
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

    /// Every description is usable: a non-empty range, a slider span inside it that a log
    /// slider can take, help text, and a name that `validate` reports.
    #[test]
    fn every_parameter_is_described_consistently() {
        for p in PARAMS {
            assert!(p.min < p.max, "{}", p.name);
            let (lo, hi) = p.slider;
            assert!(p.min <= lo && lo < hi && hi <= p.max, "{}: slider", p.name);
            if p.scale == Scale::Log {
                assert!(lo > 0.0, "{}: a log slider starts above 0", p.name);
            }
            assert!(!p.help.is_empty() && !p.label.is_empty(), "{}", p.name);
            let names: Vec<&str> = PARAMS.iter().map(|q| q.name).collect();
            assert_eq!(names.iter().filter(|&&n| n == p.name).count(), 1);
        }
        assert!(SimParams::default().validate().is_ok());
    }

    /// Integers are shown as integers, never as `4.294967295e9`.
    #[test]
    fn integer_parameters_show_integers() {
        let p = SimParams {
            max_iterations: u32::MAX,
            ..SimParams::default()
        };
        let msg = p.validate().unwrap_err().to_string();
        assert!(msg.contains("4294967295 is outside"), "{msg}");
        assert!(msg.contains("[0, 1000000]"), "{msg}");
        assert_eq!(TOLERANCE.show(1e-12), "1e-12");
    }

    /// A ball with a radius ≤ 0 or any non-finite field, and non-finite scalars anywhere,
    /// are refused.
    #[test]
    fn bad_balls_and_non_finite_fields_are_refused() {
        let ball = |f: &dyn Fn(&mut Ball)| {
            let mut b = Ball::still(DVec3::new(0.0, 0.5, 0.0), 0.2);
            f(&mut b);
            SimParams {
                ball: Some(b),
                ..SimParams::default()
            }
            .validate()
        };
        assert!(ball(&|_| {}).is_ok());
        for bad in [
            ball(&|b| b.radius = 0.0),
            ball(&|b| b.radius = -1.0),
            ball(&|b| b.radius = f64::NAN),
            ball(&|b| b.radius = f64::INFINITY),
            ball(&|b| b.center.x = f64::NAN),
            ball(&|b| b.velocity.y = f64::INFINITY),
            ball(&|b| {
                b.motion = BallMotion::Swing {
                    anchor: DVec3::ZERO,
                    axis: DVec3::new(f64::NAN, 0.0, 0.0),
                    frequency: 1.0,
                }
            }),
            ball(&|b| {
                b.motion = BallMotion::Swing {
                    anchor: DVec3::ZERO,
                    axis: DVec3::X,
                    frequency: f64::INFINITY,
                }
            }),
        ] {
            assert!(bad.is_err());
        }
        let nan = f64::NAN;
        for p in [
            SimParams {
                dt: nan,
                ..Default::default()
            },
            SimParams {
                friction: nan,
                ..Default::default()
            },
            SimParams {
                ground: Some(nan),
                ..Default::default()
            },
            SimParams {
                verlet_damping: f64::INFINITY,
                ..Default::default()
            },
            SimParams {
                gravity: DVec3::new(0.0, nan, 0.0),
                ..Default::default()
            },
        ] {
            assert!(p.validate().is_err(), "{p:?}");
        }
        let mut p = SimParams::default();
        p.wind.gust_frequency = nan;
        assert!(p.validate().is_err());
        p = SimParams::default();
        p.strain_limits.damping = nan;
        assert!(p.validate().is_err());
        p = SimParams::default();
        p.shear.stiffness = nan;
        assert!(p.validate().is_err());
    }
}
