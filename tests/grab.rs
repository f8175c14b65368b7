//! The grab yields: pulled beyond what the pinned cloth can reach, the held particle stops
//! short and the cloth does not stretch; pulled within reach, it gets there.

mod common;

use glam::DVec3;
use impulse_cloth::sim::{Drag, DragScript, SimParams, SolverKind, World};

/// The app's hanging cloth (slack 0.1) at `n`×`n` and 1/60 s steps.
fn hanging(n: usize, tol: f64) -> World {
    let params = SimParams {
        dt: 1.0 / 60.0,
        tolerance: tol,
        ..SimParams::default()
    };
    common::hanging(n, 0.1, params)
}

/// Step `frames` frames of a scripted drag; return the largest strain recomputed after
/// each step and the world.
fn drag(mut w: World, solver: SolverKind, d: Drag, frames: usize) -> (f64, World) {
    let mut s = solver.create();
    let mut script = DragScript::new(vec![d], w.cloth.len()).unwrap();
    let mut worst: f64 = 0.0;
    for _ in 0..frames {
        script.before_step(&mut w).unwrap();
        w.step(s.as_mut()).unwrap();
        worst = worst.max(common::strain_from_positions(&w));
    }
    (worst, w)
}

#[test]
fn a_drag_beyond_reach_stops_short_without_stretching() {
    let n = 16;
    let tol = 1e-4;
    let w = hanging(n, tol);
    let pins = w.cloth.pinned_indices();
    let pinned_at: Vec<DVec3> = pins.iter().map(|&i| w.cloth.particles.x[i]).collect();
    let bottom = (n - 1) * n + n / 2;
    let start = w.cloth.particles.x[bottom];
    // 3 m below and 1 m in front of where it starts: the cloth is 1 m.
    let to = start + DVec3::new(0.0, -3.0, 1.0);
    let d = Drag {
        particle: bottom,
        to,
        start: 0.25,
        arrive: 0.75,
        release: None,
    };
    let (worst, w) = drag(w, SolverKind::Newton, d, 90);
    assert!(worst <= tol * (1.0 + 1e-9), "strain {worst}");
    let x = &w.cloth.particles.x;
    for (&i, &p) in pins.iter().zip(&pinned_at) {
        assert_eq!(x[i], p, "pin {i} moved");
    }
    let held = x[bottom];
    assert!(
        held.distance(to) > 1.0,
        "the hand reached {held}, target {to}"
    );
    // It did follow: lower than it hung before the drag, towards the target.
    assert!(held.y < start.y - 0.2, "held at {held}, started at {start}");
    // It stops within the reach the constraint paths allow from every pin.
    let l = w.cloth.topology.longest_rest();
    for &i in &pins {
        let (r, c) = (bottom / n, bottom % n);
        let (pr, pc) = (i / n, i % n);
        let path = (r.abs_diff(pr) + c.abs_diff(pc)) as f64 * l;
        assert!(
            held.distance(x[i]) <= path,
            "beyond the path bound of pin {i}"
        );
    }
}

#[test]
fn a_reachable_target_is_reached_by_every_converging_solver() {
    for solver in [
        SolverKind::Newton,
        SolverKind::Strips,
        SolverKind::Iterative,
    ] {
        let n = 12;
        let tol = 1e-4;
        let w = hanging(n, tol);
        let bottom = (n - 1) * n + n / 2;
        let to = w.cloth.particles.x[bottom] + DVec3::new(0.05, 0.05, 0.05);
        let d = Drag {
            particle: bottom,
            to,
            start: 0.0,
            arrive: 0.25,
            release: None,
        };
        let (_, w) = drag(w, solver, d, 45);
        let held = w.cloth.particles.x[bottom];
        // The hand is 10⁴× the cloth's mass: the cloth's pull moves it by h²·T/M, µm.
        assert!(
            held.distance(to) < 1e-4,
            "{solver}: held at {held}, target {to}"
        );
    }
}

#[test]
fn letting_go_restores_the_particle_and_a_pinned_grab_moves_the_pin() {
    let n = 10;
    let mut w = hanging(n, 1e-3);
    let mut s = SolverKind::Newton.create();
    let base = w.cloth.particles.inv_mass()[55];
    w.start_grab(55, w.cloth.particles.x[55]).unwrap();
    assert!(w.cloth.particles.inv_mass()[55] < base * 1e-3);
    w.step(s.as_mut()).unwrap();
    w.release_grab();
    assert_eq!(w.cloth.particles.inv_mass()[55], base);
    // A pinned corner follows its target exactly (kinematic), within its reach: 5 cm
    // towards the other pinned corner.
    let x = &w.cloth.particles.x;
    let to = x[0] + (x[n - 1] - x[0]).normalize() * 0.05;
    w.start_grab(0, to).unwrap();
    w.step(s.as_mut()).unwrap();
    assert!(w.cloth.particles.x[0].distance(to) < 1e-12);
    assert_eq!(w.cloth.particles.inv_mass()[0], 0.0);
}
