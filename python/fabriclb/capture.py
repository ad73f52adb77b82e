"""Flowlets in packet captures (CONGA §2.6.1, Fig. 5): ``fabriclb flowlets`` and
:func:`flowlets`.

Reads a pcap or pcapng file as a stream and measures, for each inactivity gap, how the payload
bytes spread over flowlet sizes and how many flows and flowlets are active in 1 ms windows.
Definitions (docs/FLOWLETS.md, the same as the simulator's in-run count,
``measure.flowlet_links``):

- a *flow* is one direction of a 5-tuple (source and destination address and port, protocol),
  the inner one for VXLAN (UDP port 4789); its *bytes* are TCP or UDP payload bytes (from the
  IP header's lengths, so a capture cut by a snap length still counts every byte);
- a packet without payload (a pure ACK, a bare SYN) starts and extends nothing;
- a packet starts a new flowlet of its flow when at least ``gap`` passed since the flow's
  previous payload packet; a flowlet's size is the sum of its packets' payload bytes;
- a flow (flowlet) is *active* in a 1 ms window (aligned to multiples of 1 ms of the capture's
  clock) when it sends payload in it; windows run from the capture's first record to its
  last, empty ones included.

Everything else (ARP, ICMP, fragments, other protocols, headers cut by the snap length) is
skipped and counted by kind. A truncated or corrupt file, or a link type we cannot decode,
raises :class:`CaptureError` naming the packet number and byte offset.

The file formats and the few headers are parsed here with :mod:`struct` rather than with a
packet library; docs/FLOWLETS.md gives the measurements behind that choice.
"""

from __future__ import annotations

import math
import os
import re
import struct
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CaptureError", "FlowletCounter", "FlowletResult", "flowlets", "parse_gaps", "size_bin", "bin_edges",
           "DEFAULT_GAPS", "WINDOW_NS"]

PathLike = Union[str, "os.PathLike[str]"]

#: The paper's gaps (Fig. 5).
DEFAULT_GAPS = ("250ms", "500us", "100us")
#: Concurrency windows: 1 ms (§2.6.1, "distinct 5-tuples ... over 1ms intervals").
WINDOW_NS = 1_000_000
#: Flowlet sizes are binned with 32 bins per octave above 64 bytes (exact below): at most 3%
#: wide, integer edges, and the same bins in the simulator (`stats/flowlets.rs`).
SUB_BITS = 5
#: A record larger than this is taken as corruption (libpcap's and Wireshark's bound).
MAX_RECORD = 262_144
#: pcapng: the largest block we accept (Wireshark's bound), and the smallest of each type we read.
MAX_BLOCK = 16 << 20
_MIN_BLOCK = {1: 20, 2: 32, 6: 32, 0x0A0D0D0A: 28}
CHUNK = 1 << 20

ETHERNET, RAW, SLL, RAW4, RAW6 = 1, 101, 113, 228, 229
LINK_TYPES = {ETHERNET: "Ethernet", RAW: "raw IP", SLL: "Linux cooked (SLL)", RAW4: "raw IPv4", RAW6: "raw IPv6"}
VXLAN_PORT = 4789

_ETHERTYPES = {0x0806: "ARP", 0x8035: "RARP", 0x88CC: "LLDP", 0x8847: "MPLS", 0x8848: "MPLS", 0x888E: "EAPOL",
               0x8809: "LACP (slow protocols)", 0x88F7: "PTP", 0x8863: "PPPoE", 0x8864: "PPPoE", 0x8808: "pause frame"}
_PROTOCOLS = {1: "ICMP", 2: "IGMP", 47: "GRE", 50: "ESP", 51: "AH", 58: "ICMPv6", 89: "OSPF", 103: "PIM", 112: "VRRP",
              132: "SCTP"}
_CUT = "headers cut by the snap length"
_U16 = struct.Struct("!H")
_PORTS = struct.Struct("!HH")


