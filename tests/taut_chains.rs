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

    // Grabbing a particle of the taut edge: it cannot move, so it stays locked with its
    // chain and the hand holds it where it is; the edge keeps its length.
    let at = w.cloth.particles.x[4];
    let target = at + DVec3::new(0.0, 0.02, 0.0);
    w.start_grab(4, target).unwrap();
    let st = w.step(solver.as_mut()).unwrap();
    assert_eq!(st.locked_particles, 8);
    assert!(st.max_strain <= 1e-3 * (1.0 + 1e-9), "{}", st.max_strain);
    assert_eq!(w.cloth.particles.x[4], at);
    assert_eq!(w.grab_goal(), Some(at));
    w.release_grab();
    assert_eq!(w.step(solver.as_mut()).unwrap().locked_particles, 8);
    assert_eq!(w.cloth.particles.inv_mass()[4], 0.0);

    // A pinned corner the hand moves ends no chain: every particle of the edge is free.
    w.start_grab(9, w.cloth.particles.x[9]).unwrap();
    assert_eq!(w.step(solver.as_mut()).unwrap().locked_particles, 0);
    assert_eq!(w.cloth.particles.inv_mass()[1..9], base[1..9]);
    w.release_grab();

    // Unpinning a corner: no chain, every particle of the edge has its mass back and falls.
    w.cloth.set_pinned(9, false).unwrap();
    let y = w.cloth.particles.x[5].y;
    for _ in 0..5 {
        assert_eq!(w.step(solver.as_mut()).unwrap().locked_particles, 0);
    }
    assert_eq!(w.cloth.particles.inv_mass()[1..10], base[1..10]);
    assert!(w.cloth.particles.x[5].y < y - 1e-3);
}

/// A tiny xorshift generator: the fuzzed sessions below replay exactly.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize % n
    }
}

/// Random user sessions on the hanging 12×12 cloth with its taut far edge: every 20 steps
/// a grab (anywhere, or on the far edge), a release, a pin toggled, the hand moved, or a
/// ball thrown. These seeds are sessions that failed before held particles were locked
/// with their chain and chains were left free where a lock would freeze an edge: a step
/// overflowed to NaN (then every later step was refused), or an edge between two static
/// particles sat beyond the tolerance for good. Every step must now succeed and end within
/// the tolerance unless it says its pass was capped.
#[test]
fn fuzzed_user_sessions_on_the_taut_edge_never_fail_or_freeze_a_stretched_edge() {
    use impulse_cloth::sim::{Ball, BallMotion, ScenePreset, SceneSpec};
    let n = 12;
    for seed in [1u64, 2, 3, 21, 30, 34, 37, 40] {
        let mut rng = Rng(seed * 7919 + 13);
        let mut w = SceneSpec::new(ScenePreset::Hanging, n, n)
            .build(params(1e-4))
            .unwrap();
        let mut solver = SolverKind::Newton.create();
        let mut capped = 0;
        for f in 0..400 {
            if f % 20 == 0 {
                let x = w.cloth.particles.x.clone();
                let action = rng.below(6);
                let i = rng.below(n * n);
                let d = DVec3::new(rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5)
                    * 4.0
                    * rng.unit();
                match action {
                    0 => w.start_grab(i, x[i] + d).unwrap(),
                    1 => w.release_grab(),
                    2 => {
                        let pinned = w.cloth.particles.pinned()[i];
                        w.cloth.set_pinned(i, !pinned).unwrap();
                    }
                    3 => {
                        if let Some(g) = w.grab() {
                            w.set_grab_target(x[g.particle] + d);
                        }
                    }
                    4 => {
                        w.params.ball = Some(Ball {
                            center: x[i] + DVec3::Z,
                            radius: 0.12,
                            velocity: DVec3::Z * -6.0,
                            motion: BallMotion::Thrown,
                        })
                    }
                    _ => {
                        let r = rng.below(n);
                        w.start_grab(r, x[r] + d).unwrap();
                    }
                }
            }
            let s = w
                .step(solver.as_mut())
                .unwrap_or_else(|e| panic!("seed {seed}, step {f}: {e}"));
            if s.capped || s.hard_capped {
                capped += 1;
            } else {
                assert!(
                    !s.ended_outside(1e-4),
                    "seed {seed}, step {f}: strain {:.2e} over the tolerance, uncapped",
                    s.max_strain
                );
            }
        }
        assert!(capped < 40, "seed {seed}: {capped} capped steps");
    }
}
