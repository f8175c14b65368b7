//! Reading and writing Wavefront OBJ.
//!
//! A reader of our own rather than `tobj`, for three reasons a cloth needs: `tobj` keeps a
//! separate vertex list per object or group (so a cloth whose file is split into groups
//! would be cut apart along them), its errors carry no line number, and it drops point
//! elements, which are how a file names a vertex group without faces (`g pins` / `p 1 5`).
//! What is read: `v` (x y z, an optional w ignored), `f` (any number of vertices, each
//! `v`, `v/vt`, `v//vn` or `v/vt/vn`, negative indices counting back), `l` and `p` (for
//! groups only), `g` and `o` (the current groups). Everything else (`vt`, `vn`, `s`,
//! `usemtl`, `mtllib`, comments) is skipped. A polygon is cut into a fan of triangles from
//! its first vertex (convex polygons; a fan triangle of zero area is refused by
//! [`super::TriMesh::validate`]). Vertices are merged exactly where the file's indices say
//! so — two `v` lines at the same place stay two particles.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use glam::DVec3;

use super::{MeshError, TriMesh, VertexGroup};

/// Parse OBJ text into a validated mesh.
pub fn parse(text: &str) -> Result<TriMesh, MeshError> {
    let mut mesh = TriMesh::default();
    let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut current: Vec<String> = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        let mut words = body.split_whitespace();
        let Some(key) = words.next() else { continue };
        let parse_err = |reason: String| MeshError::Parse { line, reason };
        match key {
            "v" => {
                let mut c = [0.0f64; 3];
                for (i, slot) in c.iter_mut().enumerate() {
                    let w = words.next().ok_or_else(|| {
                        parse_err(format!("`v` needs three coordinates, found {i}"))
                    })?;
                    *slot = w
                        .parse()
                        .map_err(|_| parse_err(format!("`{w}` is not a number")))?;
                }
                let p = DVec3::from_array(c);
                if !p.is_finite() {
                    return Err(MeshError::NonFinite {
                        vertex: mesh.positions.len(),
                    });
                }
                if mesh.positions.len() >= super::MAX_MESH_PARTICLES {
                    return Err(MeshError::TooLarge {
                        count: mesh.positions.len() + 1,
                        max: super::MAX_MESH_PARTICLES,
                    });
                }
                mesh.positions.push(p);
            }
            "f" | "l" | "p" => {
                let mut vs = Vec::new();
                for w in words {
                    let idx = w.split('/').next().unwrap_or("");
                    let i: i64 = idx
                        .parse()
                        .map_err(|_| parse_err(format!("`{w}` is not a vertex reference")))?;
                    let count = mesh.positions.len();
                    let at = if i > 0 {
                        i - 1
                    } else if i < 0 {
                        count as i64 + i
                    } else {
                        -1
                    };
                    if at < 0 || at >= count as i64 {
                        return Err(MeshError::IndexOutOfRange {
                            line,
                            index: i,
                            count,
                        });
                    }
                    vs.push(at as u32);
                }
                let least = match key {
                    "f" => 3,
                    "l" => 2,
                    _ => 1,
                };
                if vs.len() < least {
                    return Err(parse_err(format!(
                        "`{key}` needs at least {least} vertices, found {}",
                        vs.len()
                    )));
                }
                for g in &current {
                    groups.entry(g.clone()).or_default().extend(&vs);
                }
                if key == "f" {
                    let face = mesh.face_sizes.len() as u32;
                    mesh.face_sizes.push(vs.len() as u32);
                    for j in 1..vs.len() - 1 {
                        mesh.triangles.push([vs[0], vs[j], vs[j + 1]]);
                        mesh.faces.push(face);
                    }
                }
            }
            "g" | "o" => {
                current = words.map(str::to_string).collect();
            }
            _ => {}
        }
    }
    mesh.groups = groups
        .into_iter()
        .map(|(name, mut vertices)| {
            vertices.sort_unstable();
            vertices.dedup();
            VertexGroup { name, vertices }
        })
        .collect();
    mesh.validate()?;
    Ok(mesh)
}

/// Read and parse an OBJ file.
pub fn read(path: &std::path::Path) -> Result<TriMesh, MeshError> {
    let text = std::fs::read_to_string(path).map_err(|e| MeshError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    parse(&text)
}

/// OBJ text of positions and triangles (and point groups), every coordinate written so it
/// reads back to the same `f64` (Rust's shortest round-trip form).
pub fn write(x: &[DVec3], triangles: &[[u32; 3]], groups: &[VertexGroup]) -> String {
    let mut s = String::with_capacity(x.len() * 40 + triangles.len() * 20);
    s.push_str("# impulse-cloth mesh\n");
    for p in x {
        let _ = writeln!(s, "v {} {} {}", p.x, p.y, p.z);
    }
    for t in triangles {
        let _ = writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    for g in groups {
        let _ = writeln!(s, "g {}", g.name);
        for chunk in g.vertices.chunks(16) {
            s.push('p');
            for v in chunk {
                let _ = write!(s, " {}", v + 1);
            }
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUAD: &str = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3 4\n";

    #[test]
    fn a_quad_is_two_triangles_of_one_face() {
        let m = parse(QUAD).unwrap();
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        assert_eq!(m.faces, vec![0, 0]);
        assert_eq!(m.face_sizes, vec![4]);
    }

    #[test]
    fn references_with_slashes_negative_indices_and_groups() {
        let m = parse(
            "o sheet\nv 0 0 0\nv 1 0 0\nv 0 0 1\nvt 0 0\nf 1/1 2/1/1 -1//1\ng pins\np 1 -2\n",
        )
        .unwrap();
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(m.group("pins").unwrap(), &[0, 1]);
        assert_eq!(m.group("sheet").unwrap(), &[0, 1, 2]);
        assert!(
            m.group("nope")
                .unwrap_err()
                .to_string()
                .contains("pins, sheet")
        );
    }

    #[test]
    fn bad_files_give_one_clear_line() {
        let cases: [(&str, &str); 9] = [
            ("", "no triangles"),
            ("v 0 0 0\nv 1 0 0\n", "no triangles"),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",
                "line 4: vertex index 4 is out of range",
            ),
            ("v 0 0 nan\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "non-finite"),
            ("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", "area is zero"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n", "repeated"),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nf 1 2 3\nf 2 1 4\nf 1 2 5\n",
                "shared by 3 triangles",
            ),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nf 1 2 3\n",
                "vertex 3 is used by no triangle",
            ),
            ("v 0 0 x\n", "line 1: `x` is not a number"),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn written_meshes_read_back_exactly() {
        let x = vec![
            DVec3::new(0.1, 1.0 / 3.0, -2.5e-7),
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(0.0, 0.0, std::f64::consts::PI),
        ];
        let g = VertexGroup {
            name: "pins".into(),
            vertices: vec![0, 2],
        };
        let m = parse(&write(&x, &[[0, 1, 2]], std::slice::from_ref(&g))).unwrap();
        assert_eq!(m.positions, x);
        assert_eq!(m.groups, vec![g]);
    }
}
