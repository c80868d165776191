"""Collectives over the GPU interconnect: `allreduce`, `allgather`, `reducescatter`, `alltoall`,
`broadcast`, `reduce`.

A case is ``bytes`` (the buffer one rank holds: allreduce in = out; allgather the gathered
output; reducescatter the full input; alltoall the send buffer; broadcast and reduce the buffer
sent from or reduced to the root) and ``ranks``. The link comes
from the archspec's ``interconnect:`` list (the first GPU-to-GPU fabric; an in-package GCD link
only for 2 ranks; PCIe where nothing else is listed). A link carries, per direction, the
bandwidth the collective library plans it with where the spec gives it (``usable``: the per-link
figures of RCCL's and NCCL's topology search, src/graph/topo.h: 48 GB/s per xGMI link on gfx942
and gfx950 of 64 and 76.8 raw, 20.6 per NVLink 4 link of 25), else half the raw link rate (every
archspec link rate is quoted bidirectional).

Algorithms (the bandwidth terms are the textbook ones also used by nccl-tests' "bus bandwidth",
NVIDIA/nccl-tests doc/PERFORMANCE.md):

- ring: allreduce = reduce-scatter + all-gather, 2(n-1) steps of S/n bytes; allgather and
  reducescatter n-1 steps of S/n. Each rank sends over every link to a peer at once (RCCL/NCCL
  build one ring per link: "channels"), so the bandwidth is links_used x per-direction rate.
- one-shot (allreduce, allgather): every rank reads the whole buffer of each of the n-1 peers
  directly (vLLM's custom all-reduce, RCCL/NCCL "direct"), one step, (n-1) x S bytes in.
- alltoall: pairwise direct exchange, every peer at once: one step, (n-1)/n x S bytes out.
- broadcast and reduce: the ring only (NCCL's and RCCL's `src/graph/tuning.cc` skip every other
  algorithm for them), the buffer pipelined along it, so every link of the ring carries all S
  bytes (nccl-tests: bus bandwidth = algorithm bandwidth), in the n steps the tuning model
  counts for them.
- nvls (allreduce, where the switch reduces: the spec's ``in_network_reduction``, NVLink SHARP
  on third-generation NVSwitch): NCCL's NVLS all-reduce, timed as NCCL's tuning model times it
  (NVIDIA/nccl src/graph/tuning.cc): one latency, ``NVLS_LATENCY_US``, and the algorithm
  bandwidth ``NVLS_ALGO_BW_RATIO`` (5/6) of the GPU's planned link bandwidth.
``algo=auto`` takes the fastest of ring, one-shot and (where the fabric has it) NVLS for each case.

Links used: on a switched fabric (NVLink through NVSwitch, as in HGX/DGX 8-GPU boards) all of a
GPU's links reach every peer; on a direct mesh (xGMI between OAMs: MI300X/MI325X/MI35x
"fully connected 8-GPU node") only min(links, n-1) links lead to the n-1 peers.

Per-step latency, with the two protocols NCCL/RCCL choose between (LL: 8-byte stores holding
4 bytes of data and a 4-byte flag, so half the link rate, low latency; Simple: full rate,
higher latency); the faster one is used per case. Values are the hardware latencies per ring
step of the libraries' own tuning models (``hwLat``, ring row), see `STEP_LATENCY_US`.
HBM traffic: the local buffer is read and the result written; received data is written to
device memory and (allreduce, reducescatter) read again to reduce.
"""

from __future__ import annotations

import numpy as np

from perfmodel.errors import InputError
from perfmodel.models.registry import Param, register
from perfmodel.work import Launch, Work

