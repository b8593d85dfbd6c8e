//! Run-time compilation of the kernel sources with NVRTC, for the exact architecture of the device
//! in use (no fat binaries to build or ship), with a PTX cache on disk and in memory so a process
//! pays for each compilation at most once and later processes not at all.
use super::{cuda_error, guard};
use crate::{Error, Result};
use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Threads per block of every kernel. 256 = 8 warps: enough blocks per SM (8 on sm_90) to hide
/// latency in grid-stride loops, and a reduction needs only 8 shared slots.
pub const BLOCK_SIZE: u32 = 256;

/// One kernel source file, embedded in the binary so a deployed program needs no source tree.
#[derive(Clone, Copy, Debug)]
pub struct KernelSource {
    /// File name under `crates/galerkin/kernels/`, used in error messages and cache file names.
    pub file: &'static str,
    pub source: &'static str,
    /// Whether the QFunction twins ([`QFUNCTIONS`]) are prepended: sources that evaluate physics.
    pub physics: bool,
    /// Whether [`CELL_TABLES`] follows them: sources that integrate over cells from reference
    /// tables (needs `physics`).
    pub cells: bool,
}

/// The finite element prelude: the geometry helpers and the pointwise physics of `kernels/qf/`,
/// prepended to the sources that evaluate physics, each file under its own `#line` so NVRTC's
/// diagnostics name it.
/// The reference-table layout and per-cell helpers shared by the assembly and element-scheme sources.
pub const CELL_TABLES: &str = concat!("#line 1 \"cell_tables.cuh\"\n", include_str!("../../../kernels/cell_tables.cuh"));

pub const QFUNCTIONS: &str = concat!(
    "#line 1 \"geometry.cuh\"\n",
    include_str!("../../../kernels/geometry.cuh"),
    "#line 1 \"qf/qfunction.cuh\"\n",
    include_str!("../../../kernels/qf/qfunction.cuh"),
    "#line 1 \"qf/diffusion.cuh\"\n",
    include_str!("../../../kernels/qf/diffusion.cuh"),
    "#line 1 \"qf/mass.cuh\"\n",
    include_str!("../../../kernels/qf/mass.cuh"),
    "#line 1 \"qf/elasticity.cuh\"\n",
    include_str!("../../../kernels/qf/elasticity.cuh"),
);

/// Helpers shared by every source; prepended so NVRTC needs no include path.
const COMMON: KernelSource = KernelSource {
    file: "common.cuh",
    source: include_str!("../../../kernels/common.cuh"),
    physics: false,
    cells: false,
};
pub(crate) const VECTOR: KernelSource = KernelSource {
    file: "vector.cu",
    source: include_str!("../../../kernels/vector.cu"),
    physics: false,
    cells: false,
};
pub(crate) const SPMV: KernelSource = KernelSource {
    file: "spmv.cu",
    source: include_str!("../../../kernels/spmv.cu"),
    physics: false,
    cells: false,
};
pub(crate) const BLOCK_JACOBI: KernelSource = KernelSource {
    file: "block_jacobi.cu",
    source: include_str!("../../../kernels/block_jacobi.cu"),
    physics: false,
    cells: false,
};

/// Element assembly into CSR values or stored element matrices and the element-level operator:
/// compiled once per variant (element, quadrature, physics) with defines, see
/// `operator::level::full::cuda`.
pub const ASSEMBLY: KernelSource = KernelSource {
    file: "assembly.cu",
    source: include_str!("../../../kernels/assembly.cu"),
    physics: true,
    cells: true,
};

/// Element matrices by the seed's schemes I and II and galerkin's tiled scheme III, stored per
/// cell, and their summation into CSR values (`full/schemes.rs`).
pub const ELEMENT_SCHEMES: KernelSource = KernelSource {
    file: "element_schemes.cu",
    source: include_str!("../../../kernels/element_schemes.cu"),
    physics: true,
    cells: true,
};

