"""`fabriclb flowlets` and `fabriclb.flowlets`: the fixture's tables against an independent
reference (dpkt's reader and decoders, a non-streaming count), pinned facts of the fixture's
design, pcap / pcapng variants of the same packets, bad input (truncated, corrupt, link type,
gaps), memory that follows the active flows, and the simulator's pcap read back to its own
in-run count (`measure.flowlet_links`)."""

from __future__ import annotations

import itertools
import struct
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import dpkt
import pandas as pd
import pytest

import fabriclb
from fabriclb.capture import WINDOW_NS, CaptureError, bin_edges, parse_gaps, size_bin

from conftest import CliRunner

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "flowlets_fixture.pcapng"
GAPS = [250_000_000, 500_000, 100_000]

Rec = Tuple[int, int, bytes, int]  # ns, link type, captured bytes, original length


# ----------------------------------------------------------------------------- writers


def fixture_records() -> List[Rec]:
    """The fixture's records as dpkt's pcapng reader gives them (µs time stamps, exact
    after rounding)."""
    out = []
    with open(FIXTURE, "rb") as f:
        r = dpkt.pcapng.Reader(f)
        for ts, buf in r:
            out.append((round(ts * 1e6) * 1000, 1, bytes(buf), 0))
    # dpkt does not give the original length; read it from the blocks (offset 20 of an EPB).
    data = FIXTURE.read_bytes()
    off, lens = 0, []
    while off < len(data):
        typ, blen = struct.unpack_from("<II", data, off)
        if typ == 6:
            lens.append(struct.unpack_from("<I", data, off + 24)[0])
        off += blen
    return [(t, lt, b, n) for (t, lt, b, _), n in zip(out, lens)]


def write_pcap(path: Path, recs: List[Rec], *, nano: bool, big: bool = False, linktype: int = 1) -> None:
    e = ">" if big else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, 65535, linktype)]
    for t, _, b, n in recs:
        sub = t % 10**9 if nano else (t % 10**9) // 1000
        out.append(struct.pack(e + "IIII", t // 10**9, sub, len(b), n) + b)
    path.write_bytes(b"".join(out))


def _block(typ: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", typ, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))


def _idb(linktype: int, opts: bytes = b"") -> bytes:
    return _block(1, struct.pack("<HHI", linktype, 0, 65535) + opts + (struct.pack("<HH", 0, 0) if opts else b""))


def _epb(iface: int, ts: int, b: bytes, n: int) -> bytes:
    return _block(6, struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(b), n) + b)


SHB = _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))


# ----------------------------------------------------------------------------- reference


def _dpkt_key(buf: bytes, inner: bool = False) -> Tuple[Optional[bytes], int]:
    """(5-tuple, payload bytes) by dpkt, or (None, 0) for what the tool skips."""
    try:
        eth = dpkt.ethernet.Ethernet(buf)
    except dpkt.UnpackError:
        return None, 0
    ip = eth.data
    if isinstance(ip, dpkt.ip.IP):
        if ip.mf or ip.offset:
            return None, 0
        addr, plen, l4 = ip.src + ip.dst, ip.len - ip.hl * 4, ip.data
    elif isinstance(ip, dpkt.ip6.IP6):
        ext = sum(len(h) for h in ip.all_extension_headers)
        addr, plen, l4 = ip.src + ip.dst, ip.plen - ext, ip.data
    else:
        return None, 0
    if isinstance(l4, dpkt.tcp.TCP):
        return addr + struct.pack("!HHB", l4.sport, l4.dport, 6), plen - l4.off * 4
    if isinstance(l4, dpkt.udp.UDP):
        if l4.dport == 4789 and not inner:
            return _dpkt_key(bytes(l4.data)[8:], True)
        return addr + struct.pack("!HHB", l4.sport, l4.dport, 17), plen - 8
    return None, 0


