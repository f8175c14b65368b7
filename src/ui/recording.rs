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

use super::panel::FrameTimes;
use crate::app::sim::SimState;
use crate::cli::run::write_atomic;

struct Active {
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    start: Instant,
    seen_steps: u64,
    step_ms: Vec<f64>,
    frame_ms: Vec<f64>,
    max_strain: f64,
}

/// The recorder resource.
#[derive(Resource, Default)]
pub struct Recorder {
    active: Option<Active>,
    status: Option<String>,
    counter: u32,
}

const HEADER: &str = "kind,time_s,solver,grid_w,grid_h,tolerance,cap,forces_ms,collision_ms,position_ms,integration_ms,velocity_ms,position_iterations,velocity_iterations,max_strain,frame_ms\n";

impl Recorder {
    /// Whether a recording is running.
    pub fn is_recording(&self) -> bool {
        self.active.is_some()
    }

    /// Status line for the panel (file path or error).
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// Start recording into `path` (CSV). Errors are shown in the status line.
    pub fn start(&mut self, path: PathBuf, total_steps: u64) {
        let tmp = path.with_extension("csv.tmp");
        match File::create(&tmp) {
            Ok(f) => {
                let mut out = BufWriter::new(f);
                if let Err(e) = out.write_all(HEADER.as_bytes()) {
                    self.status = Some(format!("cannot write {}: {e}", tmp.display()));
                    return;
                }
                self.status = Some(format!("recording to {}", path.display()));
                self.active = Some(Active {
                    path,
                    tmp,
                    out,
                    start: Instant::now(),
                    seen_steps: total_steps,
                    step_ms: Vec::new(),
                    frame_ms: Vec::new(),
                    max_strain: 0.0,
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
        let Some(mut a) = self.active.take() else {
            return;
        };
        let result = (|| -> Result<(), String> {
            a.out.flush().map_err(|e| e.to_string())?;
            drop(a.out);
            std::fs::rename(&a.tmp, &a.path).map_err(|e| e.to_string())?;
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
            Ok(()) => format!("saved {} (+ .json, .png)", a.path.display()),
            Err(e) => format!("recording failed: {e}"),
        });
    }
}

/// Steps and frames are spread evenly over the recording's duration (both are regular
/// enough for a chart; the CSV has exact timestamps).
fn chart(
    path: &Path,
    steps: &[f64],
    frames: &[f64],
    seconds: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let tmp = path.with_extension("png.tmp.png");
    {
        let _ = plotters::style::register_font(
            "sans-serif",
            plotters::style::FontStyle::Normal,
            crate::cli::bench::FONT,
        );
        let root = BitMapBackend::new(&tmp, (900, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let n = seconds.max(1e-3);
        let at = |i: usize, len: usize| i as f64 * n / len.max(1) as f64;
        let ymax = steps.iter().chain(frames).fold(1.0f64, |a, &b| a.max(b)) * 1.2;
        let mut c = ChartBuilder::on(&root)
            .caption("recording: ms per step and per frame", ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..n, 0.0..ymax)?;
        c.configure_mesh().x_desc("time (s)").y_desc("ms").draw()?;
        c.draw_series(LineSeries::new(
            steps
                .iter()
                .enumerate()
                .map(|(i, &y)| (at(i, steps.len()), y)),
            &BLUE,
        ))?
        .label("step")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE));
        c.draw_series(LineSeries::new(
            frames
                .iter()
                .enumerate()
                .map(|(i, &y)| (at(i, frames.len()), y)),
            &RED,
        ))?
        .label("frame")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
        c.configure_series_labels()
            .background_style(plotters::style::Color::mix(&WHITE, 0.8))
            .draw()?;
        root.present()?;
    }
    std::fs::rename(tmp, path)?;
    Ok(())
}

/// Append the steps and the frame since the last call.
pub fn record_rows(mut rec: ResMut<Recorder>, state: Res<SimState>, ft: Res<FrameTimes>) {
    let rec = &mut *rec;
    let Some(a) = &mut rec.active else { return };
    if a.seen_steps == u64::MAX {
        a.seen_steps = state.total_steps;
    }
    let new = (state.total_steps - a.seen_steps.min(state.total_steps)) as usize;
    a.seen_steps = state.total_steps;
    let t = a.start.elapsed().as_secs_f64();
    let p = &state.world.params;
    let (w, h) = (
        state.world.cloth.topology.width,
        state.world.cloth.topology.height,
    );
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
            "step,{t:.4},{},{w},{h},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{},{},{:.6e},",
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
        if let Err(e) = writeln!(
            a.out,
            "frame,{t:.4},{},{w},{h},{},{},,,,,,,,,{f:.4}",
            state.kind, p.tolerance, p.max_iterations
        ) {
            err = Some(e);
        }
    }
    if let Some(e) = err {
        rec.status = Some(format!("recording stopped: {e}"));
        rec.active = None;
    }
}
