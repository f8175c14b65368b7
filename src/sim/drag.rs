//! Scripted drags: a grab that follows a written path in time, so a headless run can do what
//! a user does with the mouse.
//!
//! A [`Drag`] grabs particle `I` at time `T0`, moves its target on a straight line from where
//! the particle is at `T0` to the point `X,Y,Z`, reaching it at `T1`, holds it there and lets
//! go at `T2` (never, if omitted). It acts only through [`World::start_grab`],
//! [`World::set_grab_target`] and [`World::release_grab`] — the calls the app's mouse drag
//! makes — so a scripted drag and a mouse drag exercise the same physics.

use std::fmt;
use std::str::FromStr;

use glam::DVec3;

use super::World;
use super::error::SimError;

/// One scripted drag, `I:X,Y,Z:T0:T1[:T2]` on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drag {
    /// The particle, row-major index.
    pub particle: usize,
    /// Where the target ends up, m.
    pub to: DVec3,
    /// When the particle is grabbed, s.
    pub start: f64,
    /// When the target reaches `to`, s (≥ `start`).
    pub arrive: f64,
    /// When the particle is let go, s (> `start`), or never.
    pub release: Option<f64>,
}

impl Drag {
    /// The target at time `t` for a drag that started from `from`.
    pub fn target_at(&self, from: DVec3, t: f64) -> DVec3 {
        let span = self.arrive - self.start;
        let s = if span > 0.0 {
            ((t - self.start) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        from.lerp(self.to, s)
    }

    /// Whether the drag holds its particle during the step that starts at `t`.
    fn holds_at(&self, t: f64) -> bool {
        t + TIME_SLOP >= self.start && self.release.is_none_or(|r| t + TIME_SLOP < r)
    }

    /// Check the values, and the particle against a cloth of `count` particles.
    pub fn validate(&self, count: usize) -> Result<(), SimError> {
        if self.particle >= count {
            return Err(SimError::ParticleOutOfRange {
                index: self.particle,
                count,
            });
        }
        if !self.to.is_finite() {
            return Err(SimError::param("drag target", "must be finite"));
        }
        if !(self.start.is_finite() && self.start >= 0.0) {
            return Err(SimError::param(
                "drag start time T0",
                "must be finite and ≥ 0",
            ));
        }
        if !(self.arrive.is_finite() && self.arrive >= self.start) {
            return Err(SimError::param(
                "drag arrival time T1",
                "must be finite and ≥ T0",
            ));
        }
        if let Some(r) = self.release
            && !(r.is_finite() && r > self.start)
        {
            return Err(SimError::param(
                "drag release time T2",
                "must be finite and > T0",
            ));
        }
        Ok(())
    }
}

/// Step times are sums of `dt`; a drag written for t = 0.5 s must start at the step whose
/// start time is 0.49999999999 s.
const TIME_SLOP: f64 = 1e-9;

impl fmt::Display for Drag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DVec3 { x, y, z } = self.to;
        write!(
            f,
            "{}:{x},{y},{z}:{}:{}",
            self.particle, self.start, self.arrive
        )?;
        if let Some(r) = self.release {
            write!(f, ":{r}")?;
        }
        Ok(())
    }
}

impl FromStr for Drag {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let usage = "expected I:X,Y,Z:T0:T1[:T2] (particle index, target point in m, grab, arrival and optional release times in s)";
        let parts: Vec<&str> = s.split(':').map(str::trim).collect();
        if !(4..=5).contains(&parts.len()) {
            return Err(format!("`{s}`: {usage}"));
        }
        let particle = parts[0].parse::<usize>().map_err(|_| {
            format!(
                "`{s}`: particle index `{}` is not a non-negative integer",
                parts[0]
            )
        })?;
        let xyz: Vec<f64> = parts[1]
            .split(',')
            .map(|c| c.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("`{s}`: target `{}` is not three numbers X,Y,Z", parts[1]))?;
        let [x, y, z] = xyz[..] else {
            return Err(format!(
                "`{s}`: target `{}` is not three numbers X,Y,Z",
                parts[1]
            ));
        };
        let time = |i: usize, name: &str| {
            parts[i]
                .parse::<f64>()
                .map_err(|_| format!("`{s}`: {name} `{}` is not a number", parts[i]))
        };
        let drag = Drag {
            particle,
            to: DVec3::new(x, y, z),
            start: time(2, "T0")?,
            arrive: time(3, "T1")?,
            release: if parts.len() == 5 {
                Some(time(4, "T2")?)
            } else {
                None
            },
        };
        drag.validate(usize::MAX)
            .map_err(|e| format!("`{s}`: {e}"))?;
        Ok(drag)
    }
}

