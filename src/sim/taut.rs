//! Taut chains: straight runs of structural constraints pulled to exactly their rest length
//! between two pinned particles.
//!
//! Such a chain has exactly one configuration that meets its constraints: the straight,
//! evenly spaced one. Every particle on it is therefore as static as the pins at its ends,
//! and the exact solution of 004's preview problem (§3.2, tolerance → 0) leaves them where
//! they are, whatever loads the rest of the cloth puts on them. The 004 §4 scene has one:
//! the far edge, held between its two pinned corners at exactly its rest length.
//!
//! Solved as ordinary particles, such a chain makes the constraint problem degenerate: its
//! constraint gradients are all parallel to it, so no finite impulse along them can hold
//! a load across it (LICQ fails). A tolerance ε lets it sag by ≈ L·√(3ε/8) and carry the
//! load with a tension of order 1/√ε; Gauss–Seidel needs 10⁴–10⁵ sweeps per step to get
//! there at ε ≤ 1e-3, and Newton's method converges only linearly on it (README,
//! Numerics). Treating the chain's particles as static for the step — what they are in the
//! exact solution — removes the degeneracy.

use glam::DVec3;

use super::cloth::Cloth;

/// Relative shortfall of the distance between a chain's pinned ends below its total rest
/// length up to which the chain counts as taut. Far below any tolerance a solver is given
/// (1e-9 is the tightest, the SLE's default), so a chain is locked only when every
/// configuration but the straight one would stretch it beyond round-off.
pub const TAUT_SLACK: f64 = 1e-12;

/// The particles that lie strictly inside a taut chain of grid row or column segments
/// between two pinned particles, with the position each has on the straight chain
/// (evenly spaced by rest length). `exclude` (a held particle) is never part of a chain,
/// and a chain through it is not taut. Sorted by particle index.
pub fn taut_chain_particles(cloth: &Cloth, exclude: Option<usize>) -> Vec<(usize, DVec3)> {
    let t = &cloth.topology;
    let (w, h) = (t.width, t.height);
    let p = &cloth.particles;
    if w * h != p.len() {
        return Vec::new();
    }
    // Rest length of the edge from particle i to its right (row) and lower (column)
    // neighbour.
    let mut right = vec![f64::NAN; w * h];
    let mut down = vec![f64::NAN; w * h];
    for (e, &[a, b]) in t.edges.iter().enumerate() {
        let (a, b) = (a.min(b) as usize, a.max(b) as usize);
        if b == a + 1 && a / w == b / w {
            right[a] = t.rest[e];
        } else if b == a + w {
            down[a] = t.rest[e];
        }
    }
    let mut out = Vec::new();
    let mut scan = |line: &mut dyn Iterator<Item = usize>, rest: &[f64]| {
        let line: Vec<usize> = line.collect();
        let mut from: Option<usize> = None; // position in `line` of the last pin
        for (k, &i) in line.iter().enumerate() {
            if Some(i) == exclude {
                from = None;
                continue;
            }
            if !p.pinned[i] {
                continue;
            }
            if let Some(f) = from
                && k > f + 1
            {
                let lengths: Vec<f64> = line[f..k].iter().map(|&q| rest[q]).collect();
                let total: f64 = lengths.iter().sum();
                let (a, b) = (p.x[line[f]], p.x[i]);
                if total.is_finite() && total > 0.0 && a.distance(b) >= total * (1.0 - TAUT_SLACK) {
                    let mut along = 0.0;
                    for (j, &q) in line[f + 1..k].iter().enumerate() {
                        along += lengths[j];
                        out.push((q, a.lerp(b, along / total)));
                    }
                }
            }
            from = Some(k);
        }
    };
    for r in 0..h {
        scan(&mut (r * w..(r + 1) * w), &right);
    }
    for c in 0..w {
        scan(&mut (c..w * h).step_by(w), &down);
    }
    out.sort_by_key(|&(i, _)| i);
    out.dedup_by_key(|&mut (i, _)| i);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{PinSpec, ScenePreset, SceneSpec, SimParams};

    fn scene(n: usize, pins: PinSpec, slack: f64) -> Cloth {
        let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
        spec.pins = pins;
        spec.slack = slack;
        spec.build(SimParams::default()).unwrap().cloth
    }

    #[test]
    fn the_paper_scenes_far_edge_is_one_taut_chain() {
        let c = scene(10, PinSpec::Corners, 0.0);
        let chain = taut_chain_particles(&c, None);
        let ids: Vec<usize> = chain.iter().map(|&(i, _)| i).collect();
        assert_eq!(ids, (1..9).collect::<Vec<_>>());
        // Already straight and evenly spaced: locking moves nothing.
        for &(i, at) in &chain {
            assert!(at.distance(c.particles.x[i]) < 1e-15, "particle {i} moved");
        }
    }

    #[test]
    fn slack_a_held_particle_or_adjacent_pins_leave_no_chain() {
        assert!(taut_chain_particles(&scene(10, PinSpec::Corners, 0.05), None).is_empty());
        assert!(taut_chain_particles(&scene(10, PinSpec::Corners, 0.0), Some(4)).is_empty());
        assert!(taut_chain_particles(&scene(10, PinSpec::TopEdge, 0.0), None).is_empty());
        assert!(taut_chain_particles(&scene(10, PinSpec::None, 0.0), None).is_empty());
    }

    #[test]
    fn columns_and_sagging_chains() {
        // Both ends of the left column pinned: its inside is a chain.
        let mut c = scene(6, PinSpec::Indices(vec![0, 30]), 0.0);
        let ids: Vec<usize> = taut_chain_particles(&c, None)
            .iter()
            .map(|&(i, _)| i)
            .collect();
        assert_eq!(ids, vec![6, 12, 18, 24]);
        // Pull one pin inward by a hair more than round-off: the chain can sag, so it is
        // no longer taut.
        c.particles.x[30].z -= 1e-9;
        assert!(taut_chain_particles(&c, None).is_empty());
        // Pulled apart (stretched), it is taut, and its particles go to even spacing on
        // the straight line between the pins.
        c.particles.x[30].z += 2e-6;
        let chain = taut_chain_particles(&c, None);
        assert_eq!(chain.len(), 4);
        let (a, b) = (c.particles.x[0], c.particles.x[30]);
        for (k, &(_, at)) in chain.iter().enumerate() {
            let want = a.lerp(b, (k + 1) as f64 / 5.0);
            assert!(at.distance(want) < 1e-15);
        }
    }
}