# (LL, Simple) microseconds per ring step: the hwLat "Ring" row of the libraries' tuning models.
STEP_LATENCY_US = {
    # NVIDIA/nccl src/graph/tuning.cc, hwLat[NCCL_HW_NVLINK] Ring {LL .6, LL128 1.9, Simple 3.4}
    "nvlink": (0.6, 3.4),
    # ROCm/rccl src/graph/tuning.cc, tuning_model_4 hwLat NVLINK (xGMI) Ring {LL 0.8, LL128 2.2,
    # Simple 3.6}; which RCCL tuning model a given Instinct part selects was not checked
    "xgmi": (0.8, 3.6),
    # NVIDIA/nccl src/graph/tuning.cc, hwLat[NCCL_HW_PCI] Ring {LL 1.0, LL128 2.5, Simple 5.7}
    "pcie": (1.0, 5.7),
}
# One rank's collective kernel starts when that rank launches it and ends after the last rank has
# joined, so its duration also holds the wait for the others (TraceLens's NcclAnalyser measures a
# collective's communication latency from the last rank's start and reports the skew apart).
SKEW_NOTE = "the exchange alone: one rank's measured kernel also holds its wait for the last rank to join (skew)"
RING_ONLY = ("broadcast", "reduce")
# every collective this module registers (the kernel names `analysis` and the trace chart group)
KINDS = ("allreduce", "allgather", "reducescatter", "alltoall", *RING_ONLY)
LL_EFFICIENCY = 0.5  # LL protocol: 4 data bytes per 8-byte store (NCCL docs, protocol LL)
# NVLink SHARP (NVLS) all-reduce, single node, as NCCL's tuning model times it (NVIDIA/nccl
# src/graph/tuning.cc @ b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2, ncclTopoTuneModel): its latency is
# hwLat[NCCL_HW_NVLINK][NCCL_ALGO_NVLS][Simple] alone (23 us; baseLat 0; NVLS runs Simple only), and
# its algorithm bandwidth is the bus bandwidth (channels x per-channel bandwidth: the GPU's NVLink
# bandwidth, here links x the planned per-link rate) x 5/6.
NVLS_LATENCY_US = 23.0
NVLS_ALGO_BW_RATIO = 5.0 / 6.0

PARAMS = [
    Param("bytes", float, help="buffer size per rank in bytes (see the module doc for each collective)"),
    Param("ranks", int, help="GPUs taking part"),
    Param("algo", str, "auto", choices=("auto", "ring", "oneshot", "nvls"), help="algorithm (nvls: NVLink SHARP all-reduce, where the switch reduces)"),
]


def fabric(arch, ranks: float) -> dict:
    """The link a collective over ``ranks`` GPUs uses: name, kind, links used, B/s per direction."""
    links = arch.tree.get("interconnect") or []
    if not links:
        raise InputError(f"{arch.key} has no `interconnect:` section in its archspec; collectives need one", key="arch")
    gpu = [x for x in links if not x["name"].lower().startswith("pcie")]
    if ranks > 2:
        gpu = [x for x in gpu if not x["name"].lower().startswith("in-package")] or gpu
    entry = (gpu or links)[0]
    name = entry["name"]
    low = name.lower()
    kind = "nvlink" if "nvlink" in low else ("pcie" if low.startswith("pcie") else "xgmi")
    n_links = entry["links"].value
    switched = kind == "nvlink"  # NVLink ports go to NVSwitch chips on 8-GPU boards
    # what the library plans per link and direction (`usable`, RCCL's/NCCL's topo.h), else half
    # the raw rate: archspec link rates are bidirectional
    per_dir = entry["usable"].value if "usable" in entry else entry["bandwidth"].value / 2.0
    used = links_used(kind, switched, n_links, ranks)
    return {
        "name": name,
        "kind": kind,
        "links": n_links,
        "used": used,
        "per_direction": per_dir,
        "switched": switched,
        "planned": "usable" in entry,
        # the switch reduces and multicasts (NVLink SHARP): NCCL's NVLS algorithm exists there
        "nvls": switched and bool(entry.get("in_network_reduction")),
    }


def links_used(kind: str, switched: bool, n_links: float, ranks):
    """Links a collective over ``ranks`` GPUs (a number or an array) drives at once: one over
    PCIe, all of them through a switch, and on a direct mesh one per peer up to the links there are."""
    if kind == "pcie":
        return np.ones(np.shape(ranks)) if np.ndim(ranks) else 1.0
    if switched:
        return np.full(np.shape(ranks), float(n_links)) if np.ndim(ranks) else n_links
    used = np.minimum(n_links, np.maximum(np.asarray(ranks, dtype=float) - 1.0, 1.0))
    return used if np.ndim(ranks) else float(used)