/// Scheme III's engine for cells of few functions (p = 1) on the CUDA cores: a lane per (cell,
/// node pair), a block per group of consecutive cells (`full/pair_lanes.rs`).
pub const PAIR_LANES: KernelSource = KernelSource {
    file: "pair_lanes.cu",
    source: include_str!("../../../kernels/pair_lanes.cu"),
    physics: true,
    cells: true,
};

/// The matrix-free levels (`partial`: quadrature data stored; `none`: everything recomputed), sum
/// factorized on tensor cells: compiled once per variant, see `operator::level::partial::cuda`.
pub const MATFREE: KernelSource = KernelSource {
    file: "matfree.cu",
    source: include_str!("../../../kernels/matfree.cu"),
    physics: true,
    cells: false,
};

/// The matrix-free levels on hexahedra for mass and diffusion (the CEED bake-off kernel): compiled
/// once per variant, see `operator::level::partial::hex_cuda`.
pub const HEX_MATFREE: KernelSource = KernelSource {
    file: "hex_matfree.cu",
    source: include_str!("../../../kernels/hex_matfree.cu"),
    physics: true,
    cells: false,
};

/// The `none` level on a uniform lattice (material byte per cell, element matrices per template
/// cell and material): compiled per lattice, see `operator::level::none::grid_cuda`.
pub const GRID: KernelSource = KernelSource {
    file: "grid.cu",
    source: include_str!("../../../kernels/grid.cu"),
    physics: false,
    cells: false,
};

/// A tiny kernel that evaluates a QFunction's twin on given inputs: the GPU side of the parity
/// test between each physics' Rust body and its CUDA twin.
pub const QF_PARITY: KernelSource = KernelSource {
    file: "qf_parity.cu",
    source: include_str!("../../../kernels/qf_parity.cu"),
    physics: true,
    cells: false,
};

/// Error norms against a problem file's exact solution, compiled into the kernel (`expr.cuh` with
/// the expressions as defines U0..U2), see `operator::norms_cuda`.
pub const NORMS: KernelSource = KernelSource {
    file: "norms.cu",
    source: concat!(include_str!("../../../kernels/expr.cuh"), "#line 1 \"norms.cu\"\n", include_str!("../../../kernels/norms.cu")),
    physics: true,
    cells: false,
};

/// The CSR sparsity pattern of a dof map built on the device, see
/// `operator::level::full::pattern_cuda` (defines NPC, NCOMP, MAXU).
pub const PATTERN: KernelSource = KernelSource {
    file: "pattern.cu",
    source: include_str!("../../../kernels/pattern.cu"),
    physics: false,
    cells: false,
};

/// A generated box mesh built on the device: Hilbert block order, first-appearance vertex
/// numbering, coordinates (`mesh::box_cuda`; no defines).
pub const BOX_MESH: KernelSource = KernelSource {
    file: "box_mesh.cu",
    source: include_str!("../../../kernels/box_mesh.cu"),
    physics: false,
    cells: false,
};

/// The load vector of a problem file's source, compiled into the kernel (`expr.cuh` with the
/// expressions as defines F0..F2), see `operator::load_cuda`.
pub const LOAD: KernelSource = KernelSource {
    file: "load.cu",
    source: concat!(include_str!("../../../kernels/expr.cuh"), "#line 1 \"load.cu\"\n", include_str!("../../../kernels/load.cu")),
    physics: true,
    cells: false,
};

/// Discontinuous Galerkin on an interval (`crate::dg`): block-tridiagonal assembly, apply, block
/// Jacobi and cyclic reduction, one template per operation instantiated for blocks of 2 to 7.
pub const DG: KernelSource = KernelSource {
    file: "dg.cu",
    source: include_str!("../../../kernels/dg.cu"),
    physics: false,
    cells: false,
};

/// Multifrontal factorization and solves, one launch per tree level (`solver::multifrontal::cuda`).
pub const MULTIFRONTAL: KernelSource = KernelSource {
    file: "multifrontal.cu",
    source: include_str!("../../../kernels/multifrontal.cu"),
    physics: false,
    cells: false,
};

