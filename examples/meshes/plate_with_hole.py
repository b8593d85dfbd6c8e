"""Generate plate-with-hole.msh (gmsh Python API, `pip install gmsh`; run from this folder).

Rectangle [0,2]x[0,1] minus the disk of radius 0.2 centred at (0.5, 0.5), linear triangles
(~2000 cells), MSH 4.1 ASCII. Physical curves: left (x=0), right (x=2), walls (y=0 and y=1),
hole (the circle); physical surface: plate.
"""
import gmsh

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("plate-with-hole")
occ = gmsh.model.occ
rect = occ.addRectangle(0, 0, 0, 2, 1)
disk = occ.addDisk(0.5, 0.5, 0, 0.2, 0.2)
(plate, _) = occ.cut([(2, rect)], [(2, disk)])
occ.synchronize()

groups = {"left": [], "right": [], "walls": [], "hole": []}
eps = 1e-6
for dim, tag in gmsh.model.getEntities(1):
    x0, y0, _, x1, y1, _ = gmsh.model.getBoundingBox(dim, tag)
    if x1 < eps:
        groups["left"].append(tag)
    elif x0 > 2 - eps:
        groups["right"].append(tag)
    elif y1 < eps or y0 > 1 - eps:
        groups["walls"].append(tag)
    else:
        groups["hole"].append(tag)
for i, name in enumerate(["left", "right", "walls", "hole"], start=1):
    gmsh.model.addPhysicalGroup(1, groups[name], i, name)
gmsh.model.addPhysicalGroup(2, [t for _, t in plate], 10, "plate")

gmsh.option.setNumber("Mesh.MeshSizeMax", 0.048)
gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 24)
gmsh.model.mesh.generate(2)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.option.setNumber("Mesh.Binary", 0)
gmsh.write("plate-with-hole.msh")
_, tags, _ = gmsh.model.mesh.getElements(2)
print("triangles:", sum(len(t) for t in tags))
gmsh.finalize()
