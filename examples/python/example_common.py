"""example_common.py - what the Python examples share: the backend they run on (the GPU through
CuPy when there is one), a clock for their phases, and copies back to NumPy."""
from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import gpuhash


def pick_backend(backend: str) -> Tuple[str, Any]:
    """("host" or "cuda", the array module for the table's inputs). "auto" takes the GPU when CuPy
    imports and gpuhash can use a device; "cuda" insists on it."""
    if backend not in ("auto", "host", "cuda"):
        raise ValueError("backend %r: one of auto, host, cuda" % backend)
    if backend == "host":
        return "host", np
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None and gpuhash.cuda_available():
        return "cuda", cupy
    if backend == "cuda":
        raise RuntimeError("backend 'cuda' needs CuPy and a GPU gpuhash can use (CuPy importable: %s, "
                           "gpuhash.cuda_available(): %s)" % (cupy is not None, gpuhash.cuda_available()))
    return "host", np


class PhaseClock:
    """Times consecutive phases: CUDA events on the current stream with CuPy, the host clock
    otherwise. Every gpuhash call waits for its stream before returning, so both measure the
    phase's whole work."""

    def __init__(self, xp: Any):
        self.xp = xp
        self.marks: List[Tuple[str, Any]] = []
        self.mark("start")

    def mark(self, name: str) -> None:
        """Ends the phase called name (the first mark only starts the clock)."""
        if self.xp is np:
            self.marks.append((name, time.perf_counter()))
        else:
            event = self.xp.cuda.Event()
            event.record()
            self.marks.append((name, event))

    def seconds(self) -> Dict[str, float]:
        """Each phase's seconds, and "total"."""
        if self.xp is not np:
            self.marks[-1][1].synchronize()
        phases: Dict[str, float] = {}
        for (_, begin), (name, end) in zip(self.marks, self.marks[1:]):
            phases[name] = (end - begin) if self.xp is np else self.xp.cuda.get_elapsed_time(begin, end) / 1e3
        phases["total"] = sum(phases.values())
        return phases


def to_host(array: Any) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


def device_name(backend: str) -> str:
    if backend == "cuda":
        import cupy
        return cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    return "host backend, %d CPU cores" % os.cpu_count()


def finish_report(report: Dict[str, Any], json_path: Optional[str]) -> Dict[str, Any]:
    """The example's report, written to json_path when one is given."""
    report["gpuhash_version"] = gpuhash.version()
    if json_path:
        with open(json_path, "w") as out:
            json.dump(report, out, indent=2)
    return report
