//! The physics: impulse-based inextensible cloth (004 Bender, Bayer, Diziol), the SLE
//! method (004 §3.4.2, 001 §7) and the Verlet baseline (003).
//!
//! No Bevy here — glam, rayon and faer only — so everything can be tested and benchmarked
//! headless. A [`World`] owns the cloth and the parameters; a [`Solver`] owns only scratch
//! buffers (and, for the SLE, its factorisation), so solvers can be switched between steps.
//! A step runs the phases of [`Phase::ORDER`]; the Bevy plugin calls the same phases one
//! system at a time.

pub mod cloth;
pub mod collision;
pub mod dof;
pub mod error;
pub mod forces;
pub mod kernels;
pub mod kind;
pub mod params;
pub mod scene;
pub mod solver;
pub mod sparse;
pub mod stats;
pub mod taut;

use std::time::Instant;

use glam::DVec3;

pub use cloth::{CacheKey, Cloth, GridSpec, Orientation, Particles, Topology};
pub use dof::{Dof, Glider};
pub use error::SimError;
pub use kind::SolverKind;
pub use params::{Ball, BallMotion, ImpulseDirection, SimParams, SpringParams, StrainLimits, Wind};
pub use scene::{PinSpec, ScenePreset, SceneSpec};
pub use solver::{ContactModel, Solver, StepCtx};
pub use stats::{Phase, PhaseTimings, StepStats};

/// A particle held by the user (001 §5 treats user-held nodes as constrained nodes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grab {
    /// The particle.
    pub particle: usize,
    /// Where it should be at the end of the next step, m.
    pub target: DVec3,
}

/// The simulated world: cloth, parameters, colliders, time, and per-step scratch.
#[derive(Debug, Clone)]
pub struct World {
    /// The cloth.
    pub cloth: Cloth,
    /// Step parameters (the ball lives in `params.ball`).
    pub params: SimParams,
    /// Simulated time, s.
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    grab: Option<Grab>,
    gliders: Vec<Glider>,
    accel: Vec<DVec3>,
    scratch: Vec<DVec3>,
    saved_x: Vec<DVec3>,
    saved_v: Vec<DVec3>,
    saved_ball: Option<Ball>,
    ball_end: Option<Ball>,
    current: Option<StepStats>,
    /// Particles made static because they lie inside a taut chain ([`taut`]).
    locked: Vec<usize>,
}

impl World {
    /// A world from a cloth and parameters (validated).
    pub fn new(cloth: Cloth, params: SimParams) -> Result<World, SimError> {
        params.validate()?;
        Ok(World {
            cloth,
            params,
            time: 0.0,
            steps: 0,
            grab: None,
            gliders: Vec::new(),
            accel: Vec::new(),
            scratch: Vec::new(),
            saved_x: Vec::new(),
            saved_v: Vec::new(),
            saved_ball: None,
            ball_end: None,
            current: None,
            locked: Vec::new(),
        })
    }

    /// The particle currently held, if any.
    pub fn grab(&self) -> Option<Grab> {
        self.grab
    }

    /// Hold particle `i` and move it towards `target` (see [`World::set_grab_target`]).
    /// While held the particle is kinematic (inverse mass 0); the rest of the cloth
    /// responds only through the constraints.
    pub fn start_grab(&mut self, i: usize, target: DVec3) -> Result<(), SimError> {
        if i >= self.cloth.len() {
            return Err(SimError::ParticleOutOfRange {
                index: i,
                count: self.cloth.len(),
            });
        }
        if !target.is_finite() {
            return Err(SimError::param("grab target", "must be finite"));
        }
        self.release_grab();
        self.grab = Some(Grab {
            particle: i,
            target,
        });
        self.cloth.hold(i);
        Ok(())
    }

    /// Move the held particle's target. Non-finite targets are ignored.
    pub fn set_grab_target(&mut self, target: DVec3) {
        if let Some(g) = &mut self.grab
            && target.is_finite()
        {
            g.target = target;
        }
    }

    /// Let go of the held particle: its mass is restored (unless it is pinned) and it keeps
    /// its velocity, so a drag can fling the cloth.
    pub fn release_grab(&mut self) {
        if let Some(g) = self.grab.take()
            && g.particle < self.cloth.len()
        {
            self.cloth.let_go(g.particle);
        }
    }

    /// Particles currently static because they lie inside a taut chain ([`taut`]).
    pub fn locked_particles(&self) -> &[usize] {
        &self.locked
    }

