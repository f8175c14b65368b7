//! Pairing a triangle mesh's triangles into quads: which edges become distance
//! constraints.
//!
//! Constraining every edge of a triangle mesh locks it (001 §3, after Goldenthal et al.
//! 2007): a closed triangle mesh of V particles has about 3V edges, as many constraints as
//! degrees of freedom, and what the constraints leave free cannot bend a flat sheet into a
//! curved shape without stretching. 001 keeps inextensibility on quads; a quad's four
//! sides (about 2V constraints in a quad mesh) leave it free to shear and to bend about
//! either diagonal. So the triangles are paired across a shared edge into quads (a
//! matching of the mesh's dual graph), the pair's shared edge — the quad's diagonal —
//! becomes a shear spring like the grid's diagonals, and every other edge a constraint.

use std::collections::HashMap;

use glam::DVec3;

/// Score of a candidate pair: how near the quad's corners are to right angles, 1 − the
/// largest |cos| of a corner (1 for a rectangle, 0 for a corner of 0° or 180°); a pair
/// whose triangles were one polygon of the file gets [`SAME_FACE_BONUS`] more, so a quad
/// mesh's own quads are kept.
const SAME_FACE_BONUS: f64 = 2.0;

/// Largest cos of a quad's corner angle for a pair to be a quad at all (every corner at
/// least about 18°): a sliver would put a near-zero side into the constraints in place of
/// the diagonal. A corner near 180° is allowed (the convexity test keeps it below): such a
/// quad is a triangle with a particle on one side, which its constraints leave free to
/// move across that side — no lock. On the shipped tablecloth 78 of its pairs, at the
/// seams between its six sectors, have a corner of 165–176°; refusing them left 78
/// triangles unpaired.
const MAX_CORNER_COS: f64 = 0.95;

/// Least cos of the angle between the two triangles' normals for a pair: a quad folded by
/// more than about 45° along its diagonal is not a quad of the surface.
const MIN_PLANARITY: f64 = 0.7;

/// The edges of a mesh: each undirected edge (a < b) with the one or two triangles that
/// share it (validation refuses more).
pub(crate) fn edge_map(triangles: &[[u32; 3]]) -> HashMap<(u32, u32), Vec<u32>> {
    let mut map: HashMap<(u32, u32), Vec<u32>> = HashMap::with_capacity(triangles.len() * 2);
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            map.entry((a.min(b), a.max(b))).or_default().push(t as u32);
        }
    }
    map
}

/// The vertex of `tri` that is not `a` or `b`.
fn opposite(tri: [u32; 3], a: u32, b: u32) -> u32 {
    tri.into_iter()
        .find(|&v| v != a && v != b)
        .expect("a triangle has three distinct vertices")
}

/// Score of quad a–c–b–d made of triangles (a, b, c) and (a, b, d) sharing the edge
/// (a, b), or `None` if it is not a convex, nearly planar quad.
fn quad_score(x: &[DVec3], a: u32, b: u32, c: u32, d: u32) -> Option<f64> {
    let [pa, pb, pc, pd] = [a, b, c, d].map(|i| x[i as usize]);
    let n1 = (pb - pa).cross(pc - pa);
    let n2 = (pb - pa).cross(pd - pa);
    // c and d on opposite sides of ab, nearly in one plane.
    if -n1.dot(n2) < MIN_PLANARITY * n1.length() * n2.length() {
        return None;
    }
    // a and b on opposite sides of cd, or one of them on it (a corner of 180°): the quad
    // is convex.
    let m1 = (pd - pc).cross(pa - pc);
    let m2 = (pd - pc).cross(pb - pc);
    if m1.dot(m2) > 0.0 {
        return None;
    }
    // Corners in order around the quad: a, c, b, d.
    let ring = [pa, pc, pb, pd];
    let (mut worst, mut sharpest) = (0.0f64, f64::NEG_INFINITY);
    for k in 0..4 {
        let (prev, here, next) = (ring[(k + 3) % 4], ring[k], ring[(k + 1) % 4]);
        let (u, v) = (
            (prev - here).normalize_or_zero(),
            (next - here).normalize_or_zero(),
        );
        worst = worst.max(u.dot(v).abs());
        sharpest = sharpest.max(u.dot(v));
    }
    (sharpest <= MAX_CORNER_COS).then_some(1.0 - worst)
}

