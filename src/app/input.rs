//! Camera and cloth interaction, gathered before the fixed loop: orbit camera (right-drag
//! rotate, middle- or shift+right-drag pan, wheel zoom), left-drag grabs the particle under
//! the cursor and drags it in the plane facing the camera, ctrl+click pins/unpins,
//! shift+left-drag cuts the cloth along the stroke, and the keyboard shortcuts. Pointer input that egui wants never reaches the scene.

use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::input::EguiWantsInput;
use glam::DVec3;

use super::render::{Highlight, ViewSettings};
use super::sim::SimState;
use crate::sim::{Ball, BallMotion};

/// Orbit camera state.
#[derive(Resource, Debug, Clone, Copy)]
pub struct OrbitCamera {
    /// Point looked at.
    pub target: Vec3,
    /// Rotation about +y, radians.
    pub yaw: f32,
    /// Elevation, radians.
    pub pitch: f32,
    /// Distance from the target, m.
    pub distance: f32,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        OrbitCamera {
            target: Vec3::new(0.0, 0.8, 0.0),
            yaw: 0.35,
            pitch: 0.35,
            distance: 2.6,
        }
    }
}

impl OrbitCamera {
    /// Camera transform for this orbit.
    pub fn transform(&self) -> Transform {
        let dir = Vec3::new(
            self.yaw.sin() * self.pitch.cos(),
            self.pitch.sin(),
            self.yaw.cos() * self.pitch.cos(),
        );
        Transform::from_translation(self.target + dir * self.distance)
            .looking_at(self.target, Vec3::Y)
    }
}

/// The drag in progress: the held particle and the plane it moves in.
#[derive(Resource, Default, Debug, Clone, Copy)]
pub struct DragState {
    /// Plane point and normal (facing the camera).
    pub plane: Option<(Vec3, Vec3)>,
    /// Whether a cut stroke (shift + left-drag) is under way.
    pub cutting: bool,
    /// Where the cut stroke last touched the cloth, as a point of the material: a triangle
    /// and barycentric weights (the cloth moves between frames; none until the stroke
    /// reaches the cloth).
    pub cut_from: Option<(usize, [f64; 3])>,
}

/// Input plugin.
pub struct InputPlugin;

impl Plugin for InputPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<OrbitCamera>()
            .init_resource::<DragState>()
            .add_systems(Startup, spawn_camera)
            .add_systems(
                PreUpdate,
                (orbit, pointer, keys)
                    .chain()
                    .after(bevy_egui::EguiPreUpdateSet::ProcessInput),
            );
    }
}

fn spawn_camera(mut commands: Commands, orbit: Res<OrbitCamera>) {
    commands.spawn((Camera3d::default(), orbit.transform()));
}

fn orbit(
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    egui: Res<EguiWantsInput>,
    mut orbit: ResMut<OrbitCamera>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    let shift = keys.pressed(KeyCode::ShiftLeft) || keys.pressed(KeyCode::ShiftRight);
    let pointer_free = !egui.wants_any_pointer_input();
    let d = motion.delta;
    if pointer_free {
        if buttons.pressed(MouseButton::Middle) || (shift && buttons.pressed(MouseButton::Right)) {
            let t = orbit.transform();
            let k = orbit.distance * 0.0015;
            orbit.target += (-t.right() * d.x + t.up() * d.y) * k;
        } else if buttons.pressed(MouseButton::Right) {
            orbit.yaw -= d.x * 0.006;
            orbit.pitch = (orbit.pitch + d.y * 0.006).clamp(-1.5, 1.5);
        }
        let lines = match scroll.unit {
            MouseScrollUnit::Line => scroll.delta.y,
            MouseScrollUnit::Pixel => scroll.delta.y / 40.0,
        };
        if lines != 0.0 {
            orbit.distance = (orbit.distance * (1.0 - 0.1 * lines)).clamp(0.2, 30.0);
        }
    }
    if let Ok(mut t) = camera.single_mut() {
        *t = orbit.transform();
    }
}

