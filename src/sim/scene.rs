//! Scene presets: the 004 §4 benchmark scene, a curtain, a drape over a ball (004 Fig. 7)
//! a flag in the wind (003) and a curtain whose top hangs from rings on a rod (001 §5) on a
//! grid; a round tablecloth, a flag with a hole, a skirt and the grid's square on the
//! triangle meshes shipped in `assets/`. Any preset but the curtain rod can take a mesh
//! of the user's ([`SceneSpec::mesh`]).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::World;
use super::cloth::{Cloth, GridSpec, Orientation};
use super::dof::Glider;
use super::error::SimError;
use super::kind::parse_named;
use super::mesh::{self, ConstraintChoice, MassRule, TriMesh};
use super::params::{Ball, SimParams};

/// Which particles start pinned.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PinSpec {
    /// The two corners of row 0 (the far edge; the paper's set-up).
    Corners,
    /// Every particle of row 0.
    TopEdge,
    /// Every particle of column 0 (a flag on its pole).
    LeftEdge,
    /// Nothing pinned.
    None,
    /// Explicit particle indices (on a grid row-major: index = row·W + col; on a mesh the
    /// file's vertex order, from 0).
    Indices(Vec<usize>),
    /// The vertices of a named group of the mesh (`group:NAME`; an OBJ `g` or `o`).
    Group(String),
}

impl FromStr for PinSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "corners" => Ok(PinSpec::Corners),
            "top-edge" => Ok(PinSpec::TopEdge),
            "left-edge" => Ok(PinSpec::LeftEdge),
            "none" => Ok(PinSpec::None),
            other if other.starts_with("group:") => {
                let name = other["group:".len()..].trim();
                if name.is_empty() {
                    Err("`group:` needs a group name (group:NAME)".into())
                } else {
                    Ok(PinSpec::Group(name.to_string()))
                }
            }
            other => other
                .split(',')
                .map(|t| {
                    t.trim()
                        .parse::<usize>()
                        .map_err(|_| format!("`{t}` is not a particle index (expected corners, top-edge, left-edge, none, group:NAME or a list like 0,19)"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(PinSpec::Indices),
        }
    }
}

impl PinSpec {
    /// Row-major indices of the pinned particles in a W×H grid.
    pub fn indices(&self, w: usize, h: usize) -> Result<Vec<usize>, SimError> {
        Ok(match self {
            PinSpec::Corners => {
                if w > 1 {
                    vec![0, w - 1]
                } else {
                    vec![0]
                }
            }
            PinSpec::TopEdge => (0..w).collect(),
            PinSpec::LeftEdge => (0..h).map(|r| r * w).collect(),
            PinSpec::None => vec![],
            PinSpec::Indices(v) => {
                if let Some(&bad) = v.iter().find(|&&i| i >= w * h) {
                    return Err(SimError::ParticleOutOfRange {
                        index: bad,
                        count: w * h,
                    });
                }
                v.clone()
            }
            PinSpec::Group(name) => {
                return Err(SimError::param(
                    "pin",
                    format!("group `{name}`: a grid has no vertex groups (they come with a mesh)"),
                ));
            }
        })
    }

    /// Indices of the pinned particles of a mesh cloth, by the same rules read from the
    /// rest shape: the top edge is the particles within 1e-4 of the cloth's size of its
    /// highest point (a vertical cloth) or of its far side, smallest z (a horizontal one);
    /// the corners are the top edge's two ends along x; the left edge is the particles
    /// within 1e-4 of the size of the smallest x.
    pub fn mesh_indices(&self, x: &[DVec3], mesh: &TriMesh) -> Result<Vec<usize>, SimError> {
        let (lo, hi) = mesh::bounds(x);
        let size = (hi - lo).max_element();
        let eps = 1e-4 * size;
        let vertical = hi.y - lo.y > eps;
        let top: Vec<usize> = (0..x.len())
            .filter(|&i| {
                if vertical {
                    x[i].y >= hi.y - eps
                } else {
                    x[i].z <= lo.z + eps
                }
            })
            .collect();
        Ok(match self {
            PinSpec::Corners => {
                let by_x = |f: fn(f64, f64) -> bool| {
                    top.iter()
                        .copied()
                        .reduce(|a, b| if f(x[b].x, x[a].x) { b } else { a })
                };
                let mut v: Vec<usize> = [by_x(|b, a| b < a), by_x(|b, a| b > a)]
                    .into_iter()
                    .flatten()
                    .collect();
                v.dedup();
                v
            }
            PinSpec::TopEdge => top,
            PinSpec::LeftEdge => (0..x.len()).filter(|&i| x[i].x <= lo.x + eps).collect(),
            PinSpec::None => vec![],
            PinSpec::Indices(v) => {
                if let Some(&bad) = v.iter().find(|&&i| i >= x.len()) {
                    return Err(SimError::ParticleOutOfRange {
                        index: bad,
                        count: x.len(),
                    });
                }
                v.clone()
            }
            PinSpec::Group(name) => mesh.group(name)?.iter().map(|&i| i as usize).collect(),
        })
    }
}

/// The scene presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenePreset {
    /// 004 §4: horizontal cloth, two far corners static, some random initial velocities.
    Hanging,
    /// A vertical curtain hanging from its top edge.
    Curtain,
    /// A horizontal cloth falling onto a ball, over a ground plane (004 Fig. 7).
    Drape,
    /// A vertical flag held along one edge, in gusty wind (003).
    Flag,
    /// A vertical curtain whose top edge hangs from rings that slide along a rod (ndof-1
    /// gliders, 001 §5); the first ring is fixed. Drag the last ring to draw the curtain.
    CurtainRod,
    /// A vertical cloth, tilted, dropped from a fifth of its height onto the ground, where
    /// it folds onto itself several times (self-collision's demo scene, as Ten Minute
    /// Physics' self-collision demo drops a long strip).
    Pile,
    /// A horizontal cloth lying on the ground; its scripted drag ([`ScenePreset::script`])
    /// lifts a corner across the sheet to the opposite corner and lets go.
    Fold,
    /// A round tablecloth (`assets/tablecloth.obj`, a triangle mesh) falling onto the
    /// drape's ball.
    Tablecloth,
    /// A flag with a round hole (`assets/flag_hole.obj`) on its pole, in the flag's wind.
    FlagHole,
    /// A flared skirt (`assets/skirt.obj`, quads, an open cone) pinned at its waist above
    /// a ball wider than the waist: it drapes over the ball in folds.
    Skirt,
    /// The grid's own 30×30 square read from `assets/square.obj`, pinned at its two far
    /// corners: the 004 §4 scene as a mesh.
    Square,
    /// A vertical sheet pinned along its top edge over the ground, that tears
    /// ([`TEAR_SCENE_STRENGTH`]): its scripted drag ([`ScenePreset::script`]) pulls the
    /// middle of its width, near the pins, towards the viewer and down until it rips; the
    /// pieces fall to the ground.
    Tear,
}