/// A quad: the two triangles and its shared diagonal (a, b) and other diagonal (c, d).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quad {
    pub tris: [u32; 2],
    pub diagonal: [u32; 2],
    pub cross: [u32; 2],
}

/// Pair triangles into quads: every candidate pair by score (best first, ties by edge), a
/// pair taken where both triangles are free; then augmenting paths ([`augment`]) from
/// every triangle left free. Not a maximum matching in every case (that needs Edmonds'
/// blossoms): the unpaired triangles are counted and keep all three sides as constraints.
/// Deterministic.
pub(crate) fn pair(
    x: &[DVec3],
    triangles: &[[u32; 3]],
    faces: &[u32],
    face_sizes: &[u32],
    edges: &HashMap<(u32, u32), Vec<u32>>,
) -> Vec<Quad> {
    let nt = triangles.len();
    // Candidate pairs per triangle: (score, other triangle, edge).
    let mut cands: Vec<(f64, (u32, u32), u32, u32)> = Vec::new();
    for (&(a, b), ts) in edges {
        if let [t1, t2] = ts[..] {
            let c = opposite(triangles[t1 as usize], a, b);
            let d = opposite(triangles[t2 as usize], a, b);
            if let Some(mut s) = quad_score(x, a, b, c, d) {
                let (f1, f2) = (faces[t1 as usize], faces[t2 as usize]);
                if f1 == f2 && face_sizes[f1 as usize] == 4 {
                    s += SAME_FACE_BONUS;
                }
                cands.push((s, (a, b), t1.min(t2), t1.max(t2)));
            }
        }
    }
    cands.sort_by(|p, q| q.0.total_cmp(&p.0).then(p.1.cmp(&q.1)));
    let mut partner = vec![u32::MAX; nt];
    for &(_, _, t1, t2) in &cands {
        if partner[t1 as usize] == u32::MAX && partner[t2 as usize] == u32::MAX {
            partner[t1 as usize] = t2;
            partner[t2 as usize] = t1;
        }
    }
    let mut nbrs: Vec<Vec<u32>> = vec![Vec::new(); nt];
    for &(_, _, t1, t2) in &cands {
        nbrs[t1 as usize].push(t2);
        nbrs[t2 as usize].push(t1);
    }
    augment(&nbrs, &mut partner);
    let mut quads = Vec::new();
    for t in 0..nt as u32 {
        let u = partner[t as usize];
        if u == u32::MAX || u < t {
            continue;
        }
        let (tt, tu) = (triangles[t as usize], triangles[u as usize]);
        let shared: Vec<u32> = tt.into_iter().filter(|v| tu.contains(v)).collect();
        let (a, b) = (shared[0].min(shared[1]), shared[0].max(shared[1]));
        let (c, d) = (opposite(tt, a, b), opposite(tu, a, b));
        quads.push(Quad {
            tris: [t, u],
            diagonal: [a, b],
            cross: [c.min(d), c.max(d)],
        });
    }
    quads
}

/// Most triangles one augmenting search takes from its queue: bounds the work per free
/// triangle on a large mesh (a search that finds nothing within it leaves the triangle
/// unpaired).
const SEARCH_LIMIT: usize = 1 << 16;