/// Drives a world's grab from a list of [`Drag`]s. Call [`DragScript::before_step`] before
/// every step (substeps included). Where drags overlap, the later one in the list wins.
#[derive(Debug, Clone, Default)]
pub struct DragScript {
    drags: Vec<Drag>,
    /// For each drag: where its particle was when it was grabbed.
    from: Vec<Option<DVec3>>,
    /// Index of the drag holding the grab, if any.
    active: Option<usize>,
}

impl DragScript {
    /// A script of `drags`, checked against a cloth of `count` particles.
    pub fn new(drags: Vec<Drag>, count: usize) -> Result<DragScript, SimError> {
        for d in &drags {
            d.validate(count)?;
        }
        Ok(DragScript {
            from: vec![None; drags.len()],
            drags,
            active: None,
        })
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.drags.is_empty()
    }

    /// Grab, move or release for the step that starts at `world.time`: the target is where
    /// the path is at the step's end (a grab target is where the particle should be after
    /// the next step).
    pub fn before_step(&mut self, world: &mut World) -> Result<(), SimError> {
        let t = world.time;
        let t_end = t + world.params.dt;
        let want = (0..self.drags.len())
            .rev()
            .find(|&k| self.drags[k].holds_at(t));
        if want != self.active {
            world.release_grab();
            self.active = None;
            if let Some(k) = want {
                let d = self.drags[k];
                let from = *self.from[k].get_or_insert(world.cloth.particles.x[d.particle]);
                world.start_grab(d.particle, d.target_at(from, t_end))?;
                self.active = Some(k);
            }
        } else if let Some(k) = self.active {
            let d = self.drags[k];
            let from = self.from[k].expect("set when the drag grabbed");
            world.set_grab_target(d.target_at(from, t_end));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_round_trip() {
        let d: Drag = "12:0.5,-1,2:0.25:1:3".parse().unwrap();
        assert_eq!(d.particle, 12);
        assert_eq!(d.to, DVec3::new(0.5, -1.0, 2.0));
        assert_eq!((d.start, d.arrive, d.release), (0.25, 1.0, Some(3.0)));
        assert_eq!(d.to_string().parse::<Drag>().unwrap(), d);
        let d: Drag = "0:1,2,3:0:0".parse().unwrap();
        assert_eq!(d.release, None);
    }

    #[test]
    fn refuses_bad_input_with_a_reason() {
        for (s, why) in [
            ("1:2,3:0:1", "three numbers"),
            ("x:1,2,3:0:1", "particle index"),
            ("1:1,2,3:0", "expected"),
            ("1:1,2,3:1:0.5", "T1"),
            ("1:1,2,3:1:2:1", "T2"),
            ("1:1,2,nan:0:1", "finite"),
            ("1:1,2,3:-1:1", "T0"),
            ("1:1,2,3:0:1:2:3", "expected"),
        ] {
            let e = s.parse::<Drag>().unwrap_err();
            assert!(e.contains(why), "{s}: {e}");
        }
    }

    #[test]
    fn target_moves_linearly_then_holds() {
        let d: Drag = "0:1,0,0:1:3".parse().unwrap();
        let from = DVec3::ZERO;
        assert_eq!(d.target_at(from, 0.5), from);
        assert_eq!(d.target_at(from, 2.0), DVec3::new(0.5, 0.0, 0.0));
        assert_eq!(d.target_at(from, 9.0), DVec3::new(1.0, 0.0, 0.0));
        let jump: Drag = "0:1,0,0:1:1".parse().unwrap();
        assert_eq!(jump.target_at(from, 1.0), DVec3::new(1.0, 0.0, 0.0));
    }
}
