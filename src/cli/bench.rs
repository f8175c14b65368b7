//! `impulse-cloth bench paper`: the 004 §4 protocol (h = 1/30 s, mean per-step time over
//! 500 steps, horizontal 1 m × 1 m 0.2 kg cloth, two far corners static, random initial
//! velocities) over grid sizes and solver configurations, side by side with the paper's
//! figures, written as markdown, JSON, CSV and PNG plots in the style of Figs. 4–6.
//! `bench app` (the app's scenes under a drag, per 1/60 s frame) is in `bench_app.rs`; the
//! flags and the checks they share are in [`super::bench_common`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use plotters::prelude::*;
use serde::Serialize;

use super::bench_common::{BenchArgs, check_drags, check_grids, prepare_out, select};
use super::check_flag;
use super::run::{TimeSummary, set_threads};
use crate::output::{PlotResult, atomic_png, write_atomic};
use crate::sim::params;
use crate::sim::{Drag, DragScript, ScenePreset, SceneSpec, SimError, SimParams, SolverKind};

/// One solver configuration of the benchmark.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Config {
    /// Label in tables and plots.
    pub label: &'static str,
    /// Solver.
    pub solver: SolverKind,
    /// Tolerance.
    pub tolerance: f64,
    /// Iteration cap (0 = none).
    pub max_iterations: u32,
    /// Verlet passes.
    pub verlet_passes: u32,
    /// Substeps per 1/30 s step (times are per 1/30 s step).
    pub substeps: u32,
    /// Strain-limit solver: linear solves per step (0 = the default).
    pub limit_passes: u32,
    /// The method is run at a step size it was not made for and is expected to diverge
    /// there: a step undone as diverged ([`SimError::Diverged`]) is then a result, listed
    /// as such, not a failure of the benchmark.
    pub may_diverge: bool,
}

/// A configuration with no cap, no Verlet passes, one step per 1/30 s and default
/// strain-limit passes; the methods below change one of those.
const fn row(label: &'static str, solver: SolverKind, tolerance: f64) -> Config {
    Config {
        label,
        solver,
        tolerance,
        max_iterations: 0,
        verlet_passes: 0,
        substeps: 1,
        limit_passes: 0,
        may_diverge: false,
    }
}

impl Config {
    const fn cap(mut self, max_iterations: u32) -> Config {
        self.max_iterations = max_iterations;
        self
    }
    const fn verlet(mut self, passes: u32) -> Config {
        self.verlet_passes = passes;
        self
    }
    const fn substeps(mut self, substeps: u32) -> Config {
        self.substeps = substeps;
        self
    }
    const fn limit_passes(mut self, passes: u32) -> Config {
        self.limit_passes = passes;
        self
    }
    const fn may_diverge(mut self) -> Config {
        self.may_diverge = true;
        self
    }
}

/// The configurations of `bench paper`.
pub const CONFIGS: &[Config] = &[
    row("iterative 1e-1", SolverKind::Iterative, 1e-1),
    row("iterative 1e-2", SolverKind::Iterative, 1e-2),
    row("iterative 1e-3", SolverKind::Iterative, 1e-3),
    row("iterative 1e-4", SolverKind::Iterative, 1e-4),
    row("iterative cap 5", SolverKind::Iterative, 1e-4).cap(5),
    row("sle 1e-6", SolverKind::Sle, 1e-6),
    row("newton 1e-4", SolverKind::Newton, 1e-4),
    row("newton 1e-6", SolverKind::Newton, 1e-6),
    row("sle 1e-6 x16 substeps", SolverKind::Sle, 1e-6).substeps(16),
    row("iterative 1e-4 x16 substeps", SolverKind::Iterative, 1e-4).substeps(16),
    row("strips 1e-2", SolverKind::Strips, 1e-2),
    row("strips 1e-4", SolverKind::Strips, 1e-4),
    row("strips 1e-6", SolverKind::Strips, 1e-6),
    row("verlet 5", SolverKind::Verlet, 1e-4).verlet(5),
    row("verlet 20", SolverKind::Verlet, 1e-4).verlet(20),
    // 001's single linearised solve per step at h = 1/30 s: its strains grow with the grid
    // and the run (500 steps: 12 at 10×10, 638 at 30×30, 1.76e3 at 40×40, 1.42e5 at
    // 200×200), beyond `MAX_SANE_STRAIN` from 40×40 on.
    row("strain-limit 001", SolverKind::StrainLimit, 1e-3)
        .limit_passes(1)
        .may_diverge(),
    row("strain-limit x10 substeps", SolverKind::StrainLimit, 1e-3)
        .substeps(10)
        .limit_passes(4),
];