class CaptureError(ScenarioError):
    """A capture that cannot be read: not pcap or pcapng, truncated, corrupt, or of a link
    type the tool does not decode. ``packet`` is the 1-based number of the packet record where
    reading stopped (0 for the file header) and ``offset`` its byte offset in the file."""

    def __init__(self, message: str, *, packet: int, offset: int) -> None:
        super().__init__(message, kind="capture")
        self.packet = packet
        self.offset = offset


# ----------------------------------------------------------------------------- sizes and gaps


def size_bin(size: int) -> int:
    """The bin of a flowlet of ``size`` >= 1 bytes: the size itself below 64, then 32 bins per
    octave (the top six bits of the size)."""
    if size < 2 << SUB_BITS:
        return size
    e = size.bit_length() - SUB_BITS - 1
    return (2 << SUB_BITS) + (e - 1) * (1 << SUB_BITS) + (size >> e) - (1 << SUB_BITS)


def bin_edges(b: int) -> Tuple[int, int]:
    """[from, to) of bin ``b`` in bytes."""
    if b < 2 << SUB_BITS:
        return b, b + 1
    e, m = divmod(b - (2 << SUB_BITS), 1 << SUB_BITS)
    m += 1 << SUB_BITS
    return m << (e + 1), (m + 1) << (e + 1)


_GAP = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(s|ms|us|µs|ns)\s*")
_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "µs": 10**3, "ns": 1}


def parse_gaps(gaps: Union[str, Sequence[Union[str, int]]]) -> List[int]:
    """Gaps as integer nanoseconds from "250ms,500us,100us" or a list of such strings (an int
    is nanoseconds). Each must be > 0; at most 8, no repeats."""
    items = [g.strip() for g in gaps.split(",")] if isinstance(gaps, str) else list(gaps)
    out: List[int] = []
    for g in items:
        if isinstance(g, int) and not isinstance(g, bool):
            ns = g
        else:
            m = _GAP.fullmatch(str(g))
            if not m:
                raise ScenarioError(f"--gap: '{g}' is not a duration; write e.g. 250ms, 500us or 100us "
                                    "(units s, ms, us, ns)", kind="config", field="gap")
            ns = round(float(m.group(1)) * _NS[m.group(2)])
        if ns <= 0:
            raise ScenarioError(f"--gap: '{g}' must be above 0", kind="config", field="gap")
        if ns in out:
            raise ScenarioError(f"--gap: '{g}' is given twice", kind="config", field="gap")
        out.append(ns)
    if not 1 <= len(out) <= 8:
        raise ScenarioError(f"--gap: give 1 to 8 gaps, not {len(out)}", kind="config", field="gap")
    return out


def gap_text(ns: int) -> str:
    for unit, f in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % f == 0:
            return f"{ns // f}{unit}"
    return f"{ns}ns"


# ----------------------------------------------------------------------------- the counter


