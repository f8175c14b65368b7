//! Contact and gliders, solved with the distance constraints: Newton holds the ball, the
//! ground and the curtain's rods as rows of its own system, the sweep-based solvers visit
//! them in every sweep, so a draped cloth and a curtain on sliding rings meet the
//! tolerance in every step with every impulse solver. "Tolerance met" (`converged`) must
//! be a statement about the state a step ends in, also when a cap stops the pass.

mod common;

use common::params;
use impulse_cloth::sim::collision::CONTACT_SKIN;
use impulse_cloth::sim::{ScenePreset, SceneSpec, SolverKind, StepStats, World};

fn scene(preset: ScenePreset, w: usize, h: usize, tol: f64) -> World {
    SceneSpec::new(preset, w, h)
        .build(params(tol))
        .expect("valid scene")
}

/// Every step of `kind` on `world`; the steps that ended outside the tolerance.
fn outside(world: &mut World, kind: SolverKind, steps: usize) -> (Vec<StepStats>, usize) {
    let mut solver = kind.create();
    let tol = world.params.tolerance;
    let stats: Vec<StepStats> = (0..steps)
        .map(|_| world.step(solver.as_mut()).expect("step"))
        .collect();
    let n = stats.iter().filter(|s| s.ended_outside(tol)).count();
    (stats, n)
}

#[test]
fn converged_is_false_whenever_the_final_strain_exceeds_the_tolerance() {
    let tol = 1e-4;
    let mut missed = 0;
    // Capped passes, so that steps do end outside the tolerance.
    let capped = |preset, w, h| {
        let mut world = scene(preset, w, h, tol);
        world.params.max_iterations = 3;
        world
    };
    for (preset, w, h) in [
        (ScenePreset::Drape, 16, 16),
        (ScenePreset::CurtainRod, 13, 10),
    ] {
        for kind in [
            SolverKind::Iterative,
            SolverKind::Strips,
            SolverKind::Sle,
            SolverKind::Newton,
        ] {
            let mut world = capped(preset, w, h);
            let (stats, n) = outside(&mut world, kind, 40);
            missed += n;
            for s in &stats {
                if s.max_strain > tol * (1.0 + 1e-9) {
                    assert!(
                        !s.converged,
                        "{preset:?} {kind}: step {} reads 'tolerance met' at strain {:.3e}",
                        s.step, s.max_strain
                    );
                }
            }
        }
    }
    // The situation the read-out must not hide does occur on these scenes today.
    assert!(missed > 0, "no step ended outside the tolerance");
}

#[test]
fn every_impulse_solver_holds_the_tolerance_on_the_ball_and_on_the_rod_in_every_step() {
    let tol = 1e-4;
    let cases = [
        (ScenePreset::Drape, 20, 150),
        (ScenePreset::CurtainRod, 20, 90),
    ];
    let solvers = [
        SolverKind::Newton,
        SolverKind::Strips,
        SolverKind::Sle,
        SolverKind::Iterative,
    ];
    for ((preset, n, steps), kind) in cases.into_iter().flat_map(|c| solvers.map(|k| (c, k))) {
        let mut p = params(tol);
        p.dt = 1.0 / 60.0;
        let mut world = SceneSpec::new(preset, n, n).build(p).expect("valid scene");
        let mut solver = kind.create();
        let shortest = world.cloth.topology.shortest_rest();
        // Newton holds the rings on their rods exactly (rows of its system); the sweeps
        // to the contact's tolerance, as they hold particles outside the ball.
        let slop = tol * shortest * (1.0 + 1e-6);
        let on_rod = if kind == SolverKind::Newton {
            1e-9
        } else {
            slop
        };
        let (mut touching, mut rounds) = (0usize, 0u32);
        for _ in 0..steps {
            let s = world.step(solver.as_mut()).expect("step");
            rounds += s.contact_rounds;
            let e = common::strain_from_positions(&world);
            let at = format!("{preset:?} {kind} step {}", s.step);
            assert!(e <= tol * (1.0 + 1e-9), "{at}: strain {e:.3e}");
            assert!(s.converged, "{at}: not converged");
            let x = &world.cloth.particles.x;
            if let Some(b) = world.params.ball {
                for (i, p) in x.iter().enumerate() {
                    let gap = p.distance(b.center) - b.radius - CONTACT_SKIN;
                    assert!(gap >= -slop, "{at}: particle {i} {gap:.3e} inside the ball");
                    touching += usize::from(gap < 1e-3);
                }
            }
            for g in world.gliders() {
                let off = x[g.particle].distance(g.project(x[g.particle]));
                assert!(
                    off <= on_rod,
                    "{at}: ring {} {off:.2e} m off its rod",
                    g.particle
                );
            }
        }
        // Contact is solved inside the pass: no contact round was needed.
        assert_eq!(rounds, 0, "{preset:?} {kind}: contact rounds");
        if preset == ScenePreset::Drape {
            assert!(
                touching > 1000,
                "{kind}: only {touching} particle-steps on the ball"
            );
        } else {
            assert!(!world.gliders().is_empty());
        }
    }
}

/// A collider that goes away lets go at once: Newton keeps its contact rows (and their
/// multipliers) from step to step, and a row left over from a ball or ground that no
/// longer exists would keep pushing. With both removed from a cloth resting on the ball,
/// the only external force is gravity, so the total momentum grows by M·g·t exactly (the
/// constraint and spring impulses are equal and opposite).
#[test]
fn newton_lets_go_when_the_ball_and_ground_are_removed() {
    let mut p = params(1e-4);
    p.dt = 1.0 / 60.0;
    let mut world = SceneSpec::new(ScenePreset::Drape, 16, 16)
        .build(p)
        .expect("valid scene");
    let mut solver = SolverKind::Newton.create();
    for _ in 0..60 {
        world.step(solver.as_mut()).expect("step");
    }
    let momentum = |w: &World| {
        let q = &w.cloth.particles;
        q.v.iter()
            .zip(q.inv_mass())
            .map(|(v, &k)| *v / k)
            .fold(glam::DVec3::ZERO, |a, b| a + b)
    };
    let mass: f64 = world
        .cloth
        .particles
        .inv_mass()
        .iter()
        .map(|k| 1.0 / k)
        .sum();
    world.params.ball = None;
    world.params.ground = None;
    let before = momentum(&world);
    let steps = 3;
    for _ in 0..steps {
        world.step(solver.as_mut()).expect("step");
    }
    let expected = before + world.params.gravity * (mass * steps as f64 * world.params.dt);
    let gained = (momentum(&world) - expected).length();
    let scale = mass * world.params.gravity.length() * steps as f64 * world.params.dt;
    assert!(
        gained <= 1e-6 * scale,
        "momentum off free fall by {gained:.3e} (gravity's impulse {scale:.3e})"
    );
}
