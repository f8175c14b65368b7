//! The grid's topology (004 §3.3, Figs. 1–2): constraint and spring counts, the edge
//! colouring of the parallel sweep.

use impulse_cloth::sim::{Cloth, GridSpec};

#[test]
fn constraint_and_spring_counts_match_004() {
    for (n, constraints) in [(10, 180), (40, 3120), (50, 4900)] {
        let c = Cloth::grid(&GridSpec {
            width: n,
            height: n,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.topology.edges.len(), constraints, "{n}x{n}");
        // Both diagonals per quad (Fig. 2) + bends along rows and columns.
        let springs = 2 * (n - 1) * (n - 1) + 2 * n * (n - 2);
        assert_eq!(c.topology.springs.len(), springs);
    }
    let c = Cloth::grid(&GridSpec {
        width: 7,
        height: 3,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(c.topology.edges.len(), 2 * 7 * 3 - 7 - 3);
    let c = Cloth::grid(&GridSpec {
        width: 2,
        height: 1,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(c.topology.edges.len(), 1);
}

#[test]
fn colouring_is_a_proper_colouring() {
    let c = Cloth::grid(&GridSpec {
        width: 13,
        height: 9,
        ..Default::default()
    })
    .unwrap();
    let mut seen = vec![false; c.topology.edges.len()];
    for colour in &c.topology.colours {
        let mut used = vec![false; c.len()];
        for &e in colour {
            let [a, b] = c.topology.edges[e as usize];
            assert!(
                !used[a as usize] && !used[b as usize],
                "two edges of one colour share a particle"
            );
            used[a as usize] = true;
            used[b as usize] = true;
            assert!(!seen[e as usize]);
            seen[e as usize] = true;
        }
    }
    assert!(seen.iter().all(|&s| s));
    assert_eq!(c.topology.colours.len(), 4);
}
