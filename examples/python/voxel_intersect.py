"""voxel_intersect.py - the voxels two point clouds share, with gpuhash set tables.

    python3 examples/python/voxel_intersect.py [--points N] [--voxel F] [--backend auto|host|cuda]
                                               [--seed S] [--json OUT.json]

The point clouds are SYNTHETIC, generated with a fixed seed: two scans of one scene (a 20 m x 20 m
ground plane with spheres resting on it) from two scanner positions 12.6 m apart. A scan keeps the
surface points that face its scanner and lie within its range (occlusion is ignored), each
coordinate with Gaussian noise of 1 cm; the two scans draw their points independently, so they
overlap only in the middle of the scene, and only statistically.

Each point goes to its voxel floor(p / voxel) (x, y, z), packed into one uint64 key as three
21-bit fields, each index offset by 2^20 (so +-2^20 voxels per axis). Then:
  1. cloud A's voxel keys go into a set table (value_dtype=None): repeats collapse, the table
     holds A's occupied voxels;
  2. contains() tells, for each point of B, whether its voxel is occupied in A;
  3. the voxels of those points go into a second set table, whose export is the intersection.
Checked against NumPy: the first table's size against np.unique(A), step 2 against np.isin, the
intersection against np.intersect1d.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple, Union

import numpy as np

import gpuhash
from example_common import PhaseClock, finish_report, device_name, pick_backend, to_host

DEFAULT_SEED = 7
FIELD_BITS = 21
FIELD_OFFSET = 1 << (FIELD_BITS - 1)
GROUND_HALF_WIDTH = 10.0  # m: the plane spans [-10, 10] x [-10, 10] at z = 0
SPHERES = 12
SCANNERS = ((-6.0, -2.0, 1.8), (6.0, 2.0, 1.8))  # m: where scans A and B are taken from
SCAN_RANGE = 11.0  # m
NOISE = 0.01  # m: standard deviation of each coordinate's noise
WARPDRIVE_MAX_LOAD = 0.7  # the set tables' slots, at most this full


@dataclass
class Intersection:
    """What voxel_intersection found, on the host."""

    backend: str
    voxels_a: np.ndarray         # uint64 keys: each point of A's voxel ...
    voxels_b: np.ndarray         # ... and each point of B's
    occupied_a: int              # distinct voxels of A (the first table's size)
    b_in_a: np.ndarray           # bool per point of B: its voxel is occupied in A
    shared: np.ndarray           # uint64: the intersection's voxels (the second table's export)
    seconds: Dict[str, float] = field(default_factory=dict)


def make_scene(rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
    """(centres (SPHERES, 3), radii): spheres resting on the ground plane."""
    radii = rng.uniform(0.4, 1.5, size=SPHERES)
    xy = rng.uniform(-GROUND_HALF_WIDTH + 2, GROUND_HALF_WIDTH - 2, size=(SPHERES, 2))
    return np.column_stack([xy, radii]), radii


def scan(scene: Tuple[np.ndarray, np.ndarray], scanner: Tuple[float, float, float], points: int,
         rng: np.random.Generator) -> np.ndarray:
    """points surface points (float64, (points, 3)) that the scanner sees, noise added."""
    centres, radii = scene
    scanner_position = np.asarray(scanner)
    areas = np.concatenate([[(2 * GROUND_HALF_WIDTH) ** 2], 4 * math.pi * radii ** 2])
    kept: List[np.ndarray] = []
    have = 0
    while have < points:
        # Candidates uniform over the scene's surface: a surface drawn by its area, then a point on it.
        batch = 2 * (points - have) + 1024
        surface = rng.choice(areas.size, size=batch, p=areas / areas.sum())
        on_ground = surface == 0
        normals = rng.normal(size=(batch, 3))
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        sphere = np.maximum(surface - 1, 0)
        positions = centres[sphere] + radii[sphere, None] * normals
        ground_xy = rng.uniform(-GROUND_HALF_WIDTH, GROUND_HALF_WIDTH, size=(int(on_ground.sum()), 2))
        positions[on_ground] = np.column_stack([ground_xy, np.zeros(ground_xy.shape[0])])
        normals[on_ground] = (0.0, 0.0, 1.0)
        to_scanner = scanner_position - positions
        seen = (np.einsum("ij,ij->i", normals, to_scanner) > 0) & (np.linalg.norm(to_scanner, axis=1) < SCAN_RANGE)
        kept.append(positions[seen])
        have += int(seen.sum())
    cloud = np.concatenate(kept)[:points]
    return cloud + rng.normal(scale=NOISE, size=cloud.shape)


def generate(points: int, seed: int = DEFAULT_SEED) -> Tuple[np.ndarray, np.ndarray]:
    """The two scans A and B of the synthetic scene, points points each."""
    rng = np.random.default_rng(seed)
    scene = make_scene(rng)
    return scan(scene, SCANNERS[0], points, rng), scan(scene, SCANNERS[1], points, rng)


def voxel_keys(cloud: Any, voxel: float, xp: Any = np) -> Any:
    """Each point's voxel as a uint64 key: x, y, z indices offset by 2^20, 21 bits each, x highest."""
    cells = xp.floor(cloud / voxel).astype(xp.int64) + FIELD_OFFSET
    if cloud.shape[0] and (int(cells.min()) < 0 or int(cells.max()) >= 1 << FIELD_BITS):
        raise ValueError("voxel %g m: the cloud spans more than 2^%d voxels per axis" % (voxel, FIELD_BITS))
    cells = cells.astype(xp.uint64)
    return (cells[:, 0] << xp.uint64(2 * FIELD_BITS)) | (cells[:, 1] << xp.uint64(FIELD_BITS)) | cells[:, 2]


