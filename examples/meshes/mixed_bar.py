"""Generate mixed-bar.msh (plain Python, no gmsh needed; run from this folder).

The box [0,2]x[0,1]x[0,1] in 6 x 3 x 3 hexahedra, MSH 2.2 ASCII. Physical volumes: "inner"
(tag 1, x < 1) and "outer" (tag 2, x > 1); physical surface "boundary" (tag 10): all six faces.
For examples/hex-p2-p4-mixed.toml (a hierarchical degree per region).
"""
nx, ny, nz = 6, 3, 3
lx, ly, lz = 2.0, 1.0, 1.0


def node(i, j, k):
    return 1 + i + (nx + 1) * (j + (ny + 1) * k)


lines = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$PhysicalNames", "3",
         '2 10 "boundary"', '3 1 "inner"', '3 2 "outer"', "$EndPhysicalNames", "$Nodes"]
nodes = []
for k in range(nz + 1):
    for j in range(ny + 1):
        for i in range(nx + 1):
            nodes.append(f"{node(i, j, k)} {lx * i / nx:.17g} {ly * j / ny:.17g} {lz * k / nz:.17g}")
lines += [str(len(nodes))] + nodes + ["$EndNodes"]
elems = []
# Boundary quadrilaterals (type 3), then hexahedra (type 5), gmsh's node order.
quads = []
for j in range(ny):
    for k in range(nz):
        quads.append([node(0, j, k), node(0, j, k + 1), node(0, j + 1, k + 1), node(0, j + 1, k)])
        quads.append([node(nx, j, k), node(nx, j + 1, k), node(nx, j + 1, k + 1), node(nx, j, k + 1)])
for i in range(nx):
    for k in range(nz):
        quads.append([node(i, 0, k), node(i + 1, 0, k), node(i + 1, 0, k + 1), node(i, 0, k + 1)])
        quads.append([node(i, ny, k), node(i, ny, k + 1), node(i + 1, ny, k + 1), node(i + 1, ny, k)])
    for j in range(ny):
        quads.append([node(i, j, 0), node(i, j + 1, 0), node(i + 1, j + 1, 0), node(i + 1, j, 0)])
        quads.append([node(i, j, nz), node(i + 1, j, nz), node(i + 1, j + 1, nz), node(i, j + 1, nz)])
for q in quads:
    elems.append(f"{len(elems) + 1} 3 2 10 10 " + " ".join(map(str, q)))
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            tag = 1 if i < nx // 2 else 2
            v = [node(i, j, k), node(i + 1, j, k), node(i + 1, j + 1, k), node(i, j + 1, k),
                 node(i, j, k + 1), node(i + 1, j, k + 1), node(i + 1, j + 1, k + 1), node(i, j + 1, k + 1)]
            elems.append(f"{len(elems) + 1} 5 2 {tag} {tag} " + " ".join(map(str, v)))
lines += ["$Elements", str(len(elems))] + elems + ["$EndElements"]
with open("mixed-bar.msh", "w") as f:
    f.write("\n".join(lines) + "\n")
print("hexahedra:", nx * ny * nz, "boundary quadrilaterals:", len(quads))
