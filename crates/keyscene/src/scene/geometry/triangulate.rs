//! Ear clipping of concave polygons in their own plane, accelerated by a grid of the reflex
//! corners: the rule of ufbx's `ufbx_triangulate_face` (`ufbxi_triangulate_ngon`: project on
//! the Newell plane, clip ears whose triangle holds no reflex corner, step back one corner
//! after each clip), with a uniform grid in place of its k-d tree and a fallback that never
//! turns a triangle against the polygon while a corner that does not remains.
//!
//! Why a corner test against *reflex* corners only is enough: in a simple polygon a convex
//! corner `b` with neighbours `a`, `c` is an ear exactly when no reflex corner lies in the
//! closed triangle `a b c` (Eberly, "Triangulation by Ear Clipping", §2). Clipping only ever
//! shrinks the angles at `a` and `c`, so a corner that is convex stays convex and the set of
//! reflex corners only shrinks: the grid is built once and its stale entries are skipped.

use glam::DVec2;

/// Corners of the polygon, as a ring being clipped.
struct Ring<'a> {
    pts: &'a [DVec2],
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Corner still in the ring.
    alive: Vec<bool>,
    /// Corner reflex (turn ≤ 0) in the current ring; only ever goes from true to false.
    reflex: Vec<bool>,
    /// The next corner at the same place (a repeated vertex, a keyhole's bridge, a slit's
    /// root), round the corners that share the place; `NONE` for a corner alone.
    twins: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// The sine of the smallest angle by which an edge must point into a triangle to count as
/// entering it ([`Ring::twin_enters`]): edges along a side of the triangle, computed from
/// positions that differ in the last bits, point in by about 1e-16.
const ANGLE_EPSILON: f64 = 1e-12;

/// How many corners at one place [`Ring::twin_enters`] looks at before it calls the ear
/// blocked (a hostile polygon may put every corner at three places).
const TWIN_LIMIT: usize = 32;

/// [`Ring::twins`] of `pts`: corners sorted by place, each run of equal places linked in a
/// circle.
fn twins(pts: &[DVec2]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..pts.len() as u32).collect();
    let key = |i: u32| {
        let p = pts[i as usize];
        (p.x.to_bits(), p.y.to_bits())
    };
    order.sort_unstable_by_key(|&i| key(i));
    let mut twins = vec![NONE; pts.len()];
    for run in order.chunk_by(|&i, &j| pts[i as usize] == pts[j as usize]) {
        if run.len() > 1 {
            for (k, &i) in run.iter().enumerate() {
                twins[i as usize] = run[(k + 1) % run.len()];
            }
        }
    }
    twins
}

/// Twice the signed area of the triangle `o a b` (positive when counter-clockwise).
fn orient(o: DVec2, a: DVec2, b: DVec2) -> f64 {
    (a - o).perp_dot(b - o)
}

