"""hash_join.py - join two generated tables with gpuhash and check the result against DuckDB's join.

    python3 examples/python/hash_join.py [--orders N] [--lines N] [--overlap F] [--method join|find]
                                         [--backend auto|host|cuda] [--seed S] [--json OUT.json]

The tables are generated (DuckDB's TPC-H generator needs a download, and this runs offline), with
a fixed seed and TPC-H's shape: `orders` has n_orders rows of a unique uint32 key (a primary key,
spread over the whole 32-bit range) and a uint32 payload; `lineitem` has n_lines rows of a
foreign key: with probability `overlap` the key of an order drawn uniformly, otherwise a key that
no order has. So about overlap * n_lines rows find their order, and each finds exactly one.

The join, lineitem JOIN orders USING (key), gives (lineitem row, orders row, orders payload)
triples. gpuhash builds a table over orders and probes it with lineitem's keys, two ways:

  --method join (default): the join API. A multi-value hashgraph table of orders' keys, inserted
      without values so that each entry's value is its orders row (GH_CAP_INDEX_PAYLOADS), then
      Table.join(lineitem keys) = gh_join_count + gh_join: the (lineitem row, orders row) pairs,
      by lineitem row. It makes no assumption about the build side: an order key could repeat.
  --method find: a warpdrive map key -> orders row and one gh_find per lineitem row: a single
      probe pass instead of the join's three (count, and the join's own count and fill), right
      only because orders' key is unique, as a primary key is.

The check: the same join in DuckDB (`import duckdb`, the NumPy columns registered as tables),
both results sorted, compared exactly: the pair count and every triple. Without DuckDB the script
says so and compares against a NumPy sort-merge join instead.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple, Union

import numpy as np

import gpuhash
from example_common import PhaseClock, finish_report, device_name, pick_backend, to_host

DEFAULT_SEED = 20261127
WARPDRIVE_MAX_LOAD = 0.7  # --method find: the map's slots, at most this full


@dataclass
class Tables:
    """The generated columns (NumPy, host)."""

    orders_key: np.ndarray      # uint32, unique
    orders_payload: np.ndarray  # uint32
    lineitem_key: np.ndarray    # uint32
    seed: int


@dataclass
class JoinResult:
    """A join's output, sorted by (lineitem row, orders row): one triple per pair."""

    lineitem_row: np.ndarray  # uint64
    orders_row: np.ndarray    # uint64
    payload: np.ndarray       # uint32: orders' payload of the pair
    seconds: Dict[str, float] = field(default_factory=dict)


def distinct_keys(count: int, rng: np.random.Generator) -> np.ndarray:
    """count distinct uint32 keys that look random: 0 .. count-1 through a bijection of the 32-bit
    integers (an odd multiplier and an added constant, xor-shifts; each step is invertible modulo
    2^32, so distinct inputs stay distinct), its constants drawn from rng."""
    if count > 1 << 32:
        raise ValueError("%d distinct 32-bit keys asked for: there are 2^32" % count)
    multiplier_a, multiplier_b = (rng.integers(0, 1 << 31, size=2, dtype=np.uint64) * 2 + 1).astype(np.uint32)
    offset = rng.integers(0, 1 << 32, dtype=np.uint64).astype(np.uint32)
    x = np.arange(count, dtype=np.uint64).astype(np.uint32)
    x = x * multiplier_a + offset
    x ^= x >> np.uint32(15)
    x *= multiplier_b
    x ^= x >> np.uint32(13)
    return x


def generate(n_orders: int, n_lines: int, overlap: float = 0.8, seed: int = DEFAULT_SEED) -> Tables:
    """orders (unique keys, payloads) and lineitem (foreign keys, a share `overlap` of them
    present in orders), reproducible from the seed."""
    if n_orders < 1 or n_lines < 0 or not 0.0 <= overlap <= 1.0:
        raise ValueError("need n_orders >= 1, n_lines >= 0 and 0 <= overlap <= 1 (got %d, %d, %g)"
                         % (n_orders, n_lines, overlap))
    if 2 * n_orders > 1 << 32:
        raise ValueError("n_orders %d: at most 2^31, so that as many absent keys exist" % n_orders)
    rng = np.random.default_rng(seed)
    # The first n_orders keys are orders'; the next n_orders are the keys no order has.
    keys = distinct_keys(2 * n_orders, rng)
    orders_key, absent_key = keys[:n_orders], keys[n_orders:]
    orders_payload = rng.integers(0, 1 << 32, size=n_orders, dtype=np.uint64).astype(np.uint32)
    matched = rng.random(n_lines) < overlap
    picks = rng.integers(0, n_orders, size=n_lines)
    lineitem_key = np.where(matched, orders_key[picks], absent_key[picks])
    return Tables(orders_key=orders_key, orders_payload=orders_payload, lineitem_key=lineitem_key, seed=seed)


