//! Argument types and value parsers shared by `run`, `bench` and the app's flags.

use std::str::FromStr;

use glam::DVec3;

use crate::sim::PinSpec;
use crate::sim::params::Param;

/// A grid size: `N` (N×N) or `WxH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridArg {
    /// Particles per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

impl GridArg {
    /// An N×N grid.
    pub const fn square(n: usize) -> GridArg {
        GridArg {
            width: n,
            height: n,
        }
    }
}

impl std::fmt::Display for GridArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.width == self.height {
            write!(f, "{}", self.width)
        } else {
            write!(f, "{}x{}", self.width, self.height)
        }
    }
}

impl FromStr for GridArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parse = |t: &str| {
            t.trim().parse::<usize>().map_err(|_| {
                format!("`{s}` is not a grid size (expected N or WxH, e.g. 40 or 64x32)")
            })
        };
        let (w, h) = match s.split_once(['x', 'X', '×']) {
            Some((w, h)) => (parse(w)?, parse(h)?),
            None => {
                let n = parse(s)?;
                (n, n)
            }
        };
        // Sides first: W·H of two huge sides would overflow.
        if w > crate::sim::cloth::MAX_GRID_SIDE || h > crate::sim::cloth::MAX_GRID_SIDE {
            return Err(format!(
                "grid `{s}`: sides above {} are not supported",
                crate::sim::cloth::MAX_GRID_SIDE
            ));
        }
        if w == 0 || h == 0 || w * h < 2 {
            return Err(format!(
                "grid `{s}` needs W, H ≥ 1 and at least two particles"
            ));
        }
        Ok(GridArg {
            width: w,
            height: h,
        })
    }
}

/// A vector `x,y,z` of finite numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vec3Arg(pub DVec3);

impl FromStr for Vec3Arg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let v = parse_floats(s, 3)?;
        Ok(Vec3Arg(DVec3::new(v[0], v[1], v[2])))
    }
}

/// A ball `x,y,z,r`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BallArg {
    /// Centre, m.
    pub center: DVec3,
    /// Radius, m.
    pub radius: f64,
}

impl FromStr for BallArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let v = parse_floats(s, 4)?;
        if v[3] <= 0.0 {
            return Err(format!("ball radius in `{s}` must be positive"));
        }
        Ok(BallArg {
            center: DVec3::new(v[0], v[1], v[2]),
            radius: v[3],
        })
    }
}

/// Parse exactly `n` comma-separated finite numbers.
pub fn parse_floats(s: &str, n: usize) -> Result<Vec<f64>, String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<f64>()
                .map_err(|_| format!("`{t}` in `{s}` is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if v.len() != n {
        return Err(format!(
            "`{s}` needs {n} comma-separated numbers, got {}",
            v.len()
        ));
    }
    if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
        return Err(format!("`{bad}` in `{s}` is not finite"));
    }
    Ok(v)
}

/// A finite positive number.
pub fn positive(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("`{s}` must be a finite number > 0"));
    }
    Ok(v)
}

/// A finite number ≥ 0.
pub fn non_negative(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("`{s}` must be a finite number ≥ 0"));
    }
    Ok(v)
}

/// A pin set (see [`PinSpec`]); the names are case-insensitive (`CORNERS` = `corners`).
pub fn pins(s: &str) -> Result<PinSpec, String> {
    let s = s.trim();
    // A group's name is the file's, case and all.
    match s.get(..6) {
        Some(head) if head.eq_ignore_ascii_case("group:") => format!("group:{}", &s[6..]).parse(),
        _ => s.to_ascii_lowercase().parse(),
    }
}

/// A mesh's constraint choice (`quads`, `all-edges`), case-insensitive.
pub fn constraint_choice(s: &str) -> Result<crate::sim::mesh::ConstraintChoice, String> {
    s.trim().parse()
}

/// Check a flag's value against the parameter's description, naming the flag and the
/// value as the user typed it.
pub fn check_flag(flag: &str, p: &Param, v: f64) -> Result<(), String> {
    match p.reason(v) {
        Some(r) => Err(format!("{flag} {} {r}", p.show(v))),
        None => Ok(()),
    }
}