def reference(recs: List[Rec], gaps: List[int]) -> Tuple[pd.DataFrame, pd.DataFrame]:
    """The tables by the definitions, computed whole: times made monotone, payload packets
    grouped by flow, flowlets split at gaps of at least g, windows from the first record's to
    the last one's."""
    times = list(itertools.accumulate((t for t, _, _, _ in recs), max))
    per_flow: Dict[bytes, List[Tuple[int, int]]] = defaultdict(list)
    active_flows: Dict[int, set] = defaultdict(set)
    active_fl: List[Dict[int, set]] = [defaultdict(set) for _ in gaps]
    for t, (_, _, buf, _) in zip(times, recs):
        key, n = _dpkt_key(buf)
        if key is not None and n > 0:
            per_flow[key].append((t, n))
    rows = []
    for i, g in enumerate(gaps):
        hist: Counter = Counter()
        hbytes: Counter = Counter()
        for key, pk in per_flow.items():
            idx, size, last = 0, 0, None
            for t, n in pk:
                if last is not None and t - last >= g:
                    hist[size_bin(size)] += 1
                    hbytes[size_bin(size)] += size
                    idx, size = idx + 1, 0
                size += n
                last = t
                active_fl[i][t // WINDOW_NS].add((key, idx))
                active_flows[t // WINDOW_NS].add(key)
            hist[size_bin(size)] += 1
            hbytes[size_bin(size)] += size
        total, cum = sum(hbytes.values()), 0
        for b in sorted(hist):
            cum += hbytes[b]
            rows.append((g / 1000, *bin_edges(b), hist[b], hbytes[b], cum / total))
    sizes = pd.DataFrame(rows, columns=["gap_us", "size_from_bytes", "size_to_bytes", "flowlets", "bytes", "bytes_cdf"])
    windows = range(times[0] // WINDOW_NS, times[-1] // WINDOW_NS + 1)
    crow = [("flows", float("nan"), a, k) for a, k in sorted(Counter(len(active_flows[w]) for w in windows).items())]
    for i, g in enumerate(gaps):
        crow += [("flowlets", g / 1000, a, k) for a, k in sorted(Counter(len(active_fl[i][w]) for w in windows).items())]
    return sizes, pd.DataFrame(crow, columns=["what", "gap_us", "active", "windows"])


# ----------------------------------------------------------------------------- the fixture


def test_the_fixture_matches_an_independent_reference() -> None:
    res = fabriclb.flowlets(FIXTURE, "250ms,500us,100us")
    sizes, conc = reference(fixture_records(), GAPS)
    pd.testing.assert_frame_equal(res.sizes, sizes, check_dtype=False)
    pd.testing.assert_frame_equal(res.concurrency, conc, check_dtype=False)


def test_the_fixture_as_designed() -> None:
    """What make_flowlets_fixture.py put in, counted by hand."""
    s = fabriclb.flowlets(FIXTURE).summary
    assert s["format"] == "pcapng" and s["link_types"] == ["1 (Ethernet)"]
    assert s["skipped"] == {"ARP": 4, "ICMP": 3, "ICMPv6": 2, "IPv4 fragment": 2, "LLDP": 1,
                            "headers cut by the snap length": 1}
    assert s["records"] == s["packets"] + sum(s["skipped"].values()) == 808
    assert s["late_timestamps"] == 1
    # Six flows (A 208 x 1448, B 120 x 1000, C 250 x 200, D 100 x 1448 in VXLAN, E 10 x 512),
    # a SYN that carries nothing.
    assert s["payload_bytes"] == 208 * 1448 + 120 * 1000 + 250 * 200 + 100 * 1448 + 10 * 512
    res = fabriclb.flowlets(FIXTURE)
    by_gap = {g: res.sizes[res.sizes["gap_us"] == g] for g in (250000.0, 500.0, 100.0)}
    # At 250 ms every flow is one flowlet, except A, which pauses for 300 ms once.
    assert sorted(by_gap[250000.0]["bytes"]) == [5120, 32 * 1448, 50000, 120000, 144800, 176 * 1448]
    # At 500 µs A's bursts of 16 merge across their 50 and 300 µs gaps and split at the 800 µs
    # ones (the ACK in their middle extends nothing), at 2 ms and 300 ms: 3 x 3 bursts, 2 x 2.
    f = by_gap[500.0]
    assert f[f["size_from_bytes"] == bin_edges(size_bin(48 * 1448))[0]]["flowlets"].tolist() == [3]
    assert f[f["size_from_bytes"] == bin_edges(size_bin(32 * 1448))[0]]["flowlets"].tolist() == [2]
    # At 100 µs each of C's datagrams (400 µs apart) is a flowlet, but the late one joins its
    # predecessor (it counts at the latest time seen): 248 single ones and one pair.
    f = by_gap[100.0]
    assert f[f["size_from_bytes"] == 200]["flowlets"].tolist() == [248]
    assert f[f["size_from_bytes"] == 400]["flowlets"].tolist() == [1]
    # Each gap's bytes add up to all payload bytes; the CDF ends at 1.
    for g, t in by_gap.items():
        assert t["bytes"].sum() == s["payload_bytes"] and t["bytes_cdf"].iloc[-1] == 1.0


def test_pcap_and_pcapng_variants_give_the_same_tables(tmp_path: Path) -> None:
    recs = fixture_records()
    want = fabriclb.flowlets(FIXTURE)
    variants = []
    for nano, big in ((False, False), (True, True)):
        p = tmp_path / f"v{nano}{big}.pcap"
        write_pcap(p, recs, nano=nano, big=big)
        variants.append(p)
    # pcapng with two interfaces: Ethernet in ns with a 1000 s offset, and raw IP in µs (the
    # untagged IP frames without their Ethernet header).
    ts_opts = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HHq", 14, 8, 1000)
    blocks = [SHB, _idb(1, ts_opts), _idb(101)]
    for t, _, b, n in recs:
        if b[12:14] in (b"\x08\x00", b"\x86\xdd") and len(b) > 34 and b[34:36] != b"\x12\xb5":
            blocks.append(_epb(1, t // 1000, b[14:], n - 14))
        else:
            blocks.append(_epb(0, t - 1000 * 10**9, b, n))
    p = tmp_path / "two-interfaces.pcapng"
    p.write_bytes(b"".join(blocks))
    variants.append(p)
    for p in variants:
        got = fabriclb.flowlets(p)
        pd.testing.assert_frame_equal(got.sizes, want.sizes)
        pd.testing.assert_frame_equal(got.concurrency, want.concurrency)
        assert got.summary["skipped"] == want.summary["skipped"], p.name
    assert fabriclb.flowlets(variants[-1]).summary["link_types"] == ["1 (Ethernet)", "101 (raw IP)"]


def test_cli_writes_the_tables_and_the_plot(tmp_path: Path, cli: CliRunner) -> None:
    out = tmp_path / "fx"
    p = cli("flowlets", str(FIXTURE), "--gap", "250ms,500us,100us", "--out", str(out))
    assert p.returncode == 0, p.stderr
    for f in ("flowlet_sizes.csv", "flowlet_concurrency.csv", "summary.json", "plot.png"):
        assert (out / f).stat().st_size > 0, f
    assert "gap 500us: 65 flowlets" in p.stdout
    pd.testing.assert_frame_equal(pd.read_csv(out / "flowlet_sizes.csv"), fabriclb.flowlets(FIXTURE).sizes)


# ----------------------------------------------------------------------------- bad input


def _clean_failure(p, *words: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


def test_a_truncated_capture_is_a_clear_error(tmp_path: Path, cli: CliRunner) -> None:
    data = FIXTURE.read_bytes()
    cut = tmp_path / "two-thirds.pcapng"
    cut.write_bytes(data[: len(data) * 2 // 3])
    p = cli("flowlets", str(cut), "--out", str(tmp_path / "o"))
    _clean_failure(p, "truncated", "byte offset", "at packet")
    assert not (tmp_path / "o").exists()
    with pytest.raises(CaptureError) as e:
        fabriclb.flowlets(cut)
    # The error names the block the file ends in: it starts before the end and is the next
    # packet after the complete ones.
    assert 0 < e.value.offset < len(data) * 2 // 3 and e.value.packet > 400
    # The same for pcap, cut in a record and in a record header, and a file cut in its header.
    pcap = tmp_path / "f.pcap"
    write_pcap(pcap, fixture_records(), nano=True)
    whole = pcap.read_bytes()
    first = 24 + 16 + len(fixture_records()[0][2])
    for n, what in ((len(whole) * 2 // 3, "a packet of"), (first + 8, "a record header"), (10, "its 24-byte header")):
        pcap.write_bytes(whole[:n])
        with pytest.raises(CaptureError, match=what) as e:
            fabriclb.flowlets(pcap)
        assert e.value.offset <= n


def test_unsupported_link_types_name_where(tmp_path: Path, cli: CliRunner) -> None:
    p = tmp_path / "wifi.pcap"
    write_pcap(p, fixture_records()[:3], nano=False, linktype=105)
    _clean_failure(cli("flowlets", str(p)), "link type 105 is not supported", "byte offset 20", "file header")
    q = tmp_path / "wifi.pcapng"
    q.write_bytes(SHB + _idb(105) + _epb(0, 5, b"\0" * 40, 40))
    _clean_failure(cli("flowlets", str(q)), "interface 0: link type 105", "at packet 1", f"byte offset {len(SHB) + 20}")


def test_corrupt_files_name_the_packet_and_offset(tmp_path: Path, cli: CliRunner) -> None:
    recs = fixture_records()[:5]
    p = tmp_path / "bad.pcap"
    write_pcap(p, recs, nano=False)
    data = bytearray(p.read_bytes())
    off = 24 + sum(16 + len(r[2]) for r in recs[:2])  # the third record
    struct.pack_into("<I", data, off + 8, 5_000_000)
    p.write_bytes(bytes(data))
    _clean_failure(cli("flowlets", str(p)), "corrupt record header", "at packet 3", f"byte offset {off}")
    q = tmp_path / "bad.pcapng"
    blk = bytearray(_epb(0, 5, b"\0" * 40, 40))
    blk[-4:] = struct.pack("<I", 99)
    q.write_bytes(SHB + _idb(1) + bytes(blk))
    _clean_failure(cli("flowlets", str(q)), "trailing length", "at packet 1")
    r = tmp_path / "text.pcap"
    r.write_text("hello, not a capture")
    _clean_failure(cli("flowlets", str(r)), "is not a pcap or pcapng file")
    _clean_failure(cli("flowlets", str(tmp_path / "missing.pcap")), "cannot read the capture")


@pytest.mark.parametrize("gap,words", [("0us", "above 0"), ("5 parsecs", "not a duration"), ("1ms,1000us", "twice"),
                                       ("1,2,3,4,5,6,7,8,9".replace(",", "us,") + "us", "1 to 8")])
def test_bad_gaps(gap: str, words: str, cli: CliRunner) -> None:
    _clean_failure(cli("flowlets", str(FIXTURE), "--gap", gap), "--gap", words)


def test_gaps_parse_to_nanoseconds() -> None:
    assert parse_gaps("250ms, 500us,100µs,1.5us,2s,7ns") == [250_000_000, 500_000, 100_000, 1500, 2 * 10**9, 7]


# ----------------------------------------------------------------------------- streaming


def test_memory_follows_the_active_flows(tmp_path: Path) -> None:
    """20 000 flows of one packet each, 100 µs apart over 2 s: the counter holds the flows of
    the last 250 ms (the largest gap) at most, not all of them."""
    frame = bytes(dpkt.ethernet.Ethernet(src=b"\2" * 6, dst=b"\4" * 6, type=0x0800, data=dpkt.ip.IP(
        src=b"\x0a\0\0\1", dst=b"\x0a\0\0\2", p=6, data=dpkt.tcp.TCP(sport=1, dport=80, data=b"\0" * 100))))
    recs = []
    for i in range(20_000):
        f = bytearray(frame)
        struct.pack_into("!H", f, 34, 1024 + i % 60000)  # source port
        f[28:30] = (i // 60000).to_bytes(2, "big")
        recs.append((i * 100_000, 1, bytes(f), len(f)))
    p = tmp_path / "many.pcap"
    write_pcap(p, recs, nano=True)
    s = fabriclb.flowlets(p).summary
    assert [g["flowlets"] for g in s["gaps"]] == [20_000] * 3
    assert 2_500 <= s["peak_active_flows"] <= 5_001, s["peak_active_flows"]


# ----------------------------------------------------------------------------- the simulator


def test_the_simulators_pcap_reads_back_to_its_own_count(tmp_path: Path) -> None:
    """The same links written to a pcap and counted in the run (measure.flowlet_links): the
    tool's tables from the pcap equal the simulator's."""
    pcap = tmp_path / "leaf0.pcap"
    links = [f"H{i}->L0" for i in range(4)] + ["L0->S0#*"]
    sc = {
        "duration": "30ms", "warmup": "0ps", "drain": "0ps",
        "topology": {"kind": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4,
                     "host_rate": "10Gbps", "fabric_rate": "10Gbps"},
        "transport": {"profile": "linux-3.10"},
        "scheme": {"name": "conga"},
        "workload": [{"pattern": "client-server", "cdf": "enterprise", "load": 0.6, "cross_tor": True, "load_basis": "fabric", "capacity": "40Gbps",
                      "connections_per_pair": 1}],
        "measure": {"pcap_links": links, "pcap_file": str(pcap), "flowlet_links": links,
                    "flowlet_gaps": ["250ms", "500us", "100us", "20us"]},
    }
    res = fabriclb.run(sc)
    got = fabriclb.flowlets(pcap, "250ms,500us,100us,20us")
    fl = res.summary["flowlets"]
    assert fl["payload_bytes"] == got.summary["payload_bytes"] > 1_000_000
    assert fl["packets"] == got.summary["packets"] == got.summary["records"]
    assert fl["windows"] == got.summary["windows"] >= 25
    assert res.flowlet_sizes["flowlets"].sum() > 4 * 20
    pd.testing.assert_frame_equal(got.sizes, res.flowlet_sizes)
    pd.testing.assert_frame_equal(got.concurrency, res.flowlet_concurrency)
    # The run writes the tables beside the others.
    out = res.write(tmp_path / "run")
    assert (out / "flowlet_sizes.csv").is_file() and (out / "flowlet_concurrency.csv").is_file()


def test_flowlet_fields_bad_input(cli: CliRunner) -> None:
    sc = str(fabriclb.scenarios_dir() / "quickstart.toml")
    for setting, words in (
        ('measure.flowlet_links=["L0->S9"]', ("measure.flowlet_links[0]", "S9")),
        ("measure.flowlet_gaps=[]", ("measure.flowlet_gaps", "1 to 8")),
        ('measure.flowlet_gaps=["0us"]', ("measure.flowlet_gaps[0]", "above 0")),
        ('measure.flowlet_gaps=["1500ps"]', ("measure.flowlet_gaps[0]", "whole number of nanoseconds")),
        ('measure.flowlet_gaps=["1ms", "1000us"]', ("measure.flowlet_gaps[1]", "twice")),
    ):
        _clean_failure(cli("validate", sc, "--set", setting), *words)
