// Cloth shading for impulse-cloth: two-sided Lambert lighting with separate front and back
// colours, and a strain heat-map mode that shows the per-vertex colours the app computes
// from the largest strain of each particle's constraints.

#import bevy_pbr::forward_io::VertexOutput

struct ClothMaterial {
    front: vec4<f32>,
    back: vec4<f32>,
    // x: 1 = heat-map (vertex colours as they are), 0 = front/back colours × vertex tint
    params: vec4<f32>,
};

@group(#{MATERIAL_BIND_GROUP}) @binding(0) var<uniform> material: ClothMaterial;

@fragment
fn fragment(in: VertexOutput, @builtin(front_facing) is_front: bool) -> @location(0) vec4<f32> {
    var n = normalize(in.world_normal);
    var base = material.front;
    if (!is_front) {
        n = -n;
        base = material.back;
    }
#ifdef VERTEX_COLORS
    if (material.params.x > 0.5) {
        base = in.color;
    } else {
        base = base * in.color;
    }
#endif
    let key = normalize(vec3<f32>(0.45, 0.8, 0.4));
    let fill = normalize(vec3<f32>(-0.6, 0.25, -0.5));
    let diffuse = 0.75 * max(dot(n, key), 0.0) + 0.3 * max(dot(n, fill), 0.0);
    return vec4<f32>(base.rgb * (0.28 + 0.72 * diffuse), 1.0);
}
