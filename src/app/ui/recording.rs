//! Recording: from Record to Stop, one CSV row per fixed step and one per frame, then a
//! JSON summary and a PNG chart. Everything is written under a temporary name and renamed
//! when complete, so a crash never leaves a half file under the final name; a write error
//! is shown in the panel and the app keeps running.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use bevy::prelude::*;
use plotters::prelude::*;

use super::frame_times::FrameTimes;
use crate::app::budget::FrameBudget;
use crate::app::sim::SimState;
use crate::output::{AtomicFile, PlotResult, atomic_png, write_atomic};

struct Active {
    path: PathBuf,
    file: AtomicFile,
    out: BufWriter<File>,
    start: Instant,
    seen_steps: u64,
    step_ms: Vec<f64>,
    frame_ms: Vec<f64>,
    max_strain: f64,
    /// Frames that dropped owed simulated time ([`crate::app::budget`]).
    slowed_frames: u64,
    /// Simulated time the recorded frames advanced, s.
    simulated: f64,
    /// Steps that ran while the step history (the overlay's) had already let them go —
    /// only when one frame runs more steps than the history holds; counted, not hidden.
    dropped: u64,
}

/// The recorder resource.
#[derive(Resource, Default)]
pub struct Recorder {
    active: Option<Active>,
    status: Option<String>,
    counter: u32,
}

/// The CSV's columns. Step rows leave the frame columns empty and frame rows the step
/// columns; `sim_ms` is the simulated time a frame's steps advanced and `slowed` is 1 for a
/// frame that dropped owed simulated time because its steps would have taken more wall time
/// than the frame budget allows ([`crate::app::budget`]), 0 otherwise.
const HEADER: &str = "kind,time_s,solver,grid_w,grid_h,tolerance,cap,forces_ms,collision_ms,position_ms,integration_ms,velocity_ms,position_iterations,velocity_iterations,max_strain,frame_ms,sim_ms,slowed\n";

impl Recorder {
    /// Whether a recording is running.
    pub fn is_recording(&self) -> bool {
        self.active.is_some()
    }

    /// Status line for the panel (file path or error).
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// Start recording into `path` (CSV; see [`record_path`]). Errors are shown in the status
    /// line.
    pub fn start(&mut self, path: PathBuf, total_steps: u64) {
        let path = match record_path(path) {
            Ok(p) => p,
            Err(e) => {
                self.status = Some(e);
                return;
            }
        };
        let opened = AtomicFile::new(&path, "").and_then(|file| {
            let f = file.create()?;
            Ok((file, f))
        });
        match opened {
            Ok((file, f)) => {
                let mut out = BufWriter::new(f);
                if let Err(e) = out.write_all(HEADER.as_bytes()) {
                    self.status = Some(format!("cannot write {}: {e}", file.path().display()));
                    return;
                }
                self.status = Some(format!("recording to {}", path.display()));
                self.active = Some(Active {
                    path,
                    file,
                    out,
                    start: Instant::now(),
                    seen_steps: total_steps,
                    step_ms: Vec::new(),
                    frame_ms: Vec::new(),
                    max_strain: 0.0,
                    slowed_frames: 0,
                    simulated: 0.0,
                    dropped: 0,
                });
            }
            Err(e) => self.status = Some(format!("cannot record to {}: {e}", path.display())),
        }
    }

    /// Start recording to `impulse-cloth-recording-N.csv` in the working directory.
    pub fn start_default(&mut self) {
        self.counter += 1;
        let path = PathBuf::from(format!(
            "impulse-cloth-recording-{}-{}.csv",
            std::process::id(),
            self.counter
        ));
        self.start(path, u64::MAX);
    }

