//! Contact and gliders against the step's read-out: "tolerance met" (`converged`) must be a
//! statement about the state a step ends in. The ball and ground are projected out and the
//! curtain's rings put back on their rod after the position pass, which can move
//! constraints outside the tolerance the pass had met.

mod common;

use common::params;
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
            let mut world = scene(preset, w, h, tol);
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
