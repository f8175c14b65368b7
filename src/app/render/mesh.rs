//! The cloth mesh, the ball, the ground and the lights; the mesh is refreshed from the
//! simulation after the fixed loop, interpolated with the fixed-step overstep so motion is
//! smooth at any frame rate.

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use glam::DVec3;

use super::material::{ClothMaterial, ClothMaterialPlugin};
use crate::app::sim::SimState;

/// What the view shows.
#[derive(Resource, Debug, Clone, Copy)]
pub struct ViewSettings {
    /// Colour vertices by the largest strain of their constraints.
    pub heatmap: bool,
    /// Strain shown as full red in the heat-map.
    pub strain_scale: f64,
    /// Draw the structural constraints as lines.
    pub wireframe: bool,
}

impl Default for ViewSettings {
    fn default() -> Self {
        ViewSettings {
            heatmap: false,
            strain_scale: 0.05,
            wireframe: false,
        }
    }
}

/// Marker of the cloth mesh entity.
#[derive(Component)]
pub struct ClothMesh;

/// Marker of the ball entity.
#[derive(Component)]
pub struct BallMarker;

/// Marker of the ground entity.
#[derive(Component)]
pub struct GroundMarker;

/// The particle the user holds, for highlighting.
#[derive(Resource, Default, Debug, Clone, Copy)]
pub struct Highlight {
    /// Held particle.
    pub particle: Option<usize>,
}

/// Rendering plugin.
pub struct RenderPlugin;

impl Plugin for RenderPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(ClothMaterialPlugin)
            .init_resource::<ViewSettings>()
            .init_resource::<Highlight>()
            .insert_resource(ClearColor(Color::srgb(0.12, 0.13, 0.16)))
            .insert_resource(GlobalAmbientLight {
                color: Color::WHITE,
                brightness: 900.0,
                affects_lightmapped_meshes: true,
            })
            .add_systems(Startup, setup)
            .add_systems(
                Update,
                (sync_cloth, sync_colliders, draw_overlays, sync_material),
            );
    }
}