def voxel_intersection(cloud_a: np.ndarray, cloud_b: np.ndarray, voxel: float = 0.1, backend: str = "auto",
                       design: str = "warpdrive") -> Intersection:
    """The voxels both clouds occupy, by two gpuhash set tables (see the module's docstring). Timed:
    the table work, on voxel keys already on the table's side."""
    resolved, xp = pick_backend(backend)
    keys_a = voxel_keys(xp.asarray(cloud_a), voxel, xp)
    keys_b = voxel_keys(xp.asarray(cloud_b), voxel, xp)

    def new_set(most_keys: int) -> Any:
        capacity = max(1024, int(most_keys / WARPDRIVE_MAX_LOAD) + 1) if design == "warpdrive" else max(1024, most_keys)
        return gpuhash.Table(design=design, key_dtype=np.uint64, value_dtype=None, capacity=capacity, backend=resolved)

    clock = PhaseClock(xp)
    occupied = new_set(keys_a.size)
    occupied.insert(keys_a)
    occupied_a = len(occupied)
    clock.mark("build")
    b_in_a = occupied.contains(keys_b)
    clock.mark("probe")
    shared_keys = keys_b[b_in_a]
    shared_set = new_set(min(occupied_a, shared_keys.size))
    shared_set.insert(shared_keys)
    shared, _ = shared_set.export()
    clock.mark("collect")
    return Intersection(backend=resolved, voxels_a=to_host(keys_a), voxels_b=to_host(keys_b), occupied_a=occupied_a,
                        b_in_a=to_host(b_in_a), shared=shared, seconds=clock.seconds())


def check_intersection(result: Intersection, seed: int) -> Dict[str, int]:
    """Raises AssertionError where the tables disagree with NumPy; returns NumPy's voxel counts."""
    where = "(seed %d)" % seed
    distinct_a = np.unique(result.voxels_a)
    distinct_b = np.unique(result.voxels_b)
    assert result.occupied_a == distinct_a.size, "A's set holds %d voxels, np.unique %d %s" % (
        result.occupied_a, distinct_a.size, where)
    in_a = np.isin(result.voxels_b, distinct_a)
    differ = np.flatnonzero(result.b_in_a != in_a)
    assert differ.size == 0, "contains() and np.isin disagree on %d points of B, the first %d %s" % (
        differ.size, differ[0], where)
    want = np.intersect1d(distinct_a, distinct_b, assume_unique=True)
    got = np.sort(result.shared)
    assert np.array_equal(got, want), "the intersection has %d voxels, np.intersect1d %d (or other ones) %s" % (
        got.size, want.size, where)
    return {"voxels_a": int(distinct_a.size), "voxels_b": int(distinct_b.size), "shared": int(want.size)}


def main(argv: Union[List[str], None] = None) -> Dict[str, Any]:
    parser = argparse.ArgumentParser(description="Intersect the voxels of two synthetic point clouds with gpuhash.")
    parser.add_argument("--points", type=int, default=1_000_000, help="points per cloud")
    parser.add_argument("--voxel", type=float, default=0.1, help="voxel edge, m")
    parser.add_argument("--backend", default="auto", choices=["auto", "host", "cuda"])
    parser.add_argument("--design", default="warpdrive", help="a gpuhash design with set tables")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--json", help="write the results to this JSON file")
    args = parser.parse_args(argv)

    cloud_a, cloud_b = generate(args.points, args.seed)
    result = voxel_intersection(cloud_a, cloud_b, args.voxel, args.backend, args.design)
    counts = check_intersection(result, args.seed)
    share = float(result.b_in_a.mean()) if result.b_in_a.size else 0.0
    print("clouds: %d points each (synthetic, seed %d), voxel %g m" % (args.points, args.seed, args.voxel))
    print("voxels: A %d, B %d, shared %d (IoU %.3f); %.1f %% of B's points lie in A's voxels" % (
        counts["voxels_a"], counts["voxels_b"], counts["shared"],
        counts["shared"] / max(1, counts["voxels_a"] + counts["voxels_b"] - counts["shared"]), 100 * share))
    seconds = result.seconds
    print("tables (%s, %s, %s): %.4f s (build %.4f, probe %.4f, collect %.4f)" % (
        args.design, result.backend, device_name(result.backend), seconds["total"], seconds["build"],
        seconds["probe"], seconds["collect"]))
    print("check: OK (set size against np.unique, contains against np.isin, intersection against np.intersect1d)")
    report = {"example": "voxel_intersect", "points": args.points, "voxel": args.voxel, "seed": args.seed,
              "backend": result.backend, "design": args.design, "device": device_name(result.backend),
              **counts, "b_points_in_a": share, "seconds": seconds,
              "check": "OK"}
    return finish_report(report, args.json)


if __name__ == "__main__":
    main(sys.argv[1:])