/// The multifrontal kernels plus the batched large fronts (`kernels/multifrontal_batched.cu`: a
/// block per front, every large front of a level in one launch) and the register-streamed bottom
/// pass (`kernels/multifrontal_stream.cu`) and the row-major bottom pass a thread per column
/// (`kernels/multifrontal_rows.cu`); the module the solver loads.
pub const MULTIFRONTAL_BATCHED: KernelSource = KernelSource {
    file: "multifrontal_batched.cu",
    source: concat!(
        include_str!("../../../kernels/multifrontal.cu"),
        "#line 1 \"multifrontal_batched.cu\"\n",
        include_str!("../../../kernels/multifrontal_batched.cu"),
        "#line 1 \"multifrontal_stream.cu\"\n",
        include_str!("../../../kernels/multifrontal_stream.cu"),
        "#line 1 \"multifrontal_rows.cu\"\n",
        include_str!("../../../kernels/multifrontal_rows.cu")
    ),
    physics: false,
    cells: false,
};

/// Every kernel source of the backend that compiles without variant defines (what CI compiles as
/// is; the finite element variants are compiled by `operator::level::compile_variants`).
pub const ALL_SOURCES: [KernelSource; 6] = [VECTOR, SPMV, BLOCK_JACOBI, DG, MULTIFRONTAL, MULTIFRONTAL_BATCHED];

/// PTX plus whatever NVRTC logged while producing it (warnings).
#[derive(Clone, Debug)]
pub struct Compiled {
    pub ptx: String,
    pub log: String,
}

/// Checks that NVRTC can be loaded and returns its (major, minor) version; `Err` is a human reason.
pub fn nvrtc_version() -> std::result::Result<(i32, i32), String> {
    static VERSION: OnceLock<std::result::Result<(i32, i32), String>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            // SAFETY: only probes whether the shared library can be opened.
            if !guard("loading NVRTC", || unsafe { nvrtc_sys::is_culib_present() })? {
                return Err(
                    "NVRTC (libnvrtc.so.13) not found: install the CUDA 13 NVRTC and put its \
                            lib directory on LD_LIBRARY_PATH"
                        .to_string(),
                );
            }
            let (mut major, mut minor) = (0, 0);
            // SAFETY: both pointers are valid for the duration of the call.
            let status = guard("nvrtcVersion", || unsafe {
                nvrtc_sys::nvrtcVersion(&mut major, &mut minor)
            })?;
            status
                .result()
                .map_err(|e| format!("nvrtcVersion failed: {e}"))?;
            Ok((major, minor))
        })
        .clone()
}

/// NVRTC options for `arch` (e.g. `compute_90`). Fast math stays off: solver vectors need IEEE
/// division and square roots.
fn options(arch: &str, defines: &[String]) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
        "-default-device".to_string(),
        format!("-DGALERKIN_BLOCK={BLOCK_SIZE}"),
    ];
    // Source lines in the PTX for Nsight Compute's per-line counters (profiling only; off by default
    // so that the cached PTX and the kernels' speed are those of a normal run).
    if std::env::var_os(LINEINFO_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        o.push("-lineinfo".to_string());
    }
    o.extend(defines.iter().map(|d| format!("-D{d}")));
    o
}

/// Set (to anything but `0`) to compile every kernel with `-lineinfo`.
pub const LINEINFO_ENV: &str = "GALERKIN_NVRTC_LINEINFO";

/// `compute_XY` / `sm_XY` with a two- or three-digit XY; anything else is a caller error.
fn check_arch(arch: &str) -> Result<()> {
    let digits = arch
        .strip_prefix("compute_")
        .or_else(|| arch.strip_prefix("sm_"))
        .unwrap_or("");
    let digits = digits.strip_suffix('a').unwrap_or(digits);
    if (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "GPU architecture `{arch}` is not of the form compute_XY or sm_XY"
        )))
    }
}

