//! Criterion benches of the solver kernels at 50×50 and 100×100 on the 004 §4 scene.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
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

fn benches(c: &mut Criterion) {
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
