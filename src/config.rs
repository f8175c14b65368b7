//! The one default configuration the front ends share: the app at launch, `run` without
//! flags and the rows of `bench app` read their scene, grid, solver, tolerance, frame rate,
//! substeps and iteration cap from here, so what the README promises for "the default" is
//! what each of them runs.
//!
//! Why these values (docs/numerics.md, "One default"; docs/results.md): with self-collision
//! on, strips (002) at four steps a frame are the fastest solver measured on every grid
//! scene under the bench's drags beyond reach (and on the flag with a hole, a mesh), and
//! Newton with geometric stiffness at one step on the other meshes; both hold 1e-4 in every
//! step there, where the iterative method caps or crawls in the steps the hand pulls the
//! cloth taut.

use crate::sim::{Cloth, ScenePreset, SolverKind, World};

/// Simulated time of one frame, s: the app draws and steps at 60 Hz.
pub const FRAME: f64 = 1.0 / 60.0;

/// The scene the app opens and `run` simulates without `--scene`.
pub const SCENE: ScenePreset = ScenePreset::Hanging;

/// Particles per side of the default grid.
pub const GRID: usize = 30;

/// The solver a cloth opens with unless one is asked for: strips on a grid, on the flag
/// with a hole and on the grid's square read from OBJ, Newton on the other meshes (a
/// scene's own, and every one read with `--mesh`).
///
/// Measured with self-collision on (the default) under each scene's drag beyond reach, 30×30
/// at 1e-4, ms of simulation per 1/60 s frame (docs/numerics.md, "One default
/// configuration"): strips at four steps a frame against Newton at one, hanging 21 / 27,
/// drape 42 / 202, flag 7 / 50, pile 42 / 103, fold 16 / 43, curtain 4 / 3; on the meshes,
/// whose strips are the paths of a cover rather than rows and columns, Newton stays ahead on
/// the tablecloth (strips 124 against Newton's 59) — every row within the tolerance in every
/// step. Smaller steps
/// keep the contact rows, linearised at a step's start, nearly linear, and the candidates a
/// gather finds valid over more of them. The flag with a hole, a mesh flapping in the wind
/// as the grid's flag does, is the strips' too: 12 ms a frame against Newton's 48 under its
/// drag, 19 against 36 over 240 frames (docs/numerics.md, "One default configuration"). So
/// is the square, the grid read back from OBJ, whose chains are the grid's rows and
/// columns: 7–9 ms a frame against Newton's 12–22 under its drag, with over-relaxed sweeps.
/// A user's OBJ stays on Newton, the solver ahead on every mesh measured but these two (on
/// the skirt, strips take 89–98 ms a frame against Newton's 11; docs/results.md, "Friction
/// that only a stretched cloth could hold").
pub fn solver(scene: ScenePreset, mesh: bool) -> SolverKind {
    let strips =
        !mesh && (!scene.is_mesh() || matches!(scene, ScenePreset::FlagHole | ScenePreset::Square));
    if strips {
        SolverKind::Strips
    } else {
        SolverKind::Newton
    }
}

/// The default tolerance (largest relative strain |d − L|/L a step may leave), for every
/// solver: a tenth of a millimetre on a metre of cloth.
pub const TOLERANCE: f64 = 1e-4;

/// Slack of a scene as the app shows it: the hanging cloth's pins are moved inward by a
/// tenth of its width, so it starts bent and unstrained, as fabric hangs (and its top edge
/// is not a taut chain held static, which would make the scene the paper's special case).
pub fn slack(scene: ScenePreset) -> f64 {
    match scene {
        ScenePreset::Hanging => 0.1,
        _ => 0.0,
    }
}

/// Whether a scene runs with self-collision ([`crate::sim::contact`]) unless told
/// otherwise: on, in every scene. Off, a corner of the default cloth dragged across the
/// sheet crosses itself in most recorded frames, which is not what the app promises; the
/// cost it adds is measured per scene in docs/results.md ("Self-collision"). The panel's
/// switch and `--self-collision false` turn it off; `bench paper` keeps 004 §4's scene,
/// which has none.
pub const SELF_COLLISION: bool = true;

/// The spacing at which the strips' four steps a frame were measured, m: a 1 m cloth's
/// 30×30 grid (3.4 cm).
pub const STRIPS_SPACING: f64 = 1.0 / 29.0;

/// The most steps a frame the strips take on a fine cloth: at 50×50 eight were no faster
/// than seven and the flag slower (each step's detection and velocity pass are paid
/// whatever the sweeps save); more were not measured (docs/numerics.md, "Steps a frame
/// that follow the spacing").
pub const STRIPS_MAX_SUBSTEPS: u32 = 8;