impl Ring<'_> {
    fn turn(&self, b: usize) -> f64 {
        let (a, c) = (self.prev[b] as usize, self.next[b] as usize);
        orient(self.pts[a], self.pts[b], self.pts[c])
    }

    /// Whether clipping corner `b` would cut a triangle over another part of the outline that
    /// meets it at one of the triangle's corners `x` (`a`, `b` or `c`): another corner at
    /// the same place as `x` whose outline arrives from or leaves towards a direction strictly
    /// inside the triangle's angle at `x`, or arrives from one of the triangle's other corners
    /// and leaves towards the other (the rest of the outline is then the triangle walked back,
    /// of no area, and clipping `b` would leave its mirror image to face against the polygon).
    /// Runs of corners at the one place count as one corner. (The reflex-corner test cannot
    /// see any of this: such corners touch the triangle at a corner.) More than
    /// [`TWIN_LIMIT`] corners at one place count as entering, which bounds the cost.
    fn twin_enters(&self, [a, b, c]: [usize; 3]) -> bool {
        [(a, b, c), (b, c, a), (c, a, b)].into_iter().any(|(x, y, z)| {
            if self.twins[x] == NONE {
                return false;
            }
            let (px, dy, dz) = (self.pts[x], self.pts[y] - self.pts[x], self.pts[z] - self.pts[x]);
            // Strictly inside by more than rounding: an edge along one of the triangle's own
            // sides (a bridge walked twice) does not enter it.
            let inside = |q: usize| {
                let d = self.pts[q] - px;
                let (ly, lz) = (dy.length() * d.length(), d.length() * dz.length());
                dy.perp_dot(d) > ANGLE_EPSILON * ly && d.perp_dot(dz) > ANGLE_EPSILON * lz
            };
            let mut r = self.twins[x] as usize;
            for _ in 0..TWIN_LIMIT {
                if r == x {
                    return false;
                }
                if self.alive[r] && r != y && r != z {
                    let (Some(p), Some(q)) = (self.away(r, &self.prev), self.away(r, &self.next))
                    else {
                        return true;
                    };
                    let at = |i: usize, j: usize| self.pts[i] == self.pts[j];
                    let closes = (at(p, y) && at(q, z)) || (at(p, z) && at(q, y));
                    if closes || inside(p) || inside(q) {
                        return true;
                    }
                }
                r = self.twins[r] as usize;
            }
            true
        })
    }

    /// The first corner from `r` along `step` (`prev` or `next`) at another place than `r`;
    /// `None` past [`TWIN_LIMIT`] corners.
    fn away(&self, r: usize, step: &[u32]) -> Option<usize> {
        let mut q = step[r] as usize;
        for _ in 0..TWIN_LIMIT {
            if self.pts[q] != self.pts[r] {
                return Some(q);
            }
            q = step[q] as usize;
        }
        None
    }

    /// Whether `b` is an ear: a convex corner whose triangle holds no reflex corner and no
    /// edge of a corner at the same place ([`Ring::twin_enters`]), or a corner with no turn
    /// whose neighbours are on the same side of it (a spike's tip, or a corner repeated
    /// next to itself): clipping that cuts no area and leaves the outline's shape.
    fn is_ear(&self, grid: &Grid, b: usize) -> bool {
        let (a, c) = (self.prev[b] as usize, self.next[b] as usize);
        let turn = self.turn(b);
        if turn == 0.0 {
            let (pa, pb, pc) = (self.pts[a], self.pts[b], self.pts[c]);
            return (pa - pb).dot(pc - pb) >= 0.0;
        }
        turn > 0.0 && !grid.blocks(self, [a, b, c]) && !self.twin_enters([a, b, c])
    }

    fn unlink(&mut self, b: usize) {
        let (a, c) = (self.prev[b] as usize, self.next[b] as usize);
        self.next[a] = c as u32;
        self.prev[c] = a as u32;
        self.alive[b] = false;
        for k in [a, c] {
            if self.reflex[k] && self.turn(k) > 0.0 {
                self.reflex[k] = false;
            }
        }
    }
}

/// The reflex corners bucketed by a uniform grid over their bounding box, so the ear test
/// looks only at the corners near a candidate triangle.
struct Grid {
    min: DVec2,
    /// Cells per unit length, per axis.
    scale: DVec2,
    cols: usize,
    rows: usize,
    /// Start of each cell's corners in `items` (CSR layout, `cols·rows + 1` entries).
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Grid {
    fn new(pts: &[DVec2], reflex: &[bool]) -> Grid {
        let members: Vec<u32> = (0..pts.len() as u32).filter(|&i| reflex[i as usize]).collect();
        let (mut min, mut max) = (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY));
        for &i in &members {
            min = min.min(pts[i as usize]);
            max = max.max(pts[i as usize]);
        }
        // About one reflex corner per cell, square-ish cells, at most 2^20 cells.
        let side = ((members.len() as f64).sqrt().ceil() as usize).clamp(1, 1024);
        let extent = (max - min).max(DVec2::splat(f64::MIN_POSITIVE));
        let (cols, rows) = if extent.x >= extent.y {
            (side, ((side as f64 * extent.y / extent.x).ceil() as usize).clamp(1, side))
        } else {
            (((side as f64 * extent.x / extent.y).ceil() as usize).clamp(1, side), side)
        };
        let scale = DVec2::new(cols as f64 / extent.x, rows as f64 / extent.y);
        let mut grid =
            Grid { min, scale, cols, rows, starts: vec![0; cols * rows + 1], items: Vec::new() };
        if members.is_empty() {
            return grid;
        }
        let cell_of: Vec<usize> = members.iter().map(|&i| grid.cell(pts[i as usize])).collect();
        for &c in &cell_of {
            grid.starts[c + 1] += 1;
        }
        for c in 0..cols * rows {
            grid.starts[c + 1] += grid.starts[c];
        }
        let mut fill = grid.starts.clone();
        grid.items = vec![0; members.len()];
        for (&i, &c) in members.iter().zip(&cell_of) {
            grid.items[fill[c] as usize] = i;
            fill[c] += 1;
        }
        grid
    }