    /// Stop: finish the CSV, write the summary JSON and the PNG chart.
    pub fn stop(&mut self) {
        let Some(a) = self.active.take() else {
            return;
        };
        let Active { file, mut out, .. } = a;
        let result = (|| -> Result<(), String> {
            out.flush().map_err(|e| e.to_string())?;
            drop(out);
            file.commit().map_err(|e| e.to_string())?;
            let mean = |v: &[f64]| {
                if v.is_empty() {
                    0.0
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            };
            let summary = serde_json::json!({
                "csv": a.path.display().to_string(),
                "seconds": a.start.elapsed().as_secs_f64(),
                "steps": a.step_ms.len(),
                "frames": a.frame_ms.len(),
                "step_ms_mean": mean(&a.step_ms),
                "frame_ms_mean": mean(&a.frame_ms),
                "max_strain": a.max_strain,
                "simulated_s": a.simulated,
                "frames_slowed": a.slowed_frames,
                "steps_not_recorded": a.dropped,
            });
            write_atomic(
                &a.path.with_extension("json"),
                summary.to_string().as_bytes(),
            )
            .map_err(|e| e.to_string())?;
            let seconds = a.start.elapsed().as_secs_f64();
            chart(
                &a.path.with_extension("png"),
                &a.step_ms,
                &a.frame_ms,
                seconds,
            )
            .map_err(|e| e.to_string())?;
            Ok(())
        })();
        self.status = Some(match result {
            Ok(()) if a.dropped > 0 => format!(
                "saved {} (+ .json, .png); {} steps ran too fast to record",
                a.path.display(),
                a.dropped
            ),
            Ok(()) => format!("saved {} (+ .json, .png)", a.path.display()),
            Err(e) => format!("recording failed: {e}"),
        });
    }
}

/// The CSV path of a recording asked for at `path`: `.csv` kept; `.json` or `.png`, which
/// would collide with the summary and the chart written next to it, replaced by `.csv`;
/// anything else (or no extension) gets `.csv` appended.
pub fn csv_path(path: PathBuf) -> PathBuf {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
    {
        Some(e) if e == "csv" => path,
        Some(e) if e == "json" || e == "png" => path.with_extension("csv"),
        _ => {
            let mut s = path.into_os_string();
            s.push(".csv");
            PathBuf::from(s)
        }
    }
}

/// Directories that hold devices and kernel state, not files a recording should add to.
const SYSTEM_DIRS: [&str; 3] = ["/dev", "/proc", "/sys"];

/// The CSV path of a recording asked for at `asked` ([`csv_path`]), refused (with the reason,
/// for the status line) where its three files — the CSV, and the JSON summary and PNG chart
/// beside it — could not all be regular files:
///
/// - `asked` names a directory: it is empty, ends in a separator, has no file name (`.`,
///   `..`) or is an existing directory (`dir/` would write a hidden `dir/.csv`);
/// - `asked`, or one of the three files, exists and is not a regular file (`/dev/null`, a
///   FIFO: `/dev/null` would have written `/dev/null.csv`, `.json` and `.png` in `/dev`);
/// - they would go in a system directory (`/dev`, `/proc`, `/sys`).
pub fn record_path(asked: PathBuf) -> Result<PathBuf, String> {
    let shown = asked.display().to_string();
    let text = asked.as_os_str().to_string_lossy();
    let names_dir = asked.as_os_str().is_empty()
        || asked.file_name().is_none()
        || text.ends_with('/')
        || text.ends_with(std::path::MAIN_SEPARATOR)
        || asked.is_dir();
    if names_dir {
        return Err(format!(
            "cannot record to {shown}: it names a directory; give a file name in it (e.g. \
             {}), to which .csv is added",
            asked.join("run").display()
        ));
    }
    let not_regular = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.is_file());
    if not_regular(&asked) {
        return Err(format!(
            "cannot record to {shown}: it is not a regular file (a device, a FIFO or a \
             socket); a recording writes three regular files named after it (.csv, .json, \
             .png)"
        ));
    }
    let csv = csv_path(asked);
    for p in [
        csv.clone(),
        csv.with_extension("json"),
        csv.with_extension("png"),
    ] {
        if not_regular(&p) {
            return Err(format!(
                "cannot record to {shown}: {} exists and is not a regular file",
                p.display()
            ));
        }
    }
    let dir = csv
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(d) = std::fs::canonicalize(dir)
        && SYSTEM_DIRS.iter().any(|s| d.starts_with(s))
    {
        return Err(format!(
            "cannot record to {shown}: {} is a system directory",
            d.display()
        ));
    }
    Ok(csv)
}

/// Steps and frames are spread evenly over the recording's duration (both are regular
/// enough for a chart; the CSV has exact timestamps). Frame times (tens of ms) and step
/// times (often under 1 ms) get a panel and a y axis each, so neither is a flat line on the
/// other's scale.
fn chart(path: &Path, steps: &[f64], frames: &[f64], seconds: f64) -> PlotResult {
    crate::output::register_font();
    atomic_png(path, |tmp| {
        let root = BitMapBackend::new(tmp, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, bottom) = root.split_vertically(280);
        let n = seconds.max(1e-3);
        for (area, series, colour, caption) in [
            (&top, frames, RED, "recording: ms per frame"),
            (&bottom, steps, BLUE, "recording: ms per simulation step"),
        ] {
            let at = |i: usize| i as f64 * n / series.len().max(1) as f64;
            let ymax = series.iter().fold(0.0f64, |a, &b| a.max(b)).max(1e-3) * 1.2;
            let mut c = ChartBuilder::on(area)
                .caption(caption, ("sans-serif", 20))
                .margin(10)
                .x_label_area_size(35)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..n, 0.0..ymax)?;
            c.configure_mesh().x_desc("time (s)").y_desc("ms").draw()?;
            c.draw_series(LineSeries::new(
                series.iter().enumerate().map(|(i, &y)| (at(i), y)),
                &colour,
            ))?;
        }
        root.present()?;
        Ok(())
    })
}

