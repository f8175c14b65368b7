//! What `bench paper` ([`super::bench`]) and `bench app` ([`super::bench_app`]) share: their
//! flags ([`BenchArgs`]) and the checks made before either runs anything.

use std::fs;
use std::path::{Path, PathBuf};

use crate::sim::{Drag, ScenePreset};

/// Flags of `bench`. `paper` and `app` share most of them; where a flag means something
/// different to each, or applies to one only, its help says so.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Which benchmark: `paper` (004 §4: the hanging cloth at h = 1/30 s, ms per step) or
    /// `app` (the app's scenes, each pulled beyond reach by a scripted drag, ms per 1/60 s
    /// frame).
    #[arg(value_parser = ["paper", "app"])]
    pub which: String,
    /// Short version: paper — 30 steps, grids up to 50, safety cap 300 sweeps; app — 60
    /// frames, grids 30 and 50.
    #[arg(long)]
    pub quick: bool,
    /// Output directory for bench.md, bench.json and the plots (default bench-out for
    /// paper, which also writes bench.csv; bench-app-out for app).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// paper: steps of 1/30 s per configuration (default 500, or 30 with --quick); app:
    /// frames of 1/60 s per row (default 240, or 60 with --quick). At most 10 000 000.
    #[arg(long, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(0..=super::run::MAX_STEPS))]
    pub steps: Option<u64>,
    /// Grid sizes (paper: default 10,20,30,40,50,100,200, with --quick up to 50; app:
    /// default 30,50,100, with --quick 30,50).
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',')]
    pub grids: Option<Vec<usize>>,
    /// Skip a configuration at larger grids once a smaller grid took more than this many
    /// ms per step (paper) or per frame (app). app also stops a row as soon as its
    /// simulation time exceeds the budget times its frames (its mean cannot come back under).
    #[arg(long, allow_hyphen_values = true, default_value_t = 400.0, value_parser = super::positive)]
    pub budget_ms: f64,
    /// paper only: safety cap on sweeps per pass for the uncapped configurations (default
    /// 2000, or 300 with --quick). app rows run with `run`'s settings and its default cap.
    #[arg(long, allow_negative_numbers = true)]
    pub hard_cap: Option<u32>,
    /// Worker threads (0 = all cores; at most 4 × the cores available).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub threads: usize,
    /// Run only the configurations whose label contains one of these (comma-separated,
    /// e.g. `--only newton,strips`).
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<String>>,
    /// app only: the scenes to run (comma-separated; default hanging,curtain,drape,flag,
    /// pile,fold).
    #[arg(long, value_delimiter = ',')]
    pub scenes: Option<Vec<ScenePreset>>,
    /// Solve taut chains (rows or columns pulled straight between two pins) like any other
    /// particles instead of holding them static. paper: the far edge between the pinned
    /// corners (how the paper's solvers saw it; much slower); app: passed on to every row.
    #[arg(long)]
    pub no_taut_lock: bool,
    /// A scripted drag, `I:X,Y,Z:T0:T1[:T2]` as in `run --drag` (repeatable). app: replaces
    /// the built-in drag of every row; paper: added to every row. I must be a particle of
    /// every grid.
    #[arg(long, value_name = "I:X,Y,Z:T0:T1[:T2]", allow_hyphen_values = true)]
    pub drag: Vec<Drag>,
    /// app only: the far drag set — every built-in drag pulled twice as far (at least 2 m
    /// beyond what the pinned cloth can reach) and held there twice as long (grabbed at
    /// T/8, at the target at 3T/8, let go at 7T/8: 2 s of 4). Not with --drag.
    #[arg(long, conflicts_with = "drag")]
    pub far: bool,
    /// app only: self-collision of the rows — `both` (each row with it and without,
    /// interleaved grid by grid), `on` or `off`.
    #[arg(long, default_value = "both", value_parser = ["both", "on", "off"])]
    pub self_collision: String,
    /// app only: steps per 1/60 s frame for every row, instead of each solver's default
    /// (Newton 1, strips 4, the others 10): regimes compared on the same drags (1..=1000).
    #[arg(long)]
    pub substeps: Option<u32>,
}

/// Check every `--drag` against every grid (n×n particles) before anything runs: an error
/// names the flag and the grid it does not fit.
pub fn check_drags(drags: &[Drag], grids: &[usize]) -> Result<(), String> {
    for d in drags {
        for &n in grids {
            d.validate(n * n).map_err(|e| {
                format!(
                    "--drag {d}: particle {} is not on the {n}×{n} grid ({e})",
                    d.particle
                )
            })?;
        }
    }
    Ok(())
}

/// Check grid sides: each a cloth the simulator builds (2 to the largest side); the error
/// names `--grids`.
pub(super) fn check_grids(grids: &[usize]) -> Result<(), String> {
    let most = crate::sim::cloth::MAX_GRID_SIDE;
    match grids.iter().find(|&&g| !(2..=most).contains(&g)) {
        Some(bad) => Err(format!(
            "--grids {bad}: a grid side must be in 2..={most} (n×n particles)"
        )),
        None => Ok(()),
    }
}

/// The indices of the `labels` that `--only` picks (all without it). An empty name would
/// pick everything, and a filter that picks nothing is an error listing the labels.
pub(super) fn select(only: Option<&[String]>, labels: &[&str]) -> Result<Vec<usize>, String> {
    if let Some(only) = only
        && only.iter().any(|o| o.trim().is_empty())
    {
        return Err(format!(
            "--only {:?}: an empty name would match every configuration; give part of a \
             label, e.g. --only newton,strips",
            only.join(",")
        ));
    }
    let picked: Vec<usize> = (0..labels.len())
        .filter(|&k| only.is_none_or(|only| only.iter().any(|o| labels[k].contains(o.as_str()))))
        .collect();
    if picked.is_empty() {
        return Err(format!(
            "--only matches no configuration; they are: {}",
            labels.join(", ")
        ));
    }
    Ok(picked)
}

/// Create `out` and check that every file in `names` can be written there, before the
/// first configuration runs rather than after the last.
pub(super) fn prepare_out(out: &Path, names: &[&str]) -> Result<(), String> {
    fs::create_dir_all(out).map_err(|e| format!("--out: cannot create {}: {e}", out.display()))?;
    for name in names {
        crate::output::check_writable(&out.join(name)).map_err(|e| format!("--out: {e}"))?;
    }
    Ok(())
}
