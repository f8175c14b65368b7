//! Straight continuations through a vertex, and the acyclic strips they make.
//!
//! On a grid a constraint continues straight through a particle into the next one of its
//! row or column; that pairing gives the grid its bend springs (i, i±2) and its strips
//! (002: rows and columns, each an acyclic chain). On a mesh the same pairing is made from
//! the rest shape: at every particle, the incident constraints are paired greedily by how
//! nearly opposite they point, as long as they turn by less than [`MAX_TURN`]. Following
//! the pairs from constraint to constraint covers the mesh with paths — 002's strips "of
//! constraints … acyclic" — cut where a path would close a cycle (a ring around a disc,
//! a tube's circumference) or meet itself.

use glam::DVec3;

/// Largest turn (rad) between a constraint and the one it continues into: 60°, so the
/// paths follow a mesh's lines (a quad mesh's rows, a polar mesh's rings of up to six
/// segments and its spokes) without zig-zagging across it.
pub const MAX_TURN: f64 = std::f64::consts::FRAC_PI_3;

/// At every particle, pairs of incident edges (indices into `edges`) that continue each
/// other: `(particle, e1, e2)` with e1 < e2, each edge in at most one pair per particle.
/// Deterministic: the pairs depend on positions and edge order only.
pub fn continuations(x: &[DVec3], edges: &[[u32; 2]]) -> Vec<(u32, u32, u32)> {
    let n = x.len();
    let mut incident: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (e, &[a, b]) in edges.iter().enumerate() {
        incident[a as usize].push(e as u32);
        incident[b as usize].push(e as u32);
    }
    // −cos of the angle between the two directions from the particle: 1 straight on.
    let min_straight = MAX_TURN.cos();
    let mut out = Vec::new();
    let mut cands: Vec<(f64, u32, u32)> = Vec::new();
    let mut taken: Vec<u32> = Vec::new();
    for (v, inc) in incident.iter().enumerate() {
        if inc.len() < 2 {
            continue;
        }
        let dir = |e: u32| {
            let [a, b] = edges[e as usize];
            let other = if a as usize == v { b } else { a };
            (x[other as usize] - x[v]).normalize_or_zero()
        };
        cands.clear();
        for (i, &e1) in inc.iter().enumerate() {
            for &e2 in &inc[i + 1..] {
                let straight = -dir(e1).dot(dir(e2));
                if straight >= min_straight {
                    cands.push((straight, e1.min(e2), e1.max(e2)));
                }
            }
        }
        cands.sort_by(|p, q| q.0.total_cmp(&p.0).then((p.1, p.2).cmp(&(q.1, q.2))));
        taken.clear();
        for &(_, e1, e2) in &cands {
            if !taken.contains(&e1) && !taken.contains(&e2) {
                taken.push(e1);
                taken.push(e2);
                out.push((v as u32, e1, e2));
            }
        }
    }
    out
}

/// An acyclic path of constraints: `(edge, reversed)` in order, where the link runs from
/// `edges[edge][0]` to `edges[edge][1]` (or the other way when `reversed`), and each link
/// ends where the next begins. No particle appears twice.
pub type Path = Vec<(u32, bool)>;

/// Cover `edges` with acyclic paths along the straight continuations (every edge in
/// exactly one path), grouped into families whose paths share no particle — so a
/// family's paths can be solved at the same time (002's block Gauss–Seidel). Longer paths
/// first, each into the first family it fits. Deterministic.
pub fn strip_cover(x: &[DVec3], edges: &[[u32; 2]]) -> Vec<Vec<Path>> {
    strip_cover_along(x.len(), edges, &continuations(x, edges))
}