/// Append the steps and the frame since the last call.
pub fn record_rows(
    mut rec: ResMut<Recorder>,
    state: Res<SimState>,
    ft: Res<FrameTimes>,
    budget: Res<FrameBudget>,
) {
    let rec = &mut *rec;
    let Some(a) = &mut rec.active else { return };
    if a.seen_steps == u64::MAX {
        a.seen_steps = state.total_steps;
    }
    let new = (state.total_steps - a.seen_steps.min(state.total_steps)) as usize;
    a.seen_steps = state.total_steps;
    a.dropped += new.saturating_sub(state.history.len()) as u64;
    let t = a.start.elapsed().as_secs_f64();
    let p = &state.world.params;
    // A mesh has no grid: its particle count and 0 rows.
    let (w, h) = match state.world.cloth.topology.grid {
        Some(g) => (g.width, g.height),
        None => (state.world.cloth.len(), 0),
    };
    let mut err = None;
    for s in state
        .history
        .iter()
        .rev()
        .take(new)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let tm = &s.timings;
        a.step_ms.push(ms(tm.total()));
        a.max_strain = a.max_strain.max(s.max_strain);
        if let Err(e) = writeln!(
            a.out,
            "step,{t:.4},{},{w},{h},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{},{},{:.6e},,,",
            s.solver,
            p.tolerance,
            p.max_iterations,
            ms(tm.forces),
            ms(tm.collision),
            ms(tm.position),
            ms(tm.integration),
            ms(tm.velocity),
            s.position_iterations,
            s.velocity_iterations,
            s.max_strain
        ) {
            err = Some(e);
        }
    }
    if let Some(&f) = ft.frames.back() {
        a.frame_ms.push(f);
        let frame = budget.last_frame();
        a.simulated += frame.simulated;
        a.slowed_frames += u64::from(frame.slowed);
        if let Err(e) = writeln!(
            a.out,
            "frame,{t:.4},{},{w},{h},{},{},,,,,,,,,{f:.4},{:.4},{}",
            state.kind,
            p.tolerance,
            p.max_iterations,
            frame.simulated * 1e3,
            u8::from(frame.slowed)
        ) {
            err = Some(e);
        }
    }
    if let Some(e) = err {
        rec.status = Some(format!("recording stopped: {e}"));
        rec.active = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_path_never_collides_with_the_summary_or_chart() {
        for (asked, csv) in [
            ("run.csv", "run.csv"),
            ("run.json", "run.csv"),
            ("run.PNG", "run.csv"),
            ("run", "run.csv"),
            ("run.2024", "run.2024.csv"),
        ] {
            let p = csv_path(PathBuf::from(asked));
            assert_eq!(p, PathBuf::from(csv), "{asked}");
            assert_ne!(p, p.with_extension("json"));
            assert_ne!(p, p.with_extension("png"));
        }
    }

    /// Paths whose three files could not all be regular files are refused with the reason,
    /// and nothing is created: a device (no `/dev/null.csv`), a FIFO beside, a directory
    /// (given as such, with a trailing separator — no hidden `dir/.csv` — or as `.`), no
    /// name at all, a system directory. A plain name in the same directory records.
    #[test]
    fn record_paths_that_cannot_hold_three_regular_files_are_refused() {
        let dir = std::env::temp_dir().join(format!("ic-rec-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let slash = format!("{}/", dir.display());
        let mut cases = vec![
            (dir.clone(), "names a directory"),
            (PathBuf::from(&slash), "names a directory"),
            (PathBuf::from("."), "names a directory"),
            (PathBuf::new(), "names a directory"),
        ];
        if Path::new("/dev/null").exists() {
            cases.push((PathBuf::from("/dev/null"), "not a regular file"));
            cases.push((PathBuf::from("/dev/ic-recording"), "system directory"));
        }
        let fifo = dir.join("piped.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            cases.push((dir.join("piped"), "is not a regular file"));
        }
        for (asked, why) in cases {
            let mut r = Recorder::default();
            r.start(asked.clone(), 0);
            assert!(!r.is_recording(), "{}", asked.display());
            let status = r.status().unwrap();
            assert!(status.contains(why), "{}: {status}", asked.display());
        }
        assert!(!Path::new("/dev/null.csv").exists());
        assert!(!Path::new("/dev/ic-recording.csv").exists());
        assert!(!dir.join(".csv").exists());
        let mut r = Recorder::default();
        r.start(dir.join("plain"), 0);
        assert!(r.is_recording(), "{:?}", r.status());
        r.stop();
        assert!(dir.join("plain.csv").is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A recording asked for as `x.json` leaves three distinct, complete files: the CSV
    /// (header intact), its JSON summary and its chart.
    #[test]
    fn recording_to_a_json_name_keeps_all_three_files() {
        let dir = std::env::temp_dir().join(format!("ic-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = Recorder::default();
        r.start(dir.join("x.json"), 0);
        assert!(r.is_recording(), "{:?}", r.status());
        r.stop();
        let csv = std::fs::read_to_string(dir.join("x.csv")).unwrap();
        assert!(csv.starts_with("kind,time_s"), "{csv}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("x.json")).unwrap()).unwrap();
        assert_eq!(json["steps_not_recorded"], 0);
        assert!(std::fs::metadata(dir.join("x.png")).unwrap().len() > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
