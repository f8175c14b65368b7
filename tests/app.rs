//! Headless app tests (MinimalPlugins: no window, no GPU): the ECS-driven step equals
//! `src/sim`'s own step bit for bit, a solver switch continues like a fresh solver, and pin / grab
//! requests reach the cloth.
#![cfg(feature = "app")]

use bevy::prelude::*;
use glam::DVec3;
use impulse_cloth::app::{SimPlugin, SimState};
use impulse_cloth::sim::{ScenePreset, SceneSpec, SimParams, SolverKind};

fn scene() -> SceneSpec {
    let mut s = SceneSpec::new(ScenePreset::Hanging, 12, 12);
    s.slack = 0.1;
    s
}

fn params() -> SimParams {
    SimParams {
        dt: 1.0 / 120.0,
        tolerance: 1e-4,
        max_iterations: 50,
        ..SimParams::default()
    }
}

fn app(kind: SolverKind) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(SimState::new(scene(), params(), kind).unwrap())
        .add_plugins(SimPlugin);
    app
}

fn fixed_steps(app: &mut App, n: usize) {
    for _ in 0..n {
        app.world_mut().run_schedule(FixedUpdate);
    }
}

#[test]
fn ecs_step_is_bit_identical_to_sim_step() {
    for kind in SolverKind::ALL {
        let mut app = app(kind);
        fixed_steps(&mut app, 8);
        let mut world = scene().build(params()).unwrap();
        let mut solver = kind.create();
        for _ in 0..8 {
            world.step(solver.as_mut()).unwrap();
        }
        let state = app.world().resource::<SimState>();
        assert_eq!(state.total_steps, 8, "{kind}");
        assert!(
            state.world.cloth.particles.x == world.cloth.particles.x,
            "{kind}: positions differ"
        );
        assert!(
            state.world.cloth.particles.v == world.cloth.particles.v,
            "{kind}: velocities differ"
        );
        assert!(
            world.cloth.particles.x[60].distance(state.initial_x[60]) > 1e-3,
            "{kind}: nothing moved"
        );
    }
}

/// Switching the solver in the app between two steps keeps the cloth where it is, and the
/// steps after the switch are bit for bit those of a fresh solver of the new kind started
/// from that state (no cache or warm start of the old solver leaks into the new one).
#[test]
fn switching_solver_continues_like_a_fresh_solver_from_that_state() {
    for (from, to) in [
        (SolverKind::Iterative, SolverKind::Sle),
        (SolverKind::Newton, SolverKind::Strips),
        (SolverKind::Sle, SolverKind::Newton),
    ] {
        let mut app = app(from);
        fixed_steps(&mut app, 5);
        let mut reference = app.world().resource::<SimState>().world.clone();
        app.world_mut().resource_mut::<SimState>().set_solver(to);
        fixed_steps(&mut app, 4);
        let mut fresh = to.create();
        for _ in 0..4 {
            reference.step(fresh.as_mut()).unwrap();
        }
        let state = app.world().resource::<SimState>();
        assert_eq!(state.kind, to);
        assert_eq!(state.last().unwrap().solver, to, "{from} -> {to}");
        assert_eq!(state.total_steps, 9, "{from} -> {to}");
        assert!(
            state.world.cloth.particles.x == reference.cloth.particles.x
                && state.world.cloth.particles.v == reference.cloth.particles.v,
            "{from} -> {to}: the switched run differs from a fresh {to} solver's"
        );
    }
}

#[test]
fn pause_and_single_step() {
    let mut app = app(SolverKind::Iterative);
    app.world_mut().resource_mut::<SimState>().paused = true;
    fixed_steps(&mut app, 3);
    assert_eq!(app.world().resource::<SimState>().total_steps, 0);
    app.world_mut().resource_mut::<SimState>().step_once = true;
    fixed_steps(&mut app, 3);
    assert_eq!(app.world().resource::<SimState>().total_steps, 1);
}

