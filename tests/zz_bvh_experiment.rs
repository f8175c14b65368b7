//! Experiment (not kept): the broad phase's hash against a BVH rebuilt per gather, on the
//! swept boxes of the app's drape and pile after they folded. Run with
//! `cargo test --release --test zz_bvh_experiment -- --ignored --nocapture`.

use std::time::Instant;

use glam::DVec3;
use impulse_cloth::config;
use impulse_cloth::sim::contact::Surface;
use impulse_cloth::sim::contact::broad::{Aabb, HashGrid};
use impulse_cloth::sim::{DragScript, ScenePreset, SceneSpec, SimParams, SolverKind};

#[derive(Clone, Copy)]
struct Node {
    b: Aabb,
    /// Leaf: items[start..start + count]; inner: children `start`, `start + 1`.
    start: u32,
    count: u32,
}

struct Bvh {
    nodes: Vec<Node>,
    items: Vec<u32>,
}

const LEAF: usize = 4;

fn merge(a: Aabb, b: Aabb) -> Aabb {
    Aabb {
        min: a.min.min(b.min),
        max: a.max.max(b.max),
    }
}

impl Bvh {
    fn build(boxes: &[Aabb]) -> Bvh {
        let mut items: Vec<u32> = (0..boxes.len() as u32).collect();
        let centre: Vec<DVec3> = boxes.iter().map(|b| (b.min + b.max) * 0.5).collect();
        let mut nodes = vec![Node {
            b: Aabb::EMPTY,
            start: 0,
            count: 0,
        }];
        // (node, lo, hi)
        let mut stack = vec![(0usize, 0usize, items.len())];
        while let Some((n, lo, hi)) = stack.pop() {
            let b = items[lo..hi]
                .iter()
                .fold(Aabb::EMPTY, |b, &i| merge(b, boxes[i as usize]));
            if hi - lo <= LEAF {
                nodes[n] = Node {
                    b,
                    start: lo as u32,
                    count: (hi - lo) as u32,
                };
                continue;
            }
            let cb = items[lo..hi]
                .iter()
                .fold(Aabb::EMPTY, |b, &i| b.grow(centre[i as usize]));
            let ext = cb.max - cb.min;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = (lo + hi) / 2;
            items[lo..hi].select_nth_unstable_by(mid - lo, |&a, &b| {
                centre[a as usize][axis].total_cmp(&centre[b as usize][axis])
            });
            let l = nodes.len();
            nodes.push(Node {
                b: Aabb::EMPTY,
                start: 0,
                count: 0,
            });
            nodes.push(Node {
                b: Aabb::EMPTY,
                start: 0,
                count: 0,
            });
            nodes[n] = Node {
                b,
                start: l as u32,
                count: 0,
            };
            stack.push((l, lo, mid));
            stack.push((l + 1, mid, hi));
        }
        Bvh { nodes, items }
    }

    fn query(&self, boxes: &[Aabb], q: &Aabb, stack: &mut Vec<u32>, mut f: impl FnMut(u32)) {
        stack.clear();
        stack.push(0);
        while let Some(n) = stack.pop() {
            let node = self.nodes[n as usize];
            if !node.b.overlaps(q) {
                continue;
            }
            if node.count > 0 {
                for &i in &self.items[node.start as usize..(node.start + node.count) as usize] {
                    if boxes[i as usize].overlaps(q) {
                        f(i);
                    }
                }
            } else {
                stack.push(node.start);
                stack.push(node.start + 1);
            }
        }
    }

    /// Every overlapping pair (i < j) of the tree's own items: a traversal of the tree
    /// against itself.
    fn self_pairs(&self, boxes: &[Aabb], mut f: impl FnMut(u32, u32)) {
        let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
        while let Some((a, b)) = stack.pop() {
            let (na, nb) = (self.nodes[a as usize], self.nodes[b as usize]);
            if a != b && !na.b.overlaps(&nb.b) {
                continue;
            }
            match (na.count > 0, nb.count > 0) {
                (true, true) => {
                    let ia = &self.items[na.start as usize..(na.start + na.count) as usize];
                    let ib = &self.items[nb.start as usize..(nb.start + nb.count) as usize];
                    if a == b {
                        for (k, &i) in ia.iter().enumerate() {
                            for &j in &ia[k + 1..] {
                                if boxes[i as usize].overlaps(&boxes[j as usize]) {
                                    f(i.min(j), i.max(j));
                                }
                            }
                        }
                    } else {
                        for &i in ia {
                            for &j in ib {
                                if boxes[i as usize].overlaps(&boxes[j as usize]) {
                                    f(i.min(j), i.max(j));
                                }
                            }
                        }
                    }
                }
                _ if a == b => {
                    let (l, r) = (na.start, na.start + 1);
                    stack.push((l, l));
                    stack.push((r, r));
                    stack.push((l, r));
                }
                (false, true) => {
                    stack.push((na.start, b));
                    stack.push((na.start + 1, b));
                }
                (true, false) => {
                    stack.push((a, nb.start));
                    stack.push((a, nb.start + 1));
                }
                (false, false) => {
                    // Split the larger.
                    let va = (na.b.max - na.b.min).element_product();
                    let vb = (nb.b.max - nb.b.min).element_product();
                    if va >= vb {
                        stack.push((na.start, b));
                        stack.push((na.start + 1, b));
                    } else {
                        stack.push((a, nb.start));
                        stack.push((a, nb.start + 1));
                    }
                }
            }
        }
    }
}

