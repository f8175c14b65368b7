//! Shared helpers for the integration tests.
#![allow(dead_code)]

use impulse_cloth::sim::{PinSpec, ScenePreset, SceneSpec, SimParams, SolverKind, World};

/// The 004 §4 scene at `n`×`n`, with pins moved inward by `slack`.
pub fn hanging(n: usize, slack: f64, params: SimParams) -> World {
    let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
    spec.slack = slack;
    spec.build(params).expect("valid scene")
}

/// A free cloth (no pins, no gravity) with random velocities everywhere.
pub fn free_cloth(n: usize, params: SimParams, seed: u64) -> World {
    let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
    spec.pins = PinSpec::None;
    spec.perturb = 1.0;
    spec.perturb_speed = 0.3;
    spec.seed = seed;
    let mut p = params;
    p.gravity = glam::DVec3::ZERO;
    p.shear.stiffness = 0.0;
    p.shear.damping = 0.0;
    p.bend.stiffness = 0.0;
    p.bend.damping = 0.0;
    spec.build(p).expect("valid scene")
}

/// Parameters with a solver's tolerance.
pub fn params(tol: f64) -> SimParams {
    SimParams {
        tolerance: tol,
        ..SimParams::default()
    }
}

/// Run `steps` steps, returning the statistics.
pub fn run(
    world: &mut World,
    kind: SolverKind,
    steps: usize,
) -> Vec<impulse_cloth::sim::StepStats> {
    let mut solver = kind.create();
    (0..steps)
        .map(|_| world.step(solver.as_mut()).expect("finite step"))
        .collect()
}

/// Largest distance between corresponding points of two position lists.
pub fn max_distance(a: &[glam::DVec3], b: &[glam::DVec3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| p.distance(*q))
        .fold(0.0, f64::max)
}

/// Assert that every step in `stats` ended with its largest strain within `tol` (with a
/// relative slack of 1e-9 for round-off).
pub fn assert_strain_within<'a>(
    stats: impl IntoIterator<Item = &'a impulse_cloth::sim::StepStats>,
    tol: f64,
) {
    for s in stats {
        assert!(
            s.max_strain <= tol * (1.0 + 1e-9),
            "tol {tol}: step {} strain {}",
            s.step,
            s.max_strain
        );
    }
}
