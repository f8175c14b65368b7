//! A uniform spatial hash over axis-aligned boxes (Teschner et al. 2003, "Optimized spatial
//! hashing for collision detection of deformable objects"), and the box type the broad
//! phase shares. The crossing count queries it with the edges against the triangles' boxes;
//! the step's gather was its first user and now walks the surface's patches instead
//! ([`super::patches`]): a hash has to test a mesh's own neighbours, whose boxes always
//! touch, whatever the cloth does.
//!
//! Why a hash and not a BVH: the boxes are the step's swept bounds of triangles and edges of
//! a cloth whose elements are all of about one size (a grid's spacing; a garment's mesh is
//! made so too), which is the case a uniform grid handles best; it is rebuilt from scratch
//! every step in O(elements) — a counting sort into a flat table, no tree to refit or
//! rebalance while the cloth folds — and queried without allocation. The crates that offer a
//! refittable BVH (parry's, bvh) bring their own vector types or an f32 world, and a refit
//! tree degrades as a cloth crumples (boxes of far-apart siblings grow). Measured since
//! (docs/experiments.md, "The broad phase"): a tree of our own rebuilt every gather, its
//! edges traversed against themselves, finds the same overlaps 1.2–1.5× faster on folded
//! states; the queries are a third of a folded drape's CPU time (docs/results.md).
//!
//! Each item is entered in every cell its box overlaps, with the lowest cell of its box; a
//! query visits the cells of its own box and reports an item only in the cell where the two
//! boxes' ranges of cells begin to overlap on every axis (integer compares of cells worked
//! out when the item was entered), so an item met again in another cell is reported once
//! and a query needs no scratch of its own: threads can query one grid at once. (Stamping
//! each reported item instead, the first version, visited a per-query table at random;
//! working that lowest cell out from the boxes' float corners spent a fifth of a gather in
//! `floor`, measured with callgrind.)

use glam::DVec3;

/// An axis-aligned box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: DVec3,
    /// Upper corner.
    pub max: DVec3,
}

impl Aabb {
    /// An empty box (grows with [`Aabb::grow`]).
    pub const EMPTY: Aabb = Aabb {
        min: DVec3::splat(f64::INFINITY),
        max: DVec3::splat(f64::NEG_INFINITY),
    };