fn compare(scene: ScenePreset, n: usize, frames: usize) {
    let s = config::step_settings(SolverKind::Newton);
    let params = SimParams {
        dt: config::FRAME / s.substeps as f64,
        self_collision: true,
        ..SimParams::default()
    };
    let mut spec = SceneSpec::new(scene, n, n);
    spec.slack = config::slack(scene);
    let mut world = spec.build(params).unwrap();
    let drags = scene.script(&world).into_iter().collect();
    let mut script = DragScript::new(drags, world.cloth.len()).unwrap();
    let mut sv = SolverKind::Newton.create();
    for _ in 0..frames * s.substeps as usize {
        script.before_step(&mut world).unwrap();
        world.step(sv.as_mut()).unwrap();
    }
    let p = &world.cloth.particles;
    let h = world.params.dt;
    let x0 = p.x.clone();
    let x1: Vec<DVec3> = (0..p.len())
        .map(|i| p.x[i] + p.v[i] * h + DVec3::new(0.0, -9.81, 0.0) * h * h)
        .collect();
    let surf = Surface::new(&world.cloth.topology, p.len());
    let mean_edge = surf
        .edges
        .iter()
        .map(|e| x0[e[0] as usize].distance(x0[e[1] as usize]))
        .sum::<f64>()
        / surf.edges.len() as f64;
    let margin = 2.0 * 1.5 * 0.004 + 0.25 * mean_edge;
    let inflate = 0.5 * margin;
    let shift = x1.iter().zip(&x0).map(|(a, b)| *a - *b).sum::<DVec3>() / x1.len() as f64;
    let swept = |i: u32| {
        Aabb::EMPTY
            .grow(x0[i as usize])
            .grow(x1[i as usize] - shift)
    };
    let vboxes: Vec<Aabb> = (0..x0.len() as u32)
        .map(|v| swept(v).inflate(inflate))
        .collect();
    let tboxes: Vec<Aabb> = surf
        .triangles
        .iter()
        .map(|t| merge(merge(swept(t[0]), swept(t[1])), swept(t[2])).inflate(inflate))
        .collect();
    let eboxes: Vec<Aabb> = surf
        .edges
        .iter()
        .map(|e| merge(swept(e[0]), swept(e[1])).inflate(inflate))
        .collect();
    let cell = tboxes
        .iter()
        .map(|b| (b.max - b.min).max_element())
        .sum::<f64>()
        / tboxes.len() as f64;
    let reps = 20;
    let (mut th, mut tb, mut tq) = (0.0, 0.0, 0.0);
    let (mut hv, mut he, mut bv, mut be) = (0usize, 0usize, 0usize, 0usize);
    for _ in 0..reps {
        // Hash, as the gather does it.
        let t = Instant::now();
        let mut g = HashGrid::default();
        g.build(vboxes.iter().copied(), cell);
        hv = 0;
        for q in &tboxes {
            g.query(q, |_| hv += 1);
        }
        let mut ge = HashGrid::default();
        ge.build(eboxes.iter().copied(), cell);
        he = 0;
        for (i, q) in eboxes.iter().enumerate() {
            ge.query(q, |j| {
                if j as usize > i {
                    he += 1
                }
            });
        }
        th += t.elapsed().as_secs_f64();
        // BVH rebuilt per gather: triangles against the vertices' tree, the edges' tree
        // against itself.
        let t = Instant::now();
        let bvv = Bvh::build(&vboxes);
        let mut stack = Vec::new();
        bv = 0;
        for q in &tboxes {
            bvv.query(&vboxes, q, &mut stack, |_| bv += 1);
        }
        let bve = Bvh::build(&eboxes);
        be = 0;
        bve.self_pairs(&eboxes, |_, _| be += 1);
        tb += t.elapsed().as_secs_f64();
        // BVH with per-edge queries (as the hash's gather does it).
        let t = Instant::now();
        let bvv = Bvh::build(&vboxes);
        let mut stack = Vec::new();
        let mut qv = 0;
        for q in &tboxes {
            bvv.query(&vboxes, q, &mut stack, |_| qv += 1);
        }
        let bve = Bvh::build(&eboxes);
        let mut qe = 0;
        for (i, q) in eboxes.iter().enumerate() {
            bve.query(&eboxes, q, &mut stack, |j| {
                if j as usize > i {
                    qe += 1
                }
            });
        }
        tq += t.elapsed().as_secs_f64();
        assert_eq!((qv, qe), (hv, he));
    }
    assert_eq!(hv, bv, "vertex–triangle overlaps differ");
    assert_eq!(he, be, "edge–edge overlaps differ");
    eprintln!(
        "{scene} {n}×{n} after {frames} frames: {hv} vertex–triangle and {he} edge–edge box \
         overlaps; hash {:.2} ms, BVH {:.2} ms, BVH per-edge queries {:.2} ms per gather's broad phase",
        th / reps as f64 * 1e3,
        tb / reps as f64 * 1e3,
        tq / reps as f64 * 1e3
    );
}

#[test]
#[ignore]
fn hash_against_bvh() {
    compare(ScenePreset::Drape, 30, 90);
    compare(ScenePreset::Pile, 30, 90);
    compare(ScenePreset::Drape, 50, 60);
    compare(ScenePreset::Hanging, 50, 30);
}
