"""kmer_count.py - count the canonical k-mers of a genome with a gpuhash counting table.

    python3 examples/python/kmer_count.py GENOME.fna[.gz|.xz] [--k 31] [--backend auto|host|cuda] [--json OUT.json]

Reads a FASTA file (plain, gzip or xz; any number of records), encodes each base in 2 bits
(A=0, C=1, G=2, T=3), forms every k-mer of every record (a k-mer that would span two records or
contain a base other than ACGT, an N say, is dropped) and keeps the canonical form of each: the
smaller of the k-mer and its reverse complement, so that both strands of the DNA count as one.
The k-mers (uint64, k <= 32) go into a gpuhash map with value 1 and the duplicate policy "add",
so the table ends up holding each distinct k-mer with its number of occurrences; gh_export then
gives (k-mer, count) pairs.

With CuPy importable and a GPU that gpuhash can use, the k-mers go to the GPU as CuPy arrays and
the table lives there (backend "cuda"); otherwise NumPy arrays feed the host backend. The k-mers
are formed on the host with NumPy in both cases (a loop over the k positions of a window, each
step vectorised over the whole genome), and that time, like the file's reading, is not counted.

The counts are checked against NumPy: exactly (np.unique over every k-mer) up to
FULL_CHECK_LIMIT k-mers; above it, on a slice (the first SLICE_KMERS k-mers counted by np.unique
and by a second table of that slice alone, compared exactly, and the big table's counts of the
slice's k-mers at least the slice's), plus, always, counts summing to the number of k-mers.

As a module: count_kmers(path_or_text, k=31, backend="auto", design="warpdrive") returns a
KmerCount; check_counts(result) raises AssertionError on any mismatch.
"""
from __future__ import annotations

import argparse
import gzip
import lzma
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple, Union

import numpy as np

import gpuhash
from example_common import PhaseClock, finish_report, device_name, pick_backend

FULL_CHECK_LIMIT = 20_000_000  # k-mers: np.unique of them all takes a few seconds at most
SLICE_KMERS = 200_000
SAMPLE_KMERS = 100_000  # above FULL_CHECK_LIMIT: k-mers drawn from the whole genome, looked up in the export
# warpdrive's capacity is its slot count: sized so that the table is at most this full even when
# every k-mer is distinct (probe sequences stay short well below warpdrive's 0.99 limit).
WARPDRIVE_MAX_LOAD = 0.7

# Byte -> 2-bit base code; INVALID for everything else (N, IUPAC codes, the record separator).
INVALID = 4
BASE_CODES = np.full(256, INVALID, dtype=np.uint8)
for _code, _letters in enumerate((b"Aa", b"Cc", b"Gg", b"Tt")):
    for _letter in _letters:
        BASE_CODES[_letter] = _code
# Put between records so that no k-mer spans two of them (it is not a base: the window is dropped).
RECORD_SEPARATOR = b"|"

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"


@dataclass
class KmerCount:
    """What count_kmers found: the distinct canonical k-mers and their counts, and what it took."""

    k: int
    backend: str          # "host" or "cuda": where the table ran
    design: str
    records: int          # FASTA records read
    genome_bases: int     # letters of all records (N included)
    kmers: np.ndarray     # every canonical k-mer of the input, in sequence order (uint64, host)
    keys: np.ndarray      # the table's export: distinct k-mers (uint64) ...
    counts: np.ndarray    # ... and their counts (uint32), same order
    seconds: Dict[str, float] = field(default_factory=dict)  # create, insert, export: table time only
    table: Any = None     # the gpuhash.Table itself, for further lookups


def read_fasta(path_or_text: Union[str, bytes, os.PathLike]) -> Tuple[bytes, int]:
    """(sequence, records): every record's letters, records joined by RECORD_SEPARATOR.

    path_or_text: FASTA text (bytes, or a str starting with ">"), or the path of a FASTA file,
    plain, gzip- or xz-compressed (told by the file's first bytes, not its name)."""
    if isinstance(path_or_text, bytes):
        data = path_or_text
    elif isinstance(path_or_text, str) and path_or_text.startswith(">"):
        data = path_or_text.encode("ascii")
    else:
        with open(path_or_text, "rb") as raw:
            magic = raw.read(len(XZ_MAGIC))
        opener = gzip.open if magic.startswith(GZIP_MAGIC) else lzma.open if magic == XZ_MAGIC else open
        with opener(path_or_text, "rb") as f:
            data = f.read()
    pieces: List[bytes] = []
    records = 0
    for line in data.split(b"\n"):
        line = line.strip()
        if line.startswith(b">"):
            records += 1
            pieces.append(RECORD_SEPARATOR)
        elif line and not line.startswith(b";"):  # ";" lines: comments of old FASTA files
            if records == 0:
                raise ValueError("FASTA: sequence before the first '>' header line")
            pieces.append(line)
    if records == 0:
        raise ValueError("FASTA: no '>' header line: not a FASTA file")
    return b"".join(pieces), records


