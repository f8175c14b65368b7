//! Cutting a cloth along edges of its mesh: what a cut gesture and a tear do to the
//! topology.
//!
//! A cut edge stops joining the two triangles on its sides. Where that splits the fan of
//! triangles around a particle into pieces — at the cloth's border, or where two cut edges
//! meet — the particle is duplicated, one copy per piece: the copies start where it is,
//! with its velocity, and share its mass by their pieces (half by area, half by triangle
//! count), so mass, momentum and the positions are kept exactly. A cut that does not yet
//! reach the border or another cut opens nothing (a one-edge slit inside the cloth holds,
//! and stays constrained). An edge that opens becomes an edge of each lip, and each lip
//! keeps it inextensible — cutting separates the cloth, it does not make it stretch; the
//! other constraints and the springs follow the triangles they lie in to the copies (a
//! spring whose ends no longer share a triangle or two adjacent ones is dropped — the bend
//! springs across the lip). Copies are numbered after the existing particles, so every
//! index that was valid stays valid and names the same material point.
//!
//! Tearing ([`tear_cuts`]) chooses such cuts from the constraints' tension.

use std::collections::{BTreeSet, HashMap, HashSet};

use glam::DVec3;

use super::paths;
use super::quads::edge_map;
use crate::sim::cloth::{Cloth, Spring, Topology};

/// The shortest length, as a fraction of its shear spring's rest length, at which a quad's
/// opened diagonal keeps its length when cut as its rest length; a shorter one — its ends
/// all but on each other — keeps the spring's.
pub const MIN_DIAGONAL: f64 = 0.01;

