//! Transient heat with loads and materials: the semi-infinite solid under constant flux, steady
//! layered and Robin slabs against their exact piecewise-linear solutions, a time-dependent
//! Dirichlet value with a source reproduced exactly, the energy balance of every step (asserted),
//! a laser spot delivering its power, and every level on every backend agreeing.
mod common;
use galerkin::backend::{Backend, Cpu};
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::{AssemblyLevel, FeBackend};
use galerkin::physics::Coefficient;
use galerkin::problem::heat::{
    HeatLoads, HeatSetup, HeatStepper, Laser, Material, MaterialMap, Rule, Schedule, Selector,
    Shape, StepRecord,
};
use galerkin::space::FunctionSpace;
use std::f64::consts::PI;
use std::sync::Arc;

fn bar(nx: usize, len: f64, width: f64, cell: CellType) -> Mesh {
    generate::box_mesh(nx, 1, 1, [0.0; 3], [len, width, width], cell).unwrap()
}

fn setup(
    rhoc: impl Into<Coefficient>,
    k: impl Into<Coefficient>,
    dt: f64,
    theta: f64,
) -> HeatSetup {
    HeatSetup {
        rhoc: rhoc.into(),
        k: k.into(),
        zero_dirichlet: Vec::new(),
        dt,
        theta,
    }
}

