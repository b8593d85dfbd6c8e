"""Writes fibre-strip.msh (MSH 4.1, ASCII): a 16 x 4 quadrilateral mesh of [0, 4] x [0, 1] with the
physical curves "left" (x = 0) and "right" (x = 4), the surface "tissue", and an $ElementData view
"fibres" of 3 components per element: an in-plane fibre whose angle turns through the thickness
from -60 degrees (y = 0) to +60 degrees (y = 1), as myocardial fibres turn through the wall.
Run: python3 examples/meshes/fibre_strip.py (from the repository root)."""
import math
import os

nx, ny, lx, ly = 16, 4, 4.0, 1.0
hx, hy = lx / nx, ly / ny


def node(i, j):
    return 1 + j * (nx + 1) + i


nn = (nx + 1) * (ny + 1)
out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat",
       "$PhysicalNames", "3", '1 1 "left"', '1 2 "right"', '2 3 "tissue"', "$EndPhysicalNames",
       "$Entities", "0 2 1 0",
       f"1 0 0 0 0 {ly} 0 1 1 0", f"2 {lx} 0 0 {lx} {ly} 0 1 2 0",
       f"1 0 0 0 {lx} {ly} 0 1 3 0", "$EndEntities",
       "$Nodes", f"1 {nn} 1 {nn}", f"2 1 0 {nn}"]
out += [str(k) for k in range(1, nn + 1)]
out += [f"{i * hx!r} {j * hy!r} 0" for j in range(ny + 1) for i in range(nx + 1)]
out += ["$EndNodes"]
tag = 1
left, right, quads = [], [], []
for j in range(ny):
    left.append((tag, node(0, j), node(0, j + 1))); tag += 1
for j in range(ny):
    right.append((tag, node(nx, j), node(nx, j + 1))); tag += 1
for j in range(ny):
    for i in range(nx):
        quads.append((tag, node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1), (j + 0.5) * hy)); tag += 1
ne = len(left) + len(right) + len(quads)
out += ["$Elements", f"3 {ne} 1 {tag - 1}", f"1 1 1 {len(left)}"]
out += [f"{t} {a} {b}" for t, a, b in left]
out += [f"1 2 1 {len(right)}"] + [f"{t} {a} {b}" for t, a, b in right]
out += [f"2 1 3 {len(quads)}"] + [f"{q[0]} {q[1]} {q[2]} {q[3]} {q[4]}" for q in quads]
out += ["$EndElements", "$ElementData", "1", '"fibres"', "1", "0.0", "3", "0", "3", str(len(quads))]
for q in quads:
    a = (q[5] - 0.5) * (2.0 * math.pi / 3.0)
    out.append(f"{q[0]} {math.cos(a)!r} {math.sin(a)!r} 0")
out += ["$EndElementData"]
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "fibre-strip.msh"), "w") as f:
    f.write("\n".join(out) + "\n")
