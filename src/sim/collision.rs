//! Ball and ground contact.
//!
//! Impulse solvers treat contact as an inequality on the preview, solved together with the
//! distance constraints (Bender & Schmitt 2006, which `002` and `004` cite for this): a
//! particle whose preview would end inside a collider gets the normal velocity change that
//! puts the preview on the surface, and Coulomb friction limits its tangential velocity
//! relative to the collider by μ times that change ([`ContactSweep`], which also holds the
//! curtain rod's rings). The world visits the contact set before the position pass; strips
//! and the iterative method visit it in every sweep, Newton holds it as rows of its system,
//! and the world visits it again after a pass that still left a preview inside (contact
//! rounds, [`crate::sim::MAX_CONTACT_ROUNDS`]). Positions are projected out after
//! integration only where they are deeper than the contact's tolerance
//! ([`contact_slop`]) — the only contact model of Verlet (003), a no-op once the pass has
//! met the contacts.

use glam::DVec3;

use super::cloth::Cloth;
use super::contact::SelfRows;
use super::dof::Glider;
use super::params::{Ball, BallMotion, SimParams};

/// A collider surface point: outward normal and penetration depth (> 0 inside).
#[derive(Debug, Clone, Copy)]
struct Contact {
    normal: DVec3,
    depth: f64,
    surface_velocity: DVec3,
}

/// Skin added to colliders so cloth rests just outside them (m).
pub const CONTACT_SKIN: f64 = 2e-3;

fn ball_contact(ball: &Ball, p: DVec3) -> Option<Contact> {
    let d = p - ball.center;
    let r = ball.radius + CONTACT_SKIN;
    let l2 = d.length_squared();
    if l2 >= r * r {
        return None;
    }
    let l = l2.sqrt();
    let normal = if l > 1e-12 { d / l } else { DVec3::Y };
    Some(Contact {
        normal,
        depth: r - l,
        surface_velocity: ball.velocity,
    })
}

fn ground_contact(ground: f64, p: DVec3) -> Option<Contact> {
    let depth = ground + CONTACT_SKIN - p.y;
    (depth > 0.0).then_some(Contact {
        normal: DVec3::Y,
        depth,
        surface_velocity: DVec3::ZERO,
    })
}

/// The share `t` of the straight path from `a` to `b` at which it enters `ball`'s skin, or
/// `None` where it does not (or starts inside).
pub fn ball_entry(ball: &Ball, a: DVec3, b: DVec3) -> Option<f64> {
    let r = ball.radius + CONTACT_SKIN;
    let (d, o) = (b - a, a - ball.center);
    let (qa, qb, qc) = (d.length_squared(), d.dot(o), o.length_squared() - r * r);
    let disc = qb * qb - qa * qc;
    if qc < 0.0 || qa == 0.0 || disc < 0.0 {
        return None;
    }
    let t = (-qb - disc.sqrt()) / qa;
    (0.0..=1.0).contains(&t).then_some(t)
}

/// The ball at the end of the step, for previews.
pub fn ball_after(ball: &Ball, h: f64, gravity: DVec3) -> Ball {
    let mut b = *ball;
    advance_ball(&mut b, 0.0, h, gravity, None);
    b
}

/// Move the ball over one step ending at time `t + h`.
pub fn advance_ball(ball: &mut Ball, t: f64, h: f64, gravity: DVec3, ground: Option<f64>) {
    match ball.motion {
        BallMotion::Still => ball.velocity = DVec3::ZERO,
        BallMotion::Swing {
            anchor,
            axis,
            frequency,
        } => {
            let w = std::f64::consts::TAU * frequency;
            let t1 = t + h;
            ball.center = anchor + axis * (w * t1).sin();
            ball.velocity = axis * (w * (w * t1).cos());
        }
        BallMotion::Thrown => {
            ball.center += ball.velocity * h + gravity * (0.5 * h * h);
            ball.velocity += gravity * h;
            if let Some(g) = ground
                && ball.center.y - ball.radius < g
            {
                ball.center.y = g + ball.radius;
                if ball.velocity.y < 0.0 {
                    ball.velocity.y *= -0.5;
                }
                ball.velocity.x *= 0.9;
                ball.velocity.z *= 0.9;
            }
        }
    }
}

