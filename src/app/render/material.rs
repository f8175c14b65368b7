//! The cloth material: WGSL from the top-level `shaders/cloth.wgsl`, embedded at compile
//! time, with two-sided lighting (front and back colours) and a strain heat-map mode.

use bevy::asset::{load_internal_asset, uuid_handle};
use bevy::mesh::MeshVertexBufferLayoutRef;
use bevy::pbr::{MaterialPipeline, MaterialPipelineKey};
use bevy::prelude::*;
use bevy::reflect::TypePath;
use bevy::render::render_resource::{
    AsBindGroup, RenderPipelineDescriptor, SpecializedMeshPipelineError,
};
use bevy::shader::ShaderRef;

/// Handle of the embedded cloth shader.
pub const CLOTH_SHADER: Handle<Shader> = uuid_handle!("6c3b0f64-2d1e-4f0a-9a53-1f7a4b1d2c9e");

/// Two-sided cloth material.
#[derive(Asset, TypePath, AsBindGroup, Debug, Clone)]
pub struct ClothMaterial {
    /// Colour of the front side (linear).
    #[uniform(0)]
    pub front: LinearRgba,
    /// Colour of the back side (linear).
    #[uniform(0)]
    pub back: LinearRgba,
    /// x = 1 shows the vertex colours as they are (heat-map).
    #[uniform(0)]
    pub params: Vec4,
}

impl Default for ClothMaterial {
    fn default() -> Self {
        ClothMaterial {
            front: LinearRgba::rgb(0.42, 0.55, 0.85),
            back: LinearRgba::rgb(0.85, 0.45, 0.25),
            params: Vec4::ZERO,
        }
    }
}

impl Material for ClothMaterial {
    fn fragment_shader() -> ShaderRef {
        ShaderRef::Handle(CLOTH_SHADER)
    }

    fn specialize(
        _pipeline: &MaterialPipeline,
        descriptor: &mut RenderPipelineDescriptor,
        _layout: &MeshVertexBufferLayoutRef,
        _key: MaterialPipelineKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        // Both sides are drawn; the shader picks the colour by facing.
        descriptor.primitive.cull_mode = None;
        Ok(())
    }
}

/// Registers the embedded shader and the material.
pub struct ClothMaterialPlugin;

impl Plugin for ClothMaterialPlugin {
    fn build(&self, app: &mut App) {
        load_internal_asset!(
            app,
            CLOTH_SHADER,
            "../../../shaders/cloth.wgsl",
            Shader::from_wgsl
        );
        app.add_plugins(MaterialPlugin::<ClothMaterial>::default());
    }
}
