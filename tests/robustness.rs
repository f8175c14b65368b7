//! Robustness: bad input is an error, not a panic; failed or diverging steps are undone;
//! degenerate steps fall back; a scrambled cloth is repaired (004 §5).

mod common;

use common::*;
use glam::DVec3;
use impulse_cloth::sim::{
    Ball, Cloth, GridSpec, ImpulseDirection, MAX_SANE_STRAIN, Phase, ScenePreset, SceneSpec,
    SimError, SimParams, Solver, SolverKind, World,
};

/// Step `w` `steps` times with `solver`.
fn run_with(w: &mut World, solver: &mut dyn Solver, steps: usize) {
    for _ in 0..steps {
        w.step(solver).expect("finite step");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let bad_grid = Cloth::grid(&GridSpec {
        width: 1,
        height: 1,
        ..Default::default()
    });
    assert!(matches!(bad_grid, Err(SimError::InvalidGrid { .. })));
    let bad_size = Cloth::grid(&GridSpec {
        size: f64::NAN,
        ..Default::default()
    });
    assert!(matches!(
        bad_size,
        Err(SimError::InvalidParameter { name: "size", .. })
    ));
    for p in [
        impulse_cloth::sim::SimParams {
            dt: 0.0,
            ..Default::default()
        },
        impulse_cloth::sim::SimParams {
            tolerance: -1.0,
            ..Default::default()
        },
        impulse_cloth::sim::SimParams {
            tolerance: f64::NAN,
            ..Default::default()
        },
        impulse_cloth::sim::SimParams {
            gravity: DVec3::new(0.0, f64::INFINITY, 0.0),
            ..Default::default()
        },
    ] {
        assert!(p.validate().is_err(), "{p:?} accepted");
    }
    let mut w = hanging(5, 0.0, params(1e-2));
    assert!(w.cloth.set_pinned(25, true).is_err());
    assert!(w.start_grab(99, DVec3::ZERO).is_err());
    assert!(w.start_grab(3, DVec3::NAN).is_err());
}

/// A velocity so large that the step overflows: the step is reported as non-finite and
/// the state from before it is kept. A state that is already non-finite is not stepped at
/// all (it used to be stepped, fail, and "keep" the non-finite state).
#[test]
fn non_finite_step_is_reported_and_state_kept() {
    let mut w = hanging(5, 0.0, params(1e-2));
    run(&mut w, SolverKind::Iterative, 2);
    w.cloth.particles.v[7] = DVec3::new(f64::MAX, 0.0, 0.0);
    let (x, v) = (w.cloth.particles.x.clone(), w.cloth.particles.v.clone());
    let mut s = SolverKind::Iterative.create();
    let err = w.step(s.as_mut()).unwrap_err();
    assert!(matches!(err, SimError::NonFinite { step: 2, .. }), "{err}");
    assert_eq!(w.cloth.particles.x, x);
    assert_eq!(w.cloth.particles.v, v);
    assert_eq!(w.steps, 2);

    w.cloth.particles.v[7] = DVec3::new(f64::NAN, 0.0, 0.0);
    let err = w.step(s.as_mut()).unwrap_err();
    assert_eq!(
        err,
        SimError::NonFiniteState {
            what: "velocity",
            particle: 7
        }
    );
    assert_eq!(w.steps, 2);
    w.cloth.particles.v[7] = DVec3::ZERO;
    w.step(s.as_mut()).expect("a repaired state steps on");
}

#[test]
fn preview_direction_is_stable_where_current_direction_diverges() {
    // The measurement behind the default (README "Impulse direction"): 20×20, slack 0.1,
    // tolerance 1e-2, cap 200. With eq. 2's direction at time t the sweep overshoots and
    // the state goes non-finite within a few steps; with the preview direction it does not.
    let outcome = |dir: ImpulseDirection| {
        let mut p = params(1e-2);
        p.max_iterations = 200;
        p.direction = dir;
        let mut w = hanging(20, 0.1, p);
        let mut s = SolverKind::Iterative.create();
        let mut worst = 0.0f64;
        for _ in 0..90 {
            match w.step(s.as_mut()) {
                Ok(st) => worst = worst.max(st.max_strain),
                Err(_) => return None,
            }
        }
        Some(worst)
    };
    let preview = outcome(ImpulseDirection::Preview).expect("preview direction stays finite");
    assert!(preview < 0.5, "preview direction stretched by {preview}");
    let current = outcome(ImpulseDirection::Current);
    assert!(
        current.is_none_or(|c| c > 10.0 * preview),
        "current direction: {current:?} vs preview {preview}"
    );
}

#[test]
fn direct_solvers_fall_back_instead_of_failing_on_a_degenerate_preview() {
    // Two free particles whose previews coincide: the constraint has no direction, neither
    // the SLE's nor Newton's matrix can be built, and the step must fall back (to
    // Gauss–Seidel, to strips) without panicking or producing a non-finite value.
    for kind in [SolverKind::Sle, SolverKind::Newton] {
        let mut w =
            impulse_cloth::sim::SceneSpec::new(impulse_cloth::sim::ScenePreset::Hanging, 2, 1);
        w.pins = impulse_cloth::sim::PinSpec::None;
        w.perturb = 0.0;
        let mut p = params(1e-6);
        p.gravity = DVec3::ZERO;
        let mut world = w.build(p).unwrap();
        let h = world.params.dt;
        let (x0, x1) = (world.cloth.particles.x[0], world.cloth.particles.x[1]);
        let mid = (x0 + x1) * 0.5;
        world.cloth.particles.v[0] = (mid - x0) / h;
        world.cloth.particles.v[1] = (mid - x1) / h;
        let mut s = kind.create();
        let st = world.step(s.as_mut()).unwrap();
        assert!(
            st.fell_back,
            "{kind}: the degenerate step did not report a fallback"
        );
        assert!(world.cloth.particles.x.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn scrambled_cloth_is_repaired() {
    // 004 §5: stopping early stays stable and the cloth recovers.
    let mut w = hanging(12, 0.1, params(1e-3));
    let mut rng = 12345u64;
    let spacing = w.cloth.topology.rest[0];
    let k = w.cloth.particles.inv_mass().to_vec();
    for (i, x) in w.cloth.particles.x.iter_mut().enumerate() {
        if k[i] > 0.0 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = |s: u64| ((s >> 33) as f64 / (1u64 << 31) as f64) - 0.5;
            *x += DVec3::new(r(rng), r(rng.rotate_left(17)), r(rng.rotate_left(31)))
                * (0.6 * spacing);
        }
    }
    let (max0, _) = w.cloth.strain_stats();
    assert!(max0 > 0.2, "scrambling did little: {max0}");
    let mut p = w.params.clone();
    p.max_iterations = 500;
    w.set_params(p).unwrap();
    let stats = run(&mut w, SolverKind::Iterative, 10);
    let strains: Vec<f64> = stats.iter().map(|s| s.max_strain).collect();
    assert!(
        strains[..3].iter().any(|&s| s <= 1e-3 * (1.0 + 1e-9)),
        "not repaired within 3 steps: {strains:?}"
    );
}

/// A grab hundreds of metres away used to grow the strain 4e3 → 5e8 → 7e22 over three steps
/// that all returned `Ok`. The grab now yields (`sim::grab`): the hand stops short and every
/// step is fine. A step that still leaves a strain beyond [`MAX_SANE_STRAIN`] — here a
/// particle thrown hundreds of metres by writing its position — is undone and reported, and
/// the world steps on normally once the particle is put back.
#[test]
fn a_far_grab_stops_short_and_a_diverging_step_is_undone() {
    let mut refused = 0;
    for kind in SolverKind::ALL {
        let mut w = hanging(10, 0.0, params(1e-3));
        let mut s = kind.create();
        run_with(&mut w, s.as_mut(), 3);
        let far = w.cloth.particles.x[95] + DVec3::new(0.0, 300.0, 400.0);
        w.start_grab(95, far).unwrap();
        for k in 0..4 {
            let st = w
                .step(s.as_mut())
                .unwrap_or_else(|e| panic!("{kind}: grab step {k}: {e}"));
            assert!(
                st.max_strain <= MAX_SANE_STRAIN,
                "{kind}: {}",
                st.max_strain
            );
        }
        assert!(w.cloth.particles.x[95].distance(far) > 400.0, "{kind}");
        w.release_grab();
        let kept = w.cloth.particles.x[95];
        w.cloth.particles.x[95] += DVec3::new(0.0, 300.0, 400.0);
        let before = (w.cloth.particles.x.clone(), w.cloth.particles.v.clone());
        let (steps, time) = (w.steps, w.time);
        match w.step(s.as_mut()) {
            Ok(st) => assert!(
                st.max_strain <= MAX_SANE_STRAIN,
                "{kind}: returned Ok with strain {}",
                st.max_strain
            ),
            Err(SimError::Diverged { step, .. }) => {
                refused += 1;
                assert_eq!(step, steps);
                assert_eq!((w.steps, w.time), (steps, time), "{kind}: time moved");
                let p = &w.cloth.particles;
                assert!(
                    p.x == before.0 && p.v == before.1,
                    "{kind}: state not restored"
                );
                w.cloth.particles.x[95] = kept;
            }
            Err(e) => panic!("{kind}: {e}"),
        }
        for k in 0..5 {
            let st = w
                .step(s.as_mut())
                .unwrap_or_else(|e| panic!("{kind}: step {k} after the release: {e}"));
            assert!(
                st.max_strain <= MAX_SANE_STRAIN,
                "{kind}: {}",
                st.max_strain
            );
        }
    }
    assert!(refused > 0, "no solver's step was undone");
}

/// Dragging the last ring of the curtain rod 2 m within a few steps at h = 1/30 s, with
/// the strain-limit solver and with the others: no step may return `Ok` with an absurd
/// strain or leave a non-finite state, and after the drag the world steps on.
#[test]
fn a_fast_drag_never_leaves_an_absurd_state() {
    for kind in SolverKind::ALL {
        let mut w = SceneSpec::new(ScenePreset::CurtainRod, 12, 10)
            .build(params(1e-3))
            .unwrap();
        let mut s = kind.create();
        run_with(&mut w, s.as_mut(), 2);
        let ring = 11;
        let start = w.cloth.particles.x[ring];
        w.start_grab(ring, start).unwrap();
        for k in 1..=8 {
            w.set_grab_target(start + DVec3::new(-0.25 * k as f64, -0.1 * k as f64, 0.0));
            match w.step(s.as_mut()) {
                Ok(st) => assert!(
                    st.max_strain <= MAX_SANE_STRAIN,
                    "{kind}: {}",
                    st.max_strain
                ),
                Err(SimError::Diverged { .. }) => {}
                Err(e) => panic!("{kind}: drag step {k}: {e}"),
            }
            assert!(w.cloth.particles.x.iter().all(|x| x.is_finite()));
            assert!(w.cloth.particles.v.iter().all(|v| v.is_finite()));
        }
        w.release_grab();
        let mut ok = 0;
        for _ in 0..10 {
            match w.step(s.as_mut()) {
                Ok(_) => ok += 1,
                Err(SimError::Diverged { .. }) => {}
                Err(e) => panic!("{kind}: after the drag: {e}"),
            }
        }
        assert!(ok > 0, "{kind}: no step succeeded after the drag");
    }
}

/// `begin_step`, the phases of `Phase::ORDER` and `finish_step` are public: out of order
/// they are an error (a position pass on a fresh world used to panic on an empty buffer
/// in every solver, and `finish_step` without `begin_step` advanced time).
#[test]
fn step_calls_out_of_order_are_errors() {
    let order = |expected, got| SimError::PhaseOutOfOrder { expected, got };
    for kind in SolverKind::ALL {
        let mut w = hanging(5, 0.0, params(1e-3));
        let mut s = kind.create();
        let s = s.as_mut();
        for phase in Phase::ORDER {
            assert_eq!(
                w.run_phase(phase, s).unwrap_err(),
                order("begin_step", phase.name())
            );
        }
        assert_eq!(
            w.finish_step().unwrap_err(),
            order("begin_step", "finish_step")
        );
        assert_eq!((w.steps, w.time), (0, 0.0));

        w.begin_step(kind).unwrap();
        assert!(w.in_step());
        assert_eq!(
            w.begin_step(kind).unwrap_err(),
            order("forces", "begin_step")
        );
        assert_eq!(w.step(s).unwrap_err(), order("forces", "begin_step"));
        w.run_phase(Phase::Forces, s).unwrap();
        assert_eq!(
            w.run_phase(Phase::Position, s).unwrap_err(),
            order("collision", "position")
        );
        assert_eq!(
            w.finish_step().unwrap_err(),
            order("collision", "finish_step")
        );
        for phase in &Phase::ORDER[1..] {
            w.run_phase(*phase, s).unwrap();
        }
        assert_eq!(
            w.run_phase(Phase::Velocity, s).unwrap_err(),
            order("finish_step", "velocity")
        );
        w.finish_step().unwrap();
        assert_eq!((w.steps, w.in_step()), (1, false));

        // An abandoned step puts the state back; the next one runs normally.
        let (x, v) = (w.cloth.particles.x.clone(), w.cloth.particles.v.clone());
        w.begin_step(kind).unwrap();
        for phase in &Phase::ORDER[..4] {
            w.run_phase(*phase, s).unwrap();
        }
        w.abort_step();
        assert!(
            w.cloth.particles.x == x && w.cloth.particles.v == v,
            "{kind}"
        );
        w.step(s).unwrap();

        // A phase with another kind of solver than the step began with.
        let mut other = if kind == SolverKind::Iterative {
            SolverKind::Sle
        } else {
            SolverKind::Iterative
        }
        .create();
        w.begin_step(kind).unwrap();
        assert!(matches!(
            w.run_phase(Phase::Forces, other.as_mut()),
            Err(SimError::SolverMismatch { .. })
        ));
        w.abort_step();
        w.step(s).unwrap();
        assert_eq!(w.steps, 3);
    }
}

/// Parameters written directly into `World::params` (the panel does) are checked when a
/// step begins: a NaN tolerance, a time step ≤ 0 or a ball of negative radius used to be
/// stepped silently.
#[test]
fn parameters_written_directly_are_checked_when_a_step_begins() {
    type Breaker = fn(&mut SimParams);
    let cases: [(&str, Breaker); 4] = [
        ("tolerance", |p| p.tolerance = f64::NAN),
        ("dt", |p| p.dt = 0.0),
        ("dt", |p| p.dt = -1.0 / 30.0),
        ("ball.radius", |p| {
            p.ball = Some(Ball::still(DVec3::new(0.0, 0.5, 0.0), -1.0))
        }),
    ];
    for (name, break_it) in cases {
        let mut w = hanging(5, 0.0, params(1e-3));
        let mut s = SolverKind::Iterative.create();
        w.step(s.as_mut()).unwrap();
        break_it(&mut w.params);
        let (x, v) = (w.cloth.particles.x.clone(), w.cloth.particles.v.clone());
        let err = w.step(s.as_mut()).unwrap_err();
        assert!(
            matches!(&err, SimError::InvalidParameter { name: n, .. } if *n == name),
            "{name}: {err}"
        );
        assert!(w.cloth.particles.x == x && w.cloth.particles.v == v);
        assert_eq!(w.steps, 1);
        assert!(!w.in_step());
    }
}