/// Runs `steps` steps from `t0` with the balance recorded; returns the final state and records.
fn run<B: FeBackend>(
    be: &B,
    space: &Arc<FunctionSpace>,
    s: &HeatSetup,
    loads: &HeatLoads,
    level: AssemblyLevel,
    t0: &[f64],
    steps: usize,
) -> (Vec<f64>, Vec<StepRecord>) {
    let stepper = HeatStepper::with_loads(be, space.clone(), s, loads, level).unwrap();
    let mut t = be.from_host(t0).unwrap();
    let rec = stepper.run_recorded(&mut t, steps, |_, _| Ok(())).unwrap();
    (be.to_host(&t).unwrap(), rec)
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn semi_infinite_solid_under_constant_flux() {
    // T_surface = 2q√(αt/π)/k while the heat has not reached the far end (√(αt) = 0.1 ≪ L = 1).
    let (k, rhoc, q, t_end) = (2.0, 4.0, 3.0, 0.02);
    let alpha = k / rhoc;
    let exact = 2.0 * q * (alpha * t_end / PI).sqrt() / k;
    let mut errs = Vec::new();
    for (nx, steps) in [(20, 25), (40, 50), (80, 100)] {
        let space = Arc::new(
            FunctionSpace::lagrange(Arc::new(bar(nx, 1.0, 0.05, CellType::Hexahedron)), 2, 1)
                .unwrap(),
        );
        let loads = HeatLoads::default().flux(["xmin"], move |_| q, Schedule::default());
        let (t, rec) = run(
            &Cpu,
            &space,
            &setup(rhoc, k, t_end / steps as f64, 1.0),
            &loads,
            AssemblyLevel::Partial,
            &vec![0.0; space.ndofs()],
            steps,
        );
        let surface: Vec<f64> = space
            .dofmap
            .node_coords
            .iter()
            .zip(&t)
            .filter(|(x, _)| x[0] == 0.0)
            .map(|(_, v)| *v)
            .collect();
        let spread = surface
            .iter()
            .fold(0.0f64, |m, v| m.max((v - surface[0]).abs()));
        assert!(
            spread < 1e-9,
            "the bar must stay one-dimensional: spread {spread}"
        );
        let err = (surface[0] - exact).abs() / exact;
        // Heat in is q·area·t exactly; all of it stored.
        let stored: f64 = rec.iter().map(|r| r.balance.unwrap().stored_change).sum();
        let put_in = q * 0.05 * 0.05 * t_end;
        println!("nx {nx} steps {steps}: surface {} exact {exact} error {err:.3e}, stored {stored:e} put in {put_in:e}", surface[0]);
        assert!(
            (stored - put_in).abs() < 1e-8 * put_in,
            "stored {stored} vs put in {put_in}"
        );
        errs.push(err);
    }
    // Backward Euler at Δt ∝ h: first order.
    let rates: Vec<f64> = errs.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
    println!("errors {errs:?} rates {rates:?}");
    assert!(errs[2] < 0.01, "finest error {}", errs[2]);
    assert!(rates.iter().all(|&r| r > 0.8), "rates {rates:?}");
}

#[test]
fn two_layer_slab_and_robin_slab_reach_their_piecewise_linear_steady_states() {
    // k = 1 on [0, 0.5), k = 4 on [0.5, 1]: T(0) = 0, T(1) = 1 → interface 0.8, linear in each layer.
    let mut mesh = bar(20, 1.0, 0.2, CellType::Tetrahedron);
    let map = MaterialMap {
        materials: vec![
            Material::new("a", 1.0, 1.0, 1.0),
            Material::new("b", 4.0, 2.0, 1.5),
        ],
        rules: vec![Rule {
            selector: Selector::Shape(Shape::Layer {
                axis: 0,
                from: 0.5,
                to: 2.0,
            }),
            material: 1,
        }],
        ..Default::default()
    };
    let fields = map.assign(&mut mesh).unwrap();
    assert_eq!(fields.counts, vec![60, 60]);
    let space = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 1, 1).unwrap());
    let loads = HeatLoads::default()
        .temperature(["xmin"], 0.0)
        .temperature(["xmax"], 1.0);
    let s = setup(fields.rhoc, fields.k, 1e9, 1.0);
    let exact = |x: f64| {
        if x < 0.5 {
            1.6 * x
        } else {
            0.8 + 0.4 * (x - 0.5)
        }
    };
    for level in AssemblyLevel::ALL {
        let (t, rec) = run(
            &Cpu,
            &space,
            &s,
            &loads,
            level,
            &vec![0.0; space.ndofs()],
            2,
        );
        let err = space
            .dofmap
            .node_coords
            .iter()
            .zip(&t)
            .map(|(x, v)| (v - exact(x[0])).abs())
            .fold(0.0, f64::max);
        println!(
            "{level:?}: layered slab error {err:.2e}, balance {:?}",
            rec[1].balance
        );
        assert!(err < 1e-7, "{level:?}: layered slab error {err}");
        // In steady state the heat entering at xmax leaves at xmin (flux k·T' = 1.6 through 0.2²):
        // the net reaction is zero to the solver tolerance relative to that throughput.
        let b = rec[1].balance.unwrap();
        let throughput = 1.6 * 0.04 * 1e9;
        assert!(
            b.residual.abs() < 1e-8 * throughput && b.stored_change.abs() < 1e-8 * throughput,
            "{level:?}: balance {b:?}"
        );
    }
    // Robin at xmax: k T' = −h(T − T∞) there, T(0) = 0 → T = a x, a = h T∞/(k + h L).
    let space = Arc::new(
        FunctionSpace::lagrange(Arc::new(bar(10, 1.0, 0.2, CellType::Hexahedron)), 2, 1).unwrap(),
    );
    let (k, h, tinf) = (2.0, 3.0, 5.0);
    let loads = HeatLoads::default()
        .temperature(["xmin"], 0.0)
        .robin(["xmax"], h, tinf);
    let a = h * tinf / (k + h);
    for level in AssemblyLevel::ALL {
        let (t, rec) = run(
            &Cpu,
            &space,
            &setup(1.0, k, 1e9, 1.0),
            &loads,
            level,
            &vec![0.0; space.ndofs()],
            2,
        );
        let err = space
            .dofmap
            .node_coords
            .iter()
            .zip(&t)
            .map(|(x, v)| (v - a * x[0]).abs())
            .fold(0.0, f64::max);
        let b = rec[1].balance.unwrap();
        println!("{level:?}: Robin slab error {err:.2e}, balance {b:?}");
        assert!(err < 1e-7, "{level:?}: Robin slab error {err}");
        // Steady: what convection brings in (−robin_loss) leaves through the Dirichlet face.
        let q = k * a * 0.04 * 1e9;
        assert!(
            (b.robin_loss + q).abs() < 1e-6 * q && (b.dirichlet_in + q).abs() < 1e-6 * q,
            "{level:?}: {b:?}"
        );
    }
}