/// Grow the matching `partner` (u32::MAX: free) of the graph `nbrs` to a maximum one by
/// augmenting paths found with Edmonds' blossom search: from each free triangle, a
/// breadth-first search along alternating paths, odd cycles contracted into their base,
/// until a free triangle is reached; the path's pairs are then flipped, one more pair
/// each time. The dual graph of a triangle mesh has odd cycles (around a particle of odd
/// valence), so without the contraction a search can miss a path that exists. Each
/// search resets only what it touched, so the work is that of the searches.
fn augment(nbrs: &[Vec<u32>], partner: &mut [u32]) {
    const NONE: u32 = u32::MAX;
    let n = nbrs.len();
    let mut used = vec![false; n];
    let mut parent = vec![NONE; n];
    let mut base: Vec<u32> = (0..n as u32).collect();
    let mut blossom = vec![false; n];
    let mut on_path = vec![false; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut queue: std::collections::VecDeque<u32> = std::collections::VecDeque::new();
    for root in 0..n as u32 {
        if partner[root as usize] != NONE || nbrs[root as usize].is_empty() {
            continue;
        }
        for &i in &touched {
            let i = i as usize;
            used[i] = false;
            parent[i] = NONE;
            base[i] = i as u32;
            blossom[i] = false;
        }
        touched.clear();
        queue.clear();
        used[root as usize] = true;
        touched.push(root);
        queue.push_back(root);
        let mut end = NONE;
        let mut pops = 0;
        'search: while let Some(v) = queue.pop_front() {
            pops += 1;
            if pops > SEARCH_LIMIT {
                break;
            }
            for &to in &nbrs[v as usize] {
                if base[v as usize] == base[to as usize] || partner[v as usize] == to {
                    continue;
                }
                let odd_cycle = to == root
                    || (partner[to as usize] != NONE
                        && parent[partner[to as usize] as usize] != NONE);
                if odd_cycle {
                    // Contract the blossom through v and to into its base.
                    let b = {
                        // Lowest common ancestor of v and to in the alternating tree.
                        let mut marked = Vec::new();
                        let mut a = v;
                        loop {
                            a = base[a as usize];
                            on_path[a as usize] = true;
                            marked.push(a);
                            if partner[a as usize] == NONE {
                                break;
                            }
                            a = parent[partner[a as usize] as usize];
                        }
                        let mut c = to;
                        loop {
                            c = base[c as usize];
                            if on_path[c as usize] {
                                break;
                            }
                            c = parent[partner[c as usize] as usize];
                        }
                        for m in marked {
                            on_path[m as usize] = false;
                        }
                        c
                    };
                    let mut mark = |mut x: u32, mut child: u32, touched: &mut Vec<u32>| {
                        while base[x as usize] != b {
                            let mx = partner[x as usize];
                            blossom[base[x as usize] as usize] = true;
                            blossom[base[mx as usize] as usize] = true;
                            parent[x as usize] = child;
                            touched.push(x);
                            touched.push(mx);
                            child = mx;
                            x = parent[mx as usize];
                        }
                    };
                    mark(v, to, &mut touched);
                    mark(to, v, &mut touched);
                    for &i in &touched {
                        let i = i as usize;
                        if blossom[base[i] as usize] {
                            base[i] = b;
                            if !used[i] {
                                used[i] = true;
                                queue.push_back(i as u32);
                            }
                        }
                    }
                } else if parent[to as usize] == NONE {
                    parent[to as usize] = v;
                    touched.push(to);
                    let m = partner[to as usize];
                    if m == NONE {
                        end = to;
                        break 'search;
                    }
                    used[m as usize] = true;
                    touched.push(m);
                    queue.push_back(m);
                }
            }
        }
        // Flip the path from the free triangle found back to the root.
        let mut v = end;
        while v != NONE {
            let pv = parent[v as usize];
            let next = partner[pv as usize];
            partner[v as usize] = pv;
            partner[pv as usize] = v;
            v = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path of six triangles matched greedily in the middle (1–2, 3–4) leaves 0 and 5
    /// free; the augmenting path 0–1=2–3=4–5 pairs all six.
    #[test]
    fn an_augmenting_path_pairs_a_chain() {
        let nbrs: Vec<Vec<u32>> = vec![
            vec![1],
            vec![0, 2],
            vec![1, 3],
            vec![2, 4],
            vec![3, 5],
            vec![4],
        ];
        let mut partner = vec![u32::MAX, 2, 1, 4, 3, u32::MAX];
        augment(&nbrs, &mut partner);
        assert_eq!(partner, vec![1, 0, 3, 2, 5, 4]);
    }
}