/// The particle under the cursor: the ray is intersected with every cloth triangle
/// (Möller–Trumbore) and the vertex of the nearest hit triangle closest to the hit point is
/// returned.
pub fn pick(state: &SimState, ray: Ray3d) -> Option<usize> {
    pick_hit(state, ray).map(|(i, _)| i)
}

/// [`pick`], with the point where the ray meets the cloth: its triangle and barycentric
/// weights.
pub fn pick_hit(state: &SimState, ray: Ray3d) -> Option<(usize, (usize, [f64; 3]))> {
    let cloth = &state.world.cloth;
    let x = &cloth.particles.x;
    let o = ray.origin.as_dvec3();
    let d = ray.direction.as_dvec3();
    let mut best: Option<(f64, usize, f64, f64)> = None;
    for (k, tri) in cloth.topology.triangles.iter().enumerate() {
        let (p0, p1, p2) = (x[tri[0] as usize], x[tri[1] as usize], x[tri[2] as usize]);
        let (e1, e2) = (p1 - p0, p2 - p0);
        let pv = d.cross(e2);
        let det = e1.dot(pv);
        if det.abs() < 1e-14 {
            continue;
        }
        let inv = 1.0 / det;
        let tv = o - p0;
        let u = tv.dot(pv) * inv;
        if !(0.0..=1.0).contains(&u) {
            continue;
        }
        let qv = tv.cross(e1);
        let v = d.dot(qv) * inv;
        if v < 0.0 || u + v > 1.0 {
            continue;
        }
        let t = e2.dot(qv) * inv;
        if t > 0.0 && best.is_none_or(|(bt, ..)| t < bt) {
            best = Some((t, k, u, v));
        }
    }
    let (t, k, u, v) = best?;
    let tri = cloth.topology.triangles[k];
    let hit = o + d * t;
    tri.iter()
        .map(|&i| i as usize)
        .min_by(|&a, &b| {
            x[a].distance_squared(hit)
                .total_cmp(&x[b].distance_squared(hit))
        })
        .map(|i| (i, (k, [1.0 - u - v, u, v])))
}

/// Where the material point (triangle, barycentric weights) is now, if the triangle still
/// exists.
fn material_point(state: &SimState, (k, w): (usize, [f64; 3])) -> Option<DVec3> {
    let cloth = &state.world.cloth;
    let tri = cloth.topology.triangles.get(k)?;
    let x = &cloth.particles.x;
    Some(tri.iter().zip(w).map(|(&i, w)| x[i as usize] * w).sum())
}

