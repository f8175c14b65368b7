//! Rendering for the app: the cloth mesh synced from the simulation after the fixed loop,
//! the ball, the ground, lights, overlays ([`mesh`]), and the cloth material whose WGSL lives
//! in the top-level `shaders/` ([`material`]).

pub mod material;
pub mod mesh;

pub use mesh::{ClothMesh, Highlight, RenderPlugin, ViewSettings};