/// The tear scene's tear strength, N/m, unless the parameters name one: twice the tension
/// its own weight puts on its top row (0.2 kg on a 1 m width: 2 N/m), so it hangs whole
/// and rips where the hand pulls (docs/numerics.md, "Tearing": between 3.5 and 4 N/m the
/// tear runs away and shreds the sheet).
pub const TEAR_SCENE_STRENGTH: f64 = 4.0;

impl ScenePreset {
    /// Every preset.
    pub const ALL: [ScenePreset; 12] = [
        ScenePreset::Hanging,
        ScenePreset::Curtain,
        ScenePreset::Drape,
        ScenePreset::Flag,
        ScenePreset::CurtainRod,
        ScenePreset::Pile,
        ScenePreset::Fold,
        ScenePreset::Tablecloth,
        ScenePreset::FlagHole,
        ScenePreset::Skirt,
        ScenePreset::Square,
        ScenePreset::Tear,
    ];

    /// The shipped mesh of a mesh scene: (its file name, its OBJ text), built into the
    /// binary so the scenes work from any directory.
    pub fn shipped_mesh(self) -> Option<(&'static str, &'static str)> {
        match self {
            ScenePreset::Tablecloth => Some((
                "tablecloth.obj",
                include_str!("../../assets/tablecloth.obj"),
            )),
            ScenePreset::FlagHole => {
                Some(("flag_hole.obj", include_str!("../../assets/flag_hole.obj")))
            }
            ScenePreset::Skirt => Some(("skirt.obj", include_str!("../../assets/skirt.obj"))),
            ScenePreset::Square => Some(("square.obj", include_str!("../../assets/square.obj"))),
            _ => None,
        }
    }