class FlowletCounter:
    """Streaming flowlet and concurrency counts over records given in file order.

    Per active flow it keeps one dict entry: a 13-byte (IPv4) or 37-byte (IPv6) key and a list
    of 2 + 2 x gaps integers (time of its last payload packet, last window counted, and per gap
    the bytes of the open flowlet and the window it was last counted in); a flow silent for
    max(largest gap, 1 ms) is flushed and dropped, so memory follows the flows active within
    the largest gap, not the length of the capture. Histograms are fixed arrays of size bins.
    """

    NBINS = size_bin((1 << 64) - 1) + 1

    def __init__(self, gaps_ns: Sequence[int]) -> None:
        self.gaps = list(gaps_ns)
        self.evict_ns = max(max(self.gaps), WINDOW_NS)
        self.flows: Dict[bytes, List[int]] = {}
        self.n = [[0] * self.NBINS for _ in self.gaps]
        self.b = [[0] * self.NBINS for _ in self.gaps]
        self.clock = -1
        self.win = -1
        self.next_sweep = 0
        self.cur_flows = 0
        self.cur_fl = [0] * len(self.gaps)
        self.conc_flows: Counter = Counter()
        self.conc_fl: List[Counter] = [Counter() for _ in self.gaps]
        self.windows = 0
        self.late = 0
        self.peak_flows = 0

    def tick(self, t: int) -> int:
        """Every record's time (ns), in file order; returns the time the record counts at: a
        timestamp below an earlier one counts at the latest time seen (``late``)."""
        if t < self.clock:
            self.late += 1
            t = self.clock
        self.clock = t
        w = t // WINDOW_NS
        if w != self.win:
            if self.win >= 0:
                self._close(w - self.win - 1)
            self.win = w
        if t >= self.next_sweep:
            self._sweep(t)
        return t

    def add(self, t: int, key: bytes, n: int) -> None:
        """A payload packet of ``n`` > 0 bytes of flow ``key`` at ``t`` (after :meth:`tick`)."""
        st = self.flows.get(key)
        w = self.win
        if st is None:
            st = [t, w]
            for _ in self.gaps:
                st += (n, w)
            self.flows[key] = st
            self.cur_flows += 1
            for i in range(len(self.gaps)):
                self.cur_fl[i] += 1
            return
        dt = t - st[0]
        st[0] = t
        if st[1] != w:
            st[1] = w
            self.cur_flows += 1
        j = 2
        for i, g in enumerate(self.gaps):
            if dt >= g:
                self._flush(i, st[j])
                st[j] = n
                st[j + 1] = w
                self.cur_fl[i] += 1
            else:
                st[j] += n
                if st[j + 1] != w:
                    st[j + 1] = w
                    self.cur_fl[i] += 1
            j += 2

    def _flush(self, i: int, size: int) -> None:
        b = size_bin(size)
        self.n[i][b] += 1
        self.b[i][b] += size

    def _close(self, empty_after: int) -> None:
        self.conc_flows[self.cur_flows] += 1
        for i, c in enumerate(self.cur_fl):
            self.conc_fl[i][c] += 1
            self.cur_fl[i] = 0
        self.cur_flows = 0
        self.windows += 1 + empty_after
        if empty_after:
            self.conc_flows[0] += empty_after
            for c in self.conc_fl:
                c[0] += empty_after

    def _sweep(self, t: int) -> None:
        self.peak_flows = max(self.peak_flows, len(self.flows))
        gone = [k for k, st in self.flows.items() if t - st[0] >= self.evict_ns]
        for k in gone:
            st = self.flows.pop(k)
            for i in range(len(self.gaps)):
                self._flush(i, st[2 + 2 * i])
        self.next_sweep = t + self.evict_ns

    def finish(self) -> None:
        """Close the last window and every open flowlet."""
        self.peak_flows = max(self.peak_flows, len(self.flows))
        if self.win >= 0:
            self._close(0)
            self.win = -1
        for st in self.flows.values():
            for i in range(len(self.gaps)):
                self._flush(i, st[2 + 2 * i])
        self.flows.clear()

    def tables(self) -> Tuple["pd.DataFrame", "pd.DataFrame"]:
        """(flowlet_sizes, flowlet_concurrency): the columns of the simulator's tables of the
        same names (docs/OUTPUTS.md)."""
        import numpy as np
        import pandas as pd

        rows = []
        for i, g in enumerate(self.gaps):
            total = sum(self.b[i])
            cum = 0
            for b, (n, by) in enumerate(zip(self.n[i], self.b[i])):
                if n:
                    cum += by
                    lo, hi = bin_edges(b)
                    rows.append((g / 1000, lo, hi, n, by, cum / total))
        sizes = pd.DataFrame(rows, columns=["gap_us", "size_from_bytes", "size_to_bytes", "flowlets", "bytes", "bytes_cdf"])
        crow: List[Tuple[str, float, int, int]] = [("flows", math.nan, a, k) for a, k in sorted(self.conc_flows.items())]
        for i, g in enumerate(self.gaps):
            crow += [("flowlets", g / 1000, a, k) for a, k in sorted(self.conc_fl[i].items())]
        conc = pd.DataFrame(crow, columns=["what", "gap_us", "active", "windows"])
        for df, cols in ((sizes, ["size_from_bytes", "size_to_bytes", "flowlets", "bytes"]), (conc, ["active", "windows"])):
            for c in cols:
                df[c] = df[c].astype(np.int64)
            df["gap_us"] = df["gap_us"].astype(np.float64)
        conc["what"] = conc["what"].astype(object)  # as the core's string columns (result._frame)
        return sizes, conc