def canonical_kmers(sequence: bytes, k: int) -> np.ndarray:
    """Every canonical k-mer of the sequence, in order, as uint64 (2 bits a base, the first base
    in the highest bits); windows holding anything but ACGT are dropped."""
    if not 1 <= k <= 32:
        raise ValueError("k = %d: k-mers are packed 2 bits a base into 64 bits, so 1 <= k <= 32" % k)
    codes = BASE_CODES[np.frombuffer(sequence, dtype=np.uint8)]
    windows = codes.size - k + 1
    if windows <= 0:
        return np.empty(0, dtype=np.uint64)
    invalid_before = np.zeros(codes.size + 1, dtype=np.int64)
    np.cumsum(codes == INVALID, out=invalid_before[1:])
    valid = invalid_before[k:] == invalid_before[:windows]  # no invalid letter in positions i .. i+k-1
    bases = np.where(codes == INVALID, 0, codes).astype(np.uint64)
    forward = np.zeros(windows, dtype=np.uint64)
    reverse = np.zeros(windows, dtype=np.uint64)
    three, two = np.uint64(3), np.uint64(2)
    # Window position j: the forward k-mer shifts it in at the bottom; in the reverse complement
    # its complement (3 - code) sits at position k-1-j from the top, that is 2j bits up.
    for j in range(k):
        base = bases[j:j + windows]
        forward <<= two
        forward |= base
        reverse |= (three - base) << np.uint64(2 * j)
    return np.minimum(forward, reverse)[valid]


def decode_kmer(kmer: int, k: int) -> str:
    """The ACGT string of a packed k-mer."""
    return "".join("ACGT"[(int(kmer) >> (2 * (k - 1 - j))) & 3] for j in range(k))


def table_capacity(design: str, keys: int) -> int:
    """The capacity argument for at most `keys` distinct keys: warpdrive counts slots, the other
    designs keys (and grow, or size their slots, from there)."""
    if design == "warpdrive":
        return max(1024, math.ceil(keys / WARPDRIVE_MAX_LOAD))
    return max(1024, keys)


def count_in_table(kmers: np.ndarray, backend: str, xp: Any, design: str) -> Tuple[Any, np.ndarray, np.ndarray,
                                                                                   Dict[str, float]]:
    """(table, keys, counts, seconds): kmers counted in a new table; the k-mers are moved to the
    table's side (CuPy on the GPU) before the clock starts."""
    device_kmers = xp.asarray(kmers)
    ones = xp.ones(kmers.size, dtype=xp.uint32)
    clock = PhaseClock(xp)
    table = gpuhash.Table(design=design, key_dtype=np.uint64, value_dtype=np.uint32,
                          capacity=table_capacity(design, kmers.size), backend=backend)
    clock.mark("create")
    table.insert(device_kmers, ones, policy="add")
    clock.mark("insert")
    keys, counts = table.export()
    clock.mark("export")
    return table, keys, counts, clock.seconds()


def count_kmers(path_or_text: Union[str, bytes, os.PathLike], k: int = 31, backend: str = "auto",
                design: str = "warpdrive") -> KmerCount:
    """Counts the canonical k-mers of a FASTA file or text (see read_fasta) in a gpuhash table."""
    sequence, records = read_fasta(path_or_text)
    kmers = canonical_kmers(sequence, k)
    resolved, xp = pick_backend(backend)
    table, keys, counts, seconds = count_in_table(kmers, resolved, xp, design)
    return KmerCount(k=k, backend=resolved, design=design, records=records,
                     genome_bases=len(sequence) - records * len(RECORD_SEPARATOR), kmers=kmers, keys=keys,
                     counts=counts, seconds=seconds, table=table)


