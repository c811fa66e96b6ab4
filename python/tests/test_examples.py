"""The end-to-end examples of examples/python (docs/examples.md) on small inputs: k-mer counting,
the hash join (against DuckDB where it is installed, and always against NumPy) and the voxel
intersection. Each runs on the host backend and, where CuPy and a GPU are present, on the CUDA
backend. Seeds are fixed; the examples put them in their failure messages."""
import collections
import gzip
import json
import lzma
import os
import sys

import numpy as np
import pytest

import gpuhash

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import hash_join  # noqa: E402
import kmer_count  # noqa: E402
import voxel_intersect  # noqa: E402

SEED = 0x5EED


def gpu_ready():
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return gpuhash.cuda_available()


BACKENDS = ["host", pytest.param("cuda", marks=pytest.mark.skipif(not gpu_ready(), reason="no GPU here"))]


# ---- k-mer counting ---------------------------------------------------------------------------------

# Two records (no k-mer may span them), an N, soft-masked lowercase bases, a palindrome (its own
# reverse complement) and a line break inside a record.
SMALL_FASTA = """>first record
ACGTTGCAACGTNACGTACGTAAAC
GGTTTacgtacgtCCATGG
>second record
TTTACGTACGTAAAGGCCATGGACGTTGCA
;a comment line
"""


def reference_counts(fasta, k):
    """Canonical k-mer counts by strings: the lexicographic order of ACGT strings is the order of
    their 2-bit codes, so the smaller string is the canonical k-mer."""
    complement = str.maketrans("ACGT", "TGCA")
    records = [r.split("\n", 1)[1] for r in fasta.split(">")[1:]]
    counts = collections.Counter()
    for record in records:
        sequence = "".join(line for line in record.upper().split("\n") if not line.startswith(";"))
        for i in range(len(sequence) - k + 1):
            window = sequence[i:i + k]
            if set(window) <= set("ACGT"):
                counts[min(window, window.translate(complement)[::-1])] += 1
    return counts


def random_fasta(rng, records, length):
    parts = []
    for r in range(records):
        bases = "".join(rng.choice(list("ACGT"), size=length))
        parts.append(">r%d\n" % r + "\n".join(bases[i:i + 60] for i in range(0, length, 60)) + "\n")
    return "".join(parts)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", [1, 4, 6, 11])
def test_kmer_count_small_fasta_against_strings(backend, k):
    result = kmer_count.count_kmers(SMALL_FASTA, k=k, backend=backend)
    assert result.backend == backend and result.records == 2
    assert result.genome_bases == 25 + 19 + 30
    got = {kmer_count.decode_kmer(key, k): int(count) for key, count in zip(result.keys, result.counts)}
    assert got == dict(reference_counts(SMALL_FASTA, k))
    kmer_count.check_counts(result)


def test_kmer_count_32_mers_use_every_bit():
    fasta = ">a\n" + "T" * 40 + "\n>b\n" + "GGGGACGT" * 5 + "\n"
    result = kmer_count.count_kmers(fasta, k=32, backend="host")
    got = {kmer_count.decode_kmer(key, 32): int(count) for key, count in zip(result.keys, result.counts)}
    assert got == dict(reference_counts(fasta, 32))
    assert got["A" * 32] == 9  # TTT...T's reverse complement AAA...A is 0: the canonical form


@pytest.mark.parametrize("backend", BACKENDS)
def test_kmer_count_reads_plain_gzip_and_xz_files(tmp_path, backend):
    text = random_fasta(np.random.default_rng(SEED), records=3, length=5000)
    plain, gzipped, xzipped = tmp_path / "g.fna", tmp_path / "g.fna.gz", tmp_path / "g.fna.xz"
    plain.write_text(text)
    gzipped.write_bytes(gzip.compress(text.encode()))
    xzipped.write_bytes(lzma.compress(text.encode()))
    results = [kmer_count.count_kmers(str(path), k=21, backend=backend) for path in (plain, gzipped, xzipped)]
    for result in results:
        assert result.records == 3 and result.kmers.size == 3 * (5000 - 20)
        kmer_count.check_counts(result)
        assert np.array_equal(np.sort(result.keys), np.sort(results[0].keys))


@pytest.mark.parametrize("backend", BACKENDS)
def test_kmer_count_slice_check_of_a_large_input(backend):
    # Forced onto the path taken above FULL_CHECK_LIMIT: a second table of a slice, exactly.
    text = random_fasta(np.random.default_rng(SEED + 1), records=2, length=20000)
    result = kmer_count.count_kmers(text, k=13, backend=backend)
    assert "slice of 5000" in kmer_count.check_counts(result, full_check_limit=0, slice_kmers=5000)


def test_kmer_count_check_catches_a_wrong_count():
    result = kmer_count.count_kmers(random_fasta(np.random.default_rng(SEED + 2), 1, 3000), k=15, backend="host")
    result.counts[7] += 1
    result.counts[8] -= 1  # the sum still matches: only the comparison of counts can tell
    with pytest.raises(AssertionError, match="counted differently"):
        kmer_count.check_counts(result)


def test_kmer_count_refuses_bad_input():
    with pytest.raises(ValueError, match="1 <= k <= 32"):
        kmer_count.count_kmers(SMALL_FASTA, k=33, backend="host")
    with pytest.raises(ValueError, match="before the first '>'"):
        kmer_count.count_kmers(b"ACGT\n>r\nACGT\n", backend="host")
    with pytest.raises(ValueError, match="not a FASTA file"):
        kmer_count.count_kmers(b"\n", backend="host")