# ----------------------------------------------------------------------------- reading


class _Reader:
    """A file read in 1 MB chunks: ``need(n)`` makes ``n`` bytes available at ``pos``;
    ``offset`` is the file offset of ``buf[pos]``."""

    def __init__(self, f: BinaryIO, start: bytes) -> None:
        self.f = f
        self.buf = start
        self.pos = 0
        self.base = 0

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def need(self, n: int) -> bool:
        """True when ``n`` bytes are available; False at a clean end of file (nothing left);
        raises ``EOFError`` when the file ends inside them."""
        have = len(self.buf) - self.pos
        if have >= n:
            return True
        more = self.f.read(max(CHUNK, n - have))
        self.buf = self.buf[self.pos:] + more
        self.base += self.pos
        self.pos = 0
        if len(self.buf) >= n:
            return True
        if not self.buf:
            return False
        raise EOFError


Record = Tuple[int, int, int, bytes, int, int, int]  # number, offset, ts_ns, buf, start, end, link type


class _Capture:
    """The packet records of a pcap or pcapng file: ``records()`` yields (number, byte offset,
    time in ns, buffer, start, end, link type); frames are not copied out of the buffer."""

    def __init__(self, path: Path, f: BinaryIO) -> None:
        self.path = path
        head = f.read(24)
        self.r = _Reader(f, head)
        self.link_types: List[int] = []
        self.skipped: Counter = Counter()
        self.number = 0
        magic = head[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"):
            self.format = "pcap"
        elif magic == b"\x0a\x0d\x0d\x0a":
            self.format = "pcapng"
        else:
            raise self.error(f"is not a pcap or pcapng file (its first bytes are {head[:4].hex() or 'missing'})", 0, 0)

    def error(self, what: str, packet: int, offset: int) -> CaptureError:
        where = "in the file header" if packet == 0 else f"at packet {packet}"
        return CaptureError(f"{self.path}: {what} ({where}, byte offset {offset})", packet=packet, offset=offset)

    def truncated(self, what: str) -> CaptureError:
        return self.error(f"the file ends inside {what}: truncated after {self.number} complete packets; "
                          "nothing was written", self.number + 1, self.r.offset)

    def records(self) -> Iterator[Record]:
        return self._pcap() if self.format == "pcap" else self._pcapng()

    def _unsupported(self, lt: int, packet: int, offset: int, where: str) -> CaptureError:
        known = ", ".join(f"{k} ({v})" for k, v in LINK_TYPES.items())
        return self.error(f"{where}link type {lt} is not supported; supported: {known}", packet, offset)

    def _pcap(self) -> Iterator[Record]:
        r = self.r
        if len(r.buf) < 24:
            raise self.error("the file ends inside its 24-byte header", 0, len(r.buf))
        le = r.buf[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
        nano = r.buf[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
        e = "<" if le else ">"
        lt = struct.unpack_from(e + "I", r.buf, 20)[0] & 0xFFFF
        if lt not in LINK_TYPES:
            raise self._unsupported(lt, 0, 20, "")
        self.link_types = [lt]
        r.pos = 24
        rec = struct.Struct(e + "IIII").unpack_from
        frac = 1 if nano else 1000
        while True:
            try:
                if not r.need(16):
                    return
            except EOFError:
                raise self.truncated("a record header") from None
            sec, sub, incl, orig = rec(r.buf, r.pos)
            off = r.offset
            if incl > MAX_RECORD or sub >= (10**9 if nano else 10**6):
                raise self.error(f"corrupt record header (captured length {incl}, fraction of a second {sub})",
                                 self.number + 1, off)
            try:
                r.need(16 + incl)
            except EOFError:
                raise self.truncated(f"a packet of {incl} captured bytes") from None
            self.number += 1
            start = r.pos + 16
            r.pos = start + incl
            yield self.number, off, sec * 1_000_000_000 + sub * frac, r.buf, start, start + incl, lt

    def _pcapng(self) -> Iterator[Record]:
        r = self.r
        e = "<"
        ifaces: List[Tuple[int, int, int, int]] = []  # link type, ts units numerator, denominator, offset ns
        while True:
            off = r.offset
            try:
                if not r.need(12):
                    return
            except EOFError:
                raise self.truncated("a block header") from None
            btype = r.buf[r.pos:r.pos + 4]
            if btype == b"\x0a\x0d\x0d\x0a":
                bom = r.buf[r.pos + 8:r.pos + 12]
                if bom == b"\x4d\x3c\x2b\x1a":
                    e = "<"
                elif bom == b"\x1a\x2b\x3c\x4d":
                    e = ">"
                else:
                    raise self.error(f"corrupt section header (byte-order magic {bom.hex()})", self.number + 1, off)
                ifaces = []
            typ, blen = struct.unpack_from(e + "II", r.buf, r.pos)
            if blen < _MIN_BLOCK.get(typ, 12) or blen % 4 or blen > MAX_BLOCK:
                raise self.error(f"corrupt block (type {typ:#x}, length {blen})", self.number + 1, off)
            try:
                r.need(blen)
            except EOFError:
                raise self.truncated(f"a block of {blen} bytes") from None
            p = r.pos
            buf = r.buf
            if struct.unpack_from(e + "I", buf, p + blen - 4)[0] != blen:
                raise self.error(f"corrupt block (type {typ:#x}: its trailing length differs from {blen})",
                                 self.number + 1, off)
            r.pos = p + blen
            if typ == 1:  # interface description
                lt = struct.unpack_from(e + "H", buf, p + 8)[0]
                num, den, shift = 1_000_000_000, 1_000_000, 0
                q = p + 16
                while q + 4 <= p + blen - 4:
                    code, olen = struct.unpack_from(e + "HH", buf, q)
                    if code == 0:
                        break
                    if code == 9 and olen >= 1:  # if_tsresol
                        v = buf[q + 4]
                        num, den = (1_000_000_000, 2 ** (v & 0x7F)) if v & 0x80 else (1_000_000_000, 10 ** v)
                    elif code == 14 and olen >= 8:  # if_tsoffset, seconds
                        shift = struct.unpack_from(e + "q", buf, q + 4)[0] * 1_000_000_000
                    q += 4 + (olen + 3) // 4 * 4
                ifaces.append((lt, num, den, shift))
                if lt not in self.link_types:
                    self.link_types.append(lt)
            elif typ in (6, 2):  # enhanced packet, (obsolete) packet
                if typ == 6:
                    iface, hi, lo, cap = struct.unpack_from(e + "IIII", buf, p + 8)
                else:
                    iface, _, hi, lo, cap = struct.unpack_from(e + "HHIII", buf, p + 8)
                self.number += 1
                if iface >= len(ifaces):
                    raise self.error(f"the packet names interface {iface}, which the section has not described",
                                     self.number, off)
                if cap > blen - 32:
                    raise self.error(f"corrupt packet block (captured length {cap} in a block of {blen} bytes)",
                                     self.number, off)
                lt, num, den, shift = ifaces[iface]
                if lt not in LINK_TYPES:
                    raise self._unsupported(lt, self.number, off, f"interface {iface}: ")
                yield self.number, off, ((hi << 32) | lo) * num // den + shift, buf, p + 28, p + 28 + cap, lt
            elif typ == 3:  # simple packet block: no interface time stamp
                self.number += 1
                self.skipped["simple packet block (no time stamp)"] += 1


# ----------------------------------------------------------------------------- decoding


def _decode(b: bytes, o: int, end: int, lt: int, inner: bool = False) -> Union[Tuple[bytes, int], str]:
    """(flow key, payload bytes) of the frame ``b[o:end]``, or the kind of packet it is not."""
    if lt == ETHERNET or lt == SLL:
        hl = 14 if lt == ETHERNET else 16
        if end - o < hl:
            return _CUT
        et = (b[o + hl - 2] << 8) | b[o + hl - 1]
        o += hl
        while et == 0x8100 or et == 0x88A8 or et == 0x9100:  # 802.1Q / 802.1ad tags
            if end - o < 4:
                return _CUT
            et = (b[o + 2] << 8) | b[o + 3]
            o += 4
        if et == 0x0800:
            v = 4
        elif et == 0x86DD:
            v = 6
        elif et < 0x0600 and lt == ETHERNET:
            return "802.3 frame (LLC)"
        else:
            return _ETHERTYPES.get(et, f"ethertype 0x{et:04x}")
    else:
        if end - o < 1:
            return _CUT
        v = b[o] >> 4
        if lt == RAW4 and v != 4 or lt == RAW6 and v != 6 or v not in (4, 6):
            return f"malformed IP (version {v})"
    if v == 4:
        if end - o < 20:
            return _CUT
        vihl = b[o]
        ihl = (vihl & 15) * 4
        plen = ((b[o + 2] << 8) | b[o + 3]) - ihl
        if vihl >> 4 != 4 or ihl < 20 or plen < 0:
            return "malformed IPv4"
        if ((b[o + 6] << 8) | b[o + 7]) & 0x3FFF:
            return "IPv4 fragment"
        proto = b[o + 9]
        addr = b[o + 12:o + 20]
        o += ihl
    else:
        if end - o < 40:
            return _CUT
        if b[o] >> 4 != 6:
            return "malformed IPv6"
        plen = (b[o + 4] << 8) | b[o + 5]
        proto = b[o + 6]
        addr = b[o + 8:o + 40]
        o += 40
        while proto == 0 or proto == 43 or proto == 60:  # hop-by-hop, routing, destination options
            if end - o < 2:
                return _CUT
            hl = (b[o + 1] + 1) * 8
            proto = b[o]
            o += hl
            plen -= hl
            if plen < 0:
                return "malformed IPv6"
        if proto == 44:
            return "IPv6 fragment"
    if proto == 6:
        if end - o < 13:
            return _CUT
        thl = (b[o + 12] >> 4) * 4
        if thl < 20 or thl > plen:
            return "malformed TCP"
        return addr + b[o:o + 4] + b"\x06", plen - thl
    if proto == 17:
        if end - o < 8:
            return _CUT
        if plen < 8:
            return "malformed UDP"
        if not inner and (b[o + 2] << 8) | b[o + 3] == VXLAN_PORT:
            if end - o < 16:
                return _CUT
            if b[o + 8] & 0x08:  # the I flag: a valid VNI follows
                return _decode(b, o + 16, end, ETHERNET, True)
        return addr + b[o:o + 4] + b"\x11", plen - 8
    return _PROTOCOLS.get(proto, f"IP protocol {proto}")


# ----------------------------------------------------------------------------- the tool


class FlowletResult:
    """What :func:`flowlets` measured.

    Attributes:
        sizes: one row per gap and size bin: ``gap_us``, ``size_from_bytes``,
            ``size_to_bytes`` (the bin, [from, to)), ``flowlets``, ``bytes`` (their payload),
            ``bytes_cdf`` (fraction of the gap's bytes in flowlets below ``size_to_bytes``).
        concurrency: the distribution over 1 ms windows of the active flows (``what`` =
            "flows", ``gap_us`` empty) and flowlets per gap: ``active``, ``windows``.
        summary: counts (records, packets, payload, skipped by kind), and per gap the number
            of flowlets, the bytes-weighted median size and the concurrency's median and
            maximum (docs/FLOWLETS.md).
    """

    def __init__(self, sizes: "pd.DataFrame", concurrency: "pd.DataFrame", summary: Dict[str, Any]) -> None:
        self.sizes = sizes
        self.concurrency = concurrency
        self.summary = summary

    def write(self, out_dir: PathLike) -> Path:
        """Write ``flowlet_sizes.csv``, ``flowlet_concurrency.csv``, ``summary.json`` and
        ``plot.png`` into ``out_dir`` (created)."""
        from .result import write_csv, write_json

        out = Path(out_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_csv(out / "flowlet_sizes.csv", self.sizes)
            write_csv(out / "flowlet_concurrency.csv", self.concurrency)
            write_json(out / "summary.json", self.summary)
            plot(self.sizes, self.concurrency, out / "plot.png", title=Path(str(self.summary.get("capture", ""))).name)
        except OSError as e:
            raise ScenarioError(f"cannot write the results to {out}: {e.strerror or e}", kind="io") from None
        return out

    def __repr__(self) -> str:
        return f"<fabriclb.FlowletResult packets={self.summary.get('packets')} gaps={self.summary.get('gaps_us')}>"


def bytes_median(sizes: "pd.DataFrame", gap_us: float) -> float:
    """The size at which half the gap's payload bytes are in smaller flowlets: the lower edge
    of the bin where ``bytes_cdf`` reaches 0.5 (bins at most 3% wide); NaN without bytes."""
    s = sizes[sizes["gap_us"] == gap_us]
    s = s[s["bytes_cdf"] >= 0.5]
    return float(s["size_from_bytes"].iloc[0]) if len(s) else math.nan


def concurrency_stats(conc: "pd.DataFrame", what: str, gap_us: Optional[float] = None) -> Tuple[float, float]:
    """(median, maximum) of the active flows (``what`` = "flows") or flowlets of ``gap_us``
    over the 1 ms windows; NaN when there are none. The median is the lower median."""
    s = conc[conc["what"] == what]
    if gap_us is not None:
        s = s[s["gap_us"] == gap_us]
    if s.empty:
        return math.nan, math.nan
    s = s.sort_values("active")
    cum = s["windows"].cumsum()
    med = float(s["active"][cum >= (int(s["windows"].sum()) + 1) // 2].iloc[0])
    return med, float(s["active"].max())


def gap_summary(sizes: "pd.DataFrame", conc: "pd.DataFrame", gaps_us: Sequence[float]) -> List[Dict[str, Any]]:
    """Per gap: flowlets, payload bytes, bytes-weighted median size, concurrency median and
    maximum; shared by the tool and the conga-fig5 experiment."""
    out = []
    for g in gaps_us:
        s = sizes[sizes["gap_us"] == g]
        med, mx = concurrency_stats(conc, "flowlets", g)
        m = bytes_median(sizes, g)
        out.append({"gap_us": g, "flowlets": int(s["flowlets"].sum()), "bytes": int(s["bytes"].sum()),
                    "median_size_bytes": None if math.isnan(m) else int(m),
                    "active_median": None if math.isnan(med) else med, "active_max": None if math.isnan(mx) else mx})
    return out


def flowlets(capture: PathLike, gaps: Union[str, Sequence[Union[str, int]]] = DEFAULT_GAPS,
             out: Optional[PathLike] = None) -> FlowletResult:
    """Measure the flowlets of the pcap or pcapng file ``capture`` at each of ``gaps``
    ("250ms,500us,100us", a list of such strings, or nanoseconds), reading it as a stream.
    With ``out``, also write the tables, ``summary.json`` and ``plot.png`` there. Raises
    :class:`CaptureError` (a :class:`fabriclb.ScenarioError`) for an unreadable file."""
    gaps_ns = parse_gaps(gaps)
    path = Path(capture)
    t0 = time.perf_counter()
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ScenarioError(f"cannot read the capture {path}: {e.strerror or e}", kind="io") from None
    counter = FlowletCounter(gaps_ns)
    packets = payload_packets = payload_bytes = 0
    with f:
        cap = _Capture(path, f)
        skipped = cap.skipped
        tick, add = counter.tick, counter.add
        for _, _, ts, buf, start, end, lt in cap.records():
            t = tick(ts)
            got = _decode(buf, start, end, lt)
            if got.__class__ is str:
                skipped[got] += 1
                continue
            key, n = got
            packets += 1
            if n > 0:
                payload_packets += 1
                payload_bytes += n
                add(t, key, n)
    counter.finish()
    sizes, conc = counter.tables()
    wall = time.perf_counter() - t0
    gaps_us = [g / 1000 for g in gaps_ns]
    conc_flows = concurrency_stats(conc, "flows")
    summary = {
        "capture": str(path),
        "format": cap.format,
        "link_types": [f"{lt} ({LINK_TYPES.get(lt, 'unsupported')})" for lt in cap.link_types],
        "records": cap.number,
        "packets": packets,
        "payload_packets": payload_packets,
        "payload_bytes": payload_bytes,
        "skipped": dict(sorted(skipped.items())),
        "late_timestamps": counter.late,
        "windows": counter.windows,
        "peak_active_flows": counter.peak_flows,
        "gaps_us": gaps_us,
        "flows_active": {k: None if math.isnan(v) else v for k, v in zip(("median", "max"), conc_flows)},
        "gaps": gap_summary(sizes, conc, gaps_us),
        "wall_time_s": round(wall, 3),
        "records_per_s": round(cap.number / wall) if wall > 0 else None,
    }
    res = FlowletResult(sizes, conc, summary)
    if out is not None:
        res.write(out)
    return res


# ----------------------------------------------------------------------------- the plot


def plot(sizes: "pd.DataFrame", conc: "pd.DataFrame", path: PathLike, title: str = "",
         reference: Sequence[Tuple[float, str]] = ()) -> None:
    """Fig. 5's plot (fraction of bytes in flowlets up to a size, one line per gap) beside the
    distribution of active flows and flowlets over 1 ms windows. ``reference``: vertical marks
    (size in bytes, label), e.g. the paper's medians."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, c) = plt.subplots(1, 2, figsize=(11, 4.2))
    for g, s in sizes.groupby("gap_us", sort=False):
        x = [s["size_from_bytes"].iloc[0]] + list(s["size_to_bytes"])
        y = [0.0] + list(s["bytes_cdf"])
        a.step(x, y, where="post", label=f"gap {gap_text(int(round(g * 1000)))}")
    for x, lab in reference:
        a.axvline(x, color="grey", ls=":", lw=1)
        a.text(x, 0.02, " " + lab, rotation=90, va="bottom", fontsize=7, color="grey")
    a.axhline(0.5, color="grey", lw=0.5)
    a.set_xscale("log")
    a.set_xlabel("flowlet size (payload bytes)")
    a.set_ylabel("fraction of bytes in flowlets up to this size")
    a.set_ylim(0, 1.01)
    a.legend(fontsize=8)
    a.set_title("bytes over flowlet sizes" + (f": {title}" if title else ""), fontsize=9)
    for (what, g), s in conc.groupby(["what", "gap_us"], sort=False, dropna=False):
        s = s.sort_values("active")
        frac = s["windows"].cumsum() / s["windows"].sum()
        lab = "flows (5-tuples)" if what == "flows" else f"flowlets, gap {gap_text(int(round(g * 1000)))}"
        c.step(s["active"], frac, where="post", label=lab)
    c.set_xlabel("active in a 1 ms window")
    c.set_ylabel("fraction of windows")
    c.set_ylim(0, 1.01)
    c.legend(fontsize=8)
    c.set_title("concurrency", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