def sorted_by_key(keys: np.ndarray, counts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    return keys[order], counts[order]


def check_counts(result: KmerCount, full_check_limit: int = FULL_CHECK_LIMIT, slice_kmers: int = SLICE_KMERS) -> str:
    """Raises AssertionError where the table's counts disagree with NumPy's; returns what was checked."""
    total = int(result.counts.sum(dtype=np.uint64))
    assert total == result.kmers.size, "the counts sum to %d, there are %d k-mers" % (total, result.kmers.size)
    if result.kmers.size <= full_check_limit:
        want_keys, want_counts = np.unique(result.kmers, return_counts=True)
        got_keys, got_counts = sorted_by_key(result.keys, result.counts)
        assert np.array_equal(got_keys, want_keys), \
            "distinct k-mers: the table has %d, np.unique %d (or other ones)" % (got_keys.size, want_keys.size)
        mismatches = np.flatnonzero(got_counts != want_counts)
        assert mismatches.size == 0, "%d k-mers counted differently, the first %s: table %d, np.unique %d" % (
            mismatches.size, decode_kmer(got_keys[mismatches[0]], result.k), got_counts[mismatches[0]],
            want_counts[mismatches[0]])
        return "all %d k-mers against np.unique" % result.kmers.size
    piece = result.kmers[:slice_kmers]
    want_keys, want_counts = np.unique(piece, return_counts=True)
    resolved, xp = pick_backend(result.backend)
    _, keys, counts, _ = count_in_table(piece, resolved, xp, result.design)
    got_keys, got_counts = sorted_by_key(keys, counts)
    assert np.array_equal(got_keys, want_keys) and np.array_equal(got_counts, want_counts), \
        "a table of the first %d k-mers disagrees with np.unique of them" % piece.size
    in_whole, found = result.table.find(want_keys)  # NumPy keys: NumPy results, whatever the backend
    assert found.all(), "%d k-mers of the slice are missing from the whole count" % int((~found).sum())
    assert (in_whole >= want_counts).all(), "a k-mer counted fewer times in the whole genome than in a slice of it"
    # Beyond the slice: the export holds each k-mer once with a count, and k-mers drawn from all
    # over the genome are all in it (a count moved onto a wrong key would leave the sum as it is).
    got_keys = np.sort(result.keys)
    assert got_keys.size == 0 or not (got_keys[1:] == got_keys[:-1]).any(), "a k-mer exported twice"
    assert result.counts.size == 0 or int(result.counts.min()) >= 1, "a k-mer exported with a count of 0"
    sample = result.kmers[np.random.default_rng(result.kmers.size).integers(0, result.kmers.size, SAMPLE_KMERS)]
    sampled = np.searchsorted(got_keys, sample)
    assert (sampled < got_keys.size).all() and (got_keys[np.minimum(sampled, got_keys.size - 1)] == sample).all(), \
        "a k-mer of the genome is missing from the export"
    return ("a slice of %d k-mers against np.unique; %d k-mers from all over the genome exported; counts sum to "
            "the %d k-mers" % (piece.size, SAMPLE_KMERS, result.kmers.size))


def most_frequent(result: KmerCount, top: int = 5) -> List[Tuple[str, int]]:
    """The top most frequent k-mers (ties: smaller k-mer first) as (ACGT, count)."""
    order = np.lexsort((result.keys, -result.counts.astype(np.int64)))[:top]
    return [(decode_kmer(result.keys[i], result.k), int(result.counts[i])) for i in order]


def main(argv: Union[List[str], None] = None) -> Dict[str, Any]:
    parser = argparse.ArgumentParser(description="Count the canonical k-mers of a FASTA file with gpuhash.")
    parser.add_argument("fasta", help="FASTA file: plain, .gz or .xz")
    parser.add_argument("--k", type=int, default=31)
    parser.add_argument("--backend", default="auto", choices=["auto", "host", "cuda"])
    parser.add_argument("--design", default="warpdrive", help="a gpuhash design whose maps take the policy 'add'")
    parser.add_argument("--json", help="write the results to this JSON file")
    args = parser.parse_args(argv)

    result = count_kmers(args.fasta, k=args.k, backend=args.backend, design=args.design)
    top = most_frequent(result)
    print("genome: %s: %d records, %d bases" % (args.fasta, result.records, result.genome_bases))
    print("k = %d: %d k-mers, %d distinct (canonical)" % (result.k, result.kmers.size, result.keys.size))
    for kmer, count in top:
        print("  %s  %d" % (kmer, count))
    seconds = result.seconds
    print("table (%s, %s, %s): %.4f s (create %.4f, insert %.4f, export %.4f)" % (
        result.design, result.backend, device_name(result.backend), seconds["total"], seconds["create"],
        seconds["insert"], seconds["export"]))
    checked = check_counts(result)
    print("check: OK (%s)" % checked)
    report = {"example": "kmer_count", "fasta": os.path.basename(args.fasta), "k": result.k,
              "backend": result.backend, "design": result.design, "device": device_name(result.backend),
              "records": result.records, "genome_bases": result.genome_bases,
              "kmers": int(result.kmers.size), "distinct_kmers": int(result.keys.size),
              "most_frequent": [{"kmer": kmer, "count": count} for kmer, count in top],
              "seconds": seconds, "check": "OK: " + checked}
    return finish_report(report, args.json)


if __name__ == "__main__":
    main(sys.argv[1:])