fn contacts(params: &SimParams, ball: Option<&Ball>, p: DVec3) -> impl Iterator<Item = Contact> {
    ball.and_then(|b| ball_contact(b, p))
        .into_iter()
        .chain(params.ground.and_then(|g| ground_contact(g, p)))
}

/// Translate the particles of `group` together out of the colliders: by the deepest
/// penetration beyond `slop` along its contact normal, a few times over (the ball and the
/// ground can both hold a group). A rigid impact zone moved so keeps its shape, so the
/// fail-safe's guarantee stands; left inside the ball it would ask the cloth around it to
/// reach into the ball too. Returns whether it moved.
pub fn push_group_out(
    group: &[u32],
    x: &mut [DVec3],
    params: &SimParams,
    ball: Option<&Ball>,
    slop: f64,
) -> bool {
    if ball.is_none() && params.ground.is_none() {
        return false;
    }
    let mut moved = false;
    for _ in 0..4 {
        let deepest = group
            .iter()
            .flat_map(|&i| contacts(params, ball, x[i as usize]))
            .filter(|c| c.depth > slop)
            .max_by(|a, b| a.depth.total_cmp(&b.depth));
        let Some(c) = deepest else { break };
        for &i in group {
            x[i as usize] += c.normal * c.depth;
        }
        moved = true;
    }
    moved
}

/// Project dynamic particles more than `slop` (m) inside a collider onto its surface and
/// remove the velocity into it (used after integration, and by Verlet). When
/// `fix_velocity` is false only positions move (Verlet derives velocities from positions
/// afterwards).
pub fn project_out(
    x: &mut [DVec3],
    v: &mut [DVec3],
    inv_mass: &[f64],
    params: &SimParams,
    ball: Option<&Ball>,
    fix_velocity: bool,
    slop: f64,
) {
    if ball.is_none() && params.ground.is_none() {
        return;
    }
    for i in 0..x.len() {
        if inv_mass[i] == 0.0 {
            continue;
        }
        for c in contacts(params, ball, x[i]).filter(|c| c.depth > slop) {
            x[i] += c.normal * c.depth;
            if fix_velocity {
                let rel = v[i] - c.surface_velocity;
                let vn = rel.dot(c.normal);
                if vn < 0.0 {
                    v[i] -= c.normal * vn;
                }
            }
        }
    }
}

/// How deep a preview may end inside a collider's skin (or off its rod) before a contact
/// correction is made, and a particle before the projection after integration moves it:
/// the strain tolerance times the shortest rest length — the contact's own tolerance, as
/// the strain tolerance is the distance constraints'. Stricter than the solvers' own
/// accuracy, contact could never be met: each pass moves particles by up to that much
/// (measured: a 30×30 cloth resting on the ball, every contact round correcting all 356
/// particles in contact by ≈ 1e-7 m with a slop of a tenth of it).
pub fn contact_slop(cloth: &Cloth, params: &SimParams) -> f64 {
    params.tolerance * cloth.topology.shortest_rest()
}

/// The contact set of a step as the sweep-based solvers see it: inequalities visited once
/// per sweep, in the same Gauss–Seidel loop as the distance constraints (Bender & Schmitt
/// 2006), so a pass ends only when its preview meets both.
#[derive(Clone, Copy)]
pub struct ContactSweep<'a> {
    /// Parameters of the step (ground, friction, dt).
    pub params: &'a SimParams,
    /// The ball at the end of the step.
    pub ball: Option<&'a Ball>,
    /// Particles on gliders.
    pub gliders: &'a [Glider],
    /// How far a preview may end inside a collider or off its rod before it is corrected
    /// (m): the strain tolerance times the shortest rest length.
    pub slop: f64,
    /// The cloth's contacts with itself ([`crate::sim::contact`]), if any.
    pub selfs: Option<SelfRows<'a>>,
}

