//! Taut chains ([`impulse_cloth::sim::taut`]): straight rows between two pins held static,
//! and released when their premise goes.

mod common;

use common::*;
use glam::DVec3;
use impulse_cloth::sim::SolverKind;

/// The 004 §4 scene's far edge (row 0 between the pinned corners 0 and n−1).
fn far_edge(w: &impulse_cloth::sim::World, n: usize) -> Vec<DVec3> {
    w.cloth.particles.x[..n].to_vec()
}

#[test]
fn the_taut_far_edge_is_held_static_and_newton_converges_fast() {
    // No slack: the far edge is straight at exactly its rest length, so its only
    // configuration is the straight one and its inside particles are locked (taut chain).
    // With it static the constraint problem is no longer degenerate: Newton converges
    // quadratically instead of linearly, in far fewer steps than with the edge free.
    for tol in [1e-4, 1e-6] {
        let mut w = hanging(20, 0.0, params(tol));
        let edge = far_edge(&w, 20);
        let stats = run(&mut w, SolverKind::Newton, 30);
        for s in &stats {
            assert_eq!(s.locked_particles, 18, "tol {tol}: step {}", s.step);
            assert!(s.converged && !s.fell_back && s.polish_sweeps == 0);
        }
        assert_strain_within(&stats, tol);
        // Locking puts the edge on the straight line through the pins: round-off only.
        let moved = max_distance(&far_edge(&w, 20), &edge);
        assert!(moved < 1e-15, "tol {tol}: the far edge moved by {moved}");
        assert!(w.cloth.particles.v[..20].iter().all(|v| *v == DVec3::ZERO));
        let locked: u32 = stats.iter().map(|s| s.factorizations).sum();

        let mut free = hanging(
            20,
            0.0,
            impulse_cloth::sim::SimParams {
                lock_taut_chains: false,
                ..params(tol)
            },
        );
        let free_stats = run(&mut free, SolverKind::Newton, 30);
        assert!(free_stats.iter().all(|s| s.locked_particles == 0));
        let sag = max_distance(&far_edge(&free, 20), &edge);
        assert!(sag > 1e-6, "tol {tol}: the free edge did not sag ({sag})");
        let unlocked: u32 = free_stats.iter().map(|s| s.factorizations).sum();
        assert!(
            2 * locked < unlocked,
            "tol {tol}: {locked} Newton steps with the edge locked, {unlocked} without"
        );
    }
}

#[test]
fn every_inextensible_solver_holds_the_taut_edge_and_meets_the_tolerance() {
    // Locking is the solvers' common ground: strips and the SLE now converge on the paper
    // scene too (without it strips cap from 40×40 and the SLE stalls).
    for kind in [SolverKind::Strips, SolverKind::Sle, SolverKind::Newton] {
        let mut w = hanging(30, 0.0, params(1e-4));
        let edge = far_edge(&w, 30);
        let stats = run(&mut w, kind, 20);
        assert!(stats.iter().all(|s| s.converged), "{kind}: a step capped");
        assert_strain_within(&stats, 1e-4);
        let moved = max_distance(&far_edge(&w, 30), &edge);
        assert!(moved < 1e-15, "{kind}: the far edge moved by {moved}");
    }
}

#[test]
fn taut_chains_are_released_when_their_premise_goes() {
    let mut w = hanging(10, 0.0, params(1e-3));
    let mut solver = SolverKind::Newton.create();
    let base = w.cloth.particles.base_inv_mass().to_vec();
    assert_eq!(w.step(solver.as_mut()).unwrap().locked_particles, 8);
    assert!(w.cloth.particles.inv_mass()[1..9].iter().all(|&k| k == 0.0));

    // The strain-limit solver lets the edge stretch: nothing is locked for it.
    let mut limit = SolverKind::StrainLimit.create();
    assert_eq!(w.step(limit.as_mut()).unwrap().locked_particles, 0);
    assert_eq!(w.cloth.particles.inv_mass()[1..9], base[1..9]);
    assert_eq!(w.step(solver.as_mut()).unwrap().locked_particles, 8);

    // Grabbing a locked particle frees it and breaks the chain. Lifting it is beyond the
    // taut edge's reach: the hand yields and the edge keeps its length.
    let target = w.cloth.particles.x[4] + DVec3::new(0.0, 0.02, 0.0);
    w.start_grab(4, target).unwrap();
    let st = w.step(solver.as_mut()).unwrap();
    assert_eq!(st.locked_particles, 0);
    assert!(st.max_strain <= 1e-3 * (1.0 + 1e-9), "{}", st.max_strain);
    assert!(w.cloth.particles.x[4].distance(target) > 1e-3);
    assert!(w.cloth.particles.inv_mass()[5] > 0.0);
    w.release_grab();
    assert_eq!(w.cloth.particles.inv_mass()[4], base[4]);

    // Unpinning a corner: no chain, every particle of the edge has its mass back and falls.
    w.cloth.set_pinned(9, false).unwrap();
    let y = w.cloth.particles.x[5].y;
    for _ in 0..5 {
        assert_eq!(w.step(solver.as_mut()).unwrap().locked_particles, 0);
    }
    assert_eq!(w.cloth.particles.inv_mass()[1..10], base[1..10]);
    assert!(w.cloth.particles.x[5].y < y - 1e-3);
}
