"""Regenerate the Gmsh test fixtures in this folder (gmsh 4.x Python API: `pip install gmsh`).

    python make_fixtures.py

Writes MSH 4.1 files:
  square_tri_ascii.msh / square_tri_binary.msh  same unit-square triangle mesh, ASCII and binary;
      physical curves bottom(1) right(2) top(3) left(4), walls(5) = bottom + top (so bottom/top
      facets carry two tags), physical surface domain(10).
  square_tri6.msh   the same mesh raised to second order (6-node triangles, 3-node lines).
  cube_tet.msh      unit cube, tetrahedra; physical surfaces xmin(1) xmax(2), volume solid(7).
"""
import gmsh


def square(order):
    gmsh.model.add(f"square{order}")
    occ = gmsh.model.occ
    occ.addRectangle(0, 0, 0, 1, 1)
    occ.synchronize()
    curves = {}
    for dim, tag in gmsh.model.getEntities(1):
        x0, y0, _, x1, y1, _ = gmsh.model.getBoundingBox(dim, tag)
        if abs(y1) < 1e-6:
            curves["bottom"] = tag
        elif abs(x0 - 1) < 1e-6:
            curves["right"] = tag
        elif abs(y0 - 1) < 1e-6:
            curves["top"] = tag
        else:
            curves["left"] = tag
    for i, name in enumerate(["bottom", "right", "top", "left"], start=1):
        gmsh.model.addPhysicalGroup(1, [curves[name]], i, name)
    gmsh.model.addPhysicalGroup(1, [curves["bottom"], curves["top"]], 5, "walls")
    gmsh.model.addPhysicalGroup(2, [1], 10, "domain")
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.34)
    gmsh.model.mesh.generate(2)
    if order > 1:
        gmsh.model.mesh.setOrder(order)


def cube():
    gmsh.model.add("cube")
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    for dim, tag in gmsh.model.getEntities(2):
        x0, _, _, x1, _, _ = gmsh.model.getBoundingBox(dim, tag)
        if abs(x1) < 1e-6:
            gmsh.model.addPhysicalGroup(2, [tag], 1, "xmin")
        elif abs(x0 - 1) < 1e-6:
            gmsh.model.addPhysicalGroup(2, [tag], 2, "xmax")
    gmsh.model.addPhysicalGroup(3, [1], 7, "solid")
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.5)
    gmsh.model.mesh.generate(3)


def write(name, binary):
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 1 if binary else 0)
    gmsh.write(name)


gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
square(1)
write("square_tri_ascii.msh", False)
write("square_tri_binary.msh", True)
gmsh.model.remove()
square(2)
write("square_tri6.msh", False)
gmsh.model.remove()
cube()
write("cube_tet.msh", False)
gmsh.finalize()