    /// Whether the preset's cloth is a mesh of its own (not a grid).
    pub fn is_mesh(self) -> bool {
        self.shipped_mesh().is_some()
    }

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            ScenePreset::Hanging => "hanging",
            ScenePreset::Curtain => "curtain",
            ScenePreset::Drape => "drape",
            ScenePreset::Flag => "flag",
            ScenePreset::CurtainRod => "curtain-rod",
            ScenePreset::Pile => "pile",
            ScenePreset::Fold => "fold",
            ScenePreset::Tablecloth => "tablecloth",
            ScenePreset::FlagHole => "flag-hole",
            ScenePreset::Skirt => "skirt",
            ScenePreset::Square => "square",
            ScenePreset::Tear => "tear",
        }
    }

    /// The scene's own scripted drag, if it has one: the fold's corner (particle 0) lifted
    /// 0.15 × size above the ground and carried over the sheet, in 1.5 s, to above the
    /// opposite corner (4 % of the diagonal short of it), and let go at 2 s. `world` is
    /// the scene as built.
    pub fn script(self, world: &World) -> Option<super::Drag> {
        match self {
            ScenePreset::Fold => {
                let x = &world.cloth.particles.x;
                let (first, last) = (x[0], x[x.len() - 1]);
                let size = world.cloth.topology.rest_extent();
                let to = first.lerp(last, 0.96) + DVec3::Y * (0.15 * size);
                Some(super::Drag {
                    particle: 0,
                    to,
                    start: 0.1,
                    arrive: 1.6,
                    release: Some(2.0),
                })
            }
            ScenePreset::Tear => {
                // The particle nearest the middle of the width, a tenth of the size below
                // the pins, pulled towards the viewer and down (0.6 and 0.3 × size) in a
                // second — away from the sheet, not into it — and let go at 3 s.
                let x = &world.cloth.particles.x;
                let (lo, hi) = mesh::bounds(x);
                let size = world.cloth.topology.rest_extent();
                let mid = DVec3::new(0.5 * (lo.x + hi.x), hi.y - 0.1 * size, 0.5 * (lo.z + hi.z));
                let particle = (0..x.len())
                    .min_by(|&a, &b| x[a].distance(mid).total_cmp(&x[b].distance(mid)))?;
                Some(super::Drag {
                    particle,
                    to: x[particle] + DVec3::new(0.0, -0.3, 0.6) * size,
                    start: 0.2,
                    arrive: 1.2,
                    release: Some(3.0),
                })
            }
            _ => None,
        }
    }

    /// Pins the preset uses unless told otherwise.
    pub fn default_pins(self) -> PinSpec {
        match self {
            ScenePreset::Hanging | ScenePreset::Square => PinSpec::Corners,
            ScenePreset::Curtain | ScenePreset::Tear => PinSpec::TopEdge,
            ScenePreset::Drape | ScenePreset::Tablecloth => PinSpec::None,
            ScenePreset::Skirt => PinSpec::TopEdge,
            ScenePreset::Flag | ScenePreset::FlagHole => PinSpec::LeftEdge,
            ScenePreset::CurtainRod => PinSpec::Indices(vec![0]),
            ScenePreset::Pile | ScenePreset::Fold => PinSpec::None,
        }
    }

    /// Fraction of particles with a random initial velocity unless told otherwise (the
    /// scene's own cloth; [`SceneSpec::default_perturb`] for a user's mesh).
    pub fn default_perturb(self) -> f64 {
        match self {
            ScenePreset::Hanging | ScenePreset::Square => 0.05,
            _ => 0.0,
        }
    }

    /// Whether the scene drops its cloth onto a ball.
    pub fn has_ball(self) -> bool {
        matches!(
            self,
            ScenePreset::Drape | ScenePreset::Tablecloth | ScenePreset::Skirt
        )
    }
}

impl fmt::Display for ScenePreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ScenePreset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_named(&ScenePreset::ALL, ScenePreset::name, "scene", s)
    }
}

