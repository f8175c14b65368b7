//! The simulation's wall-time budget per rendered frame, so the app never spirals.
//!
//! Bevy's fixed loop runs as many FixedUpdate steps per rendered frame as the wall time since
//! the last frame owes it (up to the virtual clock's largest delta, 250 ms). When a step
//! costs more wall time than the simulated time it advances (a large grid: 48 ms for a step
//! of 1/60 s), every frame owes more steps than the one before and the frame rate collapses
//! to the catch-up limit (a frame per second, the grab's target read once in it).
//!
//! [`FrameBudget`] caps the wall time the fixed steps may take in one rendered frame
//! ([`FRAME_BUDGET`], two frames of 1/60 s): after each step, if the next one (taken to cost
//! what this one did) would end past the budget, the whole steps still owed are dropped
//! from the fixed clock's overstep (`Time<Fixed>::discard_overstep`; the fraction of a step
//! that is left keeps the render interpolation smooth). The first owed step of a frame
//! always runs, so the cloth never stops. Simulated time then runs slower than wall time
//! instead of the frame rate collapsing; [`FrameBudget::speed`] reports simulated over wall
//! time over the last second (the overlay's "0.4× real time"), and [`FrameSample::slowed`]
//! marks the frames that dropped owed time (the recording's `slowed` column).
//!
//! Input is read every rendered frame before the fixed loop (`src/app/input.rs`), so a
//! dragged hand follows the mouse at the frame rate the budget keeps, however slowly
//! simulated time runs.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bevy::prelude::*;

use super::sim::SimState;

/// Wall time the fixed steps may take per rendered frame: two frames of 1/60 s (33 ms).
/// One frame's worth would leave nothing for rendering and the UI and stop the loop from
/// catching up after a single late frame; two let a frame that ran late be made up in the
/// next while steps are cheap, and keep the app at about 25 frames per second or more
/// (with the render time) when they are not. A single step dearer than this still runs,
/// one per frame.
pub const FRAME_BUDGET: Duration = Duration::from_nanos(2 * 1_000_000_000 / 60);

/// Wall time over which [`FrameBudget::speed`] is measured.
pub const SPEED_WINDOW: Duration = Duration::from_secs(1);

/// What the fixed loop did in one rendered frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameSample {
    /// Wall time since the previous rendered frame, s (`Time<Real>`'s delta: the time the
    /// fixed loop owed the simulation).
    pub real: f64,
    /// Simulated time the frame's steps advanced, s.
    pub simulated: f64,
    /// Steps that ran.
    pub steps: u32,
    /// Wall time the fixed loop spent in them.
    pub spent: Duration,
    /// Owed simulated time was dropped: the budget cut the frame's steps short, or the
    /// frame came more than the virtual clock's largest delta after the last one.
    pub slowed: bool,
    /// The frame came more than the virtual clock's largest delta (250 ms) after the last
    /// one: rendering, not the steps, dropped the time beyond it (under Xvfb's software
    /// Vulkan a frame takes about half a second while a step costs a millisecond).
    pub late: bool,
}

/// The budget and what it measured; inserted by [`super::SimPlugin`].
#[derive(Resource, Debug, Clone)]
pub struct FrameBudget {
    /// Wall time the fixed steps may take per rendered frame ([`FRAME_BUDGET`]).
    pub budget: Duration,
    /// Extra wall time each fixed step sleeps, for tests that need a slow step; zero in the
    /// app (no flag or panel control sets it).
    pub step_delay: Duration,
    frame: FrameSample,
    last: FrameSample,
    step_started: Option<Instant>,
    counted_steps: Option<u64>,
    window: VecDeque<FrameSample>,
    slowed_frames: u64,
    /// The virtual clock's largest delta, s: wall time a frame may owe the fixed loop.
    max_delta: f64,
}

impl Default for FrameBudget {
    fn default() -> Self {
        FrameBudget {
            budget: FRAME_BUDGET,
            step_delay: Duration::ZERO,
            frame: FrameSample::default(),
            last: FrameSample::default(),
            step_started: None,
            counted_steps: None,
            window: VecDeque::new(),
            slowed_frames: 0,
            max_delta: 0.25,
        }
    }
}

