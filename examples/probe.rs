//! Scratch probe.
use impulse_cloth::sim::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind: SolverKind = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(SolverKind::Iterative);
    let cap: u32 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(0);
    let n: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(10);
    let steps: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(15);
    let dir = if args.get(5).map(|s| s == "cur").unwrap_or(false) { ImpulseDirection::Current } else { ImpulseDirection::Preview };
    let slack: f64 = args.get(6).map(|s| s.parse().unwrap()).unwrap_or(0.0);
    let mut p = SimParams { tolerance: 1e-3, max_iterations: cap, verlet_passes: cap, direction: dir, ..Default::default() };
    p.tolerance = if kind == SolverKind::Sle { 1e-9 } else { 1e-3 };
    let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
    spec.slack = slack;
    let mut w = spec.build(p).unwrap();
    let mut s = kind.create();
    for _ in 0..steps {
        match w.step(s.as_mut()) {
            Ok(st) => println!("step {} it {} strain {:.3e} conv {} resid {:.2e} fb {} vit {} ms {:.3}", st.step, st.position_iterations, st.max_strain, st.converged, st.position_residual, st.fell_back, st.velocity_iterations, st.timings.total().as_secs_f64()*1e3),
            Err(e) => { println!("{e}"); break; }
        }
    }
}
