//! Where a step's solve will take each preview, for the step's first detection.
//!
//! A step's first detection gathers its candidates for the sweep from the start to the
//! free-flight previews; the contact rounds then detect at the solved previews, and where
//! those stray from the gathered ones by more than the margins leave (a fifth of the
//! reach outside the culled patches, less inside them), the round gathers again — whole
//! where more than a quarter of the particles strayed. Under `bench app`'s drags, with
//! strips at four steps a frame, the solve moves the median preview 0.6–1.6 mm on the
//! drape, and 1.4–1.6 whole gathers a step followed.
//!
//! The last step's solve moved each preview by much what this one's will: the same
//! tension, the same layers resting on each other, the same ball. So the first
//! detection gathers for the free flight plus the last step's correction, and the rounds
//! find their solved previews within the margins. Where a correction was larger than the
//! detection's reach — around the hand, at an impact, everywhere at Newton's one step a
//! frame — it forecasts nothing reliable: there the particle's own free flight is used,
//! as before. Uncapped, Newton's tablecloth took 8–11 zones instead of 1–10 and its slowest
//! frames 600–800 ms instead of 260–320, and the strips' drape 405 sweeps a frame instead of
//! 255 (docs/experiments.md, "Detection for the forecast previews").
//!
//! What this changes is which pairs the first detection finds and when; what the rounds
//! check is unchanged: every round still tests its solved previews against what the
//! candidates cover ([`super::SelfContact::detect`]), so a forecast that misses costs a
//! gather, never a contact.

use glam::DVec3;

/// The largest correction a forecast carries, as a multiple of the detection's reach
/// ([`super::DETECT_REACH`] times the gap). Measured on the app's scenes (30×30, `bench
/// app`): 1 against 0.5 — the drape 21.0, 24.1 against 19.3, 18.0 ms a frame, the pile 16.0,
/// 15.6 against 16.3, 16.3, the hanging cloth 11.5, 11.3 against 11.4, 12.2; without a
/// cap, the runs named in the module's text.
pub const FORECAST_MOST: f64 = 1.0;

/// The last step's corrections and this step's free-flight previews.
#[derive(Debug, Clone, Default)]
pub struct Forecast {
    /// What the last step's solve moved each preview by (its solved preview less its
    /// free flight), and that step's length.
    shift: Vec<DVec3>,
    h: f64,
    /// This step's free-flight previews ([`Forecast::apply`]), until
    /// [`Forecast::record`] takes them.
    free: Vec<DVec3>,
    free_h: f64,
}

impl Forecast {
    /// Shift each free-flight preview of a step of `h` s by the last step's correction
    /// where that step had the same length and the correction is at most `most` long, and
    /// keep the free previews for [`Forecast::record`].
    pub fn apply(&mut self, previews: &mut [DVec3], h: f64, most: f64) {
        self.free.clear();
        self.free.extend_from_slice(previews);
        self.free_h = h;
        if self.shift.len() != previews.len() || self.h != h {
            return;
        }
        for (p, s) in previews.iter_mut().zip(&self.shift) {
            if s.length() <= most {
                *p += *s;
            }
        }
    }

    /// What this step's solve did: its solved previews `solved` of a step of `h` s against
    /// the free ones [`Forecast::apply`] kept. Without such (no first detection this step,
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
        let mut p = free.clone();
        f.apply(&mut p, 0.01, 1.0);
        assert_eq!(p, free);
        // The solve moved the first particle by 0.5, the second by 2, the third not at all.
        let solved = vec![
            DVec3::new(0.5, 0.0, 0.0),
            DVec3::new(3.0, 0.0, 0.0),
            DVec3::Y,
        ];
        f.record(&solved, 0.01);
        let mut p = free.clone();
        f.apply(&mut p, 0.01, 1.0);
        assert_eq!(p, vec![DVec3::new(0.5, 0.0, 0.0), DVec3::X, DVec3::Y]);
        // The correction is measured from the free previews, not from the forecast ones.
        f.record(&solved, 0.01);
        let mut p = free.clone();
        f.apply(&mut p, 0.01, 1.0);
        assert_eq!(p[0], DVec3::new(0.5, 0.0, 0.0));
        // A step of another length, or a step whose solve was not recorded, forecasts
        // nothing.
        f.record(&solved, 0.01);
        let mut p = free.clone();
        f.apply(&mut p, 0.005, 1.0);
        assert_eq!(p, free);
        f.record(&solved, 0.005);
        f.record(&solved, 0.005);
        let mut p = free.clone();
        f.apply(&mut p, 0.005, 1.0);
        assert_eq!(p, free);
        // A NaN correction forecasts nothing for its particle, nor another particle count.
        f.record(&[DVec3::NAN, DVec3::X, DVec3::Y], 0.005);
        let mut p = free.clone();
        f.apply(&mut p, 0.005, 1.0);
        assert_eq!(p, free);
        let mut p = vec![DVec3::ZERO; 2];
        f.apply(&mut p, 0.005, 1.0);
        assert_eq!(p, vec![DVec3::ZERO; 2]);
    }
}
