//! The egui layer of the app: the parameter panel with live read-outs and the frame-time
//! overlay ([`panel`]), recording to CSV/JSON/PNG ([`recording`]), and the frame times both
//! read ([`frame_times`]).

pub mod frame_times;
pub mod panel;
pub mod recording;

pub use frame_times::FrameTimes;
pub use panel::{PanelState, UiPlugin};
pub use recording::Recorder;
