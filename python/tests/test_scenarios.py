"""Shipped scenarios run with their own settings, and the pcap trace is a valid capture."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import fabriclb

SHIPPED = sorted(fabriclb.scenarios_dir().rglob("*.toml"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(fabriclb.scenarios_dir())) for p in SHIPPED])
def test_shipped_scenario_runs_with_its_own_settings(path: Path) -> None:
    res = fabriclb.run(path)
    s = res.summary
    assert s["packet_hops"] > 0 and s["flows_started"] > 0, path
    pk = s["packets"]
    assert pk["sent"] == pk["delivered"] + pk["dropped"] + pk["in_flight"]
    # Every measured flow is either completed or reported as unfinished.
    assert s["flows_measured"] == s["flows_completed"] + s["flows_unfinished"]


def _read_pcap(path: Path) -> list[tuple[int, bytes, int]]:
    data = path.read_bytes()
    magic, major, minor, _, _, snap, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B23C4D and (major, minor) == (2, 4) and linktype == 1
    out, off = [], 24
    while off < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[off : off + 16])
        assert nsec < 1_000_000_000 and incl <= orig and incl <= snap
        out.append((sec * 10**9 + nsec, data[off + 16 : off + 16 + incl], orig))
        off += 16 + incl
    assert off == len(data)
    return out


def _ip_checksum_ok(hdr: bytes) -> bool:
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def test_pcap_trace_is_a_valid_ethernet_ipv4_tcp_capture(tmp_path: Path) -> None:
    pcap = tmp_path / "trace.pcap"
    sc = {
        "duration": "1ms",
        "drain": "5ms",
        "topology": {"kind": "leaf-spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 1,
                     "host_rate": "10Gbps", "fabric_rate": "10Gbps"},
        "transport": {"cc": "dctcp"},
        "workload": [{"pattern": "explicit", "flows": [{"src": "H0", "dst": "H1", "size": "30KB"}]}],
        "measure": {"pcap_links": ["L0->S0"], "pcap_file": str(pcap)},
    }
    res = fabriclb.run(sc)
    recs = _read_pcap(pcap)
    port_row = res.ports[res.ports["link"] == "L0->S0#0"].iloc[0]
    assert len(recs) == port_row["tx_packets"]
    times = [t for t, _, _ in recs]
    assert times == sorted(times)
    payload = 0
    for _, frame, orig in recs:
        assert frame[12:14] == b"\x08\x00"  # IPv4
        ip = frame[14:34]
        assert ip[0] == 0x45 and ip[9] == 6 and _ip_checksum_ok(ip)
        total_len = struct.unpack("!H", ip[2:4])[0]
        payload += total_len - 40
        assert orig >= 60
    # SYN, then data: every payload byte of the flow crossed this link once (no losses here).
    assert payload == 30_000
