//! `galerkin bench --assembly`: the whole CPU assembly of a problem as `galerkin run` builds it —
//! the same problem file, mesh generator, Hilbert reordering, space, expression source and
//! Dirichlet conditions ([`crate::problem::run::setup`]), then [`LinearProblem::system`] at the
//! `full` level (coloring, sparsity, element matrices, load vector, Dirichlet elimination), repeated
//! after a warm-up, median and spread. The cases are the ones the peer scripts under
//! `benchmarks/peers/` time in NGSolve and MFEM: Poisson on the unit cube with n³ cubes, hexahedra
//! or 6 tetrahedra each, f = 3π² sin πx sin πy sin πz, u = 0 on the six faces.
use super::timing::{Clock, HostClock, Timing};
use crate::backend::Cpu;
use crate::operator::{AssemblyLevel, Tuning};
use crate::problem::config::ProblemFile;
use crate::problem::linear::Timings;
use crate::problem::run::setup;
use crate::{Error, Result};
use serde::Serialize;
use std::path::Path;

/// One assembly case: an element and a mesh size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssemblyCase {
    pub cell: &'static str,
    pub degree: usize,
    /// Cubes per axis.
    pub n: usize,
}

impl AssemblyCase {
    /// `p1-tet:100`, `q2-hex:16`: family letter and degree, cell, cubes per axis.
    pub fn parse(s: &str) -> Result<AssemblyCase> {
        let bad = || Error::invalid(format!("assembly case `{s}`: expected NAME:N with NAME one of p1-tet, p2-tet, p3-tet, q1-hex, q2-hex, q3-hex"));
        let (name, n) = s.split_once(':').ok_or_else(bad)?;
        let n: usize = n.parse().map_err(|_| bad())?;
        let (cell, degree) = match name {
            "p1-tet" => ("tetrahedron", 1),
            "p2-tet" => ("tetrahedron", 2),
            "p3-tet" => ("tetrahedron", 3),
            "q1-hex" => ("hexahedron", 1),
            "q2-hex" => ("hexahedron", 2),
            "q3-hex" => ("hexahedron", 3),
            _ => return Err(bad()),
        };
        if n == 0 || n > 1000 {
            return Err(Error::invalid(format!("assembly case `{s}`: cubes per axis must be 1 to 1000")));
        }
        Ok(AssemblyCase { cell, degree, n })
    }

    pub fn name(&self) -> String {
        let (family, short) = if self.cell == "tetrahedron" { ("p", "tet") } else { ("q", "hex") };
        format!("{family}{}-{short}", self.degree)
    }

    /// The problem file `galerkin run` would read for this case.
    pub fn problem_file(&self) -> String {
        format!(
            "title = \"assembly {name}\"\nbackend = \"cpu\"\n[mesh]\ngenerator = \"box\"\ncell = \"{cell}\"\nn = [{n}, {n}, {n}]\n\
             [space]\ndegree = {k}\n[physics]\nkind = \"poisson\"\nkappa = 1.0\nsource = \"3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n\
             [[bc]]\nboundary = [\"xmin\", \"xmax\", \"ymin\", \"ymax\", \"zmin\", \"zmax\"]\ntype = \"dirichlet\"\nvalue = 0.0\n",
            name = self.name(),
            cell = self.cell,
            n = self.n,
            k = self.degree
        )
    }
}

/// One row: the whole assembly and its parts.
#[derive(Clone, Debug, Serialize)]
pub struct AssemblyRow {
    pub case: String,
    pub n: usize,
    pub cells: usize,
    pub dofs: usize,
    pub nnz: usize,
    pub threads: usize,
    /// Mesh generation with its reordering, and the dof map (once, not repeated).
    pub mesh_s: f64,
    pub space_s: f64,
    /// `LinearProblem::system` at `full`, whole.
    pub assembly: Timing,
    /// Medians of the parts over the same runs: coloring, operator (sparsity and matrix), load
    /// vector, Dirichlet conditions.
    pub coloring_s: f64,
    pub matrix_s: f64,
    pub rhs_s: f64,
    pub constraints_s: f64,
    /// Cells per second of the whole assembly (median).
    pub elements_per_s: f64,
    /// The load vector's share of the whole assembly (medians).
    pub rhs_share: f64,
}

/// Set up `case` as `run` does, then time its whole assembly `runs` times after one warm-up.
pub fn run_case(case: &AssemblyCase, runs: usize) -> Result<AssemblyRow> {
    let pf = ProblemFile::parse(&case.problem_file(), &format!("bench {}", case.name()))?;
    let s = setup(&pf, Path::new("."), false)?;
    if runs == 0 {
        return Err(Error::invalid("benchmark repetitions must be at least 1"));
    }
    let (mut parts, mut samples, mut nnz) = (Vec::<Timings>::new(), Vec::new(), 0);
    let mut clock = HostClock::default();
    for run in 0..=runs {
        clock.start()?;
        let sys = s.problem.system(&Cpu, AssemblyLevel::Full, Tuning::default())?;
        let t = clock.stop()?;
        // The first run warms up; the system is dropped outside the clock.
        if run > 0 {
            samples.push(t);
            parts.push(sys.timings.clone());
        }
        nnz = sys.operator.matrix().map_or(0, |a| a.nnz());
    }
    let assembly = Timing::from_samples(samples)?;
    let median = |f: fn(&Timings) -> f64| -> Result<f64> { Ok(Timing::from_samples(parts.iter().map(f).collect())?.median) };
    let cells = s.space.mesh.num_cells();
    let rhs_s = median(|t| t.rhs)?;
    Ok(AssemblyRow {
        case: case.name(),
        n: case.n,
        cells,
        dofs: s.space.ndofs(),
        nnz,
        threads: rayon::current_num_threads(),
        mesh_s: s.mesh_s,
        space_s: s.space_s,
        coloring_s: median(|t| t.coloring)?,
        matrix_s: median(|t| t.matrix)?,
        rhs_s,
        constraints_s: median(|t| t.constraints)?,
        elements_per_s: cells as f64 / assembly.median,
        rhs_share: rhs_s / assembly.median,
        assembly,
    })
}