def test_kmer_count_command_line(tmp_path, capsys):
    fasta = tmp_path / "genome.fna"
    fasta.write_text(random_fasta(np.random.default_rng(SEED + 3), records=2, length=4000))
    out = tmp_path / "kmers.json"
    kmer_count.main([str(fasta), "--k", "17", "--backend", "host", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["kmers"] == 2 * (4000 - 16) and report["check"].startswith("OK")
    assert len(report["most_frequent"]) == 5 and set(report["seconds"]) == {"create", "insert", "export", "total"}
    assert "check: OK" in capsys.readouterr().out


# ---- the hash join --------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["join", "find"])
def test_hash_join_against_numpy(backend, method):
    tables = hash_join.generate(3000, 12000, overlap=0.8, seed=SEED)
    assert np.unique(tables.orders_key).size == 3000
    got, ran_on = hash_join.gpuhash_join(tables, method, backend)
    assert ran_on == backend
    assert abs(got.lineitem_row.size - 0.8 * 12000) < 400  # about `overlap` of the rows find their order
    hash_join.check_join(got, hash_join.numpy_join(tables), "numpy", SEED)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["join", "find"])
def test_hash_join_against_duckdb(backend, method):
    pytest.importorskip("duckdb")
    tables = hash_join.generate(3000, 12000, overlap=0.5, seed=SEED + 1)
    got, _ = hash_join.gpuhash_join(tables, method, backend)
    want, reference = hash_join.reference_join(tables, "duckdb")
    assert reference.startswith("DuckDB")
    hash_join.check_join(got, want, reference, SEED + 1)


def test_hash_join_with_repeated_build_keys():
    # The join API and the NumPy reference make no assumption of unique keys on the build side.
    rng = np.random.default_rng(SEED + 2)
    orders_key = rng.integers(0, 500, size=2000, dtype=np.uint64).astype(np.uint32)
    tables = hash_join.Tables(orders_key=orders_key, orders_payload=np.arange(2000, dtype=np.uint32),
                              lineitem_key=rng.integers(0, 700, size=3000, dtype=np.uint64).astype(np.uint32),
                              seed=SEED + 2)
    got, _ = hash_join.gpuhash_join(tables, "join", "host")
    want = hash_join.numpy_join(tables)
    hash_join.check_join(got, want, "numpy", SEED + 2)
    brute_force = sum(int((orders_key == key).sum()) for key in tables.lineitem_key)
    assert want.lineitem_row.size == brute_force


def test_hash_join_check_catches_a_wrong_pair():
    tables = hash_join.generate(500, 2000, seed=SEED + 3)
    got, _ = hash_join.gpuhash_join(tables, "join", "host")
    got.orders_row[10] ^= 1
    with pytest.raises(AssertionError, match="differ in orders_row"):
        hash_join.check_join(got, hash_join.numpy_join(tables), "numpy", SEED + 3)


def test_hash_join_generation_is_reproducible_and_checked():
    a, b = hash_join.generate(1000, 3000, seed=5), hash_join.generate(1000, 3000, seed=5)
    assert np.array_equal(a.lineitem_key, b.lineitem_key) and np.array_equal(a.orders_payload, b.orders_payload)
    assert not np.isin(hash_join.generate(1000, 3000, overlap=0.0, seed=5).lineitem_key, a.orders_key).any()
    with pytest.raises(ValueError, match="overlap"):
        hash_join.generate(10, 10, overlap=1.5)


@pytest.mark.parametrize("reference", ["numpy", "auto"])
def test_hash_join_command_line(tmp_path, capsys, reference):
    out = tmp_path / "join.json"
    hash_join.main(["--orders", "2000", "--lines", "8000", "--backend", "host", "--reference", reference,
                    "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["check"] == "OK" and report["backend"] == "host"
    assert set(report["seconds"]) == {"build", "probe", "total"}
    assert "check: OK" in capsys.readouterr().out


# ---- the voxel intersection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_voxel_intersection_against_numpy(backend):
    cloud_a, cloud_b = voxel_intersect.generate(20000, seed=SEED)
    result = voxel_intersect.voxel_intersection(cloud_a, cloud_b, voxel=0.25, backend=backend)
    assert result.backend == backend
    counts = voxel_intersect.check_intersection(result, SEED)
    # Two partial scans: they share voxels, and each has voxels of its own.
    assert 0 < counts["shared"] < min(counts["voxels_a"], counts["voxels_b"])


def test_voxel_keys_pack_three_signed_fields():
    points = np.array([[0.0, 0.0, 0.0], [-0.05, 0.25, 1.0], [-1.0e5, 1.0e5 - 1, 0.0]])
    keys = voxel_intersect.voxel_keys(points, 0.1)
    offset = 1 << 20
    cells = [(0, 0, 0), (-1, 2, 10), (-1_000_000, 999_990, 0)]
    want = [((x + offset) << 42) | ((y + offset) << 21) | (z + offset) for x, y, z in cells]
    assert keys.dtype == np.uint64 and keys.tolist() == want
    with pytest.raises(ValueError, match="2\\^21 voxels"):
        voxel_intersect.voxel_keys(np.array([[2.0e5, 0.0, 0.0]]), 0.1)


def test_voxel_check_catches_a_missing_voxel():
    cloud_a, cloud_b = voxel_intersect.generate(5000, seed=SEED + 1)
    result = voxel_intersect.voxel_intersection(cloud_a, cloud_b, voxel=0.5, backend="host")
    result.shared = result.shared[1:]
    with pytest.raises(AssertionError, match="np.intersect1d"):
        voxel_intersect.check_intersection(result, SEED + 1)


def test_voxel_command_line(tmp_path, capsys):
    out = tmp_path / "voxels.json"
    voxel_intersect.main(["--points", "5000", "--voxel", "0.3", "--backend", "host", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["check"] == "OK" and report["shared"] > 0
    assert set(report["seconds"]) == {"build", "probe", "collect", "total"}
    assert "check: OK" in capsys.readouterr().out