/// The paper's per-step figure in ms for a configuration and grid, where 004 §4 gives one
/// (read off the text; see `../shared/seeds/README.md`). The Newton rows are compared with
/// the paper's figure for the same tolerance (its iterative method at 1e-4, its SLE at 1e-6):
/// the paper has no Newton solver, these are the times it needed for the same accuracy.
pub fn paper_ms(label: &str, n: usize) -> Option<f64> {
    match (label, n) {
        ("iterative 1e-4" | "newton 1e-4", 10) => Some(11.0),
        ("iterative 1e-4" | "newton 1e-4", 30) => Some(33.0),
        ("iterative 1e-2", 50) => Some(33.0),
        ("iterative 1e-4" | "newton 1e-4", 50) => Some(200.0),
        ("iterative cap 5", 50) => Some(14.5),
        ("sle 1e-6" | "newton 1e-6", 10) => Some(8.3),
        ("sle 1e-6" | "newton 1e-6", 20) => Some(133.0),
        ("strips 1e-4", 30) => Some(11.0),
        _ => None,
    }
}

/// One row of results.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Configuration label.
    pub config: &'static str,
    /// Grid side.
    pub grid: usize,
    /// Structural constraints.
    pub constraints: usize,
    /// Steps run.
    pub steps: u64,
    /// ms per step.
    pub ms: TimeSummary,
    /// Mean position-pass iterations (sweeps, solves or passes).
    pub iterations_mean: f64,
    /// Largest strain after any step.
    pub max_strain: f64,
    /// Steps that ended outside the tolerance.
    pub capped_steps: u64,
    /// SLE fallbacks.
    pub fallback_steps: u64,
    /// The paper's figure, ms.
    pub paper_ms: Option<f64>,
    /// ours / paper.
    pub ratio: Option<f64>,
    /// Max strain after each step (for the Fig. 4 plot; only kept for 40×40, so the plot
    /// can be redrawn from bench.json).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub strain_series: Vec<f64>,
}

/// Why a configuration produced no row at a grid size.
enum Failure {
    /// It diverged where it is expected to ([`Config::may_diverge`]): a result.
    Diverged(String),
    /// Anything else: the benchmark failed.
    Error(String),
}

/// The parameters of a configuration's runs.
fn config_params(cfg: &Config, hard_cap: u32, lock_taut_chains: bool) -> SimParams {
    let mut params = SimParams {
        lock_taut_chains,
        dt: 1.0 / 30.0 / cfg.substeps as f64,
        tolerance: cfg.tolerance,
        max_iterations: cfg.max_iterations,
        verlet_passes: cfg.verlet_passes.max(1),
        hard_cap,
        ..SimParams::default()
    };
    if cfg.limit_passes > 0 {
        params.strain_limits.passes = cfg.limit_passes;
    }
    params
}