impl FrameBudget {
    /// Simulated time over wall time in the last second of running frames (1 = real time);
    /// `None` while paused or before any wall time has passed.
    pub fn speed(&self) -> Option<f64> {
        let real: f64 = self.window.iter().map(|f| f.real).sum();
        let simulated: f64 = self.window.iter().map(|f| f.simulated).sum();
        (real > 0.0).then(|| simulated / real)
    }

    /// Frames in the last second of running frames that dropped owed simulated time.
    pub fn slowed_recently(&self) -> usize {
        self.window.iter().filter(|f| f.slowed).count()
    }

    /// Frames in the last second of running frames whose steps the budget cut short (as
    /// opposed to frames that came late, [`FrameSample::late`]).
    pub fn cut_recently(&self) -> usize {
        self.window.iter().filter(|f| f.slowed && !f.late).count()
    }

    /// The virtual clock's largest delta, s ([`FrameSample::late`]).
    pub fn max_delta(&self) -> f64 {
        self.max_delta
    }

    /// The longest wall time between two rendered frames in the last second, s.
    pub fn longest_frame(&self) -> f64 {
        self.window.iter().map(|f| f.real).fold(0.0, f64::max)
    }

    /// The last completed rendered frame.
    pub fn last_frame(&self) -> &FrameSample {
        &self.last
    }

    /// Rendered frames since launch that dropped owed simulated time
    /// ([`FrameSample::slowed`]).
    pub fn slowed_frames(&self) -> u64 {
        self.slowed_frames
    }

    /// Count the steps the world completed since the last call.
    fn count_steps(&mut self, state: &SimState) {
        let done = state.total_steps;
        let new = done - self.counted_steps.unwrap_or(done).min(done);
        self.counted_steps = Some(done);
        self.frame.steps += new as u32;
        self.frame.simulated += new as f64 * state.world.params.dt;
    }
}

/// The systems of the budget, around and inside the fixed loop.
pub(super) fn add_systems(app: &mut App) {
    app.init_resource::<FrameBudget>()
        .add_systems(
            RunFixedMainLoop,
            begin_frame.in_set(RunFixedMainLoopSystems::BeforeFixedMainLoop),
        )
        .add_systems(
            RunFixedMainLoop,
            end_frame.in_set(RunFixedMainLoopSystems::AfterFixedMainLoop),
        )
        .add_systems(FixedFirst, begin_step)
        .add_systems(FixedLast, end_step);
}

fn begin_frame(
    mut budget: ResMut<FrameBudget>,
    state: Res<SimState>,
    real: Res<Time<Real>>,
    virt: Res<Time<Virtual>>,
) {
    budget.counted_steps = Some(state.total_steps);
    let late = real.delta() > virt.max_delta();
    budget.max_delta = virt.max_delta().as_secs_f64();
    budget.frame = FrameSample {
        real: real.delta_secs_f64(),
        slowed: late,
        late,
        ..FrameSample::default()
    };
}

fn begin_step(mut budget: ResMut<FrameBudget>) {
    budget.step_started = Some(Instant::now());
    if !budget.step_delay.is_zero() {
        std::thread::sleep(budget.step_delay);
    }
}

/// After a step: if another step like it would end past the budget, drop the whole steps
/// still owed, so the fixed loop ends with this one.
fn end_step(mut budget: ResMut<FrameBudget>, state: Res<SimState>, mut fixed: ResMut<Time<Fixed>>) {
    let cost = budget
        .step_started
        .take()
        .map_or(Duration::ZERO, |t| t.elapsed());
    budget.frame.spent += cost;
    budget.count_steps(&state);
    if budget.frame.spent + cost > budget.budget {
        let step = fixed.timestep();
        let owed = fixed.overstep();
        let whole = step * (owed.as_nanos() / step.as_nanos()) as u32;
        if !whole.is_zero() {
            fixed.discard_overstep(whole);
            budget.frame.slowed = true;
        }
    }
}

fn end_frame(mut budget: ResMut<FrameBudget>, state: Res<SimState>) {
    budget.count_steps(&state);
    let frame = budget.frame;
    budget.last = frame;
    if state.paused {
        // Nothing to compare with wall time; start afresh when the simulation runs again.
        budget.window.clear();
        return;
    }
    budget.slowed_frames += u64::from(frame.slowed);
    budget.window.push_back(frame);
    let window = SPEED_WINDOW.as_secs_f64();
    while budget.window.len() > 1
        && budget.window.iter().skip(1).map(|f| f.real).sum::<f64>() >= window
    {
        budget.window.pop_front();
    }
}
