//! Tuning switches that were environment variables (review R14): `[assembly] overlap_pattern` and
//! `[mesh] download_chunk` are problem-file keys with their defaults kept, and a bad value is an
//! error naming the key.
use galerkin::problem::config::ProblemFile;

fn problem(mesh_extra: &str, assembly: &str) -> String {
    format!(
        "[mesh]\ngenerator = \"box\"\ncell = \"tetrahedron\"\nn = [2, 2, 2]\n{mesh_extra}\n[physics]\nkind = \"poisson\"\nkappa = 1.0\nsource = \"1\"\n\
         [[bc]]\nboundary = [\"xmin\"]\ntype = \"dirichlet\"\nvalue = 0.0\n[assembly]\n{assembly}\n"
    )
}

#[test]
fn overlap_pattern_and_download_chunk_are_keys_with_their_defaults() {
    let pf = ProblemFile::parse(&problem("", ""), "t.toml").unwrap();
    assert_eq!(pf.assembly.tuning().overlap_pattern, None, "unset: the overlap (the default)");
    assert_eq!(pf.mesh.download_chunk, None);
    let pf = ProblemFile::parse(&problem("download_chunk = 4096", "overlap_pattern = false"), "t.toml").unwrap();
    assert_eq!(pf.assembly.tuning().overlap_pattern, Some(false));
    assert_eq!(pf.mesh.download_chunk, Some(4096));
}

#[test]
fn bad_values_name_their_keys() {
    let err = ProblemFile::parse(&problem("download_chunk = 0", ""), "t.toml").unwrap_err().to_string();
    assert!(err.contains("mesh.download_chunk") && err.contains("positive"), "{err}");
    for bad in ["download_chunk = -3", "download_chunk = \"big\""] {
        let err = ProblemFile::parse(&problem(bad, ""), "t.toml").unwrap_err().to_string();
        assert!(err.contains("download_chunk"), "{bad}: {err}");
    }
    let err = ProblemFile::parse(&problem("", "overlap_pattern = 0"), "t.toml").unwrap_err().to_string();
    assert!(err.contains("overlap_pattern"), "{err}");
}