/// A mesh a scene is built on: the user's (`--mesh PATH`) or a preset's own.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSource {
    /// Where it came from (a file name), for the panel and the reports.
    pub name: String,
    /// The mesh, validated.
    pub mesh: Arc<TriMesh>,
}

impl MeshSource {
    /// Read and validate an OBJ file.
    pub fn read(path: &std::path::Path) -> Result<MeshSource, SimError> {
        Ok(MeshSource {
            name: path.display().to_string(),
            mesh: Arc::new(mesh::obj::read(path)?),
        })
    }
}

/// Everything needed to build a scene.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SceneSpec {
    /// Preset.
    pub preset: ScenePreset,
    /// Particles per row (a grid; a mesh has its own).
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// A mesh to build the cloth on in place of the grid (or of a mesh preset's own).
    #[serde(skip)]
    pub mesh: Option<MeshSource>,
    /// Which of a mesh's edges are distance constraints ([`ConstraintChoice`]).
    #[serde(default)]
    pub constraints: ConstraintChoice,
    /// How a mesh's mass is spread over its particles ([`MassRule`]; a grid's is even).
    #[serde(skip)]
    pub mass_rule: MassRule,
    /// Longer side of the cloth, m.
    pub size: f64,
    /// Total mass, kg.
    pub mass: f64,
    /// Pinned particles.
    pub pins: PinSpec,
    /// Fraction of the row length the pins move inward (the cloth is bent into an arc
    /// so every constraint stays at its rest length). 0 = flat. A grid's rows only: a mesh
    /// is built as its file shapes it.
    pub slack: f64,
    /// Fraction of dynamic particles given a random initial velocity (004 §4).
    pub perturb: f64,
    /// Largest component of a random initial velocity, m/s.
    pub perturb_speed: f64,
    /// Random seed.
    pub seed: u64,
}

impl SceneSpec {
    /// The preset's defaults at a given grid size (the 004 §4 scene: 1 m, 0.2 kg).
    pub fn new(preset: ScenePreset, width: usize, height: usize) -> Self {
        SceneSpec {
            preset,
            width,
            height,
            mesh: None,
            constraints: ConstraintChoice::default(),
            mass_rule: MassRule::default(),
            size: 1.0,
            mass: 0.2,
            pins: preset.default_pins(),
            slack: 0.0,
            perturb: preset.default_perturb(),
            perturb_speed: 0.5,
            seed: 1,
        }
    }

    /// Fraction of particles with a random initial velocity unless told otherwise: the
    /// preset's, and the hanging cloth's small kick for a user's mesh dropped onto a
    /// ball.
    ///
    /// A flat sheet standing upright over the ball's centre is symmetric about its own
    /// plane: landing on its edge, it has no way to buckle out of that plane, its quads
    /// (sheared only by springs) collapse within it, and Newton's rows go singular.
    /// Measured on a 30×30 upright square in the skirt with self-collision off: 50 Newton
    /// steps (the cap) in 21 of 40 steps, 1.7 s a step, and the sheet thrown off the ball
    /// at 66 m/s; with the kick, no capped step and 68 ms. The scenes' own cloths keep
    /// their start: the kick on the 50×50 drape changed its chaos for the worse (docs/
    /// experiments.md, "An upright sheet on the ball").
    pub fn default_perturb(&self) -> f64 {
        if self.mesh.is_some() && self.preset.has_ball() {
            0.05
        } else {
            self.preset.default_perturb()
        }
    }

    /// Build on `mesh` (a user's) or on the preset's own cloth; a fraction of kicked
    /// particles left at its default follows the new cloth's
    /// ([`SceneSpec::default_perturb`]).
    pub fn set_mesh(&mut self, mesh: Option<MeshSource>) {
        let was_default = self.perturb == self.default_perturb();
        self.mesh = mesh;
        if was_default {
            self.perturb = self.default_perturb();
        }
    }

    /// The mesh the cloth is built on: the user's, else the preset's own, else none (a
    /// grid).
    pub fn mesh_source(&self) -> Result<Option<MeshSource>, SimError> {
        if let Some(m) = &self.mesh {
            return Ok(Some(m.clone()));
        }
        let Some((name, text)) = self.preset.shipped_mesh() else {
            return Ok(None);
        };
        Ok(Some(MeshSource {
            name: name.to_string(),
            mesh: Arc::new(mesh::obj::parse(text)?),
        }))
    }

