//! Scratch probe 2.
use impulse_cloth::sim::*;
fn main() {
    for n in [10usize, 15, 20] {
        for budget in [5u32, 10, 20, 40] {
            let mut out = vec![];
            for kind in [SolverKind::Iterative, SolverKind::Verlet] {
                let p = SimParams { tolerance: 1e-6, max_iterations: budget, verlet_passes: budget, ..Default::default() };
                let mut w = SceneSpec::new(ScenePreset::Hanging, n, n).build(p).unwrap();
                let mut s = kind.create();
                let mut worst = 0.0f64;
                for _ in 0..60 { let st = w.step(s.as_mut()).unwrap(); worst = worst.max(st.max_strain); }
                out.push(worst);
            }
            println!("n {n} budget {budget}: iterative {:.4} verlet {:.4}", out[0], out[1]);
        }
    }
}
