//! What the impulses conserve or keep fixed: momentum (004 §3.2), static and grabbed
//! particles, and the colliders' surfaces.

mod common;

use common::*;
use glam::DVec3;
use impulse_cloth::sim::{ImpulseDirection, SolverKind};

/// `linear_rel`: allowed drift of linear momentum relative to Σ m|v| (round-off).
fn momentum_check(kind: SolverKind, dir: ImpulseDirection, exact_angular: bool, linear_rel: f64) {
    let mut p = params(1e-8);
    p.direction = dir;
    let mut w = free_cloth(10, p, 7);
    let l0 = w.cloth.particles.linear_momentum();
    let a0 = w.cloth.particles.angular_momentum();
    let scale = w.cloth.particles.v.iter().map(|v| v.length()).sum::<f64>() * 0.2 / 100.0;
    let stats = run(&mut w, kind, 10);
    // Newton counts its steps, the others their sweeps; Newton also starts from a few
    // strips sweeps, so it must have taken steps of its own for this to test it.
    let work: u32 = stats
        .iter()
        .map(|s| s.position_iterations.max(s.factorizations))
        .sum();
    assert!(work > 5, "{kind}: no impulses were applied ({work})");
    let l1 = w.cloth.particles.linear_momentum();
    let a1 = w.cloth.particles.angular_momentum();
    assert!(
        (l1 - l0).length() < linear_rel * scale.max(1e-3),
        "{kind}: linear momentum drifted by {} of {scale}",
        (l1 - l0).length()
    );
    let da = (a1 - a0).length();
    if exact_angular {
        assert!(da < 1e-12, "{kind}: angular momentum drifted by {da}");
    } else {
        assert!(
            da < 2e-2 * a0.length().max(1e-6),
            "{kind}: angular momentum drifted by {da} of {}",
            a0.length()
        );
    }
}

#[test]
fn impulses_conserve_momentum() {
    // Impulses along the current direction (eq. 2 as printed) conserve both exactly; the
    // preview direction conserves linear momentum exactly and angular momentum to O(h·ω).
    momentum_check(
        SolverKind::Iterative,
        ImpulseDirection::Current,
        true,
        1e-12,
    );
    momentum_check(
        SolverKind::Iterative,
        ImpulseDirection::Preview,
        false,
        1e-12,
    );
    momentum_check(SolverKind::Sle, ImpulseDirection::Preview, false, 1e-12);
    // Newton's impulses are equal and opposite by construction (pair blocks), but they are
    // read off the positions of a solve whose matrix has condition ≈ 1e12 (the penalty):
    // linear momentum is kept to that solve's round-off, not to machine precision.
    momentum_check(SolverKind::Newton, ImpulseDirection::Preview, false, 1e-8);
}

/// The strips' over-relaxed sweeps (`strips::RELAX`) scale each chain's impulses, which
/// stay equal and opposite along each link: the free cloth's linear momentum is kept to
/// round-off as with 002's sweeps, and the relaxation did act (the two runs' sweeps
/// differ; measured on the 20×20 cloth: 208 relaxed against 281 over 10 steps).
#[test]
fn over_relaxed_strips_sweeps_conserve_momentum() {
    use impulse_cloth::sim::solver::strips::StripsSolver;
    let base = free_cloth(20, params(1e-8), 7);
    let p = &base.cloth.particles;
    // Σ m|v|: what round-off in the momentum is relative to.
    let scale: f64 =
        p.v.iter()
            .zip(p.inv_mass())
            .map(|(v, w)| v.length() / w)
            .sum();
    let l0 = p.linear_momentum();
    let mut sweeps = [0, 0];
    for (k, unrelaxed) in [false, true].into_iter().enumerate() {
        let mut w = base.clone();
        let mut solver = StripsSolver::default();
        solver.unrelaxed = unrelaxed;
        for _ in 0..10 {
            let s = w.step(&mut solver).expect("finite step");
            sweeps[k] += s.position_iterations;
        }
        let drift = (w.cloth.particles.linear_momentum() - l0).length();
        assert!(
            drift < 1e-12 * scale,
            "unrelaxed {unrelaxed}: linear momentum drifted by {drift} of {scale}"
        );
    }
    assert_ne!(
        sweeps[0], sweeps[1],
        "the relaxation never acted: {sweeps:?}"
    );
}

#[test]
fn static_particles_never_move() {
    for kind in SolverKind::ALL {
        let mut w = hanging(10, 0.0, params(1e-2));
        let pins = w.cloth.pinned_indices();
        assert_eq!(pins, vec![0, 9]);
        let before: Vec<DVec3> = pins.iter().map(|&i| w.cloth.particles.x[i]).collect();
        run(&mut w, kind, 40);
        for (k, &i) in pins.iter().enumerate() {
            assert_eq!(w.cloth.particles.x[i], before[k], "{kind}: pin {i} moved");
            assert_eq!(w.cloth.particles.v[i], DVec3::ZERO);
        }
    }
}

#[test]
fn grabbed_particle_follows_its_target_and_drags_the_cloth() {
    for kind in SolverKind::ALL {
        let mut w = hanging(10, 0.0, params(1e-3));
        let mut solver = kind.create();
        let i = 95; // a free corner region particle
        let start = w.cloth.particles.x[i];
        let far = w.cloth.particles.x[99];
        for k in 1..=20 {
            // Up and back towards the pinned row: closer to every pin, within reach (straight
            // up would be beyond it: the flat cloth's columns are at their full length).
            let target = start + DVec3::new(0.0, 0.01 * k as f64, -0.01 * k as f64);
            if k == 1 {
                w.start_grab(i, target).unwrap();
            } else {
                w.set_grab_target(target);
            }
            w.step(solver.as_mut()).unwrap();
            // The hand is 10⁴× the cloth's mass: the cloth's pull moves it by h²·T/M. Verlet
            // relaxes positions after integration, which moves the hand by its mass share
            // of each correction (0.14 mm measured).
            let miss = w.cloth.particles.x[i].distance(target);
            let allowed = if kind == SolverKind::Verlet {
                1e-3
            } else {
                1e-5
            };
            assert!(
                miss < allowed,
                "{kind}: grabbed particle is {miss} m off its target"
            );
        }
        assert!(
            w.cloth.particles.x[99].distance(far) > 0.01,
            "{kind}: the cloth did not respond"
        );
        w.release_grab();
        assert!(w.cloth.particles.inv_mass()[i] > 0.0);
        w.step(solver.as_mut()).unwrap();
    }
}

#[test]
fn draped_cloth_does_not_penetrate_ball_or_ground() {
    for kind in SolverKind::ALL {
        let spec =
            impulse_cloth::sim::SceneSpec::new(impulse_cloth::sim::ScenePreset::Drape, 15, 15);
        let mut w = spec.build(params(1e-3)).unwrap();
        let mut s = kind.create();
        let mut touched = false;
        for _ in 0..60 {
            w.step(s.as_mut()).unwrap();
            let b = w.params.ball.unwrap();
            let g = w.params.ground.unwrap();
            for x in &w.cloth.particles.x {
                let d = x.distance(b.center);
                assert!(
                    d >= b.radius - 1e-9,
                    "{kind}: particle {d:.4} m from the centre of a {:.3} m ball",
                    b.radius
                );
                assert!(x.y >= g - 1e-9, "{kind}: particle below the ground");
                touched |= d < b.radius + 0.01;
            }
        }
        assert!(touched, "{kind}: the cloth never reached the ball");
    }
}
