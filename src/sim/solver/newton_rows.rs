//! Experiment (removed once recorded in docs/experiments.md): what Newton's system would
//! cost with the self-contact rows inside it. A vertex–triangle or edge–edge row couples
//! four particles, so it adds 3×3 blocks between every two of them: the pattern, the
//! fill-reducing order and the symbolic analysis follow the contact set. Measured on the
//! app's scenes with their drags, at the steps with rows: the symbolic analysis (nested
//! dissection of the cloth, and faer's AMD of the augmented pattern), the numeric
//! factorisation with and without the rows' blocks, against what the step spent.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::config;
use crate::sim::cloth::Cloth;
use crate::sim::contact::SelfRow;
use crate::sim::sparse::dissection;
use crate::sim::sparse::factor::{Factor, SupernodalChoice};
use crate::sim::{DragScript, ScenePreset, SceneSpec, SimParams, SolverKind};

/// Lower-triangle 3×3-block pattern over the dynamic particles: the cloth's edges and, if
/// given, every two particles of each row; diagonally dominant values.
fn pattern(cloth: &Cloth, rows: &[SelfRow]) -> (Vec<u32>, Vec<usize>, Vec<usize>, Vec<f64>) {
    let k = &cloth.particles.inv_mass;
    let mut block = vec![u32::MAX; cloth.len()];
    let mut particle = Vec::new();
    for (p, &kp) in k.iter().enumerate() {
        if kp > 0.0 {
            block[p] = particle.len() as u32;
            particle.push(p as u32);
        }
    }
    let mut pairs = BTreeSet::new();
    let mut add = |a: u32, b: u32| {
        let (ba, bb) = (block[a as usize], block[b as usize]);
        if ba != u32::MAX && bb != u32::MAX && ba != bb {
            pairs.insert((ba.min(bb), ba.max(bb)));
        }
    };
    for &[a, b] in &cloth.topology.edges {
        add(a, b);
    }
    for r in rows {
        for i in 0..4 {
            for j in i + 1..4 {
                add(r.p[i], r.p[j]);
            }
        }
    }
    let nb = particle.len();
    let mut upper = vec![Vec::new(); nb];
    for &(lo, hi) in &pairs {
        upper[lo as usize].push(hi);
    }
    let (mut col_ptr, mut row_idx, mut values) = (vec![0], Vec::new(), Vec::new());
    for (lo, list) in upper.iter().enumerate() {
        for c in 0..3 {
            let j = 3 * lo + c;
            for r in j..3 * lo + 3 {
                row_idx.push(r);
                values.push(if r == j { 1000.0 } else { 0.1 });
            }
            for &hi in list {
                for r in 3 * hi as usize..3 * hi as usize + 3 {
                    row_idx.push(r);
                    values.push(-0.5);
                }
            }
            col_ptr.push(row_idx.len());
        }
    }
    (particle, col_ptr, row_idx, values)
}

struct Cost {
    order_ms: f64,
    symbolic_ms: f64,
    numeric_ms: f64,
}

fn cost(cloth: &Cloth, rows: &[SelfRow], nested: bool, choice: SupernodalChoice) -> Option<Cost> {
    let (particle, col_ptr, row_idx, values) = pattern(cloth, rows);
    let n = 3 * particle.len();
    let t = Instant::now();
    let order = if nested {
        Some(dissection::particles_order(
            &cloth.topology,
            cloth.len(),
            &particle,
            3,
        )?)
    } else {
        None
    };
    let order_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut f = Factor::symbolic(n, &col_ptr, &row_idx, choice, order)?;
    let symbolic_ms = t.elapsed().as_secs_f64() * 1e3;
    let reps = 5;
    let t = Instant::now();
    for _ in 0..reps {
        f.numeric(&values).ok()?;
    }
    let numeric_ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
    Some(Cost {
        order_ms,
        symbolic_ms,
        numeric_ms,
    })
}