impl ContactSweep<'_> {
    /// Whether there is anything to visit.
    pub fn is_empty(&self) -> bool {
        self.ball.is_none()
            && self.params.ground.is_none()
            && self.gliders.is_empty()
            && self.selfs.is_none_or(|s| s.is_empty())
    }

    /// One visit of every contact and rod: each dynamic particle whose preview
    /// `drift(i) + v·h` ends deeper than `slop` inside a collider gets the normal velocity
    /// change that puts the preview on the surface, and Coulomb friction cuts its
    /// tangential velocity relative to the collider by at most μ times that change; each
    /// glider particle whose preview leaves its rod by more than `slop` gets the velocity
    /// change across the rod that puts the preview back on it. `drift(i)` is where particle i would end with no velocity
    /// ([`crate::sim::kernels::drift`]). Returns how many corrections were made.
    pub fn visit(
        &self,
        drift: impl Fn(usize) -> DVec3,
        v: &mut [DVec3],
        inv_mass: &[f64],
    ) -> usize {
        self.visit_with(drift, v, inv_mass, None, true, None)
    }

    /// For each of `n` particles, how far its preview may move from `drift(i)` before the
    /// ball or the ground can hold it deeper than the slop (less a picometre for the
    /// round-off; infinite with neither): where `|v|·h` stays below it, a visit has nothing
    /// to do for that particle, since a point's distance to the ball's centre or to the
    /// ground changes by at most its own motion. What [`ContactSweep::visit_with`] skips
    /// by, bit for bit the same visit.
    pub fn clearances(&self, drift: impl Fn(usize) -> DVec3, n: usize, out: &mut Vec<f64>) {
        const ROUND_OFF: f64 = 1e-12;
        out.clear();
        out.extend((0..n).map(|i| {
            let p = drift(i);
            let mut c = f64::INFINITY;
            if let Some(b) = self.ball {
                c = c.min(p.distance(b.center) - (b.radius + CONTACT_SKIN - self.slop));
            }
            if let Some(g) = self.params.ground {
                c = c.min(p.y - (g + CONTACT_SKIN - self.slop));
            }
            c - ROUND_OFF
        }));
    }

    /// [`ContactSweep::visit`] with, given `active`, only the self-contact rows it lists
    /// ([`SelfRows::near`]): what the strips sweeps visit between two full visits. Without
    /// `self_friction` the self-contact rows get their normal impulse only (the sweeps
    /// that finish Newton's pass, [`crate::sim::solver::strips::StripsSolver`]).
    pub fn visit_with(
        &self,
        drift: impl Fn(usize) -> DVec3,
        v: &mut [DVec3],
        inv_mass: &[f64],
        active: Option<&[u32]>,
        self_friction: bool,
        clearances: Option<&[f64]>,
    ) -> usize {
        if self.is_empty() {
            return 0;
        }
        let h = self.params.dt;
        let mu = self.params.friction;
        let mut any = 0;
        if self.ball.is_some() || self.params.ground.is_some() {
            let clear = clearances.filter(|c| c.len() == v.len());
            for i in 0..v.len() {
                if inv_mass[i] == 0.0 {
                    continue;
                }
                if let Some(c) = clear {
                    let c = c[i];
                    if c > 0.0 && v[i].length_squared() * (h * h) < c * c {
                        continue;
                    }
                }
                let p = drift(i) + v[i] * h;
                for c in contacts(self.params, self.ball, p).filter(|c| c.depth > self.slop) {
                    any += 1;
                    let dvn = c.depth / h;
                    v[i] += c.normal * dvn;
                    let rel = v[i] - c.surface_velocity;
                    let vt = rel - c.normal * rel.dot(c.normal);
                    let vt_len = vt.length();
                    if vt_len > 0.0 {
                        v[i] -= vt * ((mu * dvn).min(vt_len) / vt_len);
                    }
                }
            }
        }
        for g in self.gliders {
            let i = g.particle;
            if inv_mass.get(i).is_none_or(|&k| k == 0.0) {
                continue;
            }
            let p = drift(i) + v[i] * h;
            let off = g.project(p) - p;
            if off.length() > self.slop {
                v[i] += off / h;
                any += 1;
            }
        }
        if let Some(s) = &self.selfs {
            let mu = if self_friction { mu } else { 0.0 };
            any += s.visit(active, &drift, v, inv_mass, h, self.slop, mu);
        }
        any
    }

    /// Whether a self-contact row's previewed gap is short by more than the slop (what
    /// Newton asks after its pass, whose system holds the obstacles but not these rows).
    pub fn self_violated(
        &self,
        drift: impl Fn(usize) -> DVec3,
        v: &[DVec3],
        inv_mass: &[f64],
    ) -> bool {
        self.selfs
            .is_some_and(|s| s.violated(&drift, v, inv_mass, self.params.dt, self.slop))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path through the ball enters its skin where the sphere of radius + skin meets it;
    /// a path that starts inside, misses, or stops short does not enter.
    #[test]
    fn a_straight_path_enters_the_ball_where_it_meets_its_skin() {
        let ball = Ball::still(DVec3::ZERO, 0.5);
        let r = 0.5 + CONTACT_SKIN;
        let t = ball_entry(&ball, DVec3::new(-1.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0));
        assert!((t.expect("enters") - (1.0 - r) / 2.0).abs() < 1e-12);
        let inside = ball_entry(&ball, DVec3::ZERO, DVec3::X * 2.0);
        assert_eq!(inside, None);
        let past = ball_entry(&ball, DVec3::new(-1.0, 1.0, 0.0), DVec3::new(1.0, 1.0, 0.0));
        assert_eq!(past, None);
        let short = ball_entry(
            &ball,
            DVec3::new(-1.0, 0.0, 0.0),
            DVec3::new(-0.9, 0.0, 0.0),
        );
        assert_eq!(short, None);
    }

    /// A visit that skips the particles whose velocities stay short of their clearance
    /// makes the same corrections, bit for bit, as one that tests every particle: on
    /// particles strewn round the ball's skin and the ground, some just outside, some just
    /// inside by less or more than the slop, with velocities from still to fast, over
    /// several visits in a row (each visit's corrections change the next one's previews).
    #[test]
    fn visits_with_clearances_make_the_same_corrections() {
        let ball = Ball::still(DVec3::new(0.0, 0.5, 0.0), 0.5);
        let params = SimParams {
            dt: 1.0 / 240.0,
            ground: Some(-0.01),
            friction: 0.3,
            ..SimParams::default()
        };
        let sweep = ContactSweep {
            params: &params,
            ball: Some(&ball),
            gliders: &[],
            slop: 1e-7,
            selfs: None,
        };
        let r = ball.radius + CONTACT_SKIN;
        // A small deterministic generator: no dependence on a crate's sequence.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let n = 4000;
        let mut drift = Vec::with_capacity(n);
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            let dir = DVec3::new(uniform() - 0.5, uniform() - 0.5, uniform() - 0.5).normalize();
            // Distances from the skin from 1 mm inside to 1 mm outside, some within the slop.
            let off = (uniform() - 0.5) * 2e-3 * 10f64.powi(-((i % 5) as i32));
            let p = if i % 3 == 0 {
                DVec3::new(uniform(), -0.01 + CONTACT_SKIN + off, uniform())
            } else {
                ball.center + dir * (r + off)
            };
            drift.push(p);
            let speed = 10f64.powi(-((i % 7) as i32));
            v.push(DVec3::new(uniform() - 0.5, uniform() - 0.5, uniform() - 0.5) * speed);
        }
        let inv_mass: Vec<f64> = (0..n)
            .map(|i| if i % 11 == 0 { 0.0 } else { 1.0 })
            .collect();
        let mut clear = Vec::new();
        sweep.clearances(|i| drift[i], n, &mut clear);
        let skipped = (0..n)
            .filter(|&i| v[i].length_squared() * params.dt * params.dt < clear[i] * clear[i])
            .count();
        assert!(skipped > n / 4 && skipped < n, "{skipped} of {n} skipped");
        let (mut a, mut b) = (v.clone(), v);
        for visit in 0..4 {
            let na = sweep.visit_with(|i| drift[i], &mut a, &inv_mass, None, true, None);
            let nb = sweep.visit_with(|i| drift[i], &mut b, &inv_mass, None, true, Some(&clear));
            assert_eq!(na, nb);
            assert!(visit > 0 || na > n / 10, "{na} corrections");
            assert_eq!(a, b);
        }
    }
}