    fn column(&self, x: f64) -> usize {
        (((x - self.min.x) * self.scale.x).max(0.0) as usize).min(self.cols - 1)
    }

    fn row(&self, y: f64) -> usize {
        (((y - self.min.y) * self.scale.y).max(0.0) as usize).min(self.rows - 1)
    }

    fn cell(&self, p: DVec2) -> usize {
        self.row(p.y) * self.cols + self.column(p.x)
    }

    /// Whether a reflex corner of `ring` other than `a`, `b`, `c` lies in the closed triangle
    /// `a b c` (counter-clockwise). Corners at the same place as one of the three (a repeated
    /// vertex, a keyhole's bridge) do not count: they touch the triangle, not enter it.
    fn blocks(&self, ring: &Ring, [a, b, c]: [usize; 3]) -> bool {
        if self.items.is_empty() {
            return false;
        }
        let (pa, pb, pc) = (ring.pts[a], ring.pts[b], ring.pts[c]);
        let lo = pa.min(pb).min(pc);
        let hi = pa.max(pb).max(pc);
        if hi.x < self.min.x || hi.y < self.min.y {
            return false;
        }
        for row in self.row(lo.y)..=self.row(hi.y) {
            let first = row * self.cols;
            let span = self.starts[first + self.column(lo.x)] as usize
                ..self.starts[first + self.column(hi.x) + 1] as usize;
            for &i in &self.items[span] {
                let i = i as usize;
                if i == a || i == b || i == c || !ring.alive[i] || !ring.reflex[i] {
                    continue;
                }
                let p = ring.pts[i];
                if p.x < lo.x
                    || p.x > hi.x
                    || p.y < lo.y
                    || p.y > hi.y
                    || p == pa
                    || p == pb
                    || p == pc
                {
                    continue;
                }
                if orient(pa, pb, p) >= 0.0 && orient(pb, pc, p) >= 0.0 && orient(pc, pa, p) >= 0.0
                {
                    return true;
                }
            }
        }
        false
    }
}

/// How many times the walk may go round the ring without finding an ear before the rest is
/// clipped without the containment test: a simple polygon never gets stuck (only rounding
/// can stop it); a self-intersecting one may get stuck at every corner, and each stuck round
/// costs a walk of the ring, so this bounds the cost at `O(n · STUCK_ROUNDS)` extra tests.
const STUCK_ROUNDS: usize = 16;

/// The walk's state once only clockwise corners are left (see [`forced_corner`]).
const HOPELESS: usize = usize::MAX;

/// Triangles (counter-clockwise, as corner numbers) of the counter-clockwise polygon `pts`
/// of at least 4 corners: `n − 2` of them, every corner used, by ear clipping.
///
/// For a simple polygon every triangle is counter-clockwise or degenerate and the triangles
/// tile it (their areas sum to its area). When no ear is left (a self-intersecting outline
/// or rounding), the corner clipped is, in order of preference: one with no turn (its
/// triangle has no area, the outline keeps its shape), else the convex one with the widest
/// triangle, else any corner (the rest of the outline is clockwise: no triangulation of it
/// keeps the polygon's side).
pub(super) fn ear_clip(pts: &[DVec2]) -> Vec<[usize; 3]> {
    let n = pts.len();
    let mut ring = Ring {
        pts,
        prev: (0..n).map(|i| ((i + n - 1) % n) as u32).collect(),
        next: (0..n).map(|i| ((i + 1) % n) as u32).collect(),
        alive: vec![true; n],
        reflex: vec![false; n],
        twins: twins(pts),
    };
    let mut tris = Vec::with_capacity(n - 2);
    let (mut left, mut b) = remove_flat_corners(&mut ring, &mut tris);
    for k in 0..n {
        ring.reflex[k] = ring.alive[k] && ring.turn(k) <= 0.0;
    }
    let grid = Grid::new(pts, &ring.reflex);
    let (mut steps, mut stuck) = (0usize, 0usize);
    while left > 3 {
        let (a, c) = (ring.prev[b] as usize, ring.next[b] as usize);
        let turn = ring.turn(b);
        let ear = match stuck {
            0..STUCK_ROUNDS => ring.is_ear(&grid, b),
            // Relaxed: any corner whose triangle does not face away.
            HOPELESS => true,
            _ => turn >= 0.0,
        };
        if ear {
            tris.push([a, b, c]);
            ring.unlink(b);
            left -= 1;
            // Only `a` and `c` changed: `a` may have become an ear.
            (b, steps) = (a, 0);
            continue;
        }
        b = c;
        steps += 1;
        if steps > left {
            let forced = forced_corner(&ring, b);
            let (a, c) = (ring.prev[forced] as usize, ring.next[forced] as usize);
            // No corner is left that keeps the polygon's side: clip the rest in order.
            stuck = if ring.turn(forced) < 0.0 { HOPELESS } else { (stuck + 1).min(STUCK_ROUNDS) };
            tris.push([a, forced, c]);
            ring.unlink(forced);
            left -= 1;
            (b, steps) = (a, 0);
        }
    }
    let c = ring.next[b] as usize;
    tris.push([ring.prev[b] as usize, b, c]);
    tris
}

