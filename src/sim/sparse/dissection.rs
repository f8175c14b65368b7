//! Geometric nested dissection for the grid-shaped matrices the direct solvers factorise.
//!
//! Every unknown of the SLE (a structural constraint) and of the Newton solver (a particle
//! coordinate) sits at a known place on the cloth's grid, and couples only to unknowns
//! next to it. Cutting the grid along a line of unknowns that touches both halves splits
//! the matrix into two independent blocks plus a separator; numbering each half first
//! (recursively) and the separator last keeps the Cholesky factor's fill at O(n log n) and
//! its work at O(n^1.5) for an n-unknown 2D grid — the optimal order for such problems
//! (George's nested dissection). AMD, the generic choice, finds a good order too but
//! without the geometry; which one factorises faster is measured (README, Numerics).
//!
//! Places are given in integer lattice coordinates; [`Lines`] says which lattice lines may
//! separate (see [`Place`]).

use crate::sim::cloth::Topology;

/// Where an unknown sits: (row, column) on a lattice.
///
/// For particles (Newton) the lattice is the particle grid and any row or column is a
/// separator (a particle couples only to its four grid neighbours). For constraints (SLE)
/// the lattice is the doubled grid — a horizontal edge between (r, c) and (r, c+1) sits at
/// (2r, 2c+1), a vertical one between (r, c) and (r+1, c) at (2r+1, c·2) — and a separator
/// must be an odd line: the edges crossing between two particle columns (rows) share no
/// particle with anything on either side of them, while an even line would leave the two
/// horizontal edges at a particle on opposite sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Row on the lattice.
    pub row: i64,
    /// Column on the lattice.
    pub col: i64,
}

/// Which lattice lines may separate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Every line (particles).
    All,
    /// Odd lines only (constraints on the doubled grid).
    Odd,
}

/// Blocks at most this large are not split further: their order does not matter much and
/// the supernodal kernel factorises them as dense blocks.
const LEAF: usize = 48;

/// A nested-dissection order: `old_of_new[k]` is the unknown numbered k-th. Unknowns at
/// the same place stay together (a particle's three coordinates).
pub fn order(places: &[Place], lines: Lines) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..places.len()).collect();
    let mut out = Vec::with_capacity(places.len());
    dissect(places, lines, &mut idx, &mut out);
    out
}

fn dissect(places: &[Place], lines: Lines, idx: &mut [usize], out: &mut Vec<usize>) {
    if idx.len() <= LEAF {
        idx.sort_unstable_by_key(|&i| (places[i].row, places[i].col, i));
        out.extend_from_slice(idx);
        return;
    }
    let (mut r0, mut r1, mut c0, mut c1) = (i64::MAX, i64::MIN, i64::MAX, i64::MIN);
    for &i in idx.iter() {
        let p = places[i];
        r0 = r0.min(p.row);
        r1 = r1.max(p.row);
        c0 = c0.min(p.col);
        c1 = c1.max(p.col);
    }
    // Cut across the longer side, at the median place along it.
    let by_row = r1 - r0 >= c1 - c0;
    let key = |i: usize| if by_row { places[i].row } else { places[i].col };
    idx.sort_unstable_by_key(|&i| (key(i), i));
    let mut cut = key(idx[idx.len() / 2]);
    let (lo, hi) = if by_row { (r0, r1) } else { (c0, c1) };
    if lines == Lines::Odd && cut.rem_euclid(2) == 0 {
        cut += 1;
    }
    if cut <= lo || cut >= hi {
        // Nothing to cut (a thin strip): keep the order along it.
        out.extend_from_slice(idx);
        return;
    }
    let left_end = idx.partition_point(|&i| key(i) < cut);
    let sep_end = idx.partition_point(|&i| key(i) <= cut);
    let (left, rest) = idx.split_at_mut(left_end);
    let (sep, right) = rest.split_at_mut(sep_end - left_end);
    dissect(places, lines, left, out);
    dissect(places, lines, right, out);
    sep.sort_unstable_by_key(|&i| (places[i].row, places[i].col, i));
    out.extend_from_slice(sep);
}

/// Particles per row if the topology is a W×H grid of `n_particles`, else `None`.
fn grid_width(t: &Topology, n_particles: usize) -> Option<usize> {
    let g = t.grid?;
    (g.width > 0 && g.width * g.height == n_particles).then_some(g.width)
}

/// Place of particle `p` on the particle grid of width `w` (row-major).
fn particle_place(p: usize, w: usize) -> Place {
    Place {
        row: (p / w) as i64,
        col: (p % w) as i64,
    }
}

/// Places of the constraints `rows` (edge indices) of a grid cloth on the doubled grid —
/// the sum of their two particles' places — or `None` if the topology is not a W×H grid.
fn edge_places(t: &Topology, n_particles: usize, rows: &[u32]) -> Option<Vec<Place>> {
    let w = grid_width(t, n_particles)?;
    Some(
        rows.iter()
            .map(|&e| {
                let [a, b] = t.edges[e as usize].map(|p| particle_place(p as usize, w));
                Place {
                    row: a.row + b.row,
                    col: a.col + b.col,
                }
            })
            .collect(),
    )
}

