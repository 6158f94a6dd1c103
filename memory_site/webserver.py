"""The web processes `serve` starts: uvicorn, with a listening socket that keeps TCP_NODELAY.

uvicorn's `--workers N` binds the listener with `socket.socket(family)`, so its `proto` is 0;
accepted sockets inherit that, and asyncio turns Nagle's algorithm off only for sockets whose
`proto` is IPPROTO_TCP. Every response on a kept-alive connection then waited for the client's
delayed ACK: 44 ms per request, against 4 ms on a new connection (Kludex/uvicorn#3149, open;
the fix, PR #3154, makes bind_socket pass IPPROTO_TCP, as `tcp_listener` does here). Drop this
module for `python -m uvicorn` once a release carries it.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

import uvicorn
from uvicorn.supervisors import Multiprocess

APP = "memory_site.asgi:application"


class Config(uvicorn.Config):
    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        return tcp_listener(sock) if sock.family in (socket.AF_INET, socket.AF_INET6) else sock


def tcp_listener(sock: socket.socket) -> socket.socket:
    """The same bound socket, marked IPPROTO_TCP (asyncio's test for TCP_NODELAY) and with
    TCP_NODELAY set on the listener too (Linux hands it to every accepted socket)."""
    tcp = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
    tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    tcp.set_inheritable(True)
    return tcp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Cairn's web processes (uvicorn).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    # Read by the settings of this process and of its workers: their connections are pooled.
    os.environ["CAIRN_WEB_PROCESS"] = "1"
    config = Config(
        APP, host=args.host, port=args.port, workers=args.workers, lifespan="auto",
        server_header=False,
    )  # fmt: skip
    server = uvicorn.Server(config)
    sock = config.bind_socket()
    if config.workers > 1:
        Multiprocess(config, sockets=[sock]).run()
    else:
        server.run(sockets=[sock])
    if config.workers == 1 and not server.started:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE


if __name__ == "__main__":
    main()