    /// Lock the particles of the cloth's taut chains (static, on the straight chain, at
    /// rest) and release those no longer in one; with `enabled` false, release all.
    fn update_taut_chains(&mut self, enabled: bool) {
        let held = self.grab.map(|g| g.particle);
        let chains = if enabled {
            taut::taut_chain_particles(&self.cloth, held)
        } else {
            Vec::new()
        };
        let p = &mut self.cloth.particles;
        let same = chains.len() == self.locked.len()
            && chains.iter().zip(&self.locked).all(|(&(i, _), &j)| i == j);
        if !same {
            for &i in &self.locked {
                if i < p.len() && !p.pinned[i] && Some(i) != held {
                    p.inv_mass[i] = p.base_inv_mass[i];
                }
            }
            self.locked.clear();
            for &(i, at) in &chains {
                p.x[i] = at;
                self.locked.push(i);
            }
            self.cloth.statics_changed();
        }
        // Locked particles are static (the set changed above if they are new; otherwise
        // this only undoes an unpin of a locked particle since the last step).
        let p = &mut self.cloth.particles;
        for &i in &self.locked {
            p.inv_mass[i] = 0.0;
            p.v[i] = DVec3::ZERO;
        }
    }

    /// Particles on gliders (001 §5).
    pub fn gliders(&self) -> &[Glider] {
        &self.gliders
    }

    /// Put a particle on a glider: from now on it moves only along the rod. Replaces an
    /// earlier glider of the same particle. The particle is moved onto the rod and its
    /// velocity across the rod is removed.
    ///
    /// The strain-limit solver puts the glider inside its impulse system (001 §5, ndof 1);
    /// the other solvers treat the particle as free and project it back onto the rod after
    /// each step.
    pub fn add_glider(&mut self, glider: Glider) -> Result<(), SimError> {
        let n = self.cloth.len();
        if glider.particle >= n {
            return Err(SimError::ParticleOutOfRange {
                index: glider.particle,
                count: n,
            });
        }
        let axis_ok = (glider.axis.length() - 1.0).abs() < 1e-9;
        if !(glider.anchor.is_finite() && axis_ok) {
            return Err(SimError::param(
                "glider",
                "anchor must be finite and axis a unit vector",
            ));
        }
        self.gliders.retain(|g| g.particle != glider.particle);
        let i = glider.particle;
        let p = &mut self.cloth.particles;
        p.x[i] = glider.project(p.x[i]);
        p.v[i] = glider.along(p.v[i]);
        self.gliders.push(glider);
        Ok(())
    }

    /// Take every particle off its glider.
    pub fn clear_gliders(&mut self) {
        self.gliders.clear();
    }

    /// Statistics of the step in progress (between [`World::begin_step`] and
    /// [`World::finish_step`]).
    pub fn current_stats(&self) -> Option<&StepStats> {
        self.current.as_ref()
    }

    /// Start a step: snapshot the state (restored if the step goes non-finite) and reset
    /// the statistics.
    pub fn begin_step(&mut self, solver: SolverKind) {
        self.saved_x.clone_from(&self.cloth.particles.x);
        self.saved_v.clone_from(&self.cloth.particles.v);
        self.saved_ball = self.params.ball;
        self.current = Some(StepStats::new(self.steps, solver));
    }

