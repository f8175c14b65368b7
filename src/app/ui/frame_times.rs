//! The wall time between rendered frames, kept for the overlay ([`super::panel`]) and the
//! recording ([`super::recording`]); both read it, neither owns it.

use std::collections::VecDeque;
use std::time::Instant;

use bevy::prelude::*;

/// How many frame times are kept.
pub const KEPT: usize = 300;

/// Frame times of the recent frames, ms.
#[derive(Resource, Default)]
pub struct FrameTimes {
    /// Frame durations, newest last.
    pub frames: VecDeque<f64>,
    last: Option<Instant>,
}

/// Record the time since the last frame (an `Update` system).
pub fn frame_time(mut ft: ResMut<FrameTimes>) {
    let now = Instant::now();
    if let Some(last) = ft.last {
        if ft.frames.len() == KEPT {
            ft.frames.pop_front();
        }
        ft.frames.push_back((now - last).as_secs_f64() * 1e3);
    }
    ft.last = Some(now);
}
