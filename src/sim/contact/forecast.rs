//! Where a step's solve will take each preview, for the step's first detection.
//!
//! A step's first detection gathered its candidates for the sweep from the start to the
//! free-flight previews; the contact rounds then detect at the solved previews, and where
//! those stray from the gathered ones by more than the margins leave (a fifth of the
//! reach outside the culled patches, less inside them), the round gathers again — whole
//! where more than a quarter of the particles strayed. Under `bench app`'s drags, with
//! strips at four steps a frame, the solve moves the median preview 0.6–1.6 mm on the
//! drape, and 1.4–1.6 whole gathers a step followed.
//!
//! The last step's solve moved each preview by much what this one's will: the same
//! tension, the same layers resting on each other, the same ball. So the first detection
//! gathers for the free flight plus the last step's correction, and the rounds find their
//! solved previews within the margins. A correction longer than the detection's reach
//! (around the hand, at an impact) forecasts nothing reliable: that particle's free
//! flight is used. The rows of that detection are made for the pairs that the free flight
//! brings within reach, as before, or the forecast does, among the candidates: rows from
//! the forecast alone missed what a forecast that failed (the hand stopping) let fall back
//! into contact, and the dragged tablecloth's slowest frames went 260–330 → 510–580 ms, the
//! tear scene's 140–220 → 310–440 (docs/experiments.md, "Detection for the forecast
//! previews").
//!
//! The guarantees do not rest on the forecast: every round still tests its solved
//! previews against what the candidates cover ([`super::SelfContact::detect`]) and gathers
//! again where they do not, so a forecast that misses costs a gather, never a contact.

use glam::DVec3;

/// The longest correction a forecast carries, as a multiple of the detection's reach
/// ([`super::DETECT_REACH`] times the gap). With rows from the forecast alone, measured on
/// the app's scenes (30×30, `bench app`, ms a frame): 1 against 0.5 — the drape 21.0, 24.1
/// against 19.3, 18.0, the pile 16.0, 15.6 against 16.3, 16.3, the hanging cloth 11.5,
/// 11.3 against 11.4, 12.2; without a cap Newton's dragged tablecloth went into 6–23 split
/// steps (none at 1) and the drape took 405 sweeps a frame instead of 250.
pub const FORECAST_MOST: f64 = 1.0;

/// The last step's corrections and this step's free-flight previews.
#[derive(Debug, Clone, Default)]
pub struct Forecast {
    /// What the last step's solve moved each preview by (its solved preview less its
    /// free flight), and that step's length.
    shift: Vec<DVec3>,
    h: f64,
    /// This step's free-flight previews ([`Forecast::plan`]), until [`Forecast::record`]
    /// takes them.
    free: Vec<DVec3>,
    free_h: f64,
    /// The positions this step's first gather is made for ([`Forecast::plan`]).
    target: Vec<DVec3>,
}

impl Forecast {
    /// Keep the free-flight previews of a step of `h` s for [`Forecast::record`], and make
    /// the first gather's target: each moved by the last step's correction where that
    /// step had the same length and the correction is at most `most` long. Returns
    /// whether any was moved (else the target is the free flight itself).
    pub fn plan(&mut self, free: &[DVec3], h: f64, most: f64) -> bool {
        self.free.clear();
        self.free.extend_from_slice(free);
        self.free_h = h;
        self.target.clear();
        self.target.extend_from_slice(free);
        if self.shift.len() != free.len() || self.h != h {
            return false;
        }
        let mut moved = false;
        for (p, s) in self.target.iter_mut().zip(&self.shift) {
            if *s != DVec3::ZERO && s.length() <= most {
                *p += *s;
                moved = true;
            }
        }
        moved
    }

    /// The first gather's target of the last [`Forecast::plan`].
    pub fn target(&self) -> &[DVec3] {
        &self.target
    }

    /// What this step's solve did: its solved previews `solved` of a step of `h` s against
    /// the free ones [`Forecast::plan`] kept. Without such (no first detection this step,
    /// another step length, another particle count), nothing is forecast next step.
    pub fn record(&mut self, solved: &[DVec3], h: f64) {
        self.shift.clear();
        if self.free.len() == solved.len() && self.free_h == h {
            self.shift
                .extend(solved.iter().zip(&self.free).map(|(&s, &f)| {
                    let d = s - f;
                    if d.is_finite() { d } else { DVec3::ZERO }
                }));
            self.h = h;
        }
        self.free.clear();
    }

    /// Forget everything (self-collision off, a new cloth).
    pub fn clear(&mut self) {
        self.shift.clear();
        self.free.clear();
        self.target.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_correction_is_carried_to_the_next_step_of_the_same_length_only_within_its_cap() {
        let mut f = Forecast::default();
        let free = vec![DVec3::ZERO, DVec3::X, DVec3::Y];
        // First step: nothing to forecast from.
        assert!(!f.plan(&free, 0.01, 1.0));
        assert_eq!(f.target(), &free[..]);
        // The solve moved the first particle by 0.5, the second by 2, the third not at all.
        let solved = vec![
            DVec3::new(0.5, 0.0, 0.0),
            DVec3::new(3.0, 0.0, 0.0),
            DVec3::Y,
        ];
        f.record(&solved, 0.01);
        assert!(f.plan(&free, 0.01, 1.0));
        assert_eq!(
            f.target(),
            &[DVec3::new(0.5, 0.0, 0.0), DVec3::X, DVec3::Y][..]
        );
        // The correction is measured from the free previews, not from the target.
        f.record(&solved, 0.01);
        assert!(f.plan(&free, 0.01, 1.0));
        assert_eq!(f.target()[0], DVec3::new(0.5, 0.0, 0.0));
        // A step of another length, or a step whose solve was not recorded, forecasts
        // nothing.
        f.record(&solved, 0.01);
        assert!(!f.plan(&free, 0.005, 1.0));
        assert_eq!(f.target(), &free[..]);
        f.record(&solved, 0.005);
        f.record(&solved, 0.005);
        assert!(!f.plan(&free, 0.005, 1.0));
        // A NaN correction forecasts nothing for its particle, nor another particle count.
        f.record(&[DVec3::NAN, DVec3::X, DVec3::Y], 0.005);
        assert!(!f.plan(&free, 0.005, 1.0));
        assert_eq!(f.target(), &free[..]);
        assert!(!f.plan(&[DVec3::ZERO; 2], 0.005, 1.0));
    }
}