#[test]
#[ignore = "an experiment's measurement: cargo test --release --lib newton_rows -- --ignored --nocapture"]
fn newton_with_self_rows_in_its_system() {
    let cases = [
        (ScenePreset::Drape, 30, 90),
        (ScenePreset::Pile, 30, 75),
        (ScenePreset::Fold, 30, 150),
        (ScenePreset::Drape, 50, 60),
        (ScenePreset::Pile, 50, 60),
    ];
    println!(
        "scene n frame rows | step ms self ms newton steps facts contact-rounds polish | cloth: num | rows ND: sym num | rows AMD: order+sym num"
    );
    for (scene, n, frames) in cases {
        let s = config::step_settings(SolverKind::Newton);
        let params = SimParams {
            dt: config::FRAME / s.substeps as f64,
            tolerance: config::TOLERANCE,
            self_collision: true,
            ..SimParams::default()
        };
        let mut spec = SceneSpec::new(scene, n, n);
        spec.slack = config::slack(scene);
        let mut world = spec.build(params).unwrap();
        let drags = scene.script(&world).into_iter().collect();
        let mut script = DragScript::new(drags, world.cloth.len()).unwrap();
        let mut solver = SolverKind::Newton.create();
        for f in 0..frames {
            script.before_step(&mut world).unwrap();
            let st = world.step(solver.as_mut()).unwrap();
            if f % 15 != 14 || world.self_contact().rows.is_empty() {
                continue;
            }
            let rows = world.self_contact().rows.clone();
            let base = cost(&world.cloth, &[], true, SupernodalChoice::Supernodal).unwrap();
            let nd = cost(&world.cloth, &rows, true, SupernodalChoice::Supernodal);
            let amd = cost(&world.cloth, &rows, false, SupernodalChoice::Supernodal);
            let show = |c: &Option<Cost>| match c {
                Some(c) => format!("{:.2} {:.2}", c.order_ms + c.symbolic_ms, c.numeric_ms),
                None => "failed".into(),
            };
            println!(
                "{scene} {n} {f} {} | {:.1} {:.1} {} {} {} {} | {:.2} | {} | {}",
                rows.len(),
                st.timings.total().as_secs_f64() * 1e3,
                st.self_contact_time.as_secs_f64() * 1e3,
                st.position_iterations,
                st.factorizations,
                st.contact_rounds,
                st.polish_sweeps,
                base.numeric_ms,
                show(&nd),
                show(&amd),
            );
        }
    }
}

#[test]
#[ignore = "a diagnostic: cargo test --release --lib pile_newton_steps -- --ignored --nocapture"]
fn pile_newton_steps() {
    let n: usize = std::env::var("IC_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let sc = config::step_settings(SolverKind::Newton);
    let params = SimParams {
        dt: config::FRAME / sc.substeps as f64,
        tolerance: config::TOLERANCE,
        self_collision: true,
        ..SimParams::default()
    };
    let scene = match std::env::var("IC_SCENE").as_deref() {
        Ok("drape") => ScenePreset::Drape,
        Ok("fold") => ScenePreset::Fold,
        _ => ScenePreset::Pile,
    };
    let frames: usize = std::env::var("IC_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(70);
    let mut spec = SceneSpec::new(scene, n, n);
    spec.slack = config::slack(scene);
    let mut world = spec.build(params).unwrap();
    let drags = scene.script(&world).into_iter().collect();
    let mut script = DragScript::new(drags, world.cloth.len()).unwrap();
    let mut solver = SolverKind::Newton.create();
    for f in 0..frames {
        script.before_step(&mut world).unwrap();
        let st = world.step(solver.as_mut()).unwrap();
        println!(
            "{f} ms {:.1} coll {:.1} pos {:.1} vel {:.1} self {:.1} newton {} facts {} capped {} conv {} fell {} strain {:.2e} rounds {} polish {} rows {} zones {} constrained {}",
            st.timings.total().as_secs_f64() * 1e3,
            st.timings.collision.as_secs_f64() * 1e3,
            st.timings.position.as_secs_f64() * 1e3,
            st.timings.velocity.as_secs_f64() * 1e3,
            st.self_contact_time.as_secs_f64() * 1e3,
            st.position_iterations,
            st.factorizations,
            st.capped,
            st.converged,
            st.fell_back,
            st.max_strain,
            st.contact_rounds,
            st.polish_sweeps,
            st.self_contacts,
            st.impact_zones,
            st.constrained_particles,
        );
    }
}
