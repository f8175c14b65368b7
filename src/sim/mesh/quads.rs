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

/// Score of a candidate pair: how near the quad's corners are to right angles, 1 for a
/// rectangle, 0 at the limit [`MAX_CORNER_COS`]; a pair whose triangles were one polygon
/// of the file gets [`SAME_FACE_BONUS`] more, so a quad mesh's own quads are kept.
const SAME_FACE_BONUS: f64 = 2.0;

/// Largest |cos| of a quad's corner angle for a pair to be a quad at all (corners between
/// about 18° and 162°): a flatter quad would put a near-zero side into the constraints
/// in place of the diagonal.
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
    // a and b on opposite sides of cd: the quad is convex.
    let m1 = (pd - pc).cross(pa - pc);
    let m2 = (pd - pc).cross(pb - pc);
    if m1.dot(m2) >= 0.0 {
        return None;
    }
    // Corners in order around the quad: a, c, b, d.
    let ring = [pa, pc, pb, pd];
    let mut worst = 0.0f64;
    for k in 0..4 {
        let (prev, here, next) = (ring[(k + 3) % 4], ring[k], ring[(k + 1) % 4]);
        let (u, v) = (
            (prev - here).normalize_or_zero(),
            (next - here).normalize_or_zero(),
        );
        worst = worst.max(u.dot(v).abs());
    }
    (worst <= MAX_CORNER_COS).then(|| 1.0 - worst / MAX_CORNER_COS)
}

/// A quad: the two triangles and its shared diagonal (a, b) and other diagonal (c, d).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quad {
    pub tris: [u32; 2],
    pub diagonal: [u32; 2],
    pub cross: [u32; 2],
}

/// Pair triangles into quads: every candidate pair by score (best first, ties by edge), a
/// pair taken where both triangles are free; then single augmenting swaps (t free, its
/// neighbour u paired with w, w with a free neighbour x: pair t–u and w–x) until none is
/// left, which grows the matching by one each. Greedy matching with short augmentations,
/// not a maximum matching (that needs Edmonds' blossoms): the unpaired triangles are
/// counted and keep all three sides as constraints. Deterministic.
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
    for _ in 0..8 {
        let mut grew = false;
        for t in 0..nt as u32 {
            if partner[t as usize] != u32::MAX {
                continue;
            }
            'swap: for &u in &nbrs[t as usize] {
                let w = partner[u as usize];
                if w == u32::MAX {
                    partner[t as usize] = u;
                    partner[u as usize] = t;
                    grew = true;
                    break 'swap;
                }
                for &xx in &nbrs[w as usize] {
                    if xx != t && xx != u && partner[xx as usize] == u32::MAX {
                        partner[t as usize] = u;
                        partner[u as usize] = t;
                        partner[w as usize] = xx;
                        partner[xx as usize] = w;
                        grew = true;
                        break 'swap;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
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
