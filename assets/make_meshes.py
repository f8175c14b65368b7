#!/usr/bin/env python3
"""Writes the meshes shipped in assets/ (deterministic; run from the repository root).

square.obj is the grid's own 30x30 square of the hanging scene, computed as the grid
builder computes it (same IEEE operations, so the same doubles; a test checks it against
`Cloth::grid` bit for bit), with the grid's triangles.
"""
import math


def write(path, vs, faces, head):
    with open(path, "w") as f:
        f.write(f"# {head}\n")
        for v in vs:
            f.write("v %r %r %r\n" % tuple(float(c) for c in v))
        for face in faces:
            f.write("f " + " ".join(str(i + 1) for i in face) + "\n")


def disc(rings=16):
    """A round tablecloth of radius 0.5 in the x-z plane: concentric rings of 6k vertices,
    six sectors triangulated between rings (a hexagonal pattern, 6 K^2 triangles, each near
    equilateral), counter-clockwise seen from +y."""
    vs = [(0.0, 0.0, 0.0)]
    for k in range(1, rings + 1):
        r = 0.5 * k / rings
        for j in range(6 * k):
            a = 2 * math.pi * j / (6 * k)
            vs.append((r * math.cos(a), 0.0, r * math.sin(a)))

    def at(k, j):
        return 0 if k == 0 else 1 + 3 * k * (k - 1) + j % (6 * k)

    faces = []
    for k in range(1, rings + 1):
        for s in range(6):
            for t in range(k):
                faces.append((at(k, s * k + t), at(k, s * k + t + 1), at(k - 1, s * (k - 1) + t)))
            for t in range(k - 1):
                faces.append(
                    (at(k - 1, s * (k - 1) + t), at(k, s * k + t + 1), at(k - 1, s * (k - 1) + t + 1))
                )
    # Counter-clockwise seen from +y: the normal (b - a) x (c - a) has y > 0.
    def ny(f):
        a, b, c = (vs[i] for i in f)
        return (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2])
    return vs, [f if ny(f) > 0 else (f[0], f[2], f[1]) for f in faces]


def flag_with_hole(nx=37, ny=25, hole=(0.95, -0.5, 0.22)):
    """A 1.5 x 1 flag in the x-y plane (top edge at y = 0, pole along x = 0) with a round
    hole; a structured mesh with alternating diagonals, the vertices inside the hole and the
    triangles that touched them removed."""
    w, h = 1.5, 1.0
    cx, cy, r = hole
    idx = {}
    vs = []
    for j in range(ny):
        for i in range(nx):
            x, y = w * i / (nx - 1), -h * j / (ny - 1)
            if (x - cx) ** 2 + (y - cy) ** 2 < r * r:
                continue
            idx[(i, j)] = len(vs)
            vs.append((x, y, 0.0))
    faces = []
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b, c, d = (i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)
            if (i + j) % 2 == 0:
                tris = [(a, d, b), (b, d, c)]
            else:
                tris = [(a, d, c), (a, c, b)]
            for t in tris:
                if all(p in idx for p in t):
                    faces.append(tuple(idx[p] for p in t))
    used = sorted({v for f in faces for v in f})
    remap = {v: k for k, v in enumerate(used)}
    return [vs[v] for v in used], [tuple(remap[v] for v in f) for f in faces]


def tube(segments=40, rows=24, waist=0.2, hem=0.5, height=0.9):
    """A flared skirt around the y axis: an open cone from its waist (radius `waist`, at
    the top) to its hem (radius `hem`, `height` below), written as quads (the file's own
    quads are kept as the cloth's quads)."""
    vs = []
    for j in range(rows):
        t = j / (rows - 1)
        y = -height * t
        radius = waist + (hem - waist) * t
        for i in range(segments):
            a = 2 * math.pi * i / segments
            vs.append((radius * math.cos(a), y, radius * math.sin(a)))
    faces = []
    for j in range(rows - 1):
        for i in range(segments):
            a = j * segments + i
            b = j * segments + (i + 1) % segments
            faces.append((a, b, b + segments, a + segments))
    return vs, faces


def square(w=30, h=30, size=1.0):
    """The grid builder's horizontal w x h square at the hanging scene's origin."""
    s = size / (max(w, h) - 1)
    half = (w - 1.0) * s * 0.5
    origin = (0.0, size * 1.2, -0.5 * size)
    vs = []
    for r in range(h):
        for c in range(w):
            along, across = c * s - half, r * s
            vs.append((origin[0] + along, origin[1] + 0.0, origin[2] + across))
    idx = lambda r, c: r * w + c
    faces = []
    for r in range(h - 1):
        for c in range(w - 1):
            faces.append((idx(r, c), idx(r + 1, c), idx(r, c + 1)))
            faces.append((idx(r, c + 1), idx(r + 1, c), idx(r + 1, c + 1)))
    return vs, faces


if __name__ == "__main__":
    write("assets/square.obj", *square(), "the grid's 30 x 30 square (hanging scene)")
    write("assets/tablecloth.obj", *disc(), "a round tablecloth: 817 vertices in 16 rings")
    write("assets/flag_hole.obj", *flag_with_hole(), "a 1.5 x 1 flag with a round hole")
    write("assets/skirt.obj", *tube(), "a flared skirt, 40 segments x 24 rows, as quads")