def _best(steps, nbytes, bw, lat):
    """(seconds, latency part) of the faster protocol: LL (half rate) or Simple."""
    ll_lat, simple_lat = (x * 1e-6 for x in lat)
    t_ll = steps * ll_lat + nbytes / (bw * LL_EFFICIENCY)
    t_simple = steps * simple_lat + nbytes / bw
    use_ll = t_ll < t_simple
    return np.where(use_ll, t_ll, t_simple), np.where(use_ll, steps * ll_lat, steps * simple_lat)


def collective_work(kind: str, p: dict, arch) -> Work:
    s = np.asarray(p["bytes"], dtype=float)
    n = np.asarray(p["ranks"], dtype=float)
    algo = p.get("algo", "auto")
    s, n = np.broadcast_arrays(s, n)
    work = Work()
    work.note(f"{kind}: 1 rank, nothing to exchange", n <= 1)
    work.note(SKEW_NOTE, n > 1)
    # each case its own link (`_link`): never the link of another case batched with it
    f, bw, lat, pick_fabric = _link(arch, n)
    one = np.where(n > 1, 1.0, 0.0)
    if kind == "allreduce":
        ring = _best(2.0 * (n - 1.0), 2.0 * (n - 1.0) / n * s, bw, lat)
        shot = _best(one, (n - 1.0) * s, bw, lat)
        recv_ring, recv_shot = 2.0 * (n - 1.0) / n * s, (n - 1.0) * s
    elif kind == "allgather":
        ring = _best(n - 1.0, (n - 1.0) / n * s, bw, lat)
        shot = _best(one, (n - 1.0) / n * s, bw, lat)
        recv_ring = recv_shot = (n - 1.0) / n * s
    elif kind == "reducescatter":
        ring = _best(n - 1.0, (n - 1.0) / n * s, bw, lat)
        shot = _best(one, (n - 1.0) / n * s, bw, lat)
        recv_ring = recv_shot = (n - 1.0) / n * s
    elif kind == "alltoall":
        ring = shot = _best(one, (n - 1.0) / n * s, bw, lat)
        recv_ring = recv_shot = (n - 1.0) / n * s
    elif kind in RING_ONLY:
        if algo == "oneshot":
            raise InputError(f"{kind}: NCCL and RCCL run it as a ring only; algo=oneshot has no model", key="algo")
        ring = shot = _best(np.where(n > 1, n, 0.0), s * one, bw, lat)
        recv_ring = recv_shot = np.where(n > 1, s, 0.0)
    else:  # pragma: no cover - registration lists the kinds
        raise AssertionError(kind)
    nvls = _nvls(kind, algo, arch, f, n, s, bw)
    if algo == "ring":
        choice = np.zeros(s.shape, dtype=int)
    elif algo == "oneshot":
        choice = np.ones(s.shape, dtype=int)
    elif algo == "nvls":
        choice = np.full(s.shape, 2)
    else:
        choice = np.argmin(np.stack([ring[0], shot[0], nvls]), axis=0)
    nvls_lat = np.where(n > 1, NVLS_LATENCY_US * 1e-6, 0.0)
    t = np.choose(choice, [ring[0], shot[0], nvls])
    t_lat = np.choose(choice, [ring[1], shot[1], nvls_lat])
    # NVLS: the switch reads each rank's buffer and multicasts the reduced result into it, so a
    # rank receives no partial sums to reduce (the result's write is `out` below)
    recv = np.choose(choice, [recv_ring, recv_shot, np.zeros(s.shape)])
    work.timed["memory:link"] = t
    work.timed_latency["memory:link"] = t_lat
    reducing = kind in ("allreduce", "reducescatter", "reduce")
    reduce_reads = recv if reducing else 0.0
    # the result written beside the received data (a broadcast's received buffer is its result)
    out = {"reducescatter": s / np.maximum(n, 1.0), "broadcast": 0.0}.get(kind, s)
    work.add_bytes(arch.memory_level, read=s + reduce_reads, write=out + recv)
    if reducing:
        work.add_flops("valu", "fp32", recv / 2.0)  # one add per received element (2-byte dtypes)
    work.launch = Launch(grid=arch.cus, workgroup_size=256)
    for fab, on_it in zip(f, pick_fabric, strict=True):
        for algo_name, chosen in (("one-shot", choice == 1), ("ring", choice == 0), ("NVLS (the switch reduces)", choice == 2)):
            for u in np.unique(fab["used"][on_it & chosen]):
                work.note(
                    f"{kind}: {algo_name} over {fab['name']} ({u:g} of {fab['links']:g} links x "
                    f"{fab['per_direction'] / 1e9:g} GB/s per direction{' as the library plans it' if fab['planned'] else ''}"
                    f"{', switched' if fab['switched'] else ''})",
                    on_it & chosen & (fab["used"] == u),
                )
    return work