    /// Build the world: cloth, pins, initial velocities, and the preset's parameters on
    /// top of `params` (ball, ground and wind for the presets that have them).
    pub fn build(&self, params: SimParams) -> Result<World, SimError> {
        super::params::SCENE_SIZE.check(self.size)?;
        super::params::SCENE_MASS.check(self.mass)?;
        super::params::SCENE_SLACK.check(self.slack)?;
        if !(self.perturb.is_finite() && (0.0..=1.0).contains(&self.perturb)) {
            return Err(SimError::param(
                "perturb",
                format!("{} must be in [0, 1]", self.perturb),
            ));
        }
        if !(self.perturb_speed.is_finite() && self.perturb_speed >= 0.0) {
            return Err(SimError::param(
                "perturb_speed",
                format!("{} must be ≥ 0", self.perturb_speed),
            ));
        }
        let vertical = matches!(
            self.preset,
            ScenePreset::Curtain
                | ScenePreset::Flag
                | ScenePreset::CurtainRod
                | ScenePreset::Pile
                | ScenePreset::Tear
        );
        let grid = GridSpec {
            width: self.width,
            height: self.height,
            size: self.size,
            mass: self.mass,
            orientation: if vertical {
                Orientation::Vertical
            } else {
                Orientation::Horizontal
            },
            origin: if vertical {
                DVec3::new(0.0, self.size * 1.2, 0.0)
            } else {
                DVec3::new(0.0, self.size * 1.2, -0.5 * self.size)
            },
        };
        let source = self.mesh_source()?;
        // The cloth's top and bottom heights as built: the grid's by its construction (so
        // its scenes stay as they were), a mesh's from its placed vertices.
        let (mut cloth, pins, top, bottom) = match &source {
            None => {
                let mut cloth = Cloth::grid(&grid)?;
                let pins = self.pins.indices(self.width, self.height)?;
                if self.slack > 0.0 {
                    bend_rows(&mut cloth, &grid, self.slack);
                }
                if self.preset == ScenePreset::CurtainRod {
                    pleat(&mut cloth, &grid);
                }
                (cloth, pins, grid.origin.y, grid.origin.y - self.size)
            }
            Some(src) => {
                if self.preset == ScenePreset::CurtainRod {
                    return Err(SimError::param(
                        "mesh",
                        "the curtain rod hangs a grid's top row from rings; choose another scene for a mesh",
                    ));
                }
                let x = src.mesh.placed(self.size, 1.2 * self.size)?;
                let pins = self.pins.mesh_indices(&x, &src.mesh)?;
                let (cloth, _) =
                    mesh::build_cloth(&src.mesh, x, self.mass, self.constraints, self.mass_rule)?;
                let (lo, hi) = mesh::bounds(&cloth.particles.x);
                (cloth, pins, hi.y, lo.y)
            }
        };
        for &i in &pins {
            cloth.set_pinned(i, true)?;
        }
        let mut params = params;
        match self.preset {
            ScenePreset::Hanging | ScenePreset::Curtain | ScenePreset::Square => {}
            ScenePreset::Drape | ScenePreset::Tablecloth => {
                let centre = top - 0.45 * self.size;
                let drop = drop_below(&cloth.particles.x, centre, 0.25 * self.size, self.size);
                params.ball = Some(Ball::still(
                    DVec3::new(0.0, centre - drop, 0.0),
                    0.25 * self.size,
                ));
                params.ground = Some(top - 1.1 * self.size - drop);
            }
            ScenePreset::Flag | ScenePreset::FlagHole => {
                params.wind.enabled = true;
                params.wind.velocity = DVec3::new(9.0, 0.0, 1.5);
            }
            ScenePreset::Skirt => {
                // A skirt on hips: its waist, the top ring (pinned), above a ball a quarter
                // wider than the waist, lowered until the waist clears it; the flared skirt
                // falls onto the ball and drapes over it, its hem, longer than the ball is
                // round, in folds. Pinned, it stays where the camera looks (dropped over a
                // ball, a tube tipped over and slid off onto the ground within 2.5 s).
                let x = &cloth.particles.x;
                let (lo, hi) = mesh::bounds(x);
                let eps = 1e-4 * (hi - lo).max_element();
                let waist: Vec<f64> = x
                    .iter()
                    .filter(|p| p.y >= hi.y - eps)
                    .map(|p| p.with_y(0.0).length())
                    .collect();
                let r = waist.iter().sum::<f64>() / waist.len().max(1) as f64;
                let radius = if r > 1e-3 * self.size {
                    1.25 * r
                } else {
                    0.25 * self.size
                };
                let centre = top - radius;
                let centre = centre - drop_below(x, centre, radius, self.size);
                params.ball = Some(Ball::still(DVec3::new(0.0, centre, 0.0), radius));
                params.ground = Some(bottom.min(centre - radius) - 0.25 * self.size);
            }
            ScenePreset::CurtainRod => {}
            ScenePreset::Tear => {
                params.ground = Some(bottom - 0.2 * self.size);
                params.tear_strength = params.tear_strength.or(Some(TEAR_SCENE_STRENGTH));
            }
            ScenePreset::Pile => {
                // Tilted by 0.3 rad about its bottom edge, so it buckles one way; the
                // bottom edge a fifth of the size above the ground.
                let (sin, cos) = 0.3f64.sin_cos();
                for x in &mut cloth.particles.x {
                    let (y, z) = (x.y - bottom, x.z);
                    x.y = bottom + y * cos - z * sin;
                    x.z = y * sin + z * cos;
                }
                params.ground = Some(bottom - 0.2 * self.size);
            }
            ScenePreset::Fold => {
                // Resting on the ground: the contact skin below the cloth.
                let lowest = if source.is_some() { bottom } else { top };
                params.ground = Some(lowest - super::collision::CONTACT_SKIN);
            }
        }
        if self.perturb > 0.0 {
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
            let p = &mut cloth.particles;
            for i in 0..p.len() {
                let pick: f64 = rng.random();
                let v = DVec3::new(rng.random(), rng.random(), rng.random()) * 2.0 - DVec3::ONE;
                if pick < self.perturb && p.inv_mass[i] > 0.0 {
                    p.v[i] = v * self.perturb_speed;
                }
            }
        }
        let mut world = World::new(cloth, params)?;
        if self.preset == ScenePreset::CurtainRod {
            for i in ring_columns(self.width) {
                if world.cloth.particles.pinned[i] {
                    continue;
                }
                let x = world.cloth.particles.x[i];
                let g = Glider::new(i, x, DVec3::X).expect("the rod axis is a unit vector");
                world.add_glider(g)?;
            }
        }
        Ok(world)
    }
}