#[test]
fn pin_and_grab_reach_the_cloth() {
    let mut app = app(SolverKind::Iterative);
    {
        let mut state = app.world_mut().resource_mut::<SimState>();
        state.world.cloth.set_pinned(143, true).unwrap();
        assert_eq!(state.world.cloth.particles.inv_mass()[143], 0.0);
    }
    let pinned_at = app.world().resource::<SimState>().world.cloth.particles.x[143];
    let target = {
        let mut state = app.world_mut().resource_mut::<SimState>();
        let t = state.world.cloth.particles.x[138] + DVec3::new(0.0, 0.1, 0.05);
        state.world.start_grab(138, t).unwrap();
        t
    };
    fixed_steps(&mut app, 3);
    let state = app.world().resource::<SimState>();
    // The hand is 10⁴× the cloth's mass, not static: the cloth's pull moves it by
    // h²·T/M per step, micrometres.
    let miss = state.world.cloth.particles.x[138].distance(target);
    assert!(miss < 1e-4, "grab missed its target by {miss} m");
    assert_eq!(
        state.world.cloth.particles.x[143], pinned_at,
        "pinned particle moved"
    );
}

#[test]
fn rebuild_changes_the_grid_and_rejects_bad_input() {
    let mut app = app(SolverKind::Iterative);
    let mut state = app.world_mut().resource_mut::<SimState>();
    state
        .rebuild(SceneSpec::new(ScenePreset::Curtain, 8, 5))
        .unwrap();
    assert_eq!(state.world.cloth.len(), 40);
    assert!(
        state
            .rebuild(SceneSpec::new(ScenePreset::Curtain, 1, 1))
            .is_err()
    );
    assert_eq!(
        state.world.cloth.len(),
        40,
        "a rejected rebuild keeps the old cloth"
    );
}

#[test]
fn panel_settings_reach_the_next_step() {
    // The panel edits `SimState::world.params` directly; the next fixed step must use them.
    let mut app = app(SolverKind::Iterative);
    fixed_steps(&mut app, 2);
    {
        let mut state = app.world_mut().resource_mut::<SimState>();
        state.world.params.max_iterations = 3;
        state.world.params.tolerance = 1e-9;
        state.world.params.gravity = DVec3::ZERO;
        state.set_solver(SolverKind::Verlet);
        state.world.params.verlet_passes = 7;
    }
    fixed_steps(&mut app, 1);
    let s = *app.world().resource::<SimState>().last().unwrap();
    assert_eq!(s.solver, SolverKind::Verlet);
    assert_eq!(s.position_iterations, 7, "Verlet passes setting ignored");
    {
        let mut state = app.world_mut().resource_mut::<SimState>();
        state.set_solver(SolverKind::Iterative);
    }
    fixed_steps(&mut app, 1);
    let s = *app.world().resource::<SimState>().last().unwrap();
    assert_eq!(s.position_iterations, 3, "iteration cap setting ignored");
    assert!(s.capped, "a 1e-9 tolerance in 3 sweeps must report the cap");
}

#[test]
fn picking_hits_the_particle_under_the_ray() {
    let state = SimState::new(scene(), params(), SolverKind::Iterative).unwrap();
    for i in [13usize, 40, 77, 130] {
        let p = state.world.cloth.particles.x[i].as_vec3();
        let ray = Ray3d::new(p + Vec3::new(0.004, 1.0, -0.003), Dir3::NEG_Y);
        assert_eq!(impulse_cloth::app::input::pick(&state, ray), Some(i));
    }
    let miss = Ray3d::new(Vec3::new(5.0, 5.0, 5.0), Dir3::Y);
    assert_eq!(impulse_cloth::app::input::pick(&state, miss), None);
}

/// Bad launch flags are refused before a window opens (exit 2, a message), so these run
/// without a display: a grid with a single row (nothing to draw or grab), screenshot
/// paths Bevy could only fail to write long after start-up, a tolerance out of range (named
/// by its flag) and a recording into a missing directory.
#[test]
fn bad_launch_flags_fail_before_the_window_opens() {
    let bin = env!("CARGO_BIN_EXE_impulse-cloth");
    let dir = std::env::temp_dir();
    let dir_s = dir.to_str().unwrap();
    for args in [
        vec!["--grid", "40x1"],
        vec!["--grid", "1x40"],
        vec!["--screenshot", "/nonexistent-dir/shot.png"],
        vec!["--screenshot", "shot-without-extension"],
        vec!["--screenshot", dir_s],
        vec!["--tolerance", "1"],
        vec!["--record", "/nonexistent-dir/r.csv"],
    ] {
        let out = std::process::Command::new(bin)
            .args(&args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        if args[0] == "--tolerance" {
            assert!(err.contains("--tolerance 1 "), "{err}");
        }
    }
}