/// The text NVRTC sees: the common helpers, then a `#line` directive so diagnostics name `file` and
/// its own line numbers.
fn full_source(file: &str, source: &str, physics: bool, cells: bool) -> String {
    let qf = if physics { QFUNCTIONS } else { "" };
    let tables = if cells { CELL_TABLES } else { "" };
    format!("{}\n{qf}\n{tables}\n#line 1 \"{file}\"\n{source}", COMMON.source)
}

/// Compiles one source to PTX for `arch` with NVRTC only (no driver or GPU needed). A compile error
/// is an [`Error::Backend`] naming `file` and carrying NVRTC's log.
pub fn compile_ptx(file: &str, source: &str, arch: &str) -> Result<Compiled> {
    compile(file, source, false, false, arch, &[])
}

/// [`compile_ptx`] of a kernel source with `NAME=VALUE` defines (a kernel variant).
pub fn compile_ptx_with(kernel: &KernelSource, arch: &str, defines: &[String]) -> Result<Compiled> {
    compile(kernel.file, kernel.source, kernel.physics, kernel.cells, arch, defines)
}

fn compile(file: &str, source: &str, physics: bool, cells: bool, arch: &str, defines: &[String]) -> Result<Compiled> {
    check_arch(arch)?;
    if let Some(d) = defines.iter().find(|d| d.is_empty() || d.starts_with('-') || d.contains(char::is_whitespace)) {
        return Err(Error::invalid(format!("kernel define {d:?} is not of the form NAME=VALUE")));
    }
    nvrtc_version().map_err(cuda_error)?;
    let src = CString::new(full_source(file, source, physics, cells))
        .map_err(|_| Error::invalid(format!("kernel source {file} contains a NUL byte")))?;
    let name = CString::new(file)
        .map_err(|_| Error::invalid(format!("kernel file name {file:?} contains a NUL byte")))?;
    let opts = options(arch, defines);
    let fail = |stage: &str, e: String| {
        cuda_error(format!("NVRTC {stage} of {file} for {arch} failed: {e}"))
    };

    let prog = guard("nvrtcCreateProgram", || {
        nvrtc::create_program(&src, Some(&name))
    })
    .map_err(|e| fail("program creation", e))?
    .map_err(|e| fail("program creation", e.to_string()))?;
    let program = Program(prog);
    // SAFETY: `program` holds a live program created above; `src` and `name` outlive it.
    let compiled = guard("nvrtcCompileProgram", || unsafe {
        nvrtc::compile_program(program.0, &opts)
    })
    .map_err(|e| fail("compilation", e))?;
    // SAFETY: as above.
    let log = guard("nvrtcGetProgramLog", || unsafe {
        nvrtc::get_program_log(program.0)
    })
    .ok()
    .and_then(|r| r.ok())
    .map(|raw| c_chars_to_string(&raw))
    .unwrap_or_default();
    if let Err(e) = compiled {
        return Err(cuda_error(format!(
            "NVRTC could not compile {file} for {arch} ({e}):\n{log}"
        )));
    }
    // SAFETY: as above; compilation succeeded so PTX is available.
    let ptx = guard("nvrtcGetPTX", || unsafe { nvrtc::get_ptx(program.0) })
        .map_err(|e| fail("PTX retrieval", e))?
        .map_err(|e| fail("PTX retrieval", e.to_string()))?;
    Ok(Compiled {
        ptx: c_chars_to_string(&ptx),
        log,
    })
}

/// Destroys the NVRTC program on every exit path.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program is live and destroyed exactly once; a failure here only leaks it.
        let _ = guard("nvrtcDestroyProgram", || unsafe {
            nvrtc::destroy_program(self.0)
        });
    }
}