/// Which fill-reducing order the direct solvers give faer's sparse Cholesky.
///
/// Measured (50×50 / 100×100 paper scene, SLE numeric factorisation, README Numerics):
/// nested dissection factorises about a third faster than AMD on the constraint-space
/// matrix and the same on Newton's 3×3-block particle matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FillOrdering {
    /// Geometric nested dissection on a grid cloth, AMD otherwise.
    #[default]
    Auto,
    /// Always faer's AMD.
    Amd,
}

/// Nested-dissection order of the constraint-space matrix whose unknowns are the edges
/// `rows`; `None` (use AMD) if the cloth is not a grid or AMD was asked for.
pub fn edges_order(
    t: &Topology,
    n_particles: usize,
    rows: &[u32],
    ordering: FillOrdering,
) -> Option<Vec<usize>> {
    if ordering == FillOrdering::Amd {
        return None;
    }
    edge_places(t, n_particles, rows).map(|p| order(&p, Lines::Odd))
}

/// Nested-dissection order of a particle-space matrix with `per` unknowns for each
/// particle of `particles` (unknown per·k + c belongs to particles[k]); `None` (use AMD)
/// if the cloth is not a grid.
pub fn particles_order(
    t: &Topology,
    n_particles: usize,
    particles: &[u32],
    per: usize,
) -> Option<Vec<usize>> {
    let w = grid_width(t, n_particles)?;
    let places: Vec<Place> = particles
        .iter()
        .flat_map(|&p| std::iter::repeat_n(particle_place(p as usize, w), per))
        .collect();
    Some(order(&places, Lines::All))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::cloth::{Cloth, GridSpec};

    fn grid(w: i64, h: i64) -> Vec<Place> {
        (0..h)
            .flat_map(|row| (0..w).map(move |col| Place { row, col }))
            .collect()
    }

    #[test]
    fn is_a_permutation() {
        for (w, h) in [(1, 1), (1, 200), (13, 7), (50, 50)] {
            let mut o = order(&grid(w, h), Lines::All);
            o.sort_unstable();
            assert_eq!(o, (0..(w * h) as usize).collect::<Vec<_>>());
        }
    }

    /// No unknown numbered before the last separator couples across it: the two halves'
    /// grid neighbours are never on the other side.
    #[test]
    fn top_separator_splits_the_grid() {
        let places = grid(20, 20);
        let o = order(&places, Lines::All);
        // The last 20 unknowns are the first cut: one full line.
        let sep: Vec<Place> = o[o.len() - 20..].iter().map(|&i| places[i]).collect();
        let line = sep[0];
        assert!(
            sep.iter().all(|p| p.row == line.row) || sep.iter().all(|p| p.col == line.col),
            "{sep:?}"
        );
    }

    /// The first cut of the constraint-space order is a line of edges that leaves the two
    /// sides sharing no particle — what makes them independent blocks of A — for grids
    /// cut across either side.
    #[test]
    fn constraint_separator_leaves_the_sides_sharing_no_particle() {
        for (w, h) in [
            (12, 9),
            (9, 12),
            (30, 30),
            (10, 10),
            (11, 9),
            (13, 13),
            (20, 7),
            (7, 20),
            (16, 16),
        ] {
            let cloth = Cloth::grid(&GridSpec {
                width: w,
                height: h,
                ..Default::default()
            })
            .expect("valid grid");
            let t = &cloth.topology;
            let e = &t.edges;
            let rows: Vec<u32> = (0..e.len() as u32).collect();
            let places = edge_places(t, cloth.len(), &rows).expect("a grid");
            let o = order(&places, Lines::Odd);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..e.len()).collect::<Vec<_>>());
            // The last unknown belongs to the first separator; find its line.
            let last = places[*o.last().unwrap()];
            let suffix = |same: &dyn Fn(Place) -> bool| {
                o.iter().rev().take_while(|&&i| same(places[i])).count()
            };
            let along_row = suffix(&|p| p.row == last.row);
            let along_col = suffix(&|p| p.col == last.col);
            let (by_row, cut) = if along_row >= along_col {
                (true, last.row)
            } else {
                (false, last.col)
            };
            assert!(along_row.max(along_col) > 1, "{w}x{h}: no separator line");
            assert_eq!(cut % 2, 1, "{w}x{h}: the cut must be an odd line");
            let key = |i: usize| if by_row { places[i].row } else { places[i].col };
            let touched = |side: &dyn Fn(i64) -> bool| {
                let mut p = vec![false; w * h];
                for (i, &[a, b]) in e.iter().enumerate() {
                    if side(key(i)) {
                        p[a as usize] = true;
                        p[b as usize] = true;
                    }
                }
                p
            };
            let left = touched(&|k| k < cut);
            let right = touched(&|k| k > cut);
            assert!(left.iter().any(|&x| x) && right.iter().any(|&x| x));
            assert!(
                !left.iter().zip(&right).any(|(&l, &r)| l && r),
                "{w}x{h}: the two sides of the cut share a particle"
            );
        }
    }
}