/// [`strip_cover`] of the `n` particles' `edges` along continuations already found
/// ([`continuations`]: the mesh builder's bend springs come from the same ones).
pub fn strip_cover_along(
    n: usize,
    edges: &[[u32; 2]],
    continued: &[(u32, u32, u32)],
) -> Vec<Vec<Path>> {
    // next[e][k]: the edge that continues e through its end k (0: edges[e][0], 1: [1]).
    let mut next = vec![[u32::MAX; 2]; edges.len()];
    for &(v, e1, e2) in continued {
        for (e, f) in [(e1, e2), (e2, e1)] {
            let k = usize::from(edges[e as usize][0] != v);
            next[e as usize][k] = f;
        }
    }
    let end_at = |e: u32, v: u32| usize::from(edges[e as usize][0] != v);
    let other = |e: u32, v: u32| {
        let [a, b] = edges[e as usize];
        if a == v { b } else { a }
    };
    let mut used = vec![false; edges.len()];
    let mut stamp = vec![u32::MAX; n];
    let mut paths: Vec<Path> = Vec::new();
    let mut e0 = 0u32;
    while (e0 as usize) < edges.len() {
        if used[e0 as usize] {
            e0 += 1;
            continue;
        }
        // Walk back to where the path begins: the first edge with no unused predecessor,
        // or e0 itself when the continuations close a cycle (the cycle is cut before e0;
        // what the cut leaves, the next turns of this loop pick up).
        let (mut cur, mut from) = (e0, edges[e0 as usize][0]);
        for _ in 0..edges.len() {
            let prev = next[cur as usize][end_at(cur, from)];
            if prev == e0 {
                (cur, from) = (e0, edges[e0 as usize][0]);
                break;
            }
            if prev == u32::MAX || used[prev as usize] {
                break;
            }
            from = other(prev, from);
            cur = prev;
        }
        // Walk forward from there, stopping before a particle already on the path.
        let id = paths.len() as u32;
        let mut path = Vec::new();
        stamp[from as usize] = id;
        loop {
            let to = other(cur, from);
            if stamp[to as usize] == id {
                break;
            }
            stamp[to as usize] = id;
            used[cur as usize] = true;
            path.push((cur, edges[cur as usize][0] != from));
            let nxt = next[cur as usize][end_at(cur, to)];
            if nxt == u32::MAX || used[nxt as usize] {
                break;
            }
            from = to;
            cur = nxt;
        }
        if path.is_empty() {
            // Only a loop edge could end here; validation refuses those.
            used[cur as usize] = true;
            continue;
        }
        paths.push(path);
    }
    // Families: longest paths first, each into the first family with none of its particles.
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(paths[i].len()), i));
    let mut families: Vec<Vec<Path>> = Vec::new();
    let mut members: Vec<Vec<bool>> = Vec::new(); // per family, per particle
    fn particles<'a>(edges: &'a [[u32; 2]], p: &'a Path) -> impl Iterator<Item = u32> + 'a {
        let (e, r) = p[0];
        let first = edges[e as usize][usize::from(r)];
        std::iter::once(first).chain(p.iter().map(|&(e, r)| edges[e as usize][usize::from(!r)]))
    }
    for i in order {
        let path = std::mem::take(&mut paths[i]);
        let f = (0..families.len())
            .find(|&f| particles(edges, &path).all(|q| !members[f][q as usize]))
            .unwrap_or_else(|| {
                families.push(Vec::new());
                members.push(vec![false; n]);
                families.len() - 1
            });
        for q in particles(edges, &path) {
            members[f][q as usize] = true;
        }
        families[f].push(path);
    }
    families
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(w: usize, h: usize) -> (Vec<DVec3>, Vec<[u32; 2]>) {
        let x = (0..w * h)
            .map(|i| DVec3::new((i % w) as f64, 0.0, (i / w) as f64))
            .collect();
        let mut e = Vec::new();
        for r in 0..h {
            for c in 0..w {
                let i = (r * w + c) as u32;
                if c + 1 < w {
                    e.push([i, i + 1]);
                }
                if r + 1 < h {
                    e.push([i, i + w as u32]);
                }
            }
        }
        (x, e)
    }

    #[test]
    fn a_grid_is_covered_by_its_rows_and_columns() {
        let (x, e) = grid(6, 4);
        let fam = strip_cover(&x, &e);
        assert_eq!(fam.len(), 2, "rows and columns");
        let lens: Vec<Vec<usize>> = fam
            .iter()
            .map(|f| f.iter().map(|p| p.len()).collect())
            .collect();
        assert_eq!(lens[0], vec![5; 4], "four rows of five links");
        assert_eq!(lens[1], vec![3; 6], "six columns of three links");
    }

    #[test]
    fn paths_are_acyclic_chains_and_cover_every_edge_once() {
        // A ring of 12 particles around a centre with spokes: the ring closes a cycle.
        let mut x = vec![DVec3::ZERO];
        let mut e = Vec::new();
        for k in 0..12u32 {
            let a = k as f64 * std::f64::consts::TAU / 12.0;
            x.push(DVec3::new(a.cos(), 0.0, a.sin()));
            e.push([0, k + 1]);
            e.push([k + 1, (k + 1) % 12 + 1]);
        }
        let fam = strip_cover(&x, &e);
        let mut seen = vec![0; e.len()];
        for f in &fam {
            let mut in_family = vec![false; x.len()];
            for p in f {
                let mut on_path = vec![false; x.len()];
                for w in p.windows(2) {
                    let end = e[w[0].0 as usize][usize::from(!w[0].1)];
                    let start = e[w[1].0 as usize][usize::from(w[1].1)];
                    assert_eq!(end, start, "links follow each other");
                }
                for &(k, r) in p {
                    seen[k as usize] += 1;
                    for q in [
                        e[k as usize][usize::from(r)],
                        e[k as usize][usize::from(!r)],
                    ] {
                        on_path[q as usize] = true;
                    }
                }
                let parts = on_path.iter().filter(|&&b| b).count();
                assert_eq!(parts, p.len() + 1, "no particle twice on a path");
                for (q, &b) in on_path.iter().enumerate() {
                    if b {
                        assert!(!in_family[q], "paths of a family share no particle");
                        in_family[q] = true;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "every edge once: {seen:?}");
    }
}