/// Clips, before any ear, every corner that adds nothing to the outline's shape: a corner at
/// the same place as a neighbour (a vertex repeated in a row) and the tip of a spike (no turn,
/// the outline going back the way it came). Each gives a triangle of no area, so the outline
/// left is the same region; what is left has no such corner, so the ear test need not handle
/// them (earcut's `filterPoints` removes the same corners; here they stay in the
/// triangulation, which must use every corner). Returns the corners left (at least 3) and
/// one of them. `O(n)`: each clip steps back one corner.
fn remove_flat_corners(ring: &mut Ring, tris: &mut Vec<[usize; 3]>) -> (usize, usize) {
    let n = ring.pts.len();
    let (mut left, mut b, mut kept) = (n, 0usize, 0usize);
    while left > 3 && kept <= left {
        let (a, c) = (ring.prev[b] as usize, ring.next[b] as usize);
        let (pa, pb, pc) = (ring.pts[a], ring.pts[b], ring.pts[c]);
        let flat = pa == pb || pb == pc || (ring.turn(b) == 0.0 && (pa - pb).dot(pc - pb) > 0.0);
        if flat {
            tris.push([a, b, c]);
            ring.unlink(b);
            left -= 1;
            (b, kept) = (a, 0);
        } else {
            (b, kept) = (c, kept + 1);
        }
    }
    (left, b)
}

