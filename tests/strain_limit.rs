//! The strain-limit solver (001, Ye): SPD system, limits, contacts and gliders.

mod common;

use common::{free_cloth, hanging, params};
use glam::DVec3;
use impulse_cloth::sim::collision::CONTACT_SKIN;
use impulse_cloth::sim::{
    Ball, Glider, Phase, ScenePreset, SceneSpec, SimParams, SolverKind, World,
};

/// Parameters with h = 1/300 s (the 004 §4 frame split into ten steps), where the
/// linearisation of 001 §4 is accurate; see the README for h = 1/30 s.
fn small_step() -> SimParams {
    SimParams {
        dt: 1.0 / 300.0,
        ..params(1e-3)
    }
}

/// Fraction of (spring, step) samples outside [a − tol, b + tol], and the worst excess.
fn limit_record(w: &mut World, steps: usize) -> (f64, f64) {
    let mut s = SolverKind::StrainLimit.create();
    let (lim, tol) = (w.params.strain_limits, w.params.tolerance);
    let (mut out, mut total, mut worst) = (0usize, 0usize, 0.0f64);
    for _ in 0..steps {
        let stats = w.step(s.as_mut()).unwrap();
        assert!(
            !stats.fell_back,
            "step {}: A_c was not factorised",
            stats.step
        );
        let t = &w.cloth.topology;
        let x = &w.cloth.particles.x;
        let mut count = 0;
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let rel = x[a as usize].distance(x[b as usize]) / t.rest[e] - 1.0;
            let excess = (rel - lim.stretch).max(-lim.compress - rel);
            worst = worst.max(excess);
            if excess > tol {
                count += 1;
            }
        }
        assert_eq!(count, stats.limit_violations, "statistics disagree");
        out += count as usize;
        total += t.edges.len();
    }
    (out as f64 / total as f64, worst)
}

#[test]
fn hanging_cloth_stays_within_the_strain_limits() {
    // The 004 §4 scene with ten steps per 1/30 s frame, for 2 s: the cloth falls, swings
    // and settles hanging at the stretch limit.
    let mut w = hanging(20, 0.0, small_step());
    let (fraction, worst) = limit_record(&mut w, 600);
    assert!(fraction < 0.01, "{fraction} of springs outside the limits");
    assert!(worst < 0.01, "a spring was {worst} beyond its limit");
    // It really is hanging on the limits, not on stiff springs.
    let (max, _) = w.cloth.strain_stats();
    assert!(
        max > 0.09,
        "the cloth never reached its stretch limit: {max}"
    );
}

#[test]
fn one_pass_is_001_and_newton_passes_tighten_it() {
    let run = |passes| {
        let mut p = small_step();
        p.strain_limits.passes = passes;
        let mut w = hanging(20, 0.0, p);
        limit_record(&mut w, 150)
    };
    let (f1, w1) = run(1);
    let (f4, w4) = run(4);
    assert!(
        f4 < f1 && w4 < w1,
        "Newton passes did not help: 1 pass {f1}/{w1}, 4 passes {f4}/{w4}"
    );
    // A curtain hanging from its whole top edge moves little in one step: 001 exactly
    // keeps every spring within its limits.
    let mut p = small_step();
    p.strain_limits.passes = 1;
    let mut w = SceneSpec::new(ScenePreset::Curtain, 15, 15)
        .build(p)
        .unwrap();
    let (fraction, worst) = limit_record(&mut w, 300);
    assert!(fraction == 0.0, "{fraction} outside, worst {worst}");
}

#[test]
fn the_impulse_system_is_positive_definite_for_random_states() {
    // Scramble positions and velocities, pin random particles, put some on gliders and a
    // ball in the middle: A_c must factorise every time (001 §6), and solve accurately.
    let mut rng = 99u64;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    for trial in 0..12 {
        let n = 6 + trial % 7;
        let mut w = hanging(n, 0.0, small_step());
        let spacing = w.cloth.topology.rest[0];
        for i in 0..w.cloth.len() {
            let r = DVec3::new(next(), next(), next()) - DVec3::splat(0.5);
            w.cloth.particles.x[i] += r * (0.8 * spacing);
            let r = DVec3::new(next(), next(), next()) - DVec3::splat(0.5);
            w.cloth.particles.v[i] = r * 4.0;
            if next() < 0.1 {
                w.cloth.set_pinned(i, true).unwrap();
            } else if next() < 0.1 {
                let axis = DVec3::new(next(), next(), next()) - DVec3::splat(0.5);
                let x = w.cloth.particles.x[i];
                w.add_glider(Glider::new(i, x, axis).unwrap()).unwrap();
            }
        }
        let c = w.cloth.particles.x[n * n / 2];
        w.params.ball = Some(Ball::still(c + DVec3::new(0.0, -0.1, 0.0), 0.1));
        let mut s = SolverKind::StrainLimit.create();
        for _ in 0..3 {
            let stats = w.step(s.as_mut()).unwrap();
            assert!(!stats.fell_back, "trial {trial}: not positive definite");
            assert!(stats.linear_solves > 0, "trial {trial}: nothing was solved");
            // Scrambled states give A_c condition numbers near 1e10: a backward-stable
            // Cholesky leaves relative residuals up to ≈ 1e-6 there (measured 1.1e-6 at
            // worst over these trials; a wrong factor gives O(1)).
            assert!(
                stats.solve_residual < 1e-5,
                "trial {trial}: residual {}",
                stats.solve_residual
            );
        }
    }
}