/// NVRTC returns NUL-terminated `c_char` buffers.
fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles every kernel source for `arch` with NVRTC only and returns (file, PTX bytes). Warnings
/// count as errors: the sources are ours, so a warning is a bug caught before it reaches a GPU.
pub fn compile_all_ptx(arch: &str) -> Result<Vec<(String, usize)>> {
    ALL_SOURCES
        .iter()
        .map(|k| {
            let c = compile_ptx(k.file, k.source, arch)?;
            if c.log.to_ascii_lowercase().contains("warning") {
                return Err(cuda_error(format!(
                    "NVRTC warnings in {} for {arch}:\n{}",
                    k.file, c.log
                )));
            }
            Ok((k.file.to_string(), c.ptx.len()))
        })
        .collect()
}

/// PTX of `kernel` for `arch`, from the process cache, then the disk cache, then NVRTC. With
/// `fresh`, both caches are bypassed (used when the driver rejected a cached PTX).
pub(crate) fn ptx_for(kernel: &KernelSource, defines: &[String], arch: &str, fresh: bool) -> Result<Arc<str>> {
    static MEMORY: OnceLock<Mutex<HashMap<u64, Arc<str>>>> = OnceLock::new();
    let version = nvrtc_version().map_err(cuda_error)?;
    let key = cache_key(&[
        COMMON.source,
        if kernel.physics { QFUNCTIONS } else { "" },
        if kernel.cells { CELL_TABLES } else { "" },
        kernel.source,
        &options(arch, defines).join(" "),
        &format!("nvrtc {}.{}", version.0, version.1),
    ]);
    let memory = MEMORY.get_or_init(Default::default);
    if !fresh {
        if let Some(ptx) = memory.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(ptx.clone());
        }
    }
    let disk = cache_dir()
        .map(|dir| dir.join(format!("{}-{key:016x}.ptx", kernel.file.replace('.', "_"))));
    let cached = if fresh {
        None
    } else {
        disk.as_ref().and_then(|p| std::fs::read_to_string(p).ok())
    };
    let ptx: Arc<str> = match cached.filter(|s| s.contains(".entry")) {
        Some(ptx) => ptx.into(),
        None => {
            let ptx: Arc<str> = compile_ptx_with(kernel, arch, defines)?.ptx.into();
            if let Some(path) = disk {
                store_quietly(&path, &ptx);
            }
            ptx
        }
    };
    memory
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, ptx.clone());
    Ok(ptx)
}

/// `$XDG_CACHE_HOME/galerkin` or `~/.cache/galerkin`.
fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("galerkin"))
}

/// Writes through a temporary file and a rename so a concurrent reader never sees half a file.
/// The cache is an optimization: any failure (read-only home, full disk) is ignored.
fn store_quietly(path: &std::path::Path, ptx: &str) {
    let Some(dir) = path.parent() else { return };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let ok = std::fs::create_dir_all(dir).is_ok() && std::fs::write(&tmp, ptx).is_ok();
    if !ok || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// FNV-1a over the parts (with separators): stable across Rust versions, unlike `DefaultHasher`,
/// so the disk cache survives toolchain upgrades.
fn cache_key(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_key_separates_parts_and_changes_with_any_byte() {
        assert_ne!(cache_key(&["ab", "c"]), cache_key(&["a", "bc"]));
        assert_ne!(
            cache_key(&["kernel", "compute_90"]),
            cache_key(&["kernel", "compute_80"])
        );
        assert_eq!(cache_key(&["x", "y"]), cache_key(&["x", "y"]));
        // FNV-1a reference value of the empty input followed by the 0xff separator.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        assert_eq!(cache_key(&[""]), h);
    }

    #[test]
    fn arch_strings_are_validated() {
        assert!(check_arch("compute_90").is_ok());
        assert!(check_arch("sm_90a").is_ok());
        assert!(check_arch("compute_100").is_ok());
        assert!(check_arch("90").is_err());
        assert!(check_arch("compute_9x").is_err());
        assert!(compile_ptx("x.cu", "", "--evil").is_err());
    }

    #[test]
    fn line_directive_names_the_file() {
        let s = full_source("spmv.cu", "int x;", false, false);
        assert!(s.contains("#line 1 \"spmv.cu\"\nint x;"));
        assert!(s.starts_with(COMMON.source));
    }
}
