//! Criterion benches of the solver kernels at 50×50 and 100×100 on the 004 §4 scene.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use glam::DVec3;
use impulse_cloth::sim::contact::narrow::{self, PairKind, Swept};
use impulse_cloth::sim::solver::iterative::{self, Scratch};
use impulse_cloth::sim::solver::{FillOrdering, SleSolver};
use impulse_cloth::sim::{ScenePreset, SceneSpec, SimParams, SolverKind, World};

fn world(n: usize, tol: f64) -> World {
    let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
    spec.slack = 0.1;
    let mut w = spec
        .build(SimParams {
            tolerance: tol,
            ..SimParams::default()
        })
        .unwrap();
    let mut s = SolverKind::Iterative.create();
    for _ in 0..5 {
        w.step(s.as_mut()).unwrap();
    }
    w
}

/// Pairs of a layer falling a step onto one just below it, each moving a few spacings with
/// some shear: the continuous tests of the rows' detection and the fail-safe's rounds on
/// settled layers (seeded, the same pairs every run).
fn swept_pairs(count: usize) -> Vec<Swept> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut jitter = |r: f64| {
        DVec3::new(
            rng.random_range(-r..r),
            rng.random_range(-r..r),
            rng.random_range(-r..r),
        )
    };
    (0..count)
        .map(|_| {
            // Spacing 0.03 m, layers 1 mm apart, the upper moving down by up to 2 mm and
            // sideways by up to a spacing.
            let x0 = [
                DVec3::new(0.01, 0.001, 0.01) + jitter(0.01),
                DVec3::new(0.0, 0.0, 0.0) + jitter(0.0005),
                DVec3::new(0.03, 0.0, 0.0) + jitter(0.0005),
                DVec3::new(0.0, 0.0, 0.03) + jitter(0.0005),
            ];
            let drop = DVec3::new(0.0, -0.002, 0.0);
            let x1 = [
                x0[0] + drop + jitter(0.03),
                x0[1] + jitter(0.001),
                x0[2] + jitter(0.001),
                x0[3] + jitter(0.001),
            ];
            Swept { x0, x1 }
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let pairs = swept_pairs(1000);
    for kind in [PairKind::VertexTriangle, PairKind::EdgeEdge] {
        let name = match kind {
            PairKind::VertexTriangle => "vertex_triangle",
            PairKind::EdgeEdge => "edge_edge",
        };
        c.bench_function(&format!("continuous_test_{name}_1000_pairs"), |b| {
            let mut roots = Vec::new();
            b.iter(|| {
                pairs
                    .iter()
                    .filter(|s| narrow::first_contact(kind, s, 1e-7, &mut roots).is_some())
                    .count()
            })
        });
    }
    for n in [50, 100] {
        let w = world(n, 1e-6);
        let accel = vec![w.params.gravity; w.cloth.len()];
        c.bench_function(&format!("gauss_seidel_sweep_{n}x{n}"), |b| {
            let mut cloth = w.cloth.clone();
            let mut scratch = Scratch::default();
            b.iter(|| {
                iterative::position_pass(&mut cloth, &w.params, &accel, None, 1, &mut scratch)
            })
        });
        {
            let mut sle = SleSolver::default();
            let rows = sle.kernel_prepare(&w.cloth, &accel, w.params.dt);
            assert!(rows > 0);
            c.bench_function(&format!("sle_assemble_{n}x{n}"), |b| {
                b.iter(|| sle.kernel_assemble(&w.cloth))
            });
            sle.kernel_assemble(&w.cloth);
            c.bench_function(&format!("sle_numeric_factorisation_{n}x{n}"), |b| {
                b.iter(|| assert!(sle.kernel_factorize()))
            });
            c.bench_function(&format!("sle_solve_{n}x{n}"), |b| {
                b.iter(|| sle.kernel_solve())
            });
            // The same matrix in faer's AMD order instead of nested dissection.
            let mut amd = SleSolver::default();
            amd.ordering = FillOrdering::Amd;
            amd.kernel_prepare(&w.cloth, &accel, w.params.dt);
            amd.kernel_assemble(&w.cloth);
            c.bench_function(&format!("sle_numeric_factorisation_amd_{n}x{n}"), |b| {
                b.iter(|| assert!(amd.kernel_factorize()))
            });
        }
        {
            let mut sl = impulse_cloth::sim::solver::StrainLimitSolver::default();
            c.bench_function(&format!("strain_limit_symbolic_{n}x{n}"), |b| {
                b.iter(|| sl.kernel_symbolic(&w.cloth))
            });
        }
        for kind in [
            SolverKind::Sle,
            SolverKind::Verlet,
            SolverKind::StrainLimit,
            SolverKind::Newton,
        ] {
            c.bench_function(&format!("{kind}_step_{n}x{n}"), |b| {
                let mut p = w.params.clone();
                p.max_iterations = 1;
                p.sle_max_solves = 1;
                p.newton_max_steps = 1;
                p.verlet_passes = 1;
                p.strain_limits.passes = 1;
                let mut ww = w.clone();
                ww.set_params(p).unwrap();
                let mut s = kind.create();
                b.iter(|| {
                    let mut w2 = ww.clone();
                    w2.step(s.as_mut()).unwrap()
                })
            });
        }
    }
}

criterion_group! {
    name = kernels;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(kernels);