#[test]
fn time_dependent_dirichlet_with_source_is_exact_and_balanced() {
    // T = t solves ρc T' = ∇·(k∇T) + ρc with T = t on the boundary: both θ-methods are exact.
    let space = Arc::new(
        FunctionSpace::lagrange(
            Arc::new(
                generate::box_mesh(3, 3, 3, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap(),
            ),
            2,
            1,
        )
        .unwrap(),
    );
    let rhoc = 3.0;
    let faces = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];
    let loads = HeatLoads::default()
        .dirichlet(faces, |_, t| t)
        .source(move |_| rhoc, Schedule::default());
    for theta in [0.5, 1.0] {
        for level in AssemblyLevel::ALL {
            let (t, rec) = run(
                &Cpu,
                &space,
                &setup(rhoc, 2.0, 0.1, theta),
                &loads,
                level,
                &vec![0.0; space.ndofs()],
                5,
            );
            let err = t.iter().map(|v| (v - 0.5).abs()).fold(0.0, f64::max);
            assert!(err < 1e-8, "theta {theta} {level:?}: error {err}");
            for r in &rec {
                let b = r.balance.unwrap();
                // Everything stored comes from the source (Q·volume·Δt); none crosses the boundary.
                assert!(
                    (b.stored_change - 0.3).abs() < 1e-8
                        && (b.heat_in - 0.3).abs() < 1e-12
                        && b.dirichlet_in.abs() < 1e-8,
                    "theta {theta} {level:?}: {b:?}"
                );
            }
        }
    }
}

/// A body with every kind of load: laser (switched off inside step 3), Robin, a time-dependent
/// Dirichlet face, a source; two materials.
fn loaded_case() -> (Arc<FunctionSpace>, HeatSetup, HeatLoads, Vec<f64>) {
    let mut mesh =
        generate::box_mesh(4, 4, 3, [0.0; 3], [1.0, 1.0, 0.5], CellType::Tetrahedron).unwrap();
    let map = MaterialMap {
        materials: vec![
            Material::new("steel", 2.0, 3.0, 1.0),
            Material::new("inclusion", 0.5, 1.0, 2.0),
        ],
        rules: vec![Rule {
            selector: Selector::Shape(Shape::Sphere {
                centre: [0.5, 0.5, 0.25],
                radius: 0.3,
            }),
            material: 1,
        }],
        ..Default::default()
    };
    let fields = map.assign(&mut mesh).unwrap();
    assert!(fields.counts.iter().all(|&c| c > 0), "{:?}", fields.counts);
    let space = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 2, 1).unwrap());
    let laser = Laser {
        power: 5.0,
        radius: 0.2,
        centre: [0.5, 0.5, 0.5],
    };
    let loads = HeatLoads::default()
        .laser(["zmax"], laser, Schedule::window(0.0, 0.025))
        .robin(["zmin"], 10.0, 1.0)
        .dirichlet(["xmin"], |x, t| (x[1] + x[2]).sin() * t)
        .source(|x| 1.0 + x[0], Schedule::default().factor(|t| 1.0 + t));
    let t0 = space.interpolate(|x, v| v[0] = 0.3 * x[0] * x[1]);
    (space, setup(fields.rhoc, fields.k, 0.01, 0.5), loads, t0)
}

#[test]
fn energy_balance_holds_every_step_on_every_level_and_backend() {
    let (space, s, loads, t0) = loaded_case();
    let (reference, _) = run(&Cpu, &space, &s, &loads, AssemblyLevel::Full, &t0, 6);
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    on_backends!(|be| {
        for level in AssemblyLevel::ALL {
            let (t, rec) = run(be, &space, &s, &loads, level, &t0, 6);
            let what = format!("{} {level:?}", be.name());
            for r in &rec {
                let b = r.balance.unwrap();
                println!("{what} step {}: {b:?}", r.step);
                assert!(b.relative < 1e-7, "{what} step {}: balance {b:?}", r.step);
                assert!(
                    b.robin_loss.abs() > 0.0
                        && b.dirichlet_in.abs() > 0.0
                        && b.stored_change.abs() > 0.0
                );
            }
            // The laser is on for steps 1, 2 and half of 3.
            let laser_and_source = |i: usize| rec[i].balance.unwrap().heat_in;
            let source_only = laser_and_source(3);
            let laser = laser_and_source(0) - source_only * (1.0 + 0.005) / (1.0 + 0.035);
            let half = laser_and_source(2) - source_only * (1.0 + 0.025) / (1.0 + 0.035);
            assert!(
                (half - 0.5 * laser).abs() < 1e-12 + 1e-9 * laser,
                "{what}: half step {half} vs {laser}"
            );
            let diff = max_abs_diff(&t, &reference);
            assert!(
                diff < 1e-7 * scale,
                "{what}: differs from the CPU full level by {diff}"
            );
        }
    });
}