    /// The box grown to hold `p`.
    pub fn grow(self, p: DVec3) -> Aabb {
        Aabb {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The box grown by `r` on every side.
    pub fn inflate(self, r: f64) -> Aabb {
        Aabb {
            min: self.min - DVec3::splat(r),
            max: self.max + DVec3::splat(r),
        }
    }

    /// Whether the boxes overlap (touching counts).
    pub fn overlaps(&self, o: &Aabb) -> bool {
        self.min.cmple(o.max).all() && o.min.cmple(self.max).all()
    }
}

type Cell = [i32; 3];

/// An item entered in a cell, with the lowest cell of its box.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    cell: Cell,
    lo: Cell,
    item: u32,
}

/// A spatial hash over boxes, rebuilt every step ([`HashGrid::build`]).
#[derive(Debug, Clone, Default)]
pub struct HashGrid {
    inv_cell: f64,
    mask: usize,
    /// Bucket b holds `entries[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    entries: Vec<Entry>,
    boxes: Vec<Aabb>,
    scratch: Vec<(usize, Entry)>,
    /// log2 of the bucket count.
    bits: u32,
}

/// Cells a box may span per axis before it is clamped (a box this large is a degenerate
/// or exploded element; the world undoes a step that diverges).
const MAX_SPAN: i64 = 64;

/// Bucket of cell `c` among 2^`bits`: Teschner et al.'s product of primes, spread by a
/// Fibonacci multiplication into the high bits (the plain product masked to its low bits
/// crowded a flat cloth's cells into few buckets).
fn hash(c: Cell, bits: u32) -> usize {
    let h = (c[0] as i64 as u64).wrapping_mul(73_856_093)
        ^ (c[1] as i64 as u64).wrapping_mul(19_349_663)
        ^ (c[2] as i64 as u64).wrapping_mul(83_492_791);
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// ⌊v⌋ as a cell coordinate, without a call to libm's `floor`.
fn floor_i32(v: f64) -> i32 {
    let v = v.clamp(-1.0e9, 1.0e9);
    let t = v as i32;
    if (t as f64) > v { t - 1 } else { t }
}

impl HashGrid {
    fn cell_of(&self, p: DVec3) -> Cell {
        let q = p * self.inv_cell;
        [floor_i32(q.x), floor_i32(q.y), floor_i32(q.z)]
    }

    fn cells(&self, b: &Aabb) -> (Cell, Cell) {
        let lo = self.cell_of(b.min);
        let mut hi = self.cell_of(b.max);
        for k in 0..3 {
            hi[k] = hi[k].min((lo[k] as i64 + MAX_SPAN) as i32);
        }
        (lo, hi)
    }

    /// Enter `boxes` (item i is `boxes[i]`) into cells of size `cell` (m).
    pub fn build(&mut self, boxes: impl IntoIterator<Item = Aabb>, cell: f64) {
        self.inv_cell = 1.0 / cell.max(1e-9);
        self.boxes.clear();
        self.boxes.extend(boxes);
        self.scratch.clear();
        for (i, b) in self.boxes.iter().enumerate() {
            if !(b.min.is_finite() && b.max.is_finite()) {
                continue;
            }
            let (lo, hi) = self.cells(b);
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        let e = Entry {
                            cell: [x, y, z],
                            lo,
                            item: i as u32,
                        };
                        self.scratch.push((0, e));
                    }
                }
            }
        }
        let buckets = (2 * self.scratch.len()).next_power_of_two().max(16);
        self.bits = buckets.trailing_zeros();
        self.mask = buckets - 1;
        self.start.clear();
        self.start.resize(buckets + 1, 0);
        for e in &mut self.scratch {
            e.0 = hash(e.1.cell, self.bits);
            self.start[e.0 + 1] += 1;
        }
        for b in 0..buckets {
            self.start[b + 1] += self.start[b];
        }
        self.entries.clear();
        self.entries.resize(self.scratch.len(), Entry::default());
        let mut fill: Vec<u32> = self.start[..buckets].to_vec();
        for &(b, e) in &self.scratch {
            self.entries[fill[b] as usize] = e;
            fill[b] += 1;
        }
    }

    /// The box of item `i`.
    pub fn item(&self, i: u32) -> &Aabb {
        &self.boxes[i as usize]
    }

    /// Call `f` once for every item whose box overlaps `query`.
    pub fn query(&self, query: &Aabb, mut f: impl FnMut(u32)) {
        if self.boxes.is_empty() || !(query.min.is_finite() && query.max.is_finite()) {
            return;
        }
        let (lo, hi) = self.cells(query);
        for x in lo[0]..=hi[0] {
            for y in lo[1]..=hi[1] {
                for z in lo[2]..=hi[2] {
                    let c = [x, y, z];
                    let b = hash(c, self.bits);
                    let range = self.start[b] as usize..self.start[b + 1] as usize;
                    for e in &self.entries[range] {
                        // Only in the first cell both boxes' cell ranges share.
                        let first = [e.lo[0].max(lo[0]), e.lo[1].max(lo[1]), e.lo[2].max(lo[2])];
                        if e.cell != c || first != c {
                            continue;
                        }
                        if self.boxes[e.item as usize].overlaps(query) {
                            f(e.item);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every overlapping pair once, against a brute-force scan of random boxes.
    #[test]
    fn hash_reports_every_overlap_once() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let boxes: Vec<Aabb> = (0..300)
            .map(|_| {
                let c = DVec3::new(rnd(), rnd(), rnd()) * 2.0 - DVec3::ONE;
                let e = DVec3::new(rnd(), rnd(), rnd()) * 0.2;
                Aabb {
                    min: c - e,
                    max: c + e,
                }
            })
            .collect();
        let mut g = HashGrid::default();
        g.build(boxes.iter().copied(), 0.1);
        for q in &boxes {
            let mut got = Vec::new();
            g.query(q, |i| got.push(i));
            got.sort_unstable();
            let n = got.len();
            got.dedup();
            assert_eq!(n, got.len(), "an item reported twice");
            let want: Vec<u32> = (0..boxes.len() as u32)
                .filter(|&i| boxes[i as usize].overlaps(q))
                .collect();
            assert_eq!(got, want);
        }
    }
}