def _nvls(kind: str, algo: str, arch, fabs, n, s, bw) -> np.ndarray:
    """Seconds of NCCL's NVLS all-reduce per case (`NVLS_LATENCY_US` + S / (`NVLS_ALGO_BW_RATIO`
    x the link bandwidth)) where the case's fabric has a switch that reduces, else inf (never
    the fastest); 0 for one rank. ``algo=nvls`` elsewhere is an input error."""
    small, large = fabs
    on = np.where(n > 2, large["nvls"], small["nvls"]) if kind == "allreduce" else np.zeros(np.shape(n), dtype=bool)
    if algo == "nvls":
        if kind != "allreduce":
            raise InputError(f"{kind}: NVLS is modelled for allreduce only", key="algo")
        if not np.all(on | (n <= 1)):
            raise InputError(f"{arch.key}: its GPU link has no switch that reduces (in_network_reduction); algo=nvls has no model there", key="algo")
    with np.errstate(divide="ignore"):
        t = NVLS_LATENCY_US * 1e-6 + s / (NVLS_ALGO_BW_RATIO * bw)
    return np.where(n <= 1, 0.0, np.where(on, t, np.inf))


def _link(arch, n):
    """Per case: the fabrics a collective over ``n`` ranks can use (an in-package link only for
    2 ranks) with each one's links used as arrays, the bandwidth (B/s per direction over the
    links used), the (LL, Simple) step latencies, and which cases use each fabric."""
    big = n > 2
    fabs = []
    for ranks, on_it in ((2.0, ~big), (3.0, big)):
        f = fabric(arch, ranks)
        fabs.append((dict(f, used=links_used(f["kind"], f["switched"], f["links"], n)), on_it))
    (small, on_small), (large, on_large) = fabs
    bw = np.where(big, large["used"] * large["per_direction"], small["used"] * small["per_direction"])
    pairs = zip(STEP_LATENCY_US[large["kind"]], STEP_LATENCY_US[small["kind"]], strict=True)
    lat = tuple(np.where(big, a, b) for a, b in pairs)
    return (small, large), bw, lat, (on_small, on_large)


def _make(kind: str, doc: str):
    @register(kind, params=PARAMS, doc=doc, default_dtype="bf16")
    def model(p: dict, arch, dtype: str) -> Work:
        return collective_work(kind, p, arch)

    model.__name__ = kind
    return model


allreduce = _make("allreduce", "All-reduce of `bytes` per rank over the archspec interconnect (ring / one-shot)")
allgather = _make("allgather", "All-gather into `bytes` per rank (ring / direct)")
reducescatter = _make("reducescatter", "Reduce-scatter of `bytes` per rank (ring / direct)")
alltoall = _make("alltoall", "All-to-all of a `bytes` send buffer per rank (pairwise direct)")
broadcast = _make("broadcast", "Broadcast of `bytes` from the root to every rank (pipelined ring)")
reduce = _make("reduce", "Reduce of `bytes` per rank to the root (pipelined ring)")