#[test]
fn laser_delivers_its_power_on_a_large_face() {
    let mesh = generate::box_mesh(
        24,
        24,
        1,
        [-1.0, -1.0, 0.0],
        [1.0, 1.0, 0.1],
        CellType::Hexahedron,
    )
    .unwrap();
    let space = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 2, 1).unwrap());
    let laser = Laser {
        power: 7.0,
        radius: 0.25,
        centre: [0.0, 0.0, 0.1],
    };
    // The 1/e² convention: q(w) = q(0)·e⁻².
    let ratio = laser.flux([0.25, 0.0, 0.1]) / laser.flux(laser.centre);
    assert!((ratio - (-2.0f64).exp()).abs() < 1e-15);
    let loads = HeatLoads::default().laser(["zmax"], laser, Schedule::default());
    let (_, rec) = run(
        &Cpu,
        &space,
        &setup(1.0, 1.0, 0.5, 1.0),
        &loads,
        AssemblyLevel::Partial,
        &vec![0.0; space.ndofs()],
        1,
    );
    let power = rec[0].balance.unwrap().heat_in / 0.5;
    println!("delivered {power} W of 7");
    assert!((power - 7.0).abs() < 0.01 * 7.0, "delivered {power}");
}

#[test]
fn two_equal_materials_match_a_uniform_body() {
    let (space, s, loads, t0) = loaded_case();
    let uniform_map = |n: usize| MaterialMap {
        materials: vec![Material::new("steel", 2.0, 3.0, 1.0); n],
        rules: if n == 2 {
            vec![Rule {
                selector: Selector::Shape(Shape::Box {
                    lower: [0.0; 3],
                    upper: [0.5, 1.0, 1.0],
                }),
                material: 1,
            }]
        } else {
            Vec::new()
        },
        ..Default::default()
    };
    let solve = |n: usize| {
        let mut mesh = (*space.mesh).clone();
        let f = uniform_map(n).assign(&mut mesh).unwrap();
        assert_eq!(f.counts.len(), n);
        let sp = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 2, 1).unwrap());
        run(
            &Cpu,
            &sp,
            &HeatSetup {
                rhoc: f.rhoc,
                k: f.k,
                ..s.clone()
            },
            &loads,
            AssemblyLevel::Partial,
            &t0,
            3,
        )
        .0
    };
    let (one, two) = (solve(1), solve(2));
    let uniform = run(
        &Cpu,
        &space,
        &HeatSetup {
            rhoc: 3.0.into(),
            k: 2.0.into(),
            ..s.clone()
        },
        &loads,
        AssemblyLevel::Partial,
        &t0,
        3,
    )
    .0;
    assert!(max_abs_diff(&one, &uniform) < 1e-12 && max_abs_diff(&two, &uniform) < 1e-12);
    // The heterogeneous case differs (the comparison can fail).
    let (het, _) = run(&Cpu, &space, &s, &loads, AssemblyLevel::Partial, &t0, 3);
    assert!(max_abs_diff(&het, &uniform) > 1e-4);
}