/// Shift + left-drag cuts: the edges of the cloth within a tenth of its mean edge length
/// of the stroke between the points where the cursor met the cloth in two frames
/// ([`crate::sim::mesh::tear::edges_near_segment`]). Returns whether it handled the
/// pointer.
fn cut_stroke(
    state: &mut SimState,
    drag: &mut DragState,
    ray: Option<Ray3d>,
    pressed: bool,
    starting: bool,
) -> bool {
    if starting {
        drag.cutting = true;
    }
    if !pressed || !drag.cutting {
        drag.cutting = false;
        drag.cut_from = None;
        return false;
    }
    let hit = ray.and_then(|r| pick_hit(state, r)).map(|(_, p)| p);
    let ends = drag
        .cut_from
        .and_then(|f| material_point(state, f))
        .zip(hit.and_then(|h| material_point(state, h)));
    if let Some((from, to)) = ends {
        let t = &state.world.cloth.topology;
        let mean = t.rest.iter().sum::<f64>() / t.rest.len().max(1) as f64;
        let pairs = crate::sim::mesh::tear::edges_near_segment(
            &state.world.cloth,
            from,
            to,
            0.1 * mean.max(1e-6),
        );
        if !pairs.is_empty()
            && let Err(e) = state.cut(&pairs)
        {
            state.error = Some(e.to_string());
        }
    }
    if hit.is_some() {
        drag.cut_from = hit;
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn pointer(
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    egui: Res<EguiWantsInput>,
    window: Query<&Window, With<PrimaryWindow>>,
    camera: Query<(&Camera, &GlobalTransform)>,
    mut state: ResMut<SimState>,
    mut drag: ResMut<DragState>,
    mut highlight: ResMut<Highlight>,
) {
    let Ok(window) = window.single() else { return };
    let Ok((camera, cam_t)) = camera.single() else {
        return;
    };
    let ray = window
        .cursor_position()
        .and_then(|c| camera.viewport_to_world(cam_t, c).ok());
    if buttons.just_released(MouseButton::Left) && drag.plane.is_some() {
        state.world.release_grab();
        drag.plane = None;
        highlight.particle = None;
        return;
    }
    if drag.plane.is_some() && state.world.grab().is_none() {
        // The world was rebuilt under the drag (R, a preset, Apply): its grab went with the
        // old cloth, so the drag ends here too rather than at the button's release.
        drag.plane = None;
        highlight.particle = None;
    }
    let pointer_free = !egui.wants_any_pointer_input();
    let ctrl = keys.pressed(KeyCode::ControlLeft) || keys.pressed(KeyCode::ControlRight);
    let shift = keys.pressed(KeyCode::ShiftLeft) || keys.pressed(KeyCode::ShiftRight);
    let cutting = buttons.pressed(MouseButton::Left);
    let starting = shift && pointer_free && buttons.just_pressed(MouseButton::Left);
    if drag.plane.is_none() && cut_stroke(&mut state, &mut drag, ray, cutting, starting) {
        return;
    }
    if buttons.just_pressed(MouseButton::Left) && pointer_free {
        let Some(ray) = ray else { return };
        let Some(i) = pick(&state, ray) else { return };
        if ctrl {
            let pinned = state.world.cloth.particles.pinned()[i];
            if let Err(e) = state.world.cloth.set_pinned(i, !pinned) {
                state.error = Some(e.to_string());
            }
            return;
        }
        let p = state.world.cloth.particles.x[i];
        match state.world.start_grab(i, p) {
            Ok(()) => {
                drag.plane = Some((p.as_vec3(), *cam_t.forward()));
                highlight.particle = Some(i);
                state.ever_grabbed = true;
            }
            Err(e) => state.error = Some(e.to_string()),
        }
        return;
    }
    if let (Some((point, normal)), Some(ray)) = (drag.plane, ray) {
        let denom = ray.direction.dot(normal);
        if denom.abs() > 1e-4 {
            let t = (point - ray.origin).dot(normal) / denom;
            if t > 0.0 {
                let target = ray.origin + *ray.direction * t;
                state.world.set_grab_target(DVec3::new(
                    target.x as f64,
                    target.y as f64,
                    target.z as f64,
                ));
                state.grab_travel = state.grab_travel.max(target.distance(point) as f64);
            }
        }
    }
}

fn keys(
    keys: Res<ButtonInput<KeyCode>>,
    egui: Res<EguiWantsInput>,
    camera: Query<&GlobalTransform, With<Camera3d>>,
    mut state: ResMut<SimState>,
    mut view: ResMut<ViewSettings>,
) {
    if egui.wants_keyboard_input() {
        return;
    }
    if keys.just_pressed(KeyCode::KeyP) {
        state.paused = !state.paused;
    }
    if keys.just_pressed(KeyCode::Enter) || keys.just_pressed(KeyCode::KeyN) {
        state.paused = true;
        state.step_once = true;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        let scene = state.scene.clone();
        if let Err(e) = state.rebuild(scene) {
            state.error = Some(e.to_string());
        }
    }
    if keys.just_pressed(KeyCode::KeyH) {
        view.heatmap = !view.heatmap;
    }
    if keys.just_pressed(KeyCode::KeyW) {
        view.wireframe = !view.wireframe;
    }
    if keys.just_pressed(KeyCode::Space)
        && let Ok(t) = camera.single()
    {
        let origin = t.translation() + *t.forward() * 0.3;
        let v = *t.forward() * 6.0;
        let radius = state.world.params.ball.map(|b| b.radius).unwrap_or(0.12);
        state.world.params.ball = Some(Ball {
            center: DVec3::new(origin.x as f64, origin.y as f64, origin.z as f64),
            radius,
            velocity: DVec3::new(v.x as f64, v.y as f64, v.z as f64),
            motion: BallMotion::Thrown,
        });
    }
}
