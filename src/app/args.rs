//! The app's own flags (no subcommand).

use crate::cli::args::{GridArg, positive};
use crate::config;
use crate::sim::{ScenePreset, SolverKind};

/// Flags of the desktop app (no subcommand).
#[derive(Debug, Clone, clap::Args)]
pub struct AppArgs {
    /// Starting scene: hanging, curtain, drape, flag, curtain-rod, pile, fold, tear (grids);
    /// tablecloth, flag-hole, skirt, square (meshes).
    #[arg(long, default_value_t = config::SCENE)]
    pub scene: ScenePreset,
    /// Starting grid: N or WxH.
    #[arg(long, default_value_t = GridArg::square(config::GRID))]
    pub grid: GridArg,
    /// Build the cloth on this triangle mesh (Wavefront OBJ) instead of the grid: scaled so
    /// its longest side is the scene's size, centred, its top at 1.2 × size.
    #[arg(long, value_name = "PATH")]
    pub mesh: Option<std::path::PathBuf>,
    /// Which edges of a mesh are distance constraints: quads or all-edges.
    #[arg(long, default_value_t = crate::sim::mesh::ConstraintChoice::Quads, value_parser = crate::cli::constraint_choice)]
    pub constraints: crate::sim::mesh::ConstraintChoice,
    /// Starting solver: iterative, sle, verlet, strips, strain-limit, newton [default: the
    /// scene's: strips on a grid, newton on a mesh; a new scene then opens with its own].
    #[arg(long)]
    pub solver: Option<SolverKind>,
    /// Starting tolerance (relative strain) [default: 1e-4].
    #[arg(long, allow_hyphen_values = true, value_parser = positive)]
    pub tolerance: Option<f64>,
    /// Self-collision on or off at launch (`true`/`false`) [default: on].
    #[arg(long, value_name = "BOOL")]
    pub self_collision: Option<bool>,
    /// Tear strength, N/m: the cloth tears where a constraint's tension exceeds this times
    /// its length [default: none, except in the tear scene: 4].
    #[arg(long, allow_negative_numbers = true)]
    pub tear_strength: Option<f64>,
    /// Render this many frames, save a screenshot to PATH and exit.
    #[arg(long, value_name = "PATH")]
    pub screenshot: Option<std::path::PathBuf>,
    /// Frames to render before the screenshot.
    #[arg(long, allow_negative_numbers = true, default_value_t = 60)]
    pub frames: u32,
    /// Start recording frame times at launch: PATH as CSV (`.csv` added unless it has it),
    /// with a JSON summary and a PNG chart beside it when the app exits.
    #[arg(long, value_name = "PATH")]
    pub record: Option<std::path::PathBuf>,
    /// Exit after this many seconds.
    #[arg(long, allow_hyphen_values = true, value_parser = positive)]
    pub exit_after: Option<f64>,
    /// Print a JSON summary of the session on exit (for tests).
    #[arg(long)]
    pub summary: bool,
}

impl AppArgs {
    /// The starting solver: `--solver`, else the scene's ([`config::solver`]).
    pub fn solver(&self) -> SolverKind {
        self.solver
            .unwrap_or(config::solver(self.scene, self.mesh.is_some()))
    }
}
