//! The egui layer of the app: the parameter panel with live read-outs and the frame-time
//! overlay ([`panel`]), and recording to CSV/JSON/PNG ([`recording`]).

pub mod panel;
pub mod recording;

pub use panel::{FrameTimes, PanelState, UiPlugin};
pub use recording::Recorder;