#[test]
fn without_constraints_momentum_is_conserved() {
    // 001 §5: the impulses conserve linear and angular momentum when no constraint matrix
    // acts. One pass uses the directions at t₀, so both are exact.
    let mut p = params(1e-6);
    p.strain_limits.passes = 1;
    p.strain_limits.stretch = 0.01;
    p.strain_limits.compress = 0.01;
    let mut w = free_cloth(10, p, 3);
    let (l0, a0) = (
        w.cloth.particles.linear_momentum(),
        w.cloth.particles.angular_momentum(),
    );
    let mut s = SolverKind::StrainLimit.create();
    let mut solves = 0;
    for _ in 0..10 {
        solves += w.step(s.as_mut()).unwrap().linear_solves;
    }
    assert!(
        solves >= 5,
        "the limits were never reached ({solves} solves)"
    );
    let (l1, a1) = (
        w.cloth.particles.linear_momentum(),
        w.cloth.particles.angular_momentum(),
    );
    assert!(
        (l1 - l0).length() < 1e-12,
        "linear drift {}",
        (l1 - l0).length()
    );
    assert!(
        (a1 - a0).length() < 1e-12,
        "angular drift {}",
        (a1 - a0).length()
    );
}

#[test]
fn a_particle_held_on_the_ball_does_not_penetrate_it() {
    // The solver does not project contact particles out after integration: the ndof-2
    // constraint matrix alone must keep them on the surface (001 §5).
    let spec = SceneSpec::new(ScenePreset::Drape, 15, 15);
    let mut w = spec.build(small_step()).unwrap();
    let mut s = SolverKind::StrainLimit.create();
    let mut held = 0;
    for _ in 0..600 {
        let stats = w.step(s.as_mut()).unwrap();
        held = held.max(stats.constrained_particles);
        let b = w.params.ball.unwrap();
        for (i, x) in w.cloth.particles.x.iter().enumerate() {
            let d = x.distance(b.center) - (b.radius + CONTACT_SKIN);
            assert!(
                d > -1e-9,
                "step {}: particle {i} is {d} m inside",
                stats.step
            );
        }
    }
    assert!(
        held > 10,
        "the cloth never rested on the ball ({held} held)"
    );
}

#[test]
fn gliders_move_only_along_their_rod() {
    let spec = SceneSpec::new(ScenePreset::CurtainRod, 21, 15);
    let mut w = spec.build(small_step()).unwrap();
    let gliders = w.gliders().to_vec();
    assert_eq!(
        gliders.len(),
        10,
        "rings at every other column but the pinned one"
    );
    let last = gliders.iter().map(|g| g.particle).max().unwrap();
    let start = w.cloth.particles.x[last];
    let mut s = SolverKind::StrainLimit.create();
    // Pull the last ring towards the fixed one along the rod for 1 s, then let go.
    for k in 0..450 {
        if k < 300 {
            let target = start - DVec3::X * (0.0015 * k as f64);
            if k == 0 {
                w.start_grab(last, target).unwrap();
            } else {
                w.set_grab_target(target);
            }
        } else if k == 300 {
            w.release_grab();
        }
        w.begin_step(SolverKind::StrainLimit).unwrap();
        for phase in Phase::ORDER {
            w.run_phase(phase, s.as_mut()).unwrap();
            if phase == Phase::Position {
                // Inside the system, before any projection: velocity along the rod only.
                for g in &gliders {
                    let v = w.cloth.particles.v[g.particle];
                    assert!(
                        v.cross(g.axis).length() < 1e-12 * v.length().max(1.0),
                        "step {k}: ring {} moves across its rod: {v}",
                        g.particle
                    );
                }
            }
        }
        let stats = w.finish_step().unwrap();
        assert!(!stats.fell_back);
    }
    for g in &gliders {
        let x = w.cloth.particles.x[g.particle];
        assert!(x.distance(g.project(x)) < 1e-12, "ring left the rod");
    }
    let end = w.cloth.particles.x[last];
    assert!(
        start.x - end.x > 0.3,
        "the curtain was not drawn: {}",
        start.x - end.x
    );
    assert!(
        (end.y - start.y).abs() < 1e-12 && (end.z - start.z).abs() < 1e-12,
        "the last ring left the rod line"
    );
}