/// What a cut did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Cut {
    /// Mesh edges newly cut (asked for, existing, and not cut before).
    pub edges: usize,
    /// Distance constraints added: each lip of an opened edge keeps one (a quad's diagonal
    /// that opens becomes one on each lip).
    pub constraints: usize,
    /// Particles added (copies of split particles).
    pub particles: usize,
    /// Springs dropped (their ends left on two sides of the cut).
    pub springs: usize,
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Find with path halving.
fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The cloth cut along `pairs` (particle pairs; those that are no edge of a triangle are
/// ignored). `None` when nothing changes. Deterministic: the result depends on the cloth
/// and the set of pairs only.
pub fn cut(cloth: &Cloth, pairs: &[[u32; 2]]) -> Option<(Cloth, Cut)> {
    let t = &cloth.topology;
    let n = cloth.len();
    let tri_edges = edge_map(&t.triangles);
    let cut: BTreeSet<(u32, u32)> = pairs
        .iter()
        .map(|&[a, b]| key(a, b))
        .filter(|k| tri_edges.contains_key(k))
        .collect();
    if cut.is_empty() {
        return None;
    }
    // Where the edge runs between two triangles, they no longer share it (an edge of one
    // triangle — the border, or an edge cut before — separates nothing). The triangles
    // around every particle, once: the fans split below and the springs' ends.
    let fans = t.fans(n);
    let x = &cloth.particles.x;
    let area = |k: u32| {
        let [a, b, c] = t.triangles[k as usize].map(|i| x[i as usize]);
        0.5 * (b - a).cross(c - a).length()
    };
    let p = &cloth.particles;
    let mut new_x = p.x.clone();
    let mut new_v = p.v.clone();
    let mut base = p.base_inv_mass.clone();
    let mut pinned = p.pinned.clone();
    // (triangle, particle) → the copy the triangle now uses.
    let mut remap: HashMap<(u32, u32), u32> = HashMap::new();
    let mut split: BTreeSet<u32> = BTreeSet::new();
    // The particle each copy was made from.
    let mut copied_from: Vec<u32> = Vec::new();
    let vertices: BTreeSet<u32> = cut.iter().flat_map(|&(a, b)| [a, b]).collect();
    for v in vertices {
        let fan = &fans[v as usize];
        // Pieces of the fan: triangles joined by an uncut edge at v.
        let mut parent: Vec<usize> = (0..fan.len()).collect();
        let mut by_other: HashMap<u32, usize> = HashMap::new();
        for (j, &k) in fan.iter().enumerate() {
            for &w in &t.triangles[k as usize] {
                if w == v || cut.contains(&key(v, w)) {
                    continue;
                }
                if let Some(&i) = by_other.get(&w) {
                    let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                    parent[ri.max(rj)] = ri.min(rj);
                } else {
                    by_other.insert(w, j);
                }
            }
        }
        let mut pieces: Vec<Vec<u32>> = Vec::new();
        let mut piece_of: HashMap<usize, usize> = HashMap::new();
        for (j, &k) in fan.iter().enumerate() {
            let r = find(&mut parent, j);
            let at = *piece_of.entry(r).or_insert_with(|| {
                pieces.push(Vec::new());
                pieces.len() - 1
            });
            pieces[at].push(k);
        }
        if pieces.len() < 2 {
            continue;
        }
        split.insert(v);
        let areas: Vec<f64> = pieces
            .iter()
            .map(|pc| pc.iter().map(|&k| area(k)).sum())
            .collect();
        let total: f64 = areas.iter().sum();
        // Half by the pieces' areas, half by their triangles: a piece whose triangles are
        // folded flat has (nearly) no area, and an area share alone gave its copy an
        // inverse mass of 1e18 (a torn curtain, whose next step no solver could take).
        // Still exact: the shares sum to 1.
        let count: usize = pieces.iter().map(Vec::len).sum();
        let share = |i: usize| {
            let by_count = pieces[i].len() as f64 / count as f64;
            if total > 0.0 {
                0.5 * areas[i] / total + 0.5 * by_count
            } else {
                by_count
            }
        };
        let k_v = p.base_inv_mass[v as usize];
        for (i, piece) in pieces.iter().enumerate() {
            let id = if i == 0 {
                v
            } else {
                new_x.push(p.x[v as usize]);
                new_v.push(p.v[v as usize]);
                base.push(0.0);
                pinned.push(p.pinned[v as usize]);
                copied_from.push(v);
                (new_x.len() - 1) as u32
            };
            // Mass m·share: inverse mass k/share.
            base[id as usize] = if k_v > 0.0 { k_v / share(i) } else { 0.0 };
            for &k in piece {
                remap.insert((k, v), id);
            }
        }
    }
    let at = |k: u32, v: u32| remap.get(&(k, v)).copied().unwrap_or(v);
    let triangles: Vec<[u32; 3]> = t
        .triangles
        .iter()
        .enumerate()
        .map(|(k, tri)| tri.map(|v| at(k as u32, v)))
        .collect();
    let mut report = Cut {
        edges: cut.len(),
        particles: new_x.len() - n,
        ..Cut::default()
    };
    // Constraints follow their triangles; a cut edge that opened is an edge of each lip,
    // and each lip keeps it inextensible: the constraint's rest length, or for a quad's
    // diagonal (a shear spring, not a constraint) its length when cut (see
    // [`MIN_DIAGONAL`]), so the half-quads
    // along a cut are rigid triangles rather than lips free to stretch.
    let mut edges = Vec::with_capacity(t.edges.len());
    let mut rest = Vec::with_capacity(t.rest.len());
    let mut constrained: HashSet<(u32, u32)> = HashSet::new();
    for (&[a, b], &r) in t.edges.iter().zip(&t.rest) {
        let ts = tri_edges.get(&key(a, b)).map(Vec::as_slice).unwrap_or(&[]);
        constrained.insert(key(a, b));
        let mut lips: Vec<[u32; 2]> = Vec::new();
        for &k in ts {
            let lip = [at(k, a), at(k, b)];
            if !lips.iter().any(|l| key(l[0], l[1]) == key(lip[0], lip[1])) {
                lips.push(lip);
            }
        }
        if lips.is_empty() {
            lips.push([a, b]);
        }
        report.constraints += lips.len() - 1;
        for lip in lips {
            edges.push(lip);
            rest.push(r);
        }
    }
    for &(a, b) in &cut {
        if constrained.contains(&(a, b)) {
            continue;
        }
        let ts = &tri_edges[&(a, b)];
        let lips: BTreeSet<(u32, u32)> = ts.iter().map(|&k| key(at(k, a), at(k, b))).collect();
        if lips.len() > 1 {
            // The diagonal's rest length is its length now, so the step that opens it
            // ends within the tolerance as every other does (its shear spring's rest
            // length left a sheared quad's lip a third short of it, and quads folded on
            // the tear scene's fallen pieces 80–95 % short: strains of 0.3–0.9 in the
            // frame of the tear); the spring's where it is shorter than [`MIN_DIAGONAL`]
            // of that, its ends all but on each other, since there the direction between
            // them is round-off (a rest length of 1e-5 spacings, which no solver meets,
            // and at a hundredth of the spring's, 50 Newton steps in a frame of the 50×50
            // curtain tearing under its weight).
            let now = x[a as usize].distance(x[b as usize]);
            let r = t
                .springs
                .iter()
                .find(|s| key(s.a, s.b) == (a, b))
                .map_or(now, |s| {
                    if now < MIN_DIAGONAL * s.rest {
                        s.rest
                    } else {
                        now
                    }
                });
            for (p, q) in lips {
                edges.push([p, q]);
                rest.push(r);
                report.constraints += 1;
            }
        }
    }
    // A spring follows its ends into a triangle holding both, or two triangles joined by
    // an uncut edge.
    let joined = |k: u32, l: u32| {
        if k == l {
            return true;
        }
        let (a, b) = (t.triangles[k as usize], t.triangles[l as usize]);
        let shared: Vec<u32> = a.into_iter().filter(|v| b.contains(v)).collect();
        shared.len() == 2 && !cut.contains(&key(shared[0], shared[1]))
    };
    let mut springs: Vec<Spring> = Vec::with_capacity(t.springs.len());
    for s in &t.springs {
        if !split.contains(&s.a) && !split.contains(&s.b) {
            springs.push(*s);
            continue;
        }
        let (ta, tb) = (&fans[s.a as usize], &fans[s.b as usize]);
        let found = ta
            .iter()
            .flat_map(|&k| tb.iter().map(move |&l| (k, l)))
            .find(|&(k, l)| joined(k, l));
        match found {
            Some((k, l)) => springs.push(Spring {
                a: at(k, s.a),
                b: at(l, s.b),
                ..*s
            }),
            None => report.springs += 1,
        }
    }
    let m = new_x.len();
    let cover = paths::strip_cover(&new_x, &edges);
    let topology = Topology::from_parts(m, t.rest_extent(), cover, edges, rest, springs, triangles);
    let mut topology = topology;
    topology.origin = (0..m)
        .map(|i| {
            let from = if i < n { i as u32 } else { copied_from[i - n] };
            t.origin.get(from as usize).copied().unwrap_or(from)
        })
        .collect();
    let mut out = Cloth::from_topology(new_x, base.clone(), topology);
    out.particles.v = new_v;
    for (i, &pin) in pinned.iter().enumerate() {
        if pin {
            out.particles.pinned[i] = true;
            out.particles.inv_mass[i] = 0.0;
            out.particles.v[i] = DVec3::ZERO;
        }
    }
    Some((out, report))
}

/// Most constraints a window of [`TEAR_WINDOW`] breaks (one step, where steps are as long).
/// A tear runs as a sequence of breaks, a few per window: each opens the cloth at one
/// particle, and the load it carried moves to the tips of the opening, which break in the
/// following windows if they are overloaded too. The cap keeps a window's rebuild one
/// rebuild and lets the solvers redistribute the load before the next breaks (a sheet
/// overloaded everywhere tears in a few windows, not in one).
pub const MAX_BREAKS_PER_WINDOW: usize = 4;

/// The time over which a constraint's tension is measured, s: its impulses are summed over
/// the steps of each window this long (one step where the step is longer) and divided by
/// the window's length, and tearing looks at them at the end of each window. One frame of
/// the app (1/60 s): Newton's one step a frame and the other solvers' ten substeps then
/// measure the same tension, where a per-step figure would read the impulse of a hand's
/// jerk over a tenth of the time as a force ten times larger.
pub const TEAR_WINDOW: f64 = 1.0 / 60.0;

/// The constraints whose tension over a window of `h` s — `impulses` ([`Cloth::impulses`])
/// over `h` — exceeds `strength` (N/m) times their rest length, most overloaded first (ties by
/// index).
pub fn overloaded(t: &Topology, impulses: &[f64], h: f64, strength: f64) -> Vec<usize> {
    let mut over: Vec<(f64, usize)> = impulses
        .iter()
        .zip(&t.rest)
        .enumerate()
        .map(|(e, (&j, &l))| (j / (h * strength * l), e))
        .filter(|&(r, _)| r > 1.0)
        .collect();
    over.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    over.into_iter().map(|(_, e)| e).collect()
}

/// The mesh edges to cut so that particle `v` no longer passes the pull of its neighbour
/// `w` on: `v`'s fan of triangles split by the plane through `v` across the direction to
/// `w` — the triangles on `w`'s side (those holding the edge to `w` always) keep one copy
/// of `v`, the others another — which is where a crack opens across the load. The cut
/// edges are those between two triangles of the fan on opposite sides; empty where every
/// triangle lies on one side (nothing to open there).
fn split_across(cloth: &Cloth, fans: &[Vec<u32>], v: u32, w: u32) -> Vec<[u32; 2]> {
    let t = &cloth.topology;
    let x = &cloth.particles.x;
    let at = x[v as usize];
    let dir = (x[w as usize] - at).normalize_or_zero();
    let fan = &fans[v as usize];
    let side = |k: u32| {
        let tri = t.triangles[k as usize];
        if tri.contains(&w) {
            return true;
        }
        let c = tri.iter().map(|&i| x[i as usize]).sum::<DVec3>() / 3.0;
        (c - at).dot(dir) > 0.0
    };
    let sides: Vec<bool> = fan.iter().map(|&k| side(k)).collect();
    if sides.iter().all(|&s| s) || sides.iter().all(|&s| !s) {
        return Vec::new();
    }
    // Each other particle of the fan, with the sides of the triangles that hold it.
    let mut by_other: HashMap<u32, (bool, bool)> = HashMap::new();
    for (&k, &s) in fan.iter().zip(&sides) {
        for &u in &t.triangles[k as usize] {
            if u != v {
                let e = by_other.entry(u).or_insert((false, false));
                if s {
                    e.0 = true;
                } else {
                    e.1 = true;
                }
            }
        }
    }
    let mut out: Vec<[u32; 2]> = by_other
        .into_iter()
        .filter(|&(_, (plus, minus))| plus && minus)
        .map(|(u, _)| [v.min(u), v.max(u)])
        .collect();
    out.sort_unstable();
    out
}

/// What tearing cuts at the end of a window: for each overloaded constraint (at most
/// [`MAX_BREAKS_PER_WINDOW`], most overloaded first), the cut that splits one of its ends
/// across it (`split_across`) — the end that needs fewer cut edges (a particle on the
/// border or a crack's lip opens with one), the lower index on a tie. A constraint one of
/// whose ends, or a particle next to them, a stronger break already cut this window waits
/// for the next window, when the solvers have carried its load again. Returns the pairs to
/// cut and the constraints broken. Deterministic: a function of the cloth and the
/// impulses only.
pub fn tear_cuts(cloth: &Cloth, impulses: &[f64], h: f64, strength: f64) -> (Vec<[u32; 2]>, usize) {
    let t = &cloth.topology;
    let over = overloaded(t, impulses, h, strength);
    if over.is_empty() {
        return (Vec::new(), 0);
    }
    let fans = t.fans(cloth.len());
    let mut touched: BTreeSet<u32> = BTreeSet::new();
    let mut pairs: Vec<[u32; 2]> = Vec::new();
    let mut broken = 0;
    for e in over {
        if broken == MAX_BREAKS_PER_WINDOW {
            break;
        }
        let [a, b] = t.edges[e];
        if touched.contains(&a) || touched.contains(&b) {
            continue;
        }
        let options = [(a, b), (b, a)].map(|(v, w)| (split_across(cloth, &fans, v, w), v));
        let best = options
            .into_iter()
            .filter(|(cut, _)| !cut.is_empty())
            .min_by_key(|(cut, v)| (cut.len(), *v));
        let Some((cut, _)) = best else { continue };
        for &[p, q] in &cut {
            touched.insert(p);
            touched.insert(q);
        }
        pairs.extend(cut);
        broken += 1;
    }
    (pairs, broken)
}

/// Mesh edges (particle pairs of triangle edges) that the segment from `from` to `to`
/// cuts: those it crosses (passes within `radius` of, between the edge's ends — its
/// middle 80 %), and where it passes within `radius` of a particle, the particle's edges
/// that run on along the stroke, forwards and backwards (within 60° of it), so the cut
/// goes through the particle instead of leaving it as a bridge. What a cut gesture cuts.
/// Sorted, without repeats.
pub fn edges_near_segment(cloth: &Cloth, from: DVec3, to: DVec3, radius: f64) -> Vec<[u32; 2]> {
    let x = &cloth.particles.x;
    let mut out: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut incident: HashMap<u32, Vec<u32>> = HashMap::new();
    let dir = (to - from).normalize_or_zero();
    let near = |p: DVec3| segment_distance(from, to, p, p).0 <= radius;
    for tri in &cloth.topology.triangles {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let (d, along) = segment_distance(from, to, x[a as usize], x[b as usize]);
            if d <= radius && (0.1..=0.9).contains(&along) {
                out.insert(key(a, b));
            }
            for (v, w) in [(a, b), (b, a)] {
                if near(x[v as usize]) {
                    incident.entry(v).or_default().push(w);
                }
            }
        }
    }
    if dir != DVec3::ZERO {
        for (v, ws) in incident {
            let at = x[v as usize];
            let cos = |w: u32| (x[w as usize] - at).normalize_or_zero().dot(dir);
            let ahead = ws
                .iter()
                .copied()
                .max_by(|&a, &b| cos(a).total_cmp(&cos(b)));
            let behind = ws
                .iter()
                .copied()
                .min_by(|&a, &b| cos(a).total_cmp(&cos(b)));
            for (w, sign) in [(ahead, 1.0), (behind, -1.0)] {
                if let Some(w) = w
                    && sign * cos(w) >= 0.5
                {
                    out.insert(key(v, w));
                }
            }
        }
    }
    out.into_iter().map(|(a, b)| [a, b]).collect()
}

/// Distance between segments pq and ab (their closest points,
/// [`crate::sim::contact::narrow::closest_segments`]), and where along ab (0 at a, 1 at b)
/// the closest point lies.
fn segment_distance(p: DVec3, q: DVec3, a: DVec3, b: DVec3) -> (f64, f64) {
    let (s, t) = crate::sim::contact::narrow::closest_segments(p, q, a, b);
    (p.lerp(q, s).distance(a.lerp(b, t)), t)
}