fn cloth_mesh(state: &SimState) -> Mesh {
    let n = state.world.cloth.len();
    let mut mesh = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    );
    mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, vec![[0.0f32; 3]; n]);
    mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, vec![[0.0f32, 1.0, 0.0]; n]);
    mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, vec![[1.0f32; 4]; n]);
    let idx: Vec<u32> = state
        .world
        .cloth
        .topology
        .triangles
        .iter()
        .flatten()
        .copied()
        .collect();
    mesh.insert_indices(Indices::U32(idx));
    mesh
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut cloth_materials: ResMut<Assets<ClothMaterial>>,
    state: Res<SimState>,
) {
    commands.spawn((
        Mesh3d(meshes.add(cloth_mesh(&state))),
        MeshMaterial3d(cloth_materials.add(ClothMaterial::default())),
        ClothMesh,
    ));
    commands.spawn((
        Mesh3d(meshes.add(Sphere::new(1.0).mesh().uv(48, 24))),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: Color::srgb(0.85, 0.35, 0.25),
            perceptual_roughness: 0.4,
            ..default()
        })),
        Transform::default(),
        Visibility::Hidden,
        BallMarker,
    ));
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(8.0, 8.0))),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: Color::srgb(0.3, 0.32, 0.35),
            perceptual_roughness: 1.0,
            ..default()
        })),
        Transform::default(),
        Visibility::Hidden,
        GroundMarker,
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 9000.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(2.0, 4.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 2500.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(-3.0, 1.0, -2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

/// Heat-map colour for a strain relative to the scale: blue (0) → green → red (≥ 1).
pub fn heat(t: f64) -> [f32; 4] {
    let t = t.clamp(0.0, 1.0) as f32;
    if t < 0.5 {
        let u = t * 2.0;
        [0.1, 0.3 + 0.6 * u, 0.9 - 0.7 * u, 1.0]
    } else {
        let u = (t - 0.5) * 2.0;
        [0.1 + 0.85 * u, 0.9 - 0.75 * u, 0.2 - 0.1 * u, 1.0]
    }
}

/// Per-system scratch of [`sync_cloth`]: the strain buffer, the topology the mesh's index
/// buffer was built for, and the checker pattern's shade of every particle with the
/// topology it was made for (the heat map can be on while the topology changes).
#[derive(Default)]
struct MeshCache {
    strains: Vec<f64>,
    shape: u64,
    checker: (u64, Vec<f32>),
}

/// What the cloth mesh's index buffer depends on: the topology (a rebuilt grid can keep its
/// particle count, 30×30 → 20×45, while every triangle changes).
fn shape_key(cloth: &crate::sim::Cloth) -> u64 {
    cloth.topology.id()
}

/// The checker pattern's shade of each particle: squares of 4×4 particles on a grid; on a
/// mesh, cubes four mean edge lengths wide of the shape it has when first drawn (a
/// material pattern, so folds show as they do on the grid).
fn checker(cloth: &crate::sim::Cloth) -> Vec<f32> {
    let n = cloth.len();
    match cloth.topology.grid {
        // A cut or torn grid's copies take the shade of the particle they were made from.
        Some(g) if g.width * g.height <= n => (0..n)
            .map(|i| {
                let i = cloth.topology.root(i as u32) as usize;
                let (r, c) = (i / g.width, i % g.width);
                ((r / 4 + c / 4) % 2) as f32 * 0.08
            })
            .collect(),
        _ => {
            let t = &cloth.topology;
            let mean = t.rest.iter().sum::<f64>() / t.rest.len().max(1) as f64;
            let cell = (4.0 * mean).max(1e-9);
            cloth
                .particles
                .x
                .iter()
                .map(|p| {
                    let k = (p / cell).floor();
                    ((k.x + k.y + k.z) as i64).rem_euclid(2) as f32 * 0.08
                })
                .collect()
        }
    }
}

fn sync_cloth(
    state: Res<SimState>,
    view: Res<ViewSettings>,
    highlight: Res<Highlight>,
    time: Res<Time<Fixed>>,
    mut meshes: ResMut<Assets<Mesh>>,
    query: Query<&Mesh3d, With<ClothMesh>>,
    mut cache: Local<MeshCache>,
) {
    let MeshCache {
        strains,
        shape,
        checker: shades,
    } = &mut *cache;
    let Ok(handle) = query.single() else { return };
    let Some(mut mesh) = meshes.get_mut(handle) else {
        return;
    };
    let cloth = &state.world.cloth;
    let n = cloth.len();
    let alpha = if state.paused {
        1.0
    } else {
        time.overstep_fraction_f64().clamp(0.0, 1.0)
    };
    let x = &cloth.particles.x;
    let prev = if state.prev_x.len() == n {
        &state.prev_x
    } else {
        x
    };
    let pos: Vec<DVec3> = (0..n).map(|i| prev[i].lerp(x[i], alpha)).collect();
    let mut normals = vec![DVec3::ZERO; n];
    for t in &cloth.topology.triangles {
        let (a, b, c) = (t[0] as usize, t[1] as usize, t[2] as usize);
        let nrm = (pos[b] - pos[a]).cross(pos[c] - pos[a]);
        normals[a] += nrm;
        normals[b] += nrm;
        normals[c] += nrm;
    }
    let colours: Vec<[f32; 4]> = if view.heatmap {
        cloth.particle_strains(strains);
        strains
            .iter()
            .map(|&s| heat(s / view.strain_scale))
            .collect()
    } else {
        if shades.0 != shape_key(cloth) || shades.1.len() != n {
            *shades = (shape_key(cloth), checker(cloth));
        }
        shades
            .1
            .iter()
            .map(|&check| [1.0 - check, 1.0 - check, 1.0 - check, 1.0])
            .collect()
    };
    let mut colours = colours;
    for (i, col) in colours.iter_mut().enumerate() {
        if cloth.particles.pinned()[i] {
            *col = [1.0, 0.85, 0.1, 1.0];
        }
    }
    if let Some(i) = highlight.particle
        && i < n
    {
        colours[i] = [1.0, 0.1, 0.9, 1.0];
    }
    // A rebuilt grid can keep the particle count (30×30 → 20×45) while every triangle
    // changes, so the index buffer is rebuilt whenever the grid's shape does.
    let key = shape_key(cloth);
    if mesh.count_vertices() != n || *shape != key {
        *shape = key;
        *mesh = cloth_mesh(&state);
    }
    mesh.insert_attribute(
        Mesh::ATTRIBUTE_POSITION,
        pos.iter()
            .map(|p| p.as_vec3().to_array())
            .collect::<Vec<_>>(),
    );
    mesh.insert_attribute(
        Mesh::ATTRIBUTE_NORMAL,
        normals
            .iter()
            .map(|v| v.normalize_or(DVec3::Y).as_vec3().to_array())
            .collect::<Vec<_>>(),
    );
    mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colours);
}

type Placement<'a> = (&'a mut Transform, &'a mut Visibility);

fn sync_colliders(
    state: Res<SimState>,
    mut ball: Query<Placement, (With<BallMarker>, Without<GroundMarker>)>,
    mut ground: Query<Placement, (With<GroundMarker>, Without<BallMarker>)>,
) {
    if let Ok((mut t, mut v)) = ball.single_mut() {
        match &state.world.params.ball {
            Some(b) => {
                // Drawn a little smaller than the collider so the contact skin is not visible.
                t.translation = b.center.as_vec3();
                t.scale = Vec3::splat(b.radius as f32 * 0.985);
                *v = Visibility::Visible;
            }
            None => *v = Visibility::Hidden,
        }
    }
    if let Ok((mut t, mut v)) = ground.single_mut() {
        match state.world.params.ground {
            Some(g) => {
                t.translation = Vec3::new(0.0, g as f32, 0.0);
                *v = Visibility::Visible;
            }
            None => *v = Visibility::Hidden,
        }
    }
}

fn draw_overlays(state: Res<SimState>, view: Res<ViewSettings>, mut gizmos: Gizmos) {
    let cloth = &state.world.cloth;
    if view.wireframe {
        for &[a, b] in &cloth.topology.edges {
            gizmos.line(
                cloth.particles.x[a as usize].as_vec3(),
                cloth.particles.x[b as usize].as_vec3(),
                Color::srgba(0.1, 0.1, 0.1, 0.6),
            );
        }
    }
    // The curtain rod and its rings (001 §5 gliders).
    let rings: Vec<DVec3> = state
        .world
        .gliders()
        .iter()
        .filter_map(|g| cloth.particles.x.get(g.particle).copied())
        .collect();
    if let Some(first) = state.world.gliders().first()
        && !rings.is_empty()
    {
        let axis = first.axis;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for &x in &rings {
            let t = axis.dot(x - first.anchor);
            lo = lo.min(t);
            hi = hi.max(t);
        }
        let margin = 0.15 * (hi - lo).max(0.1);
        let rod = Color::srgb(0.75, 0.7, 0.6);
        let a = first.anchor + axis * (lo - margin);
        let b = first.anchor + axis * (hi + margin);
        gizmos.line(a.as_vec3(), b.as_vec3(), rod);
        let ring = (0.25 * cloth.topology.rest.first().copied().unwrap_or(0.05)) as f32;
        for &x in &rings {
            gizmos.sphere(Isometry3d::from_translation(x.as_vec3()), ring, rod);
        }
    }
    let w = &state.world.params.wind;
    if w.enabled {
        let origin = Vec3::new(-1.2, 1.8, -0.6);
        let dir = w.velocity.as_vec3();
        let len = dir.length().min(10.0) * 0.08;
        gizmos.arrow(
            origin,
            origin + dir.normalize_or_zero() * len,
            Color::srgb(0.3, 0.8, 1.0),
        );
    }
}

fn sync_material(
    view: Res<ViewSettings>,
    query: Query<&MeshMaterial3d<ClothMaterial>, With<ClothMesh>>,
    mut materials: ResMut<Assets<ClothMaterial>>,
) {
    if !view.is_changed() {
        return;
    }
    for handle in &query {
        if let Some(mut m) = materials.get_mut(handle) {
            m.params.x = if view.heatmap { 1.0 } else { 0.0 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{ScenePreset, SceneSpec, SimParams};

    /// 30×30 and 20×45 have the same 900 particles but no triangle in common: the mesh must
    /// be rebuilt between them, so their keys differ even though the vertex count does not;
    /// a clone (the same topology) keeps its key, a rebuilt cloth (Reset) gets a new one.
    #[test]
    fn same_particle_count_other_shape_rebuilds_the_mesh() {
        let build = |w, h| {
            SceneSpec::new(ScenePreset::Hanging, w, h)
                .build(SimParams::default())
                .unwrap()
                .cloth
        };
        let (a, b) = (build(30, 30), build(20, 45));
        assert_eq!(a.len(), b.len());
        assert_ne!(shape_key(&a), shape_key(&b));
        assert_eq!(shape_key(&a), shape_key(&a.clone()));
        assert_ne!(shape_key(&a), shape_key(&build(30, 30)));
    }
}