#[test]
fn corrosion_profile_regions_and_shapes_select_the_documented_cells() {
    use galerkin::problem::heat::{Corrosion, Profile};
    // A pit of depth 0.2 and radius 0.4 in the zmin face of the unit cube, centred at (0.5, 0.5).
    let pit = Corrosion {
        axis: 2,
        upper: false,
        depth: 0.2,
        radius: 0.4,
        centre: [0.5, 0.5, 0.0],
        profile: Profile::Pit,
        filler: 1,
    };
    let (lo, hi) = ([0.0; 3], [1.0; 3]);
    assert!(pit.corroded([0.5, 0.5, 0.199], lo, hi) && !pit.corroded([0.5, 0.5, 0.201], lo, hi));
    // d(ρ) = depth·(1 − ρ²/R²): at ρ = R/2 the depth is 0.15.
    assert!(pit.corroded([0.7, 0.5, 0.149], lo, hi) && !pit.corroded([0.7, 0.5, 0.151], lo, hi));
    assert!(!pit.corroded([0.5, 0.91, 0.0], lo, hi));
    // A groove along y: independent of y; on the zmax face measured from z = 1.
    let groove = Corrosion {
        upper: true,
        profile: Profile::Groove { axis: 1 },
        ..pit.clone()
    };
    assert!(
        groove.corroded([0.5, 0.01, 0.801], lo, hi)
            && groove.corroded([0.5, 0.99, 0.801], lo, hi)
            && !groove.corroded([0.5, 0.5, 0.79], lo, hi)
    );
    // Cell counts of the groove: volume 2/3·depth·2R per unit length ≈ 0.1067 of the cube.
    let mut mesh = generate::box_mesh(20, 2, 20, lo, hi, CellType::Hexahedron).unwrap();
    mesh.cell_tags
        .iter_mut()
        .enumerate()
        .for_each(|(c, t)| *t = if c % 2 == 0 { 5 } else { 9 });
    let map = MaterialMap {
        materials: vec![
            Material::new("steel", 1.0, 1.0, 1.0),
            Material::new("air", 0.1, 0.1, 0.1),
            Material::new("tagged", 2.0, 1.0, 1.0),
        ],
        rules: vec![Rule {
            selector: Selector::Regions(vec![9]),
            material: 2,
        }],
        corrosion: Some(groove),
        ..Default::default()
    };
    let f = map.assign(&mut mesh).unwrap();
    let frac = f.counts[1] as f64 / mesh.num_cells() as f64;
    println!(
        "groove fraction {frac} (continuum 0.1067), counts {:?}",
        f.counts
    );
    assert!(
        (frac - 2.0 / 3.0 * 0.2 * 0.8).abs() < 0.02,
        "groove fraction {frac}"
    );
    // Regions: every odd cell that the corrosion did not take is `tagged`.
    assert!(
        f.counts[2] > 0
            && f.counts[0] > 0
            && (f.counts[0] as i64 - f.counts[2] as i64).abs() <= 2 * f.counts[1] as i64
    );
    // Shapes by centroid, later rules win.
    let mut mesh = generate::box_mesh(10, 10, 10, lo, hi, CellType::Hexahedron).unwrap();
    let shapes = MaterialMap {
        materials: vec![
            Material::new("a", 1.0, 1.0, 1.0),
            Material::new("b", 1.0, 1.0, 1.0),
            Material::new("c", 1.0, 1.0, 1.0),
        ],
        rules: vec![
            Rule {
                selector: Selector::Shape(Shape::Cylinder {
                    centre: [0.5, 0.5, 0.0],
                    axis: 2,
                    radius: 0.3,
                    from: 0.0,
                    to: 0.5,
                }),
                material: 1,
            },
            Rule {
                selector: Selector::Shape(Shape::Box {
                    lower: [0.0; 3],
                    upper: [0.5, 0.5, 1.0],
                }),
                material: 2,
            },
        ],
        ..Default::default()
    };
    let f = shapes.assign(&mut mesh).unwrap();
    assert_eq!(f.counts[2], 250);
    // Cylinder centroids within r = 0.3 of the axis: 32 per layer, the quarter in x, y < 0.5
    // taken by the later box, over the 5 layers below z = 0.5.
    assert_eq!(f.counts[1], 5 * 24, "{:?}", f.counts);
}

#[test]
fn space_convergence_with_time_dependent_dirichlet_values() {
    // T = e^{−π²αt} cos(πx) on a bar: T(0) = e^{−π²αt}, T(1) = −e^{−π²αt} (Dirichlet values that
    // change in time). Crank–Nicolson with a small Δt: the error is the space error, asserted at
    // least O(h²) for P1 and O(h³) for P2 at the nodes (P2 shows the 1D nodal h⁴).
    let (k, rhoc, t_end) = (1.5, 3.0, 0.05);
    let alpha = k / rhoc;
    let decay = move |t: f64| (-PI * PI * alpha * t).exp();
    let loads = HeatLoads::default()
        .dirichlet(["xmin"], move |_, t| decay(t))
        .dirichlet(["xmax"], move |_, t| -decay(t));
    for (degree, order) in [(1, 2.0), (2, 3.0)] {
        let mut errs = Vec::new();
        for nx in [4, 8, 16] {
            let space = Arc::new(
                FunctionSpace::lagrange(
                    Arc::new(bar(nx, 1.0, 0.1, CellType::Hexahedron)),
                    degree,
                    1,
                )
                .unwrap(),
            );
            let t0 = space.interpolate(|x, v| v[0] = (PI * x[0]).cos());
            let (t, _) = run(
                &Cpu,
                &space,
                &setup(rhoc, k, t_end / 400.0, 0.5),
                &loads,
                AssemblyLevel::Partial,
                &t0,
                400,
            );
            let err = space
                .dofmap
                .node_coords
                .iter()
                .zip(&t)
                .map(|(x, v)| (v - decay(t_end) * (PI * x[0]).cos()).abs())
                .fold(0.0, f64::max);
            errs.push(err);
        }
        let rates: Vec<f64> = errs.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
        println!("P{degree}: errors {errs:?} rates {rates:?}");
        assert!(
            rates.iter().all(|&r| r > order - 0.3),
            "P{degree}: rates {rates:?} (expected {order})"
        );
    }
}

