//! Which solver: the user-facing names of the solvers. Kept apart from [`super::solver`]
//! so that the statistics ([`super::stats`]) can name a solver without depending on the
//! solvers themselves ([`SolverKind::create`] lives with them).

use std::fmt;
use std::str::FromStr;

/// The solvers a user can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolverKind {
    /// Gauss–Seidel impulses (004 §3.4.1, Algorithm 1).
    Iterative,
    /// All impulses at once from a sparse SPD system (004 §3.4.2).
    Sle,
    /// Position Verlet with iterative relaxation (003).
    Verlet,
    /// Rows and columns solved exactly as tridiagonal strips, coupled by block
    /// Gauss–Seidel (002).
    Strips,
    /// Strain limits [a, b] with one SPD impulse system that also holds contacts and
    /// gliders (001).
    StrainLimit,
    /// Newton's method on the preview with the constraints' curvature (geometric
    /// stiffness): all impulses at once, converging where the SLE's iteration stalls.
    Newton,
}

impl SolverKind {
    /// Every solver, in menu order.
    pub const ALL: [SolverKind; 6] = [
        SolverKind::Iterative,
        SolverKind::Sle,
        SolverKind::Verlet,
        SolverKind::Strips,
        SolverKind::StrainLimit,
        SolverKind::Newton,
    ];

    /// Name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Iterative => "iterative",
            SolverKind::Sle => "sle",
            SolverKind::Verlet => "verlet",
            SolverKind::Strips => "strips",
            SolverKind::StrainLimit => "strain-limit",
            SolverKind::Newton => "newton",
        }
    }

    /// Human-readable label.
    pub fn label(self) -> &'static str {
        match self {
            SolverKind::Iterative => "Iterative impulses (004 §3.4.1)",
            SolverKind::Sle => "SLE impulses (004 §3.4.2)",
            SolverKind::Verlet => "Verlet + relaxation (003)",
            SolverKind::Strips => "Strips in linear time (002)",
            SolverKind::StrainLimit => "Strain limits + contacts (001)",
            SolverKind::Newton => "Newton, geometric stiffness",
        }
    }

    /// Whether the solver keeps distance constraints at their rest length (within its
    /// tolerance). All but the strain-limit solver (001), which lets them stretch up to a
    /// limit; only these lock taut chains ([`crate::sim::taut`]).
    pub fn is_inextensible(self) -> bool {
        self != SolverKind::StrainLimit
    }
}

impl fmt::Display for SolverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SolverKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_named(&SolverKind::ALL, SolverKind::name, "solver", s)
    }
}

/// The entry of `all` whose `name` is `s` (ASCII case ignored), or an error that lists
/// every name: the parser behind the `FromStr` of the named choices ([`SolverKind`],
/// [`crate::sim::ScenePreset`]).
pub(crate) fn parse_named<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    what: &str,
    s: &str,
) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|&k| name(k).eq_ignore_ascii_case(s))
        .ok_or_else(|| {
            let names: Vec<_> = all.iter().map(|&k| name(k)).collect();
            format!(
                "unknown {what} `{s}` (expected one of: {})",
                names.join(", ")
            )
        })
}