/// How far a scene's ball (centre height `centre` on the vertical axis, `radius`) and its
/// ground must be lowered so that every particle starts at least `0.05 × size` above the
/// ball's surface: the drape's and the skirt's balls are placed for a cloth lying over them
/// (a horizontal sheet, a tube whose rim catches on the ball), and a mesh of another shape —
/// a flat sheet read into the skirt, standing across the drape's ball — would otherwise start
/// inside it, and the ball's push would crush its lower rows together in the first step.
/// Zero for the shapes the scenes were made for.
fn drop_below(x: &[DVec3], centre: f64, radius: f64, size: f64) -> f64 {
    let clearance = 0.05 * size;
    let needed = x
        .iter()
        .filter_map(|p| {
            let d2 = p.x * p.x + p.z * p.z;
            (d2 < radius * radius).then(|| centre + (radius * radius - d2).sqrt() + clearance - p.y)
        })
        .fold(0.0, f64::max);
    // The tube's rim lies exactly at its clearance: round-off is not a reason to move it.
    if needed > 1e-9 * size { needed } else { 0.0 }
}

/// Sew vertical pleats into a curtain: every column is displaced along the normal by a
/// sine that vanishes at the ring columns, and the rest lengths are taken from the pleated
/// shape, so the cloth starts unstrained. Without them the curtain is exactly planar and
/// drawing it together could only compress it in its plane.
fn pleat(cloth: &mut Cloth, grid: &GridSpec) {
    let w = grid.width;
    let every = ring_columns(w).get(1).copied().unwrap_or(1).max(1);
    let depth = 0.25 * grid.spacing() * every as f64;
    let x = &mut cloth.particles.x;
    for r in 0..grid.height {
        for c in 0..w {
            let phase = std::f64::consts::PI * c as f64 / every as f64;
            x[r * w + c].z += depth * phase.sin();
        }
    }
    let t = &mut cloth.topology;
    for (e, &[a, b]) in t.edges.iter().enumerate() {
        t.rest[e] = x[a as usize].distance(x[b as usize]);
    }
    for s in &mut t.springs {
        s.rest = x[s.a as usize].distance(x[s.b as usize]);
    }
}