    /// Run one phase of the step in progress with `solver`, and record its wall time.
    pub fn run_phase(&mut self, phase: Phase, solver: &mut dyn Solver) {
        if self.current.is_none() {
            self.begin_step(solver.kind());
        }
        let start = Instant::now();
        let h = self.params.dt;
        match phase {
            Phase::Forces => {
                let lock = self.params.lock_taut_chains && solver.kind().is_inextensible();
                self.update_taut_chains(lock);
                let stats = self.current.as_mut().expect("step in progress");
                stats.locked_particles = self.locked.len() as u32;
                if let Some(g) = self.grab {
                    let p = &mut self.cloth.particles;
                    p.inv_mass[g.particle] = 0.0;
                    p.v[g.particle] = (g.target - p.x[g.particle]) / h;
                }
                forces::external_accelerations(
                    &self.cloth,
                    &self.params,
                    self.time,
                    &mut self.accel,
                );
                forces::spring_impulses(&mut self.cloth, &self.params, &mut self.scratch);
                hold_on_rods(
                    &self.gliders,
                    &mut self.cloth.particles,
                    Some(&mut self.accel),
                    false,
                );
            }
            Phase::Collision => {
                self.ball_end = self.params.ball.map(|mut b| {
                    collision::advance_ball(
                        &mut b,
                        self.time,
                        h,
                        self.params.gravity,
                        self.params.ground,
                    );
                    b
                });
                if solver.contact_model() != ContactModel::Projection {
                    let p = &mut self.cloth.particles;
                    collision::contact_impulses(
                        &p.x,
                        &mut p.v,
                        &p.inv_mass,
                        &self.accel,
                        &self.params,
                        self.ball_end.as_ref(),
                    );
                    hold_on_rods(&self.gliders, &mut self.cloth.particles, None, false);
                }
            }
            Phase::Position | Phase::Integration | Phase::Velocity => {
                let stats = self.current.as_mut().expect("step in progress");
                let mut ctx = StepCtx {
                    cloth: &mut self.cloth,
                    params: &self.params,
                    accel: &self.accel,
                    ball_end: self.ball_end.as_ref(),
                    gliders: &self.gliders,
                    stats,
                };
                match phase {
                    Phase::Position => solver.position_pass(&mut ctx),
                    Phase::Integration => {
                        solver.integrate(&mut ctx);
                        if solver.contact_model() == ContactModel::Impulse {
                            let p = &mut ctx.cloth.particles;
                            collision::project_out(
                                &mut p.x,
                                &mut p.v,
                                &p.inv_mass,
                                ctx.params,
                                ctx.ball_end,
                                true,
                            );
                        }
                        hold_on_rods(ctx.gliders, &mut ctx.cloth.particles, None, true);
                    }
                    _ => solver.velocity_pass(&mut ctx),
                }
            }
        }
        let stats = self.current.as_mut().expect("step in progress");
        *stats.timings.slot(phase) += start.elapsed();
    }

    /// End the step: check for non-finite values (restoring the previous state if any),
    /// advance time, move the ball and return the statistics.
    pub fn finish_step(&mut self) -> Result<StepStats, SimError> {
        let mut stats = self
            .current
            .take()
            .unwrap_or_else(|| StepStats::new(self.steps, SolverKind::Iterative));
        let p = &self.cloth.particles;
        let bad =
            p.x.iter()
                .position(|x| !x.is_finite())
                .map(|i| ("position", i))
                .or_else(|| {
                    p.v.iter()
                        .position(|v| !v.is_finite())
                        .map(|i| ("velocity", i))
                });
        if let Some((what, particle)) = bad {
            self.cloth.particles.x.clone_from(&self.saved_x);
            self.cloth.particles.v.clone_from(&self.saved_v);
            self.params.ball = self.saved_ball;
            return Err(SimError::NonFinite {
                step: self.steps,
                what,
                particle,
            });
        }
        if let Some(b) = self.ball_end.take() {
            self.params.ball = Some(b);
        }
        let (max, mean) = self.cloth.strain_stats();
        stats.max_strain = max;
        stats.mean_strain = mean;
        self.time += self.params.dt;
        self.steps += 1;
        Ok(stats)
    }

    /// One full step: every phase of [`Phase::ORDER`] with `solver`.
    pub fn step(&mut self, solver: &mut dyn Solver) -> Result<StepStats, SimError> {
        self.begin_step(solver.kind());
        for phase in Phase::ORDER {
            self.run_phase(phase, solver);
        }
        self.finish_step()
    }

    /// Replace the parameters after validating them; on error the old ones stay.
    pub fn set_params(&mut self, params: SimParams) -> Result<(), SimError> {
        params.validate()?;
        self.params = params;
        Ok(())
    }
}

/// Keep dynamic glider particles on their rods: remove velocity (and, given `accel`,
/// acceleration) across the rod and, with `positions`, project them back onto it. Pinned or
/// held particles are left alone, and so are gliders left over from a replaced cloth.
fn hold_on_rods(
    gliders: &[Glider],
    p: &mut Particles,
    mut accel: Option<&mut Vec<DVec3>>,
    positions: bool,
) {
    for g in gliders {
        let i = g.particle;
        if p.inv_mass.get(i).is_none_or(|&k| k == 0.0) {
            continue;
        }
        p.v[i] = g.along(p.v[i]);
        if let Some(a) = accel.as_mut().and_then(|a| a.get_mut(i)) {
            *a = g.along(*a);
        }
        if positions {
            p.x[i] = g.project(p.x[i]);
        }
    }
}