#[test]
fn two_layer_slab_decays_like_its_exact_first_mode() {
    // Layers [0, ½) (k₁ = 1, ρc₁ = 1) and [½, 1] (k₂ = 4, ρc₂ = 2), T = 0 at both ends. The first
    // mode is X = sin(β₁x) in layer 1, A·sin(β₂(1 − x)) in layer 2 with βᵢ = ω/√αᵢ, continuity of
    // T and of k∂T/∂x at x = ½ giving A and the equation for ω; T = e^{−ω²t}X exactly.
    let (k1, c1, k2, c2, half) = (1.0f64, 1.0f64, 4.0f64, 2.0f64, 0.5f64);
    let (a1, a2) = (k1 / c1, k2 / c2);
    let f = |w: f64| {
        let (b1, b2) = (w / a1.sqrt(), w / a2.sqrt());
        k1 * b1 * (b1 * half).cos() * (b2 * half).sin()
            + k2 * b2 * (b1 * half).sin() * (b2 * half).cos()
    };
    let mut w0 = 1e-3;
    while f(w0 + 1e-3) > 0.0 {
        w0 += 1e-3;
    }
    let (mut lo, mut hi) = (w0, w0 + 1e-3);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid
        } else {
            hi = mid
        }
    }
    let w = 0.5 * (lo + hi);
    let (b1, b2) = (w / a1.sqrt(), w / a2.sqrt());
    let amp = (b1 * half).sin() / (b2 * half).sin();
    let mode = move |x: f64| {
        if x < half {
            (b1 * x).sin()
        } else {
            amp * (b2 * (1.0 - x)).sin()
        }
    };
    let t_end = 0.5 / (w * w);
    println!("ω₁ = {w}, A = {amp}, t_end = {t_end}");
    let mut errs = Vec::new();
    for nx in [8, 16, 32] {
        let mut mesh = bar(nx, 1.0, 0.05, CellType::Hexahedron);
        let map = MaterialMap {
            materials: vec![
                Material::new("a", k1, 1.0, c1),
                Material::new("b", k2, 1.0, c2),
            ],
            rules: vec![Rule {
                selector: Selector::Shape(Shape::Layer {
                    axis: 0,
                    from: half,
                    to: 2.0,
                }),
                material: 1,
            }],
            ..Default::default()
        };
        let fields = map.assign(&mut mesh).unwrap();
        let space = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 1, 1).unwrap());
        let s = HeatSetup {
            zero_dirichlet: vec!["xmin".into(), "xmax".into()],
            ..setup(fields.rhoc, fields.k, t_end / 200.0, 0.5)
        };
        let t0 = space.interpolate(|x, v| v[0] = mode(x[0]));
        let (t, rec) = run(
            &Cpu,
            &space,
            &s,
            &HeatLoads::default(),
            AssemblyLevel::Partial,
            &t0,
            200,
        );
        assert!(rec.iter().all(|r| r.balance.unwrap().relative < 1e-7));
        let decay = (-w * w * t_end).exp();
        let err = space
            .dofmap
            .node_coords
            .iter()
            .zip(&t)
            .map(|(x, v)| (v - decay * mode(x[0])).abs())
            .fold(0.0, f64::max);
        errs.push(err);
    }
    let rates: Vec<f64> = errs.windows(2).map(|r| (r[0] / r[1]).log2()).collect();
    println!("layered mode: errors {errs:?} rates {rates:?}");
    assert!(
        errs[2] < 2e-3 && rates.iter().all(|&r| r > 1.7),
        "errors {errs:?} rates {rates:?}"
    );
}