def sort_pairs(lineitem_row: np.ndarray, orders_row: np.ndarray, payload: np.ndarray,
               seconds: Dict[str, float]) -> JoinResult:
    order = np.lexsort((orders_row, lineitem_row))
    return JoinResult(lineitem_row=lineitem_row[order].astype(np.uint64),
                      orders_row=orders_row[order].astype(np.uint64), payload=payload[order].astype(np.uint32),
                      seconds=seconds)


def gpuhash_join(tables: Tables, method: str = "join", backend: str = "auto") -> Tuple[JoinResult, str]:
    """(the join by gpuhash, the backend it ran on). Timed: building the table (create + insert)
    and probing it, on data already on the table's side; not the payload gather or the sort."""
    resolved, xp = pick_backend(backend)
    orders_key = xp.asarray(tables.orders_key)
    lineitem_key = xp.asarray(tables.lineitem_key)
    n_orders = tables.orders_key.size
    if method == "join":
        clock = PhaseClock(xp)
        table = gpuhash.Table(design="hashgraph", variant="multivalue", key_dtype=np.uint32, value_dtype=np.uint32,
                              capacity=n_orders, backend=resolved)
        table.insert(orders_key)  # no values: each entry's value is its orders row
        clock.mark("build")
        lineitem_row, orders_row = table.join(lineitem_key, method="probe")
        clock.mark("probe")
    elif method == "find":
        orders_row_ids = xp.arange(n_orders, dtype=xp.uint32)
        clock = PhaseClock(xp)
        table = gpuhash.Table(design="warpdrive", key_dtype=np.uint32, value_dtype=np.uint32,
                              capacity=max(1024, int(n_orders / WARPDRIVE_MAX_LOAD) + 1), backend=resolved)
        table.insert(orders_key, orders_row_ids)
        clock.mark("build")
        found_row, found = table.find(lineitem_key)
        lineitem_row = xp.flatnonzero(found)
        orders_row = found_row[lineitem_row]
        clock.mark("probe")
    else:
        raise ValueError("method %r: 'join' (the join API) or 'find' (one lookup per row)" % method)
    seconds = clock.seconds()
    lineitem_row, orders_row = to_host(lineitem_row), to_host(orders_row)
    return sort_pairs(lineitem_row, orders_row, tables.orders_payload[orders_row], seconds), resolved


def duckdb_join(tables: Tables) -> JoinResult:
    """The same join by DuckDB, over the NumPy columns registered as two tables."""
    import duckdb

    connection = duckdb.connect()
    connection.register("orders", {"key": tables.orders_key, "payload": tables.orders_payload,
                                   "row_id": np.arange(tables.orders_key.size, dtype=np.uint64)})
    connection.register("lineitem", {"key": tables.lineitem_key,
                                     "row_id": np.arange(tables.lineitem_key.size, dtype=np.uint64)})
    start = time.perf_counter()
    columns = connection.sql("SELECT l.row_id AS l_row, o.row_id AS o_row, o.payload AS payload "
                             "FROM lineitem l JOIN orders o USING (key)").fetchnumpy()
    seconds = {"total": time.perf_counter() - start}
    connection.close()
    return sort_pairs(np.asarray(columns["l_row"]), np.asarray(columns["o_row"]), np.asarray(columns["payload"]),
                      seconds)