#[test]
fn symbolic_analysis_is_reused_until_the_rows_change() {
    // 001 §7, Table 1: ordering and symbolic factorisation depend only on which springs
    // are in the system.
    let mut w = hanging(12, 0.0, small_step());
    let mut s = impulse_cloth::sim::solver::StrainLimitSolver::default();
    let mut symbolic = Vec::new();
    for k in 0..40 {
        if k == 20 {
            // Pinning the neighbour of a pinned corner removes the spring between them.
            w.cloth.set_pinned(1, true).unwrap();
        }
        if k == 30 {
            // Holding a free particle changes no row.
            let x = w.cloth.particles.x[50];
            w.start_grab(50, x).unwrap();
        }
        let stats = w.step(&mut s).unwrap();
        if stats.linear_solves > 0 {
            symbolic.push((k, stats.symbolic_analysis));
        }
    }
    let redone: Vec<usize> = symbolic.iter().filter(|s| s.1).map(|s| s.0).collect();
    assert_eq!(redone.len(), 2, "symbolic analyses at steps {redone:?}");
    assert_eq!(redone[1], 20);
    let counts = s.reuse_counts();
    assert_eq!(counts.symbolic_analyses, 2);
    assert_eq!(counts.solved_steps, symbolic.len() as u64);
}

/// Drag the particle below the last ring with the app's timing: the grab target changes
/// once per rendered frame (four 60 Hz frames at 15 fps), and each 60 Hz frame is ten steps
/// of 1/600 s, so the held particle jumps to each new target in one step.
fn drag(w: &mut World, i: usize, per_frame: DVec3, frames: usize) -> (f64, f64) {
    let start = w.cloth.particles.x.clone();
    let mut s = SolverKind::StrainLimit.create();
    let (mut worst, mut farthest) = (0.0f64, 0.0f64);
    for frame in 0..frames {
        let target = start[i] + per_frame * (frame / 4 * 4) as f64;
        if frame == 0 {
            w.start_grab(i, target).unwrap();
        } else {
            w.set_grab_target(target);
        }
        for _ in 0..10 {
            w.step(s.as_mut()).unwrap();
            // The springs of the held particle itself can be forced arbitrarily long (its
            // ring cannot leave the rod); the others are what the solver controls.
            let t = &w.cloth.topology;
            let x = &w.cloth.particles.x;
            for (e, &[a, b]) in t.edges.iter().enumerate() {
                if a as usize != i && b as usize != i {
                    let strain = (x[a as usize].distance(x[b as usize]) / t.rest[e] - 1.0).abs();
                    worst = worst.max(strain);
                }
            }
            for (p, q) in x.iter().zip(&start) {
                farthest = farthest.max(p.distance(*q));
            }
        }
    }
    (worst, farthest)
}

fn rod_at_app_step() -> World {
    let mut p = small_step();
    p.dt = 1.0 / 600.0;
    SceneSpec::new(ScenePreset::CurtainRod, 31, 25)
        .build(p)
        .unwrap()
}

#[test]
fn drawing_the_curtain_quickly_keeps_the_limits() {
    // Pull the fabric under the last ring 45 cm towards the fixed ring in 1 s: the rings
    // slide and the pleats fold.
    let mut w = rod_at_app_step();
    let (worst, _) = drag(&mut w, 31 + 30, DVec3::new(-0.0075, 0.0, 0.0), 60);
    assert!(worst < 0.2, "strain {worst} while drawing the curtain");
}

#[test]
fn an_impossible_drag_stays_bounded() {
    // Pull it 1.8 m along and 0.6 m off the rod: the ring cannot follow off the rod, so a
    // spring nearly perpendicular to it must stretch. The linearised step for that ring is
    // many spacings long; without the trust region the cloth blew up (strain 10⁵).
    let mut w = rod_at_app_step();
    let (_, farthest) = drag(&mut w, 31 + 30, DVec3::new(-0.03, 0.0, 0.01), 60);
    assert!(farthest < 3.0, "a particle flew {farthest} m");
}