fn run_config(
    cfg: &Config,
    n: usize,
    steps: u64,
    hard_cap: u32,
    lock_taut_chains: bool,
    drags: &[Drag],
) -> Result<Row, Failure> {
    let params = config_params(cfg, hard_cap, lock_taut_chains);
    let mut world = SceneSpec::new(ScenePreset::Hanging, n, n)
        .build(params)
        .map_err(|e| Failure::Error(e.to_string()))?;
    let mut solver = cfg.solver.create();
    let mut script = DragScript::new(drags.to_vec(), world.cloth.len())
        .map_err(|e| Failure::Error(format!("--drag: {e}")))?;
    let mut times = Vec::with_capacity(steps.min(1 << 16) as usize);
    let (mut iters, mut max_strain, mut capped, mut fallbacks) = (0u64, 0.0f64, 0u64, 0u64);
    let mut series = Vec::new();
    for _ in 0..steps {
        let s = super::run::step_frame(&mut world, solver.as_mut(), cfg.substeps, &mut script)
            .map_err(|e| match e {
                SimError::Diverged { .. } if cfg.may_diverge => Failure::Diverged(e.to_string()),
                e => Failure::Error(e.to_string()),
            })?;
        times.push(s.timings.total());
        iters += s.position_iterations as u64;
        max_strain = max_strain.max(s.max_strain);
        capped += u64::from(s.ended_outside(cfg.tolerance));
        fallbacks += s.fell_back as u64;
        series.push(s.max_strain);
    }
    let ms = TimeSummary::of(&times);
    let paper = paper_ms(cfg.label, n);
    Ok(Row {
        config: cfg.label,
        grid: n,
        constraints: world.cloth.topology.edges.len(),
        steps,
        ms,
        iterations_mean: iters as f64 / steps.max(1) as f64,
        max_strain,
        capped_steps: capped,
        fallback_steps: fallbacks,
        paper_ms: paper,
        ratio: paper.map(|p| ms.mean / p),
        strain_series: if n == 40 { series } else { Vec::new() },
    })
}

fn markdown(rows: &[Row], steps: u64, lock: bool) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "004 §4 scene, h = 1/30 s, {steps} steps per row, {} threads, taut far edge {}.\n\n",
        rayon::current_num_threads(),
        if lock {
            "held static (default)"
        } else {
            "solved as free particles (--no-taut-lock)"
        }
    ));
    s.push_str("| config | grid | constraints | ms/step mean | p95 | iterations | max strain | capped steps | paper ms | ours/paper |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {}×{} | {} | {:.3} | {:.3} | {:.1} | {:.2e} | {}/{} | {} | {} |\n",
            r.config,
            r.grid,
            r.grid,
            r.constraints,
            r.ms.mean,
            r.ms.p95,
            r.iterations_mean,
            r.max_strain,
            r.capped_steps,
            r.steps,
            r.paper_ms.map(|p| format!("{p}")).unwrap_or_default(),
            r.ratio.map(|x| format!("{x:.3}")).unwrap_or_default(),
        ));
    }
    s
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "config,grid,constraints,steps,ms_mean,ms_p50,ms_p95,ms_max,iterations_mean,max_strain,capped_steps,fallback_steps,paper_ms,ratio\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            r.config,
            r.grid,
            r.constraints,
            r.steps,
            r.ms.mean,
            r.ms.p50,
            r.ms.p95,
            r.ms.max,
            r.iterations_mean,
            r.max_strain,
            r.capped_steps,
            r.fallback_steps,
            r.paper_ms.map(|p| p.to_string()).unwrap_or_default(),
            r.ratio.map(|p| p.to_string()).unwrap_or_default()
        ));
    }
    s
}

