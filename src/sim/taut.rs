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
use super::kernels;

/// Relative shortfall of the distance between a chain's pinned ends below its total rest
/// length up to which the chain counts as taut. Far below any tolerance a solver is given
/// (1e-9 is the tightest, the SLE's default), so a chain is locked only when every
/// configuration but the straight one would stretch it beyond round-off.
pub const TAUT_SLACK: f64 = 1e-12;

/// The particles that lie strictly inside a taut chain of grid row or column segments (on
/// a mesh, of one of its straight paths) between two pinned particles, sorted by index, with the place the world holds each
/// static for the step: on the straight chain, evenly spaced by rest length (the exact
/// solution), or, where that would move an edge to another static particle beyond the
/// tolerance, where the solve left it. `moving_pin` (a pinned particle the hand moves
/// kinematically) ends no chain and a chain through it is not taut; a held particle that
/// is not pinned is an ordinary particle here, locked with its chain when that is taut
/// (the heavy hand can only press such a chain harder, which makes its problem singular
/// up to the hand's inverse mass). A chain is left free, for the solvers, where locking it
/// would freeze an edge beyond `tolerance`: one of its particles has an edge to the moving
/// pin (which would drag it), or an edge longer or shorter than `tolerance` allows to a
/// particle that is static once the chains are locked (no solver could shorten it).
pub fn taut_chain_particles(
    cloth: &Cloth,
    moving_pin: Option<usize>,
    tolerance: f64,
) -> Vec<(usize, DVec3)> {
    let t = &cloth.topology;
    let p = &cloth.particles;
    // The lines a taut chain can lie on, as particles and the rest lengths between them: a
    // grid's rows and columns; a mesh's straight paths ([`Topology::cover`], from its rest
    // shape).
    let mut lines: Vec<(Vec<usize>, Vec<f64>)> = Vec::new();
    match t.grid {
        Some(g) => {
            let (w, h) = (g.width, g.height);
            if w * h != p.len() {
                return Vec::new();
            }
            // Rest length of the edge from particle i to its right (row) and lower
            // (column) neighbour.
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
            for r in 0..h {
                let line: Vec<usize> = (r * w..(r + 1) * w).collect();
                let rest = line.iter().map(|&q| right[q]).collect();
                lines.push((line, rest));
            }
            for c in 0..w {
                let line: Vec<usize> = (c..w * h).step_by(w).collect();
                let rest = line.iter().map(|&q| down[q]).collect();
                lines.push((line, rest));
            }
        }
        None => {
            for path in t.cover.iter().flatten() {
                let (e0, r0) = path[0];
                let mut line = vec![t.edges[e0 as usize][usize::from(r0)] as usize];
                let mut rest = Vec::with_capacity(path.len());
                for &(e, r) in path {
                    line.push(t.edges[e as usize][usize::from(!r)] as usize);
                    rest.push(t.rest[e as usize]);
                }
                lines.push((line, rest));
            }
        }
    }
    // Each chain's particles with their places on the straight chain, evenly spaced by
    // rest length: the exact solution.
    let mut chains: Vec<Vec<(usize, DVec3)>> = Vec::new();
    for (line, rest) in &lines {
        let mut from: Option<usize> = None; // position in `line` of the last pin
        for (k, &i) in line.iter().enumerate() {
            if Some(i) == moving_pin {
                from = None;
                continue;
            }
            if !p.pinned[i] {
                continue;
            }
            if let Some(f) = from
                && k > f + 1
            {
                let lengths = &rest[f..k];
                let total: f64 = lengths.iter().sum();
                let (a, b) = (p.x[line[f]], p.x[i]);
                if total.is_finite() && total > 0.0 && a.distance(b) >= total * (1.0 - TAUT_SLACK) {
                    let mut along = 0.0;
                    let chain = line[f + 1..k].iter().enumerate().map(|(j, &q)| {
                        along += lengths[j];
                        (q, a.lerp(b, along / total))
                    });
                    chains.push(chain.collect());
                }
            }
            from = Some(k);
        }
    }
    // Every candidate counts as static for the edge test (conservative: a chain left free
    // only frees edges). A particle on a row and a column chain takes its row's place.
    let mut at: Vec<Option<DVec3>> = vec![None; p.len()];
    for &(q, place) in chains.iter().flatten().rev() {
        at[q] = Some(place);
    }
    let limit = tolerance * (1.0 + 1e-9);
    // Particles of chains that cannot be locked with the places in `at`.
    let refused = |at: &[Option<DVec3>]| {
        let mut refused = vec![false; p.len()];
        let pos = |i: usize| at[i].unwrap_or(p.x[i]);
        let fixed = |i: usize| at[i].is_some() || p.pinned[i];
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            if at[a].is_none() && at[b].is_none() {
                continue;
            }
            let drags = Some(a) == moving_pin || Some(b) == moving_pin;
            let strain = kernels::strain(pos(a).distance(pos(b)), t.rest[e]);
            // A NaN strain (a collapsed edge) is not within the tolerance either.
            let within = strain <= limit;
            if drags || (fixed(a) && fixed(b) && !within) {
                refused[a] |= at[a].is_some();
                refused[b] |= at[b].is_some();
            }
        }
        refused
    };
    // Straight where that keeps every frozen edge within the tolerance, else where the
    // solve left them, else free.
    let first = refused(&at);
    for c in &chains {
        if c.iter().any(|&(q, _)| first[q]) {
            c.iter().for_each(|&(q, _)| at[q] = Some(p.x[q]));
        }
    }
    let second = refused(&at);
    let mut out: Vec<(usize, DVec3)> = chains
        .iter()
        .filter(|c| c.iter().all(|&(q, _)| !second[q]))
        .flatten()
        .map(|&(q, _)| (q, at[q].expect("a chain's particle has a place")))
        .collect();
    out.sort_by_key(|&(q, _)| q);
    out.dedup_by_key(|&mut (q, _)| q);
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

    const TOL: f64 = 1e-4;

    #[test]
    fn the_paper_scenes_far_edge_is_one_taut_chain() {
        let c = scene(10, PinSpec::Corners, 0.0);
        let chain = taut_chain_particles(&c, None, TOL);
        let ids: Vec<usize> = chain.iter().map(|&(i, _)| i).collect();
        assert_eq!(ids, (1..9).collect::<Vec<_>>());
        // Already straight and evenly spaced: locking moves nothing.
        for &(i, at) in &chain {
            assert!(at.distance(c.particles.x[i]) < 1e-15, "particle {i} moved");
        }
        // A held particle that is not pinned is locked with its chain.
        let mut held = c.clone();
        held.hold(4, 1e-6);
        assert_eq!(taut_chain_particles(&held, None, TOL).len(), 8);
    }

    #[test]
    fn slack_a_moving_pin_or_adjacent_pins_leave_no_chain() {
        let none = |c: &Cloth, pin| taut_chain_particles(c, pin, TOL).is_empty();
        assert!(none(&scene(10, PinSpec::Corners, 0.05), None));
        assert!(none(&scene(10, PinSpec::Corners, 0.0), Some(9)));
        assert!(none(&scene(10, PinSpec::TopEdge, 0.0), None));
        assert!(none(&scene(10, PinSpec::None, 0.0), None));
        // A pin the hand moves next to a chain would drag a static particle.
        let mut c = scene(10, PinSpec::Corners, 0.0);
        c.set_pinned(14, true).unwrap();
        assert_eq!(taut_chain_particles(&c, None, TOL).len(), 8);
        assert!(none(&c, Some(14)));
    }

    #[test]
    fn columns_and_sagging_chains() {
        // Both ends of the left column pinned: its inside is a chain.
        let mut c = scene(6, PinSpec::Indices(vec![0, 30]), 0.0);
        let ids: Vec<usize> = taut_chain_particles(&c, None, TOL)
            .iter()
            .map(|&(i, _)| i)
            .collect();
        assert_eq!(ids, vec![6, 12, 18, 24]);
        // Pull one pin inward by a hair more than round-off: the chain can sag, so it is
        // no longer taut.
        c.particles.x[30].z -= 1e-9;
        assert!(taut_chain_particles(&c, None, TOL).is_empty());
        // Pulled apart (stretched), it is taut, and its particles go to even spacing on
        // the straight line between the pins.
        let l = c.topology.longest_rest();
        c.particles.x[30].z += 2.0 * TOL * l;
        let chain = taut_chain_particles(&c, None, TOL);
        assert_eq!(chain.len(), 4);
        let (a, b) = (c.particles.x[0], c.particles.x[30]);
        for (k, &(_, at)) in chain.iter().enumerate() {
            let want = a.lerp(b, (k + 1) as f64 / 5.0);
            assert!(at.distance(want) < 1e-15);
        }
        // Stretched beyond the tolerance even when evenly spread, locking would freeze
        // stretched edges: it is left to the solvers.
        c.particles.x[30].z += 5.0 * TOL * l;
        assert!(taut_chain_particles(&c, None, TOL).is_empty());
    }

    #[test]
    fn a_chain_is_left_free_where_it_would_freeze_an_edge_to_another_pin() {
        // The far edge, bent within the tolerance by a drag, is taut; a particle of the
        // second row is pinned where the bent edge left it. Snapping the edge straight
        // would stretch that particle's edge to it beyond the tolerance for good, so the
        // edge is locked where it is.
        let mut c = scene(10, PinSpec::Corners, 0.0);
        let l = c.topology.longest_rest();
        let down = (c.particles.x[14] - c.particles.x[4]).normalize() * (3.0 * TOL * l);
        c.particles.x[4] += down;
        c.particles.x[14] += down;
        c.set_pinned(14, true).unwrap();
        let chain = taut_chain_particles(&c, None, TOL);
        assert_eq!(chain.len(), 8);
        assert!(chain.iter().all(|&(i, at)| at == c.particles.x[i]));
        // Where the solve left it is beyond the tolerance too: the edge stays free.
        c.particles.x[14] += down;
        assert!(taut_chain_particles(&c, None, TOL).is_empty());
    }
}
