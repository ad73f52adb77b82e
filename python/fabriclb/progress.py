"""A progress bar over simulated time, on stderr: tqdm when installed, plain text otherwise,
nothing when stderr is not a terminal."""

from __future__ import annotations

import sys
from typing import Any, Optional, TextIO


class ProgressBar:
    """Callable with the fraction of simulated time done (0..1); :meth:`close` ends the bar."""

    def __init__(self, enabled: bool = True, desc: str = "simulated time", stream: Optional[TextIO] = None) -> None:
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.enabled = enabled and _isatty(self.stream)
        self.desc = desc
        self._tqdm: Any = None
        self._shown = -1
        if self.enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._tqdm = tqdm(
                    total=100,
                    desc=desc,
                    file=self.stream,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
                    leave=False,
                )

    def __call__(self, fraction: float) -> None:
        if not self.enabled:
            return
        pct = int(max(0.0, min(1.0, fraction)) * 100)
        if pct <= self._shown:
            return
        if self._tqdm is not None:
            self._tqdm.update(pct - max(self._shown, 0))
        else:
            width = 30
            done = pct * width // 100
            self.stream.write(f"\r{self.desc}: [{'#' * done}{'.' * (width - done)}] {pct:3d}%")
            self.stream.flush()
        self._shown = pct

    def close(self) -> None:
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._shown >= 0:
            self.stream.write("\r" + " " * (len(self.desc) + 40) + "\r")
            self.stream.flush()
        self.enabled = False


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