def numpy_join(tables: Tables) -> JoinResult:
    """The same join as a sort-merge join in NumPy: both sides sorted by key, each lineitem key's
    run of equal orders keys found by binary search (in key order, so each search starts where the
    last ended), every (row, run member) pair listed."""
    start = time.perf_counter()
    orders_by_key = np.argsort(tables.orders_key, kind="stable")
    orders_sorted = tables.orders_key[orders_by_key]
    lines_by_key = np.argsort(tables.lineitem_key, kind="stable")
    lines_sorted = tables.lineitem_key[lines_by_key]
    first = np.searchsorted(orders_sorted, lines_sorted, side="left")
    run_lengths = np.searchsorted(orders_sorted, lines_sorted, side="right") - first
    lineitem_row = np.repeat(lines_by_key, run_lengths)
    # Each pair's position within its run: its index minus the index of its run's first pair.
    run_starts = np.repeat(np.cumsum(run_lengths) - run_lengths, run_lengths)
    orders_row = orders_by_key[np.repeat(first, run_lengths) + (np.arange(lineitem_row.size) - run_starts)]
    seconds = {"total": time.perf_counter() - start}
    return sort_pairs(lineitem_row, orders_row, tables.orders_payload[orders_row], seconds)


def check_join(got: JoinResult, want: JoinResult, reference: str, seed: int) -> None:
    """Raises AssertionError unless both joins have the same triples."""
    where = "(seed %d, against %s)" % (seed, reference)
    assert got.lineitem_row.size == want.lineitem_row.size, "gpuhash found %d pairs, %s %d %s" % (
        got.lineitem_row.size, reference, want.lineitem_row.size, where)
    for name in ("lineitem_row", "orders_row", "payload"):
        differ = np.flatnonzero(getattr(got, name) != getattr(want, name))
        assert differ.size == 0, "%d pairs differ in %s, the first at sorted pair %d %s" % (
            differ.size, name, differ[0], where)


def reference_join(tables: Tables, reference: str) -> Tuple[JoinResult, str]:
    """(the reference's join, its name): "duckdb", "numpy", or "auto" (DuckDB when it imports)."""
    if reference not in ("auto", "duckdb", "numpy"):
        raise ValueError("reference %r: auto, duckdb or numpy" % reference)
    if reference in ("auto", "duckdb"):
        try:
            import duckdb
        except ImportError:
            if reference == "duckdb":
                raise
            print("DuckDB is not installed (pip install duckdb): checking against a NumPy sort-merge join instead")
        else:
            return duckdb_join(tables), "DuckDB %s" % duckdb.__version__
    return numpy_join(tables), "a NumPy sort-merge join"


def main(argv: Union[List[str], None] = None) -> Dict[str, Any]:
    parser = argparse.ArgumentParser(description="Join two generated tables with gpuhash, checked against DuckDB.")
    parser.add_argument("--orders", type=int, default=1_500_000, help="rows of orders (unique keys); TPC-H SF1: 1.5 M")
    parser.add_argument("--lines", type=int, default=6_000_000, help="rows of lineitem (foreign keys); TPC-H SF1: 6 M")
    parser.add_argument("--overlap", type=float, default=0.8, help="share of lineitem rows whose key is in orders")
    parser.add_argument("--method", default="join", choices=["join", "find"])
    parser.add_argument("--backend", default="auto", choices=["auto", "host", "cuda"])
    parser.add_argument("--reference", default="auto", choices=["auto", "duckdb", "numpy"])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--json", help="write the results to this JSON file")
    args = parser.parse_args(argv)

    tables = generate(args.orders, args.lines, args.overlap, args.seed)
    got, backend = gpuhash_join(tables, args.method, args.backend)
    want, reference = reference_join(tables, args.reference)
    print("orders %d rows, lineitem %d rows, overlap %g, seed %d" % (args.orders, args.lines, args.overlap, args.seed))
    print("pairs: %d" % got.lineitem_row.size)
    print("gpuhash (%s, %s, %s): %.4f s (build %.4f, probe %.4f)" % (
        args.method, backend, device_name(backend), got.seconds["total"], got.seconds["build"], got.seconds["probe"]))
    print("%s: %.4f s" % (reference, want.seconds["total"]))
    check_join(got, want, reference, args.seed)
    print("check: OK (%d pairs identical to %s's)" % (got.lineitem_row.size, reference))
    report = {"example": "hash_join", "orders": args.orders, "lines": args.lines, "overlap": args.overlap,
              "seed": args.seed, "method": args.method, "backend": backend, "device": device_name(backend),
              "pairs": int(got.lineitem_row.size),
              "seconds": got.seconds, "reference": reference, "reference_seconds": want.seconds["total"],
              "check": "OK"}
    return finish_report(report, args.json)


if __name__ == "__main__":
    main(sys.argv[1:])