/// ms per step against grid size, one line per configuration, with the real-time line.
fn plot_times(path: &Path, title: &str, rows: &[Row], labels: &[&str]) -> PlotResult {
    let grids: Vec<usize> = {
        let mut g: Vec<usize> = rows.iter().map(|r| r.grid).collect();
        g.sort();
        g.dedup();
        g
    };
    let xmax = *grids.last().unwrap_or(&50) as f64;
    let ymax = rows
        .iter()
        .filter(|r| labels.contains(&r.config))
        .map(|r| r.ms.mean)
        .fold(1000.0 / 30.0, f64::max)
        * 1.5;
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax * 1.05, (0.001f64..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("grid side n (n×n particles)")
        .y_desc("ms per step (log)")
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            [(0.0, 1000.0 / 30.0), (xmax * 1.05, 1000.0 / 30.0)],
            BLACK.stroke_width(2),
        ))?
        .label("real time (1/30 s)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
    for (i, label) in labels.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.config == *label)
            .map(|r| (r.grid as f64, r.ms.mean.max(0.001)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Max strain against time for each configuration at 40×40 (the Fig. 4 scene).
fn plot_strain(path: &Path, rows: &[Row], dt: f64) -> PlotResult {
    let series: Vec<&Row> = rows
        .iter()
        .filter(|r| r.grid == 40 && !r.strain_series.is_empty())
        .collect();
    let tmax = series
        .iter()
        .map(|r| r.strain_series.len())
        .max()
        .unwrap_or(1) as f64
        * dt;
    let ymax = series
        .iter()
        .flat_map(|r| r.strain_series.iter().copied())
        .fold(1e-6, f64::max)
        * 2.0;
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "40×40 (Fig. 4 scene): max strain after each step",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..tmax, (1e-12f64..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("max |d−L|/L (log)")
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .draw()?;
    for (i, r) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = r
            .strain_series
            .iter()
            .enumerate()
            .map(|(k, &s)| ((k + 1) as f64 * dt, s.max(1e-12)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, colour.stroke_width(2)))?
            .label(r.config)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The files `bench paper` writes into `--out`.
const OUTPUTS: [&str; 6] = [
    "bench.md",
    "bench.csv",
    "bench.json",
    "fig4_strain.png",
    "fig5_iterative.png",
    "fig6_solvers.png",
];

/// Entry point of `bench paper`.
pub fn main(args: BenchArgs) -> ExitCode {
    let fail = |msg: String, code: u8| {
        eprintln!("error: {msg}");
        ExitCode::from(code)
    };
    if args.scenes.is_some() {
        return fail(
            "--scenes applies to `bench app` only (`bench paper` runs the 004 §4 scene)".into(),
            2,
        );
    }
    if args.substeps.is_some() {
        return fail(
            "--substeps applies to `bench app` only (`bench paper` steps 004 §4's h = 1/30 s)"
                .into(),
            2,
        );
    }
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("bench-out"));
    let steps = args.steps.unwrap_or(if args.quick { 30 } else { 500 });
    let hard_cap = args.hard_cap.unwrap_or(if args.quick { 300 } else { 2000 });
    if let Err(e) = check_flag("--hard-cap", &params::HARD_CAP, hard_cap.into()) {
        return fail(e, 2);
    }
    if steps == 0 {
        return fail("--steps must be at least 1".into(), 2);
    }
    let grids = args.grids.clone().unwrap_or_else(|| {
        if args.quick {
            vec![10, 20, 30, 40, 50]
        } else {
            vec![10, 20, 30, 40, 50, 100, 200]
        }
    });
    if let Err(e) = check_grids(&grids).and_then(|()| check_drags(&args.drag, &grids)) {
        return fail(e, 2);
    }
    let labels: Vec<&str> = CONFIGS.iter().map(|c| c.label).collect();
    let configs: Vec<&Config> = match select(args.only.as_deref(), &labels) {
        Ok(picked) => picked.into_iter().map(|k| &CONFIGS[k]).collect(),
        Err(e) => return fail(e, 2),
    };
    // Every configuration's parameters are checked before anything is written: a value
    // the simulator refuses would otherwise fail every row after the outputs exist.
    for cfg in &configs {
        if let Err(e) = config_params(cfg, hard_cap, !args.no_taut_lock).validate() {
            return fail(format!("{}: {e}", cfg.label), 2);
        }
    }
    if let Err(e) = set_threads(args.threads) {
        return fail(e, 2);
    }
    if let Err(e) = prepare_out(&out_dir, &OUTPUTS) {
        return fail(e, 2);
    }
    crate::output::register_font();
    let mut rows = Vec::new();
    // A configuration that fails (a step that blew up) is reported and skipped at larger
    // grids; the rows already measured are still written.
    let mut failures = Vec::new();
    let mut diverged = Vec::new();
    for cfg in configs {
        let mut skip = false;
        for &n in &grids {
            if skip {
                eprintln!(
                    "{:<16} {n:>4}×{n:<4} skipped (a smaller grid exceeded {} ms/step)",
                    cfg.label,
                    params::shown(args.budget_ms)
                );
                continue;
            }
            let row = match run_config(cfg, n, steps, hard_cap, !args.no_taut_lock, &args.drag) {
                Ok(r) => r,
                Err(Failure::Diverged(e)) => {
                    eprintln!("{:<16} {n:>4}×{n:<4} diverged: {e}", cfg.label);
                    diverged.push(format!("{} at {n}×{n}: {e}", cfg.label));
                    skip = true;
                    continue;
                }
                Err(Failure::Error(e)) => {
                    eprintln!("{:<16} {n:>4}×{n:<4} FAILED: {e}", cfg.label);
                    failures.push(format!("{} at {n}×{n}: {e}", cfg.label));
                    skip = true;
                    continue;
                }
            };
            eprintln!(
                "{:<16} {n:>4}×{n:<4} {:>9.3} ms/step  {:>8.1} it  strain {:.2e}  capped {}/{}",
                cfg.label,
                row.ms.mean,
                row.iterations_mean,
                row.max_strain,
                row.capped_steps,
                steps
            );
            skip = row.ms.mean > args.budget_ms;
            rows.push(row);
        }
    }
    let mut md = markdown(&rows, steps, !args.no_taut_lock);
    if !args.drag.is_empty() {
        // Not the paper's protocol any more: say so where the figures are.
        let d: Vec<String> = args.drag.iter().map(|d| format!("`{d}`")).collect();
        md.insert_str(
            0,
            &format!("With --drag {} in every row.\n\n", d.join(", ")),
        );
    }
    if !diverged.is_empty() {
        md.push_str(
            "\nDiverged where expected (a method run at a step size it was not made for; \
             no row, larger grids skipped):\n\n",
        );
        for d in &diverged {
            md.push_str(&format!("- {d}\n"));
        }
    }
    if !failures.is_empty() {
        md.push_str("\nFailed (no row; larger grids of the same configuration skipped):\n\n");
        for f in &failures {
            md.push_str(&format!("- {f}\n"));
        }
    }
    print!("{md}");
    let out = &out_dir;
    let mut errors = Vec::new();
    let mut write = |name: &str, bytes: &[u8]| {
        if let Err(e) = write_atomic(&out.join(name), bytes) {
            errors.push(format!("{name}: {e}"));
        }
    };
    write("bench.md", md.as_bytes());
    write("bench.csv", csv(&rows).as_bytes());
    match serde_json::to_vec_pretty(&rows) {
        Ok(j) => write("bench.json", &j),
        Err(e) => errors.push(format!("bench.json: {e}")),
    }
    let plots: [(&str, PlotResult); 3] = [
        (
            "fig5_iterative.png",
            atomic_png(&out.join("fig5_iterative.png"), |p| {
                plot_times(
                    p,
                    "Iterative method by tolerance (cf. 004 Fig. 5)",
                    &rows,
                    &[
                        "iterative 1e-1",
                        "iterative 1e-2",
                        "iterative 1e-3",
                        "iterative 1e-4",
                        "iterative cap 5",
                    ],
                )
            }),
        ),
        (
            "fig6_solvers.png",
            atomic_png(&out.join("fig6_solvers.png"), |p| {
                plot_times(
                    p,
                    "Solvers (cf. 004 Fig. 6)",
                    &rows,
                    &[
                        "iterative 1e-4",
                        "iterative cap 5",
                        "sle 1e-6",
                        "newton 1e-4",
                        "newton 1e-6",
                        "strips 1e-2",
                        "strips 1e-4",
                        "strips 1e-6",
                        "verlet 5",
                        "verlet 20",
                        "strain-limit x10 substeps",
                    ],
                )
            }),
        ),
        (
            "fig4_strain.png",
            atomic_png(&out.join("fig4_strain.png"), |p| {
                plot_strain(p, &rows, 1.0 / 30.0)
            }),
        ),
    ];
    for (name, r) in plots {
        if let Err(e) = r {
            errors.push(format!("{name}: {e}"));
        }
    }
    if !errors.is_empty() {
        return fail(format!("could not write: {}", errors.join("; ")), 1);
    }
    if !failures.is_empty() {
        return fail(
            format!(
                "{} configuration(s) failed (the other rows were written to {}): {}",
                failures.len(),
                out.display(),
                failures.join("; ")
            ),
            1,
        );
    }
    eprintln!(
        "wrote {}",
        Path::new(out)
            .join("bench.{md,csv,json} and fig4/5/6 PNGs")
            .display()
    );
    ExitCode::SUCCESS
}