/// The corner to clip when a whole round found no ear (see [`ear_clip`]): a corner with no
/// turn, else the convex corner of largest turn, else `start`.
fn forced_corner(ring: &Ring, start: usize) -> usize {
    let mut best: Option<(f64, usize)> = None;
    let mut b = start;
    loop {
        let turn = ring.turn(b);
        if turn == 0.0 {
            return b;
        }
        if turn > 0.0 && best.is_none_or(|(t, _)| turn > t) {
            best = Some((turn, b));
        }
        b = ring.next[b] as usize;
        if b == start {
            return best.map_or(start, |(_, b)| b);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Property tests on generated polygons. Every check is a fact about the polygon that holds
    //! for any triangulation that tiles it, computed without the triangulation: the outline's
    //! area (shoelace / Newell) and its corner count.
    use super::super::{newell_normal, triangulate};
    use glam::{DMat3, DVec3};
    use proptest::prelude::*;
    use std::f64::consts::TAU;

    /// Checks `triangulate` on `p` (the whole slice is the polygon): `n − 2` triangles using
    /// every corner, none facing against the Newell normal, and the sum of their *unsigned*
    /// areas equal to the outline's area (a fold adds area twice: once each way).
    fn check_tiles(p: &[DVec3]) {
        let poly: Vec<u32> = (0..p.len() as u32).collect();
        let tris = triangulate(p, &poly);
        assert_eq!(tris.len(), p.len() - 2, "n − 2 triangles");
        let mut used = vec![false; p.len()];
        tris.iter().flatten().for_each(|&c| used[c] = true);
        assert!(used.iter().all(|&u| u), "every corner used");
        let newell = newell_normal(p, &poly);
        let area = newell.length() / 2.0;
        let normal = newell.normalize();
        let scale = p.iter().fold(0.0f64, |m, q| m.max(q.length())).max(1.0);
        let signed: Vec<f64> = tris
            .iter()
            .map(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).dot(normal) / 2.0)
            .collect();
        let worst = signed.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(worst >= -1e-9 * scale * scale, "a triangle faces against the polygon: {worst}");
        let unsigned: f64 = signed.iter().map(|a| a.abs()).sum();
        assert!(
            (unsigned - area).abs() <= 1e-9 * area.max(scale * scale),
            "triangles cover {unsigned}, the polygon is {area}"
        );
    }

    fn flat(points: impl IntoIterator<Item = (f64, f64)>) -> Vec<DVec3> {
        points.into_iter().map(|(x, y)| DVec3::new(x, y, 0.0)).collect()
    }

    /// A polygon star-shaped around the origin, counter-clockwise: corner `k` at the angle
    /// the steps before it add up to (scaled to a full turn), radius `r`. `None` when a step
    /// spans half a turn or more (the outline could then cross itself) or two corners meet.
    fn star(steps_radii: &[(f64, f64)]) -> Option<Vec<DVec3>> {
        let total: f64 = steps_radii.iter().map(|s| s.0).sum();
        let largest = steps_radii.iter().map(|s| s.0).fold(0.0, f64::max);
        if largest * TAU / total >= 0.95 * std::f64::consts::PI {
            return None;
        }
        let mut angle = 0.0;
        let pts = steps_radii.iter().map(|&(step, r)| {
            let here = angle;
            angle += step * TAU / total;
            (r * here.cos(), r * here.sin())
        });
        Some(flat(pts))
    }

    /// A spiral band of `turns` turns: out along `r = 1 + θ/τ`, back along the arm `width`
    /// inside it (`width` < 1, so the arms never meet).
    fn spiral(corners_per_arm: usize, turns: f64, width: f64) -> Vec<DVec3> {
        let theta = |k: usize| turns * TAU * k as f64 / (corners_per_arm - 1) as f64;
        let outer = (0..corners_per_arm).map(|k| (theta(k), 1.0 + theta(k) / TAU + width));
        let inner = (0..corners_per_arm).rev().map(|k| (theta(k), 1.0 + theta(k) / TAU));
        flat(outer.chain(inner).map(|(t, r)| (r * t.cos(), r * t.sin())))
    }

    /// A comb: `heights.len()` teeth of width 1 with gaps of width 1 on a base strip 0 ≤ y ≤ 1,
    /// listed counter-clockwise.
    fn comb(heights: &[f64]) -> Vec<DVec3> {
        let mut pts = vec![(0.0, 0.0), (2.0 * heights.len() as f64 - 1.0, 0.0)];
        for (t, h) in heights.iter().enumerate().rev() {
            let x = 2.0 * t as f64;
            pts.extend([(x + 1.0, 1.0), (x + 1.0, 1.0 + h), (x, 1.0 + h), (x, 1.0)]);
        }
        pts.pop();
        pts.pop();
        pts.push((0.0, 1.0 + heights[0]));
        // Corner (0, 1) of the first tooth's left side is on the outline edge (0,0)–(0,1+h):
        // drop it and close along x = 0.
        flat(pts)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn random_stars_are_tiled(sr in prop::collection::vec((0.01f64..1.0, 0.05f64..1.0), 4..300)) {
            let p = star(&sr);
            prop_assume!(p.is_some());
            check_tiles(&p.unwrap());
        }

        #[test]
        fn spirals_are_tiled(corners in 8usize..600, turns in 0.5f64..6.0, width in 0.05f64..0.9) {
            check_tiles(&spiral(corners, turns, width));
        }

        #[test]
        fn combs_are_tiled(heights in prop::collection::vec(0.01f64..50.0, 2..200)) {
            check_tiles(&comb(&heights));
        }

        #[test]
        fn tilted_non_planar_stars_are_tiled(
            sr in prop::collection::vec((0.01f64..1.0, 0.3f64..1.0), 5..100),
            noise in prop::collection::vec(-1e-3f64..1e-3, 100),
            axis in (-1.0f64..1.0, -1.0f64..1.0, 0.1f64..1.0),
            angle in 0.0..TAU,
        ) {
            // Lifted off its plane by up to 0.1 % of its size, then turned in space: the
            // projection on the Newell plane stays the star, so it must tile it.
            let turn = DMat3::from_axis_angle(DVec3::new(axis.0, axis.1, axis.2).normalize(), angle);
            let shape = star(&sr);
            prop_assume!(shape.is_some());
            let p: Vec<DVec3> = shape
                .unwrap()
                .iter()
                .enumerate()
                .map(|(k, q)| turn * DVec3::new(q.x, q.y, noise[k % noise.len()]))
                .collect();
            check_tiles(&p);
        }

        #[test]
        fn keyholes_with_repeated_corners_are_tiled(
            sr in prop::collection::vec((0.01f64..1.0, 0.1f64..0.4), 3..60),
            outer in 4usize..40,
        ) {
            // An outer circle (counter-clockwise) joined to a star-shaped hole (clockwise)
            // by a bridge whose two ends are each listed twice: the outline of a polygon with
            // a hole, as exporters write one.
            let hole = star(&sr);
            prop_assume!(hole.is_some());
            let hole = hole.unwrap();
            let start = hole
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.x.total_cmp(&b.1.x))
                .map(|(k, _)| k)
                .unwrap();
            let mut p: Vec<DVec3> = (0..=outer)
                .map(|k| {
                    let t = TAU * k as f64 / outer as f64;
                    DVec3::new(t.cos(), t.sin(), 0.0)
                })
                .collect();
            // Walk the hole clockwise from its right-most corner, back to it, then to the
            // outer start again (repeated corners: the outer (1, 0) and the hole's start).
            for k in 0..=hole.len() {
                p.push(hole[(start + hole.len() - k % hole.len()) % hole.len()]);
            }
            check_tiles(&p);
        }
    }

    /// `p` with a zero-width slit at each listed corner `k` (taken modulo the corner count):
    /// the corner, a tip at `depth` of the way from the corner towards `towards(k)`, and the
    /// corner again — a crack into the polygon for `0 < depth < 1` when `towards(k)` sees the
    /// corner from inside, a spike out of it for `depth < 0` when the ray away from it leaves.
    fn slit(p: &[DVec3], at: &[(usize, f64)], towards: impl Fn(usize) -> DVec3) -> Vec<DVec3> {
        let mut out = Vec::new();
        for (k, &q) in p.iter().enumerate() {
            out.push(q);
            for &(_, depth) in at.iter().filter(|s| s.0 % p.len() == k) {
                out.push(q + (towards(k) - q) * depth);
                out.push(q);
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn slits_and_spikes_with_repeated_corners_are_tiled(
            sr in prop::collection::vec((0.01f64..1.0, 0.3f64..1.0), 4..80),
            at in prop::collection::vec((0usize..80, -0.5f64..0.5), 1..6),
        ) {
            let shape = star(&sr);
            prop_assume!(shape.is_some());
            // A star is star-shaped around the origin: the segment from any corner to the
            // origin is inside it and the ray beyond the corner outside.
            check_tiles(&slit(&shape.unwrap(), &at, |_| DVec3::ZERO));
        }

        #[test]
        fn combs_with_slits_are_tiled(
            heights in prop::collection::vec(0.5f64..20.0, 2..100),
            at in prop::collection::vec((0usize..400, -0.5f64..0.9), 1..6),
        ) {
            // Slits straight down into a tooth from its top corners, spikes straight up.
            let p = comb(&heights);
            let tops: Vec<(usize, f64)> = at
                .iter()
                .map(|&(k, d)| (k % p.len(), d))
                .filter(|&(k, _)| p[k].y > 1.0)
                .collect();
            check_tiles(&slit(&p, &tops, |k| DVec3::new(p[k].x, 1.0, 0.0)));
        }
    }

    #[test]
    fn large_spiral_and_comb_of_25000_corners_are_tiled() {
        check_tiles(&spiral(12_500, 40.0, 0.5));
        let heights: Vec<f64> = (0..6_250).map(|k| 1.0 + (k % 17) as f64).collect();
        check_tiles(&comb(&heights));
    }

    #[test]
    fn a_self_crossing_bow_tie_keeps_its_convex_corners_first() {
        // A bow tie (0,0) (2,2) (2,0) (0,2) with an extra corner: its Newell area is zero…
        // …so it is fanned; this one has one loop bigger than the other, so a normal exists,
        // and no triangulation can keep every triangle on the polygon's side. Facts checked:
        // n − 2 triangles, every corner used, the triangles' signed areas sum to the outline's
        // (true of any triangulation by clipping).
        let p = flat([(0.0, 0.0), (3.0, 3.0), (3.0, 0.0), (0.0, 2.0), (-1.0, 1.0)]);
        let poly: Vec<u32> = (0..5).collect();
        let tris = triangulate(&p, &poly);
        assert_eq!(tris.len(), 3);
        let n = newell_normal(&p, &poly);
        let sum: f64 = tris
            .iter()
            .map(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).dot(n.normalize()) / 2.0)
            .sum();
        assert!((sum - n.length() / 2.0).abs() < 1e-12);
    }
}