/// The steps a frame of [`FRAME`] s `solver` takes on `cloth`, measured on the app's scenes with their drags
/// beyond reach (30×30, 1e-4, ms per 1/60 s frame; docs/numerics.md, "One default
/// configuration"): Newton takes a frame in one step (5.6 against 20.7 ms at ten: its cost
/// per step hardly depends on h); strips take four at 30×30's spacing (with self-collision
/// on: hanging 21, drape 42, flag 7, pile 42; at two 36, 63, 12, 67; at eight 26, 56, 10,
/// 39; ten, measured before the patches' gather, was slower than four on every grid
/// scene), and more on a finer cloth ([`strips_substeps`]); the SLE takes ten (14.7 → 10.5
/// on the hanging cloth, 89.7 → 16.0 on the drape, 21.1 → 10.2 on the flag, but 3.0 → 8.4
/// on the curtain), as do the iterative method (one step: 400 ms and 223 of 240 frames over
/// the tolerance) and the two baselines (Verlet and the strain limits are explicit about
/// stretch).
pub fn substeps(solver: SolverKind, cloth: &Cloth) -> u32 {
    match solver {
        SolverKind::Newton => 1,
        SolverKind::Strips => strips_substeps(cloth.topology.median_rest()),
        SolverKind::Sle | SolverKind::Iterative | SolverKind::Verlet | SolverKind::StrainLimit => {
            10
        }
    }
}

/// The iteration cap per pass of `solver`, 0 for none: no solver has one. The tolerance
/// decides when a pass ends, the safety cap ([`crate::sim::SimParams::hard_cap`]) still
/// applies, and the panel says when it cut a pass short.
pub fn iteration_cap(_solver: SolverKind) -> u32 {
    0
}

/// Sets `world`'s step to a frame of `frame` s over `given` steps, or over the steps
/// `solver` takes on its cloth ([`substeps`]), and returns the steps: what the app at
/// launch, `run` and `bench app` do once the cloth is built, since the strips' steps follow
/// its spacing.
pub fn set_frame_steps(
    world: &mut World,
    solver: SolverKind,
    frame: f64,
    given: Option<u32>,
) -> u32 {
    let n = given
        .unwrap_or_else(|| substeps(solver, &world.cloth))
        .max(1);
    world.params.dt = frame / n as f64;
    n
}

/// The strips' steps a frame on a cloth of `spacing` (its median rest length, m): four at
/// [`STRIPS_SPACING`], and on a finer cloth as many as keep a step's motion within as many
/// cells as four steps are at that spacing, up to [`STRIPS_MAX_SUBSTEPS`].
///
/// Why the spacing: the same motion of the hand or of a fall is more cells a step on a
/// finer cloth, so a step leaves its chains further from their rest lengths and the sweeps
/// crawl longer, and a gather's candidates must cover more cells. Measured under the
/// bench's drags (docs/numerics.md, "Steps a frame that follow the spacing"): at 50×50
/// (2 cm) six, seven or eight steps take 0.43–0.73 of four's time on the hanging cloth, the
/// drape and the pile, with the slowest frames a third to a half; at 40×40 six beat four
/// and five on three scenes of four; at 30×30 three and five lose to four. A spacing that
/// is not a positive length (no constraints) gets four.
pub fn strips_substeps(spacing: f64) -> u32 {
    if !(spacing.is_finite() && spacing > 0.0) {
        return 4;
    }
    // The margin keeps the 30×30 grid's own spacing, up to round-off, at four.
    let steps = (4.0 * STRIPS_SPACING / spacing - 1e-9).ceil();
    steps.clamp(4.0, STRIPS_MAX_SUBSTEPS as f64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_the_flag_with_a_hole_and_the_square_open_with_strips_other_meshes_with_newton() {
        use crate::sim::ScenePreset as S;
        for s in [S::Hanging, S::Drape, S::Pile, S::FlagHole, S::Square] {
            assert_eq!(solver(s, false), SolverKind::Strips, "{s:?}");
        }
        for s in [S::Tablecloth, S::Skirt] {
            assert_eq!(solver(s, false), SolverKind::Newton, "{s:?}");
        }
        // A user's own mesh, whatever the scene it is placed in.
        for s in [S::Hanging, S::FlagHole] {
            assert_eq!(solver(s, true), SolverKind::Newton, "{s:?}");
        }
    }

    #[test]
    fn every_solver_steps_a_frame_within_the_valid_time_step() {
        for spacing in [STRIPS_SPACING, 0.02, 1e-3, 0.0, f64::NAN, 5.0] {
            for k in SolverKind::ALL {
                let n = match k {
                    SolverKind::Strips => strips_substeps(spacing),
                    _ => {
                        let c = crate::sim::SceneSpec::new(SCENE, 5, 5)
                            .build(crate::sim::SimParams::default())
                            .unwrap();
                        substeps(k, &c.cloth)
                    }
                };
                let h = FRAME / n as f64;
                assert!(crate::sim::params::DT.reason(h).is_none(), "{k}: h = {h}");
            }
        }
    }

    /// Four strips steps at the 30×30 grid's spacing, more on a finer cloth (six at 40×40's,
    /// seven at 50×50's), never fewer than four nor more than the cap, whatever the spacing.
    #[test]
    fn the_strips_take_more_steps_on_a_finer_cloth() {
        let steps = |n: usize| {
            let w = crate::sim::SceneSpec::new(SCENE, n, n)
                .build(crate::sim::SimParams::default())
                .unwrap();
            substeps(SolverKind::Strips, &w.cloth)
        };
        assert_eq!(steps(GRID), 4);
        assert_eq!(steps(40), 6);
        assert_eq!(steps(50), 7);
        assert_eq!(steps(10), 4);
        assert_eq!(steps(200), STRIPS_MAX_SUBSTEPS);
        let mut last = 0;
        for n in (10..=120).step_by(5) {
            let s = steps(n);
            assert!(s >= last, "{n}: {s} after {last}");
            last = s;
        }
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(strips_substeps(bad), 4);
        }
    }
}