/// Columns of the top row that carry a ring in [`ScenePreset::CurtainRod`]: about ten rings
/// whatever the width, always including both ends; the fabric between rings is free to
/// fold, so the curtain can be drawn together.
pub fn ring_columns(width: usize) -> Vec<usize> {
    if width == 0 {
        return Vec::new();
    }
    let every = ((width.saturating_sub(1)) / 10).max(1);
    let mut cols: Vec<usize> = (0..width).step_by(every).collect();
    if cols.last() != Some(&(width - 1)) {
        cols.push(width - 1);
    }
    cols
}

/// Bend every row into the same circular arc (in the plane of the row and the cloth's
/// normal) so that the row's chord is (1 − slack) of its length while every segment keeps
/// its rest length. Columns stay straight, so every constraint is exactly satisfied.
fn bend_rows(cloth: &mut Cloth, grid: &GridSpec, slack: f64) {
    let w = grid.width;
    if w < 2 {
        return;
    }
    let s = grid.spacing();
    let n = (w - 1) as f64;
    let target = (1.0 - slack) * n * s;
    // Chord of an arc of N segments of length s on a circle with segment angle φ:
    // s·sin(Nφ/2)/sin(φ/2). Solve for φ ∈ (0, 2π/N) by bisection.
    let chord = |phi: f64| s * (n * phi / 2.0).sin() / (phi / 2.0).sin();
    let (mut lo, mut hi) = (1e-12, std::f64::consts::TAU / n - 1e-12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if chord(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let phi = 0.5 * (lo + hi);
    let radius = s / (2.0 * (phi / 2.0).sin());
    let normal = match grid.orientation {
        Orientation::Horizontal => DVec3::NEG_Y,
        Orientation::Vertical => DVec3::Z,
    };
    let x = &mut cloth.particles.x;
    for r in 0..grid.height {
        let base = x[r * w] + DVec3::X * (n * s * 0.5);
        for c in 0..w {
            let theta = (c as f64 - n * 0.5) * phi;
            let along = radius * theta.sin();
            let depth = radius * ((n * phi * 0.5).cos() - theta.cos()).abs();
            x[r * w + c] = base + DVec3::X * along + normal * depth;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset parses from its name, and the error for an unknown one lists them all
    /// (it used to leave out `curtain-rod`).
    #[test]
    fn every_preset_parses_and_the_error_names_them_all() {
        let err = "teapot".parse::<ScenePreset>().unwrap_err();
        for p in ScenePreset::ALL {
            assert_eq!(p.name().parse::<ScenePreset>(), Ok(p));
            assert!(err.contains(p.name()), "{err}");
        }
    }

    /// A size or mass outside its range is an error of the library itself, naming the
    /// parameter, not something only the front ends catch (a NaN size used to build a
    /// cloth of NaN positions, a zero mass one of infinite inverse masses).
    #[test]
    fn a_scene_of_bad_size_or_mass_is_refused() {
        let ok = SceneSpec::new(ScenePreset::Hanging, 5, 5);
        assert!(ok.build(SimParams::default()).is_ok());
        for (size, mass, name) in [
            (f64::NAN, 0.2, "size"),
            (0.0, 0.2, "size"),
            (1e9, 0.2, "size"),
            (1.0, 0.0, "mass"),
            (1.0, f64::INFINITY, "mass"),
            (1.0, -1.0, "mass"),
        ] {
            let spec = SceneSpec {
                size,
                mass,
                ..ok.clone()
            };
            let Err(err) = spec.build(SimParams::default()) else {
                panic!("{size} m, {mass} kg: built");
            };
            assert!(err.to_string().contains(name), "{size} m, {mass} kg: {err}");
        }
    }
}
